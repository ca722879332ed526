r"""Global actions: what an action is, how it applies to people, what it costs them.

An **action** :math:`a` changes a set :math:`F_a` of at most :math:`T_{\max}` actionable
original features, the same way for everyone: a categorical, ordinal, binary or binned
numeric feature is *set* to one category :math:`c_l`; a numeric (continuous) feature is
*shifted* by the same amount :math:`\delta_l` (``numeric="shift"``, in the space's scaled
units: raw :math:`\Delta = \delta_l(\mathrm{high}_l - \mathrm{low}_l)`, an integer for
integer features) or *set* to a value (``numeric="set"``). Every other feature keeps the
person's own value: :math:`x \oplus a`.

Person :math:`i` is **covered** by :math:`a`, :math:`c_{ia} = 1`, iff :math:`x_i \oplus a`
respects the rules — increase-only features not decreased, continuous values inside the
feature's domain :math:`[\mathrm{low}_l, \mathrm{high}_l]` (scaled :math:`[0, 1]`; never
clipped) — and the model accepts it (``score ≥ τ``, the embedding's numpy path; every
reported cover is re-checked with the real model by :func:`~groupcf.explain_global`).
Immutable features are never in :math:`F_a`.

**Cost** of :math:`a` for person :math:`i` (MACE's l1 terms, each times a user weight
:math:`w_l`, default 1):

.. math::

    d_{ia} = \sum_{l \in F_a} w_l\,\delta_l(x_i, x_i \oplus a), \qquad
    \delta_l = [c_l \ne c_l(x_i)] \text{ (nominal, binary)},\
    \frac{|c_l - c_l(x_i)|}{k_l - 1} \text{ (ordinal)},\
    |x'_l - x_{il}| \text{ (continuous, scaled)} .

Each feature's term is one :class:`CostTerm` (its weight and, for a one-hot or binary
feature, the table of :math:`\delta_l` between categories): the numpy path
(:meth:`ActionSpace.costs`) and both linear forms of the pricing MIP
(:mod:`~groupcf.global_actions.pricing`: per type through its inputs, and per action
through the action variables) are generated from it.

People equal on every feature are covered together: the problem works on the distinct
*types* of ``S`` with their multiplicities :math:`m_t`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..colgen import Column
from ..exceptions import InvalidInputError, NotRejectedError
from ..features.display import show_value
from ..models import DEFAULT_MARGIN, TrainedModel
from ..results.global_actions import apply_spec

#: a continuous value this far outside [0, 1] (scaled) still counts as inside (solver noise)
DOMAIN_TOL = 1e-9


@dataclass(frozen=True)
class Action:
    """``changes``: sorted ``(feature index, value)`` pairs — a category code for one-hot
    and binary features, a scaled shift (or value, ``numeric="set"``) for continuous ones."""

    changes: tuple

    @property
    def features(self) -> tuple:
        return tuple(l for l, _ in self.changes)

    @property
    def key(self) -> tuple:
        return tuple((int(l), round(float(v), 9) + 0.0) for l, v in self.changes)

    def __len__(self) -> int:
        return len(self.changes)

    def restrict(self, features) -> Action:
        keep = set(features)
        return Action(tuple((l, v) for l, v in self.changes if l in keep))


@dataclass(frozen=True)
class CostTerm:
    r"""One feature's term of :math:`d_{ia}` (module docstring): ``weight`` times a distance.

    ``table[h, c]`` is the distance from a person's category ``c`` to the action's
    category ``h`` (one-hot and binary features: 0/1 for a nominal or binary feature,
    :math:`|h - c|/(k - 1)` for an ordinal or binned one); ``None`` for a continuous
    feature, whose distance is the scaled change :math:`|\Delta|`.
    """

    weight: float
    table: np.ndarray | None = None

    @classmethod
    def of(cls, f, weight: float) -> CostTerm:
        """The term of feature ``f`` (a :class:`~groupcf.features.space.Feature`)."""
        if f.encoding == "continuous":
            return cls(float(weight))
        h = np.arange(len(f.categories), dtype=float)
        d = np.abs(h[:, None] - h[None, :])
        nominal = f.encoding == "binary" or f.kind == "categorical"
        d = (d > 0.5).astype(float) if nominal else d / max(len(h) - 1, 1)
        return cls(float(weight), d)

    def set_to(self, h, codes: np.ndarray) -> np.ndarray:
        """The term, per row, of setting the category ``h`` for people of category ``codes``."""
        assert self.table is not None    # a one-hot or binary feature
        return self.weight * self.table[np.asarray(h, dtype=np.int64), np.rint(codes).astype(np.int64)]

    def by_category(self, codes: np.ndarray) -> np.ndarray:
        """``(rows × categories)``: :meth:`set_to` every category, per row of ``codes``."""
        assert self.table is not None
        return self.weight * self.table[:, np.rint(codes).astype(np.int64)].T

    def change(self, delta) -> np.ndarray:
        """The term of a continuous feature changed by ``delta`` (scaled)."""
        return self.weight * np.abs(np.asarray(delta, dtype=float))


class ActionSpace:
    """``S`` as types, the actionable features, and vectorised coverage and cost of actions.

    Parameters
    ----------
    tm
        The resolved model (:class:`~groupcf.models.TrainedModel`).
    S
        Raw rows, all rejected.
    Tmax
        Most features an action changes (``None``: no limit).
    numeric
        ``"shift"`` or ``"set"`` for continuous features.
    cost
        ``{feature name: weight}`` (default 1 each).
    margin
        Safety margin on the model's score in the MIPs.
    split_by
        Optional integer code per row of ``S`` (e.g. a protected group): people with
        different codes are never one type, so every type lies inside one group
        (``type_group``).
    """

    def __init__(self, tm: TrainedModel, S: pd.DataFrame, Tmax: int | None = None, numeric: str = "shift",
                 cost: Mapping[str, float] | None = None, margin: float = DEFAULT_MARGIN,
                 split_by: np.ndarray | None = None):
        if not isinstance(S, pd.DataFrame):
            raise InvalidInputError(f"S must be a pandas DataFrame of raw features, got {type(S).__name__}")
        if len(S) == 0:
            raise InvalidInputError("S is empty: nothing to explain")
        if not S.index.is_unique:
            raise InvalidInputError("S has duplicate index labels; the assignment is indexed like S")
        if Tmax is not None and (int(Tmax) != Tmax or Tmax < 1):
            raise InvalidInputError(f"Tmax must be a positive integer or None, got {Tmax!r}")
        if numeric not in ("shift", "set"):
            raise InvalidInputError(f"numeric must be 'shift' or 'set', got {numeric!r}")
        if tm.space is None:
            raise InvalidInputError("global actions need the model's FeatureSpace: pass a Pipeline(FeatureSpace, "
                                    "classifier) or space=")
        assert tm.embedding is not None   # resolve_model without allow_black_box: a model groupcf embeds
        self.tm, self.S, self.numeric, self.margin = tm, S, numeric, float(margin)
        self.embedding = tm.embedding
        space = self.space = tm.space
        Zs = space.transform(S)
        accepted = tm.is_positive(S)
        if accepted.any():
            rows = S.index[accepted].tolist()
            raise NotRejectedError(
                f"{len(rows)} instance(s) of S are already accepted by the model, rows {rows[:20]}"
                f"{' ...' if len(rows) > 20 else ''}; S must contain rejected instances only")
        key = np.round(Zs, 12)
        if split_by is not None:
            key = np.column_stack([key, np.asarray(split_by, dtype=float)])
        uniq, inv, self.m = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        self.Z = uniq[:, :Zs.shape[1]]
        self.type_group = None if split_by is None else uniq[:, -1].astype(int)
        self.type_of_row = inv.ravel()
        self.m = self.m.astype(float)
        self.feats = list(space)
        self.codes = _codes(self.feats, self.Z)
        self.mutable = [l for l, f in enumerate(self.feats) if not f.immutable and _can_change(f)]
        self.Tmax = None if Tmax is None else int(min(Tmax, max(len(self.mutable), 1)))
        names = [f.name for f in self.feats]
        weights = dict(cost or {})
        bad = sorted(set(weights) - set(names))
        if bad:
            raise InvalidInputError(f"cost= names unknown feature(s) {bad}; features: {names}")
        self.w = np.array([float(weights.get(n, 1.0)) for n in names])
        if (self.w < 0).any() or not np.isfinite(self.w).all():
            raise InvalidInputError("cost weights must be finite and >= 0")
        self.terms = [CostTerm.of(f, wl) for f, wl in zip(self.feats, self.w)]
        self.tau = tm.logit_threshold

    # ------------------------------------------------------------------ sizes
    @property
    def n_types(self) -> int:
        return len(self.Z)

    def is_shift(self, l: int) -> bool:
        return self.feats[l].encoding == "continuous" and self.numeric == "shift"

    # ------------------------------------------------------------------ application
    def apply(self, action: Action, Z: np.ndarray | None = None, codes: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """``(Z', valid)``: the expanded rows after ``action`` (default: the types) and
        whether each respects the rules (module docstring)."""
        Z = self.Z if Z is None else Z
        codes = _codes(self.feats, Z) if codes is None else codes
        Zp = Z.copy()
        valid = np.ones(len(Z), dtype=bool)
        for l, val in action.changes:
            f = self.feats[l]
            if f.immutable:
                valid[:] = False
                continue
            cols = f.columns
            if f.encoding == "onehot":
                c = int(val)
                Zp[:, cols] = 0.0
                Zp[:, cols[c]] = 1.0
                if f.increase_only:
                    valid &= c >= codes[:, l]
            elif f.encoding == "binary":
                Zp[:, cols[0]] = float(val)
                if f.increase_only:
                    valid &= float(val) >= codes[:, l]
            else:
                new = Z[:, cols[0]] + val if self.numeric == "shift" else np.full(len(Z), float(val))
                valid &= (new >= -DOMAIN_TOL) & (new <= 1 + DOMAIN_TOL)
                if f.increase_only:
                    valid &= new >= Z[:, cols[0]] - DOMAIN_TOL
                Zp[:, cols[0]] = new
        return Zp, valid

    def cover(self, action: Action) -> np.ndarray:
        """Bool per type: covered by ``action`` (rules and the embedding's numpy score)."""
        Zp, valid = self.apply(action)
        out = np.zeros(self.n_types, dtype=bool)
        if valid.any():
            out[valid] = self.embedding.score(Zp[valid]) >= self.tau
        return out

    def action_to(self, t: int, v: np.ndarray) -> Action:
        """The action taking type ``t`` to the expanded point ``v`` (its changed features:
        categories set, continuous features shifted — or set, ``numeric="set"``)."""
        vc = _codes(self.feats, np.asarray(v, dtype=float)[None, :])[0]
        changes = []
        for l in self.mutable:
            f, x = self.feats[l], self.codes[t, l]
            if abs(vc[l] - x) <= 1e-9:
                continue
            if f.encoding == "continuous":
                changes.append((l, float(vc[l] - x) if self.numeric == "shift" else float(vc[l])))
            else:
                changes.append((l, int(round(vc[l]))))
        return Action(tuple(changes))

    def cover_many(self, actions, batch_rows: int = 200000, types: np.ndarray | None = None) -> np.ndarray:
        """Bool ``(actions × types)``: :meth:`cover` of each action (over ``types`` only,
        when given), the model evaluated once per batch of stacked rows."""
        Z0, codes = (self.Z, self.codes) if types is None else (self.Z[types], self.codes[types])
        n = len(Z0)
        out = np.zeros((len(actions), n), dtype=bool)
        per = max(1, batch_rows // max(n, 1))
        for s in range(0, len(actions), per):
            chunk = actions[s:s + per]
            Zs, Vs = zip(*(self.apply(a, Z0, codes) for a in chunk))
            Z, V = np.concatenate(Zs), np.concatenate(Vs)
            ok = np.zeros(len(Z), dtype=bool)
            if V.any():
                ok[V] = self.embedding.score(Z[V]) >= self.tau
            out[s:s + len(chunk)] = ok.reshape(len(chunk), n)
        return out

    def costs(self, action: Action, codes: np.ndarray | None = None, Z: np.ndarray | None = None) -> np.ndarray:
        """``d_ia`` per type (or per row of ``codes``/``Z``), module docstring."""
        codes = self.codes if codes is None else codes
        Z = self.Z if Z is None else Z
        out = np.zeros(len(codes))
        for l, val in action.changes:
            f, term = self.feats[l], self.terms[l]
            if f.encoding != "continuous":
                out += term.set_to(int(val), codes[:, l])
            elif self.numeric == "shift":
                out += term.change(np.full(len(codes), float(val)))
            else:
                out += term.change(float(val) - Z[:, f.columns[0]])
        return out

    def column(self, action: Action, source: str = "", cover: np.ndarray | None = None) -> Column:
        """The engine's column for ``action`` (cover and costs over the types); ``cover``:
        its :meth:`cover` when already computed (e.g. by :meth:`cover_many`)."""
        return Column(key=action.key, cover=self.cover(action) if cover is None else cover, payload=action,
                      element_costs=self.costs(action), source=source)

    # ------------------------------------------------------------------ raw rows
    def apply_raw(self, action: Action, X: pd.DataFrame) -> pd.DataFrame:
        """Raw rows of ``X`` after ``action`` (same index and columns): its :meth:`spec`
        applied as the result's ``apply`` does."""
        return apply_spec(X, self.spec(action))

    def spec(self, action: Action) -> list[dict]:
        """The action in raw terms: ``[{"feature", "op", "value"}]`` (``op`` ``"set"`` or
        ``"shift"``; a shift's value is the raw amount)."""
        out = []
        for l, val in action.changes:
            f = self.feats[l]
            if f.encoding in ("onehot", "binary"):
                out.append({"feature": f.name, "op": "set", "value": f.categories[int(val)]})
            else:
                span = f.high - f.low
                raw = val * span if self.numeric == "shift" else f.low + val * span
                if f.integer:
                    raw = int(round(raw))
                out.append({"feature": f.name, "op": self.numeric, "value": raw})
        return out

    def describe(self, action: Action) -> str:
        parts = []
        for s in self.spec(action):
            if s["op"] == "shift":
                parts.append(f"{s['feature']} {'+' if s['value'] >= 0 else '-'} {abs(s['value']):g}")
            else:
                parts.append(f"{s['feature']} → {show_value(self.space[s['feature']], s['value'])}")
        return ", ".join(parts) if parts else "(no change)"


def _can_change(f) -> bool:
    if f.encoding == "onehot":
        return len(f.categories) > 1
    if f.encoding == "continuous":
        return f.high > f.low
    return True


def _codes(feats, Z: np.ndarray) -> np.ndarray:
    """Per feature: category code (one-hot), 0/1 (binary) or the scaled value."""
    out = np.empty((len(Z), len(feats)))
    for l, f in enumerate(feats):
        block = Z[:, f.columns]
        out[:, l] = block.argmax(axis=1) if f.encoding == "onehot" else block[:, 0]
    return out
