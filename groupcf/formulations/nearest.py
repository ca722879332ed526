r"""Nearest counterfactual of one instance (MACE-style, exact MIPs).

* :class:`NearestCounterfactual` — the MACE distance (weighted normalised l0 / l1 / linf,
  :mod:`groupcf.formulations.distances`), integer numeric features, diversity cuts that
  also see numeric features; behind ``gcf.explain(method="mace")``. Its maths is in its
  docstring. With the default ``Distance(l0=1)`` it is the plain l0 model below (fewest
  changed features), which the group algorithms use for their initial columns.

**The l0 case.** Given an instance :math:`x^0` (expanded, :math:`x^0 \in \{0,1\}^{|\bar T|}`, continuous
columns scaled to [0, 1]) rejected by the model, find :math:`v` classified positive that
changes the fewest *original* features:

.. math::

    \min \sum_{l \in T} f_l
    \quad\text{s.t.}\quad
    \mathrm{score}(v) \ge \tau + \varepsilon                     &\quad\text{(embedding; paper eqs. 2–3)}\\
    \textstyle\sum_{h\in T_l} v_h = 1                 \quad l \in T_c  &\quad\text{(one-hot; eq. 11)}\\
    f_l \ge 1 - v_{h(l)}                              \quad l \in T_c  &\quad\text{(changed if }x^0\text{'s category is left)}\\
    f_l \ge |v_l - x^0_l|  \text{ (linear, } x^0_l \text{ fixed)} \quad l \text{ binary} \\
    |v_l - x^0_l| \le f_l                             \quad l \text{ continuous} \\
    \textstyle\sum_l f_l \le T_{\max}                            &\quad\text{(eq. 10, one instance)}\\
    f_l = 0 \quad l \text{ immutable};\qquad v \succeq x^0 \text{ on increase-only } l

where :math:`h(l)` is the column of :math:`x^0`'s category of feature :math:`l`. This is
the single-instance case (:math:`|S| = K = 1`) of the compact MIP (eqs. 1–14), with the
per-feature agreement rows of :mod:`groupcf.formulations.blocks` (one row per feature
instead of the paper's :math:`|T_l| f_l \ge \sum_{h \in T_l} d_h`); minimisation makes
:math:`f_l` exact. Increase-only ordinal features
forbid the categories below :math:`x^0`'s (upper bound 0); an increase-only binary with
:math:`x^0_l = 1` is fixed; a continuous one gets :math:`v_l \ge x^0_l`. These bounds are
also applied to the embedding's input domain, so big-M constants are computed over the
actionable region only.

:math:`\varepsilon` is a small safety margin on the logit against solver tolerances; the
caller re-checks the answer with the real model.

Diversity (MACE's rule "differ in at least one original feature") is
:meth:`NearestCounterfactual.exclude`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..embeddings.base import Embedding, EmbeddingConstr
from ..features.space import Feature, FeatureSpace
from ..solvers.base import INF, Backend, VarType
from ..utils import Deadline
from .blocks import add_agreement, add_counterfactual
from .distances import Distance, box_distance, feature_measure
from .rows import RowBuffer

#: integer features with a wider range are solved continuous and rounded when decoded
MAX_INTEGER_RANGE = 1000


def actionable_bounds(space: FeatureSpace, z0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bounds on the expanded variables implied by actionability at instance ``z0``.

    Returns ``(lb, ub, can_change)``: column bounds, and per original feature whether it
    may change at all (``False`` for immutable features and for increase-only features
    already at their maximum).
    """
    dom = space.domain()
    # the instance's own value is always allowed: a value outside the data's range (a test
    # row above the training maximum) must not force a change
    lb, ub = np.minimum(dom.lb, z0), np.maximum(dom.ub, z0)
    can_change = np.ones(len(space), dtype=bool)
    for l, f in enumerate(space):
        cols = f.columns
        if f.immutable:
            lb[cols] = ub[cols] = z0[cols]
            can_change[l] = False
            continue
        if not f.increase_only:
            continue
        if f.encoding == "onehot":
            h0 = int(np.argmax(z0[cols]))
            ub[cols[:h0]] = 0.0
            can_change[l] = h0 < len(cols) - 1
        else:  # binary or continuous: v >= x0
            lb[cols] = z0[cols]
            can_change[l] = z0[cols[0]] < ub[cols[0]]
    return lb, ub, can_change


