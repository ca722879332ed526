r"""Exact pricing by branch and bound over boxes of actions, where enumeration declines.

**The problem.** Given weights :math:`\pi_t \ge 0` on the types, find
:math:`\beta = \max_a \sum_t \pi_t c_{ta}` over every action :math:`a` of the finite action
space of :mod:`~groupcf.global_actions.enumerate` (per mutable feature :math:`l` its
representatives :math:`V_l`, :func:`~groupcf.global_actions.enumerate.feature_values`:
every cover of every real action is the cover of an action over them), at most
:math:`T_{\max}` features changed. With :math:`\pi` the master's duals it is exact pricing
(:class:`BoxLevel`); with :math:`\pi = m` on the coverable types it is the most people one
action covers, the curve's exact bound at :math:`k = 1`.

**Boxes.** A box :math:`B` gives each mutable feature :math:`l` its allowed choices: "keep"
(:math:`l` not in the action) or not, and a contiguous range of :math:`V_l` (sorted: shifts
or values; categories by code). The roots are the feature sets :math:`F` of size
:math:`\min(T_{\max}, |\text{mutable}|)`, each allowing "keep" and every value on
:math:`F` and only "keep" elsewhere: every action of at most :math:`T_{\max}` features lies
in some root (any set of size :math:`\le T_{\max}` is inside one of that size), and no root
holds an action of more. A box is split on one feature (one-hot and binary ones with a choice first,
then the widest scaled range): "keep" and a single value apart, or the range in halves ("keep" with the half nearer a zero shift);
the children partition the parent.

**The bound.** For type :math:`t` and box :math:`B`, every action :math:`a \in B` that is
valid for :math:`t` (the rules of :meth:`ActionSpace.apply
<groupcf.global_actions.actions.ActionSpace.apply>`) gives a row :math:`x_t \oplus a` in
the input box :math:`Z_t(B)`: the type's own values on the features :math:`B` keeps; on a
one-hot feature, each allowed category's column in :math:`[0, 1]` (exactly 1 when it is the
only one; 0 for categories not allowed, or below the type's own when increase-only); on a
binary feature, the hull of the allowed values; on a shifted feature, the hull of
:math:`x_{tl} + v` over the allowed :math:`v` that keep :math:`x_{tl} + v` in the domain
and, when increase-only, :math:`v \ge 0` (each test with slack :math:`2\,` ``DOMAIN_TOL``:
:meth:`ActionSpace.apply` allows ``DOMAIN_TOL``, so every valid value passes whatever the
float rounding), with :math:`x_{tl}` added when "keep" is allowed; with ``numeric="set"``,
the hull of the allowed values inside the domain and, when increase-only, not below
:math:`x_{tl}` (same slack; :func:`~groupcf.global_actions.enumerate.feature_values` lists
only values inside the domain, the test keeps the bound valid for any :math:`V_l`).
If no allowed choice is valid for :math:`t`, no action in :math:`B` covers it. Otherwise :math:`\mathrm{score}(x_t \oplus a) \le
u_t(B) :=` :meth:`Embedding.box_upper <groupcf.embeddings.base.Embedding.box_upper>` of
:math:`Z_t(B)` (exact for a linear model on a single action, CROWN for a ReLU network, the
largest reachable leaf per tree for an ensemble), so :math:`c_{ta} = 1` needs
:math:`u_t(B) \ge \tau`. Hence

.. math::

    \mathrm{UB}(B) = \sum_{t \in A(B)} \pi_t \ \ge\ \max_{a \in B} \sum_t \pi_t c_{ta},
    \qquad A(B) = \{t \in A(\mathrm{parent}) : u_t(B) \ge \tau - \eta\}

(the *alive* types; a type no action of the parent covers is covered by no action of the
child, a subset; :math:`\eta` = ``SCORE_TOL`` relative, for float rounding between the
bound and the numpy score).

**The search.** Best first on :math:`\mathrm{UB}`; a box holding at most ``leaf_size``
actions is evaluated exactly (its actions' covers of its alive types by the numpy model
path, :meth:`ActionSpace.cover_many`), which updates the incumbent :math:`v^*`; a box with
:math:`\mathrm{UB}(B) \le \max(v^*, \text{floor})` is pruned. *Proposition.* When the heap
empties, :math:`\max_a \sum_t \pi_t c_{ta} \le \max(v^*, \text{floor})`, with equality
when :math:`v^* \ge \text{floor}` (:math:`v^*` is attained). *Proof.* Every action lies in
a root; each box is either evaluated exactly, split into children that partition it, or
pruned with every action in it worth :math:`\le \mathrm{UB}(B) \le \max(v^*,
\text{floor})` (:math:`v^*` only grows). :math:`\square` Stopped by the time limit, the
largest :math:`\mathrm{UB}` still open (the heap's top, or :math:`\max(v^*, \text{floor})`)
is still a valid bound, by the same argument.

The finite :math:`V_l` must exist for every mutable feature (:meth:`ActionBoxes.of` is
``None`` otherwise: a non-integer continuous feature of a model without split points).
"""
from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..colgen import Priced, PricingLevel
from ..solvers.base import Status
from ..utils import EPS
from .actions import DOMAIN_TOL, Action, ActionSpace
from .enumerate import action_values

#: relative tolerance between a box's score bound and the numpy score at the threshold
SCORE_TOL = 1e-7
#: the values a box keeps for a shifted (or set) feature: those within this of the domain
#: and of the increase-only limit, a superset of :meth:`ActionSpace.apply`'s tests (which
#: allow ``DOMAIN_TOL``) under float rounding
_SLACK = 2 * DOMAIN_TOL


@dataclass
class BoxResult:
    """What :meth:`ActionBoxes.maximise` found: the best value found (``value``) and its
    actions (``actions``, best first, with ``values``), a certified ``bound`` on the max,
    whether the search ``finished`` (then ``bound = max(value, floor)``), nodes, seconds."""

    value: float
    bound: float
    finished: bool
    actions: list = field(default_factory=list)
    values: list = field(default_factory=list)
    nodes: int = 0
    seconds: float = 0.0


@dataclass(order=True)
class _Box:
    key: tuple
    keep: np.ndarray = field(compare=False)
    lo: np.ndarray = field(compare=False)
    hi: np.ndarray = field(compare=False)
    alive: np.ndarray = field(compare=False)
    ub: float = field(compare=False, default=math.inf)


class ActionBoxes:
    """Branch and bound over boxes of actions of ``aspace`` (module docstring); ``values``:
    per mutable feature its sorted representatives."""

    def __init__(self, aspace: ActionSpace, values: dict):
        self.a = aspace
        self.feat = list(aspace.mutable)
        self.V = [np.asarray(values[l], dtype=float) for l in self.feat]
        self.T = min(aspace.Tmax or len(self.feat), len(self.feat))
        self.tol = SCORE_TOL * max(1.0, abs(aspace.tau))

    @classmethod
    def of(cls, aspace: ActionSpace) -> ActionBoxes | None:
        """The boxes of ``aspace``, or ``None`` when some :math:`V_l` is not finite."""
        values, _ = action_values(aspace)
        if values is None:
            return None
        return cls(aspace, {l: np.sort(v) for l, v in values.items()}) if aspace.mutable else None

    # ------------------------------------------------------------------ bounds
    def _input_boxes(self, box: _Box, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(lb, ub, ok)``: the input box :math:`Z_t(B)` of each type of ``idx`` and
        whether some choice of ``box`` is valid for it (module docstring)."""
        a = self.a
        lb = a.Z[idx].copy()
        ub = lb.copy()
        ok = np.ones(len(idx), dtype=bool)
        for j in np.flatnonzero(box.hi > box.lo):     # the others keep the type's own values
            l, lo, hi, keep = self.feat[j], int(box.lo[j]), int(box.hi[j]), bool(box.keep[j])
            f, V = a.feats[l], self.V[j][lo:hi]
            own = a.codes[idx, l]
            if f.encoding in ("onehot", "binary"):
                cats = np.arange(len(f.categories)) if f.encoding == "onehot" else np.array([0, 1])
                allowed = np.zeros((len(idx), len(cats)), dtype=bool)
                allowed[:, np.rint(V).astype(np.int64)] = True
                if f.increase_only:
                    allowed &= cats[None, :] >= np.rint(own)[:, None] - 0.5
                if keep:
                    allowed[np.arange(len(idx)), np.rint(own).astype(np.int64)] = True
                ok &= allowed.any(axis=1)
                if f.encoding == "onehot":
                    ub[:, f.columns] = allowed
                    lb[:, f.columns] = allowed & (allowed.sum(axis=1) == 1)[:, None]
                else:
                    c = f.columns[0]
                    lb[:, c] = np.where(allowed[:, 0], 0.0, 1.0)
                    ub[:, c] = np.where(allowed[:, 1], 1.0, 0.0)
                continue
            c = f.columns[0]
            x = a.Z[idx, c]
            if a.numeric == "shift":
                low = -_SLACK - x if not f.increase_only else np.maximum(-_SLACK - x, -_SLACK)
                s = np.searchsorted(V, low, side="left")
                e = np.searchsorted(V, 1 + _SLACK - x, side="right")
                base = x
            else:                # a set value inside the domain and, increase-only, not below x
                low = np.full(len(idx), -_SLACK) if not f.increase_only else np.maximum(x - _SLACK, -_SLACK)
                s = np.searchsorted(V, low, side="left")
                e = np.full(len(idx), np.searchsorted(V, 1 + _SLACK, side="right"))
                base = np.zeros(len(idx))
            s, e = np.clip(s, 0, len(V)), np.clip(e, 0, len(V))
            has = s < e
            new_lo = base + V[np.minimum(s, len(V) - 1)]
            new_hi = base + V[np.maximum(e - 1, 0)]
            if keep:
                lb[:, c] = np.where(has, np.minimum(x, new_lo), x)
                ub[:, c] = np.where(has, np.maximum(x, new_hi), x)
            else:
                ok &= has
                lb[:, c], ub[:, c] = np.where(has, new_lo, x), np.where(has, new_hi, x)
        return lb, ub, ok

    def _bound(self, boxes: list[_Box], pi: np.ndarray) -> None:
        """Each box's alive types and :math:`\\mathrm{UB}` (module docstring), in place; one
        :meth:`box_upper` call for all of them."""
        parts = [self._input_boxes(b, b.alive) for b in boxes]
        lbs = [lb[ok] for lb, _, ok in parts]
        if sum(len(x) for x in lbs):
            u = self.a.embedding.box_upper(np.concatenate(lbs), np.concatenate([ub[ok] for _, ub, ok in parts]))
        else:
            u = np.zeros(0)
        at = 0
        for b, (_, _, ok) in zip(boxes, parts):
            n = int(ok.sum())
            b.alive = b.alive[ok][u[at:at + n] >= self.a.tau - self.tol]
            b.ub = float(pi[b.alive].sum())
            at += n

    # ------------------------------------------------------------------ search
    def _n_actions(self, b: _Box) -> int:
        return int(np.prod((b.hi - b.lo) + b.keep)) - int(b.keep.all())

    def _split(self, b: _Box) -> list[_Box]:
        """Two children partitioning ``b`` (module docstring)."""
        j = self._widest(b)
        lo, hi, keep = int(b.lo[j]), int(b.hi[j]), bool(b.keep[j])
        if hi - lo == 1 and keep:                 # keep apart from the one value
            parts = [(True, lo, lo), (False, lo, hi)]
        else:
            mid = lo + (hi - lo) // 2
            V = self.V[j]
            near_left = not self.a.is_shift(self.feat[j]) or abs(V[mid - 1]) <= abs(V[mid])
            parts = [(keep and near_left, lo, mid), (keep and not near_left, mid, hi)]
        out = []
        for k, l_, h_ in parts:
            kk, ll, hh = b.keep.copy(), b.lo.copy(), b.hi.copy()
            kk[j], ll[j], hh[j] = k, l_, h_
            out.append(_Box((), kk, ll, hh, b.alive))
        return out

    def _widest(self, b: _Box) -> int:
        """The feature to split: one-hot and binary features with a choice first (their
        relaxation in the input box is the weak one), then the widest scaled range."""
        best, j_best = (-1, -1.0), 0
        for j in np.flatnonzero((b.hi - b.lo) + b.keep > 1):
            lo, hi = int(b.lo[j]), int(b.hi[j])
            f, V = self.a.feats[self.feat[j]], self.V[j]
            if f.encoding != "continuous":
                key = (1, float(hi - lo + b.keep[j]))
            else:
                ends = [V[lo], V[hi - 1]] + ([0.0] if b.keep[j] and self.a.numeric == "shift" else [])
                key = (0, float(max(ends) - min(ends)) + 1e-12 * (hi - lo))
            if key > best:
                best, j_best = key, int(j)
        return j_best

    def _actions(self, b: _Box) -> list[Action]:
        """Every action in ``b`` (the all-keep one left out)."""
        opts = []
        for j, l in enumerate(self.feat):
            o = ([None] if b.keep[j] else []) + [(l, float(v)) for v in self.V[j][b.lo[j]:b.hi[j]]]
            opts.append(o)
        return [Action(tuple(c for c in combo if c is not None)) for combo in itertools.product(*opts)
                if any(c is not None for c in combo)]

    def roots(self) -> list[_Box]:
        """One box per feature set of size :math:`\\min(T_{\\max}, |\\text{mutable}|)`."""
        M = len(self.feat)
        sizes = np.array([len(v) for v in self.V])
        out = []
        for F in itertools.combinations(range(M), self.T):
            hi = np.zeros(M, dtype=np.int64)
            hi[list(F)] = sizes[list(F)]
            out.append(_Box((), np.ones(M, dtype=bool), np.zeros(M, dtype=np.int64), hi, np.zeros(0, np.int64)))
        return out

    def maximise(self, pi, floor: float = 0.0, time_limit: float | None = None, leaf_size: int = 64,
                 n_best: int = 5) -> BoxResult:
        r""":math:`\max_a \sum_t \pi_t c_{ta}` (module docstring): the best ``n_best``
        actions found above ``floor``, and a certified bound (``finished``: the search
        ran out, the bound is :math:`\max(v^*, \text{floor})`)."""
        t0 = time.perf_counter()
        pi = np.maximum(np.asarray(pi, dtype=float), 0.0)
        types = np.flatnonzero(pi > 0)
        best: list[tuple[float, int, Action]] = []      # min-heap of the n_best found
        value, nodes, tick = -math.inf, 0, itertools.count()
        heap: list[_Box] = []
        roots = self.roots()
        for r in roots:
            r.alive = types
        for s in range(0, len(roots), 64):
            self._bound(roots[s:s + 64], pi)
        for r in roots:
            r.key = (-r.ub, 0, next(tick))
            heapq.heappush(heap, r)
        while heap:
            cut = max(value, floor) + EPS
            if heap[0].ub <= cut:
                break
            if time_limit is not None and time.perf_counter() - t0 > time_limit:
                break
            b = heapq.heappop(heap)
            nodes += 1
            if self._n_actions(b) <= leaf_size:
                acts = self._actions(b)
                vals = (self.a.cover_many(acts, types=b.alive) @ pi[b.alive] if len(b.alive)
                        else np.zeros(len(acts)))
                for i in np.argsort(-vals)[:n_best]:
                    v = float(vals[i])
                    value = max(value, v)
                    if v > floor + EPS:
                        heapq.heappush(best, (v, next(tick), acts[i]))
                        if len(best) > n_best:
                            heapq.heappop(best)
                continue
            kids = self._split(b)
            self._bound(kids, pi)
            depth = b.key[1] - 1
            for kid in kids:
                if kid.ub > max(value, floor) + EPS:
                    kid.key = (-kid.ub, depth, next(tick))
                    heapq.heappush(heap, kid)
        done = not heap or heap[0].ub <= max(value, floor) + EPS
        top = max(value, floor)
        bound = top if done else max(top, heap[0].ub)
        found = sorted(best, reverse=True)
        return BoxResult(max(value, 0.0), bound, done, [x[2] for x in found], [x[0] for x in found], nodes,
                         time.perf_counter() - t0)


class BoxLevel(PricingLevel):
    r"""Exact pricing by :class:`ActionBoxes` (module docstring): :math:`\beta` is the
    search's bound (certified also when ``time_cap`` stops it), proof when it finished at
    or below the master's price. After a search the time cap stopped, the level declines
    for the rest of the call (returns ``None``: the next level prices)."""

    name = "boxes"
    exact = True

    #: the share of the time left the ``k = 1`` search gets before the rest of ``k = 1``
    #: (``None``: it runs after the whole curve instead, with all the time left, :meth:`late`)
    single_share: float | None = None

    def __init__(self, boxes: ActionBoxes, time_cap: float | None = None, leaf_size: int = 64):
        super().__init__()
        self.boxes, self.time_cap, self.leaf_size = boxes, time_cap, leaf_size
        self.gave_up = False
        self.nodes = 0

    def search(self, pi, floor: float, time_limit: float | None, single: bool = False) -> BoxResult:
        """:meth:`ActionBoxes.maximise` within ``time_limit`` and ``time_cap`` (``single``:
        the best single action, the curve's bound at ``k = 1``, gets ``single_share`` of
        ``time_limit`` instead, all of it when that is ``None``); a search stopped by them
        makes the level decline from then on."""
        share = 1.0 if self.single_share is None else self.single_share
        cap = self.time_cap if not single else None if time_limit is None else share * time_limit
        if time_limit is not None:
            cap = time_limit if cap is None else min(time_limit, cap)
        res = self.boxes.maximise(pi, floor=floor, time_limit=cap, leaf_size=self.leaf_size)
        self.nodes += res.nodes
        self.gave_up |= not res.finished
        return res

    def price(self, duals, ctx):
        if self.gave_up or ctx.deadline.passed:
            return None
        res = self.search(duals.pi, duals.price, ctx.deadline.left())
        cols = [self.boxes.a.column(act, "boxes") for act in res.actions]
        return Priced(cols, dual_bound=res.bound, proof=res.finished and res.bound <= duals.price + EPS)

    def late(self, curve, m: np.ndarray, extra: float, time_limit: float | None) -> BoxResult | None:
        r"""With ``single_share = None``: the ``k = 1`` search after the whole curve, with
        ``time_limit`` (all the time left), above the coverage found at ``k = 1``; its bound
        tightens the curve's bounds in place, :math:`U(1) \le` its bound and :math:`U(k)
        \le U(k-1) + U(1)` (subadditivity), each never below the coverage found.
        ``m``: the people per type, 0 off the coverable types; ``extra``: the undecided
        people every bound adds."""
        if self.single_share is not None or not curve or curve[0].upper <= curve[0].covered + EPS:
            return None
        res = self.search(m, curve[0].covered, time_limit, single=True)
        single = math.floor(res.bound + EPS)
        prev = None
        for p in curve:
            up = single if prev is None else prev + single
            p.upper = max(p.covered, min(p.upper, up + extra))
            prev = p.upper - extra
            if p.covered >= p.upper - 1e-9:
                p.status = Status.OPTIMAL
        return res