@dataclass
class NearestCounterfactual:
    r"""The MACE nearest-counterfactual MIP for one instance, any mix of l0 / l1 / linf.

    Instance :math:`x^0` (expanded; a continuous column holds
    :math:`(x - \mathrm{low})/(\mathrm{high} - \mathrm{low})`), point :math:`v`, change
    indicators :math:`f_l \in \{0,1\}`, per-feature distances :math:`\delta_l \ge 0`
    (only for ordinal and continuous features, and only when :math:`w_1` or
    :math:`w_\infty > 0`), :math:`t \ge 0` for linf (only when :math:`w_\infty > 0`):

    .. math::

        \min\ & \frac{w_0}{|T|}\sum_l f_l
              + \frac{w_1}{|T|}\Big(\sum_{l \in B \cup N} f_l + \sum_{l \in O \cup C} \delta_l\Big)
              + w_\infty\, t \\
        \text{s.t.}\ & \mathrm{score}(v) \ge \tau + \varepsilon, \quad
              \textstyle\sum_{h \in T_l} v_h = 1 \ (l \text{ one-hot}), \quad
              \textstyle\sum_l f_l \le T_{\max} \\
        & f_l \ge 1 - v_{h(l)} \ (l \in N \cup O), \quad f_l \ge |v_l - x^0_l| \ (l \in B),
          \quad |v_l - x^0_l| \le f_l \ (l \in C) \\
        & \delta_l \ge \pm\Big(\sum_{h=0}^{k_l-1} \tfrac{h}{k_l - 1} v_{T_l[h]}
              - \tfrac{h(l)}{k_l - 1}\Big) \ (l \in O), \qquad
          \delta_l \ge \pm (v_l - x^0_l) \ (l \in C) \\
        & t \ge f_l \ (l \in B \cup N), \qquad t \ge \delta_l \ (l \in O \cup C) \\
        & (\mathrm{high}_l - \mathrm{low}_l)\, v_l - u_l = -\mathrm{low}_l,\
          u_l \in \mathbb{Z} \cap [\mathrm{low}_l, \mathrm{high}_l] \ (l \in C \text{ integer})

    with :math:`B` binary, :math:`N` categorical (nominal one-hot), :math:`O` ordinal
    one-hot (ordered categoricals, binned numerics; codes :math:`0..k_l-1`),
    :math:`C` continuous (numeric passthrough) features and :math:`h(l)` the instance's
    category. For binary and categorical features :math:`\delta_l = f_l`, so they need no
    extra variable. Minimisation makes every :math:`\delta_l` equal to its absolute value,
    :math:`f_l` the change indicator and :math:`t = \max_l \delta_l` whenever the
    corresponding weight is positive, so the optimum is exactly the distance of
    :mod:`groupcf.formulations.distances` (l0 and l1 are means over the :math:`|T|`
    features, linf a maximum).

    Plausibility: values stay in the data's range (:math:`v \in [0,1]`, the space's
    domain) and type (one-hot rows; integer features through :math:`u_l`, when the
    instance's own value is an integer); immutable features are fixed and increase-only
    ones bounded below (:func:`actionable_bounds`), also in the embedding's domain so
    big-M constants are computed over the actionable region only. An instance outside
    the data's range on a mutable continuous feature must move into it.

    ``box = (lb, ub, can_change)`` restricts the region further (MACE's radius around
    an upper bound, :mod:`groupcf.single.net_bound`); a continuous feature whose box
    :math:`[L_l, U_l]` is narrower than the range then gets the tighter change rows
    :math:`v_l - x^0_l \le (U_l - x^0_l) f_l`, :math:`x^0_l - v_l \le (x^0_l - L_l) f_l`.
    With ``scale_objective`` the solver minimises the objective divided by its smallest
    cost (``objective_scale``): solvers ignore improvements below an absolute tolerance
    (HiGHS prunes nodes within 1e-6 of the incumbent), about 1e-4 relative at MACE's
    distances; the caller divides the solver's objective and bound by it.

    **Diversity cut** (:meth:`exclude`): after a solution :math:`\hat v`, every later one
    differs from it in at least one original feature,

    .. math::

        \sum_{l \text{ one-hot}} (1 - v_{\hat h(l)})
        + \sum_{l \in B} |v_l - \hat v_l|
        + \sum_{l \in C} (b^+_l + b^-_l) \ \ge\ 1,

    where for a continuous feature the binaries :math:`b^\pm_l` switch on "moved by at
    least :math:`\epsilon` up / down": :math:`v_l - (\hat v_l + \epsilon - L_l)\, b^+_l \ge
    L_l` and :math:`v_l + (U_l - \hat v_l + \epsilon)\, b^-_l \le U_l` with the variable's
    own bounds :math:`[L_l, U_l]` (no arbitrary big-M; a side that leaves the bounds gets
    no binary). "Differs" means by at least ``tol`` in scaled units (a fraction of the
    range): :math:`\epsilon = \mathrm{tol}` for a real-valued feature; for an integer
    feature the rows are written on :math:`u_l` with
    :math:`\epsilon = \max(1, \lceil \mathrm{tol}\,(\mathrm{high}_l - \mathrm{low}_l)\rceil)`
    whole units, which is exact on the integers (with small ranges: "another value").
    """

    space: FeatureSpace
    embedding: Embedding
    z0: np.ndarray
    backend: Backend
    distance: Distance = field(default_factory=lambda: Distance(l0=1.0))
    score_lo: float = 0.0
    Tmax: int | None = None
    integer: bool = True
    box: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None      # (lb, ub, can_change): a tighter region (e.g. a radius)
    scale_objective: bool = False  # solver sees the objective / its smallest cost (see build)
    distance_cuts: bool = False    # the embedding's distance cuts (tree ensembles: per leaf)
    deadline: Deadline | None = None   # the call's time budget: once passed, the distance cuts are left out
    n_distance_cuts: int = field(init=False, default=0)
    objective_scale: float = field(init=False, default=1.0)
    v: np.ndarray = field(init=False)
    f: np.ndarray = field(init=False)
    constr: EmbeddingConstr = field(init=False)
    u: dict[int, tuple[int, float, float]] = field(init=False, default_factory=dict)  # l -> (var, low, high), integer features
    delta: dict[int, int] = field(init=False, default_factory=dict)   # l -> var
    t: int | None = field(init=False, default=None)
    objective_idx: np.ndarray = field(init=False)
    objective_coefs: np.ndarray = field(init=False)

    def build(self) -> NearestCounterfactual:
        space, be, d = self.space, self.backend, self.distance
        z0 = self.z0 = np.asarray(self.z0, dtype=float)
        lb, ub, can_change = actionable_bounds(space, z0)
        ub = np.maximum(ub, lb)   # an instance above the data's range keeps its own value
        if self.box is not None:
            lb, ub = np.maximum(lb, self.box[0]), np.minimum(ub, np.maximum(self.box[1], lb))
            can_change = can_change & np.asarray(self.box[2], dtype=bool)
        self.lb, self.ub, self.can_change = lb, ub, can_change
        block = add_counterfactual(be, space, self.embedding, self.score_lo, lb, ub, can_change, Tmax=self.Tmax)
        self.v, self.f, self.constr = block.v, block.f, block.constr
        rows = RowBuffer()
        add_agreement(rows, space, block, z0)            # f_l >= [v differs from x0 on l]
        if self.box is not None:
            self._tight_indicators(rows)
        n_feat = max(len(space), 1)
        need_delta = d.l1 > 0 or d.linf > 0
        if d.linf > 0:
            self.t = int(be.add_vars(1, 0.0, INF, VarType.CONTINUOUS)[0])
        obj: dict[int, float] = {}
        for l, feat in enumerate(space):
            if not can_change[l] or (feat.encoding == "onehot" and len(feat.columns) < 2):
                continue                                  # fixed at x0: delta_l = 0
            cols = self.v[feat.columns]
            fl = int(self.f[l])
            if (self.integer and feat.encoding == "continuous" and feat.integer
                    and feat.high - feat.low <= MAX_INTEGER_RANGE):
                self._add_integer(rows, l, feat, int(cols[0]), z0[feat.columns[0]])
            kind = feature_measure(feat)
            if kind in ("binary", "nominal"):             # delta_l = f_l
                obj[fl] = (d.l0 + d.l1) / n_feat
                if self.t is not None:
                    rows.add([self.t, fl], [1.0, -1.0], 0.0, INF)
                continue
            if d.l0 > 0:
                obj[fl] = d.l0 / n_feat
            if not need_delta:
                continue
            dl = int(be.add_vars(1, 0.0, INF, VarType.CONTINUOUS)[0])
            self.delta[l] = dl
            if kind == "ordinal":
                k = len(cols)
                c = np.arange(k) / (k - 1)
                c0 = float(np.argmax(z0[feat.columns])) / (k - 1)
                rows.add(np.append(dl, cols), np.append(1.0, -c), -c0, INF)    # delta >= code - c0
                rows.add(np.append(dl, cols), np.append(1.0, c), c0, INF)      # delta >= c0 - code
            else:  # continuous, scaled to [0, 1]
                x0 = float(z0[feat.columns[0]])
                rows.add([dl, cols[0]], [1.0, -1.0], -x0, INF)                 # delta >= v - x0
                rows.add([dl, cols[0]], [1.0, 1.0], x0, INF)                   # delta >= x0 - v
            if d.l1 > 0:
                obj[dl] = d.l1 / n_feat
            if self.t is not None:
                rows.add([self.t, dl], [1.0, -1.0], 0.0, INF)                  # t >= delta
        if self.t is not None:
            obj[self.t] = d.linf
        rows.flush(be)
        self.objective_idx = np.array(list(obj), dtype=np.int64)
        self.objective_coefs = np.array(list(obj.values()), dtype=float)
        if self.scale_objective and len(self.objective_coefs) and self.objective_coefs.min() > 0:
            # the solver ignores improvements below an absolute tolerance (HiGHS: 1e-6, ~1e-4
            # relative at MACE's distances); the solver's objective is this many times ours
            self.objective_scale = 1.0 / float(self.objective_coefs.min())
        be.set_objective(self.objective_idx, self.objective_coefs * self.objective_scale, sense="min")
        if self.distance_cuts and len(self.objective_idx) and not (self.deadline is not None and self.deadline.passed):
            cuts = RowBuffer()
            for leaves, d_leaf in self.constr.distance_cuts(self.cell_distance):
                cuts.add(np.concatenate([leaves, self.objective_idx]),
                         np.concatenate([d_leaf, -self.objective_coefs]), -INF, 0.0)
            col_feature = {int(f.columns[0]): k for k, f in enumerate(self.space) if f.encoding == "continuous"}
            for col, levels, coefs, const in self.constr.move_cuts(self.z0):
                k_feat = col_feature.get(col)
                if k_feat is not None and k_feat in self.delta:   # delta >= |v_c - x0_c| >= const + coefs @ y
                    cuts.add(np.concatenate([[self.delta[k_feat]], levels]), np.concatenate([[1.0], -coefs]),
                             const, INF)
            self.n_distance_cuts = len(cuts.lo)
            cuts.flush(be)
        return self

    def cell_distance(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """A lower bound of the objective at any point of each box ``[lo_k, hi_k]`` (rows of
        expanded column bounds, inside the MIP's own bounds):
        :func:`~groupcf.formulations.distances.box_distance`. The distance cuts
        (:meth:`~groupcf.embeddings.base.EmbeddingConstr.distance_cuts`) weigh each tree's
        leaves by it."""
        return box_distance(self.space, self.distance, self.z0, self.can_change, lo, hi)

    def _tight_indicators(self, rows: RowBuffer) -> None:
        """In a box narrower than the range: :math:`v_l - x^0_l \\le (U_l - x^0_l) f_l` and
        :math:`x^0_l - v_l \\le (x^0_l - L_l) f_l` for a continuous :math:`l` (the rows
        :math:`|v_l - x^0_l| \\le f_l` with the box's own big-M: a stronger LP)."""
        for l, feat in enumerate(self.space):
            if feat.encoding != "continuous" or not self.can_change[l]:
                continue
            c = feat.columns[0]
            x0, col, fl = float(self.z0[c]), int(self.v[c]), int(self.f[l])
            if self.ub[c] - x0 < 1.0:
                rows.add([col, fl], [1.0, -(self.ub[c] - x0)], -INF, x0)
            if x0 - self.lb[c] < 1.0:
                rows.add([col, fl], [-1.0, -(x0 - self.lb[c])], -INF, -x0)

    def _add_integer(self, rows: RowBuffer, l: int, feat: Feature, v_col: int, x0: float) -> None:
        """``u`` integer with ``(high - low) v - u = -low``, when the instance's value is
        an integer (else the feature could not stay unchanged). Only for ranges up to
        :data:`MAX_INTEGER_RANGE`: with wider ranges the link row is badly scaled (HiGHS
        then reported wrong optima on Credit's amounts, ranges ~1e6), so such features are
        solved continuous and rounded when decoded — at most half a unit off, i.e.
        ``0.5 / range`` in the scaled distance, and re-checked with the real model."""
        rng = feat.high - feat.low
        raw0 = feat.low + x0 * rng
        if abs(raw0 - round(raw0)) > 1e-9 * max(1.0, abs(raw0)):
            return
        c = feat.columns[0]
        lo = math.ceil(feat.low + self.lb[c] * rng - 1e-9)
        hi = math.floor(feat.low + self.ub[c] * rng + 1e-9)
        u = int(self.backend.add_vars(1, float(lo), float(hi), VarType.INTEGER)[0])
        rows.add([v_col, u], [rng, -1.0], -feat.low, -feat.low)
        self.u[l] = (u, float(lo), float(hi))

    def exclude(self, v_hat: np.ndarray, tol: float = 1e-3) -> bool:
        """Add the diversity cut (class docstring): later solutions differ from ``v_hat``
        in at least one original feature; a numeric feature counts as different when it
        moves by at least ``tol`` (scaled units; integer features by whole units, at least
        one). Returns ``False`` when no feature can
        differ (then no row is added and there is no further counterfactual)."""
        be, v_hat = self.backend, np.asarray(v_hat, dtype=float)
        idx, coef, const = [], [], 0.0
        rows = RowBuffer()
        new_b = []
        for l, feat in enumerate(self.space):
            if not self.can_change[l]:
                continue
            cols = self.v[feat.columns]
            if feat.encoding == "onehot":
                h = int(np.argmax(v_hat[feat.columns]))
                idx.append(cols[h])
                coef.append(-1.0)
                const += 1.0          # 1 - v_h
            elif feat.encoding == "binary":
                if v_hat[feat.columns[0]] >= 0.5:
                    idx.append(cols[0])
                    coef.append(-1.0)
                    const += 1.0      # 1 - v
                else:
                    idx.append(cols[0])
                    coef.append(1.0)                      # v
            else:
                c = feat.columns[0]
                if l in self.u:
                    var, lo, hi = self.u[l]
                    rng = feat.high - feat.low
                    val = float(round(feat.low + v_hat[c] * rng))
                    eps = float(max(1, math.ceil(tol * rng - 1e-9)))               # whole units
                else:
                    var, lo, hi = int(cols[0]), float(self.lb[c]), float(self.ub[c])
                    val, eps = float(v_hat[c]), float(tol)
                if val + eps <= hi + 1e-9:                                     # b+ => var >= val + eps
                    b = int(be.add_vars(1, 0.0, 1.0, VarType.BINARY)[0])
                    new_b.append(([var, b], [1.0, -(val + eps - lo)], lo, INF))
                    idx.append(b)
                    coef.append(1.0)
                if val - eps >= lo - 1e-9:                                     # b- => var <= val - eps
                    b = int(be.add_vars(1, 0.0, 1.0, VarType.BINARY)[0])
                    new_b.append(([var, b], [1.0, hi - val + eps], -INF, hi))
                    idx.append(b)
                    coef.append(1.0)
        if not idx:
            return False
        for r in new_b:
            rows.add(*r)
        rows.add(idx, coef, 1.0 - const, INF)
        rows.flush(be)
        return True

    def start_greedy(self) -> bool:
        """Offer the greedy completion of ``z0``
        (:meth:`~groupcf.formulations.completion.Completions.check` without a MIP, within
        ``Tmax`` changes) as a MIP start: an incumbent before the search begins. ``False``
        when the greedy search finds none that fits the MIP's bounds."""
        from .completion import Completions

        k = len(self.space) if self.Tmax is None else int(self.Tmax)
        ok, v, _ = Completions(self.space, self.embedding, self.score_lo).check(self.z0, (), k, prove=False)
        return bool(ok) and v is not None and self.start_from(v)

    def start_from(self, v: np.ndarray) -> bool:
        """Offer the accepted point ``v`` as a complete MIP start (``v``, ``f``, the
        embedding's variables, ``delta``, ``t``, ``u``); ``False`` (nothing offered) when
        ``v`` breaks the bounds, ``Tmax`` or the integer links."""
        v = np.asarray(v, dtype=float)
        if not self.backend.capabilities.mip_start or np.any(v < self.lb - 1e-9) or np.any(v > self.ub + 1e-9):
            return False
        changed = self.changed(v)
        if any(not self.can_change[l] for l in changed) or (self.Tmax is not None and len(changed) > self.Tmax):
            return False
        f = np.zeros(len(self.space))
        f[changed] = 1.0
        idx: list[npt.ArrayLike] = [self.v, self.f]
        vals: list[npt.ArrayLike] = [v, f]
        i_e, v_e = self.constr.start_values(v)
        idx.append(i_e)
        vals.append(v_e)
        t = 0.0
        for l, feat in enumerate(self.space):
            cols = feat.columns
            if l in self.delta:
                if feature_measure(feat) == "ordinal":
                    k = len(cols)
                    d = abs(float(np.argmax(v[cols]) - np.argmax(self.z0[cols]))) / (k - 1)
                else:
                    d = abs(float(v[cols[0]] - self.z0[cols[0]]))
                idx.append([self.delta[l]])
                vals.append([d])
                t = max(t, d)
            elif feature_measure(feat) in ("binary", "nominal"):
                t = max(t, f[l])
            if l in self.u:
                raw = feat.low + v[cols[0]] * (feat.high - feat.low)
                if abs(raw - round(raw)) > 1e-6:
                    return False
                idx.append([self.u[l][0]])
                vals.append([float(round(raw))])
        if self.t is not None:
            idx.append([self.t])
            vals.append([t])
        self.backend.set_mip_start(np.concatenate([np.asarray(i, dtype=np.int64) for i in idx]),
                                   np.concatenate([np.asarray(x, dtype=float) for x in vals]))
        return True

    def changed(self, v: np.ndarray) -> list[int]:
        """Indices of the original features that expanded values ``v`` change."""
        return [l for l, feat in enumerate(self.space)
                if np.any(np.abs(v[feat.columns] - self.z0[feat.columns]) > change_tol(feat))]


def change_tol(feat: Feature) -> float:
    """Scaled difference above which a feature counts as changed: 1e-6, or half a unit for
    an integer-valued column whose range exceeds a million (one unit is then below 1e-6)."""
    rng = getattr(feat, "high", 0.0) - getattr(feat, "low", 0.0)
    if feat.encoding == "continuous" and getattr(feat, "integer", False) and rng > 0:
        return min(1e-6, 0.5 / rng)
    return 1e-6
