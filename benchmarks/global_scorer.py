r"""One scorer for global counterfactual actions, whoever found them.

Every method (groupcf, GLOBE-CE, AReS, FACTS, ...) hands over its actions as a list of
*specs*; this module applies all of them to the same rejected people, re-checks every
resulting row with the real model and the rules, and computes coverage and mean cost with
one cost definition. Nothing here trusts a method's own coverage or cost.

Action specs
------------
An action is either a list of changes, or a dict ``{"changes": [...], "when": {...}}``.
A change is ``{"feature": f, "op": op, "value": v}`` with ``op``

* ``"set"``: every person's ``f`` becomes ``v``;
* ``"shift"``: every person's ``f`` (numeric) becomes ``f + v``;
* ``"map"``: ``v`` is a dict ``{old: new}``; a person whose ``f`` is a key of ``v`` gets
  the new value, the others keep theirs (GLOBE-CE's rounded translations, "if A then B").

``"when"`` (AReS's "if subgroup"): ``{feature: value, list of values, or
{"interval": [lo, hi]} (``lo < x <= hi``, a numeric bin)}``; the action
applies only to people matching every condition; the others are left unchanged (and so
stay rejected). These are exactly the ``specs`` of :class:`groupcf.GlobalExplanation`
(``set``/``shift``), extended by ``map`` and ``when``.

Coverage
--------
Each person :math:`i` and action :math:`a` give the row :math:`x_i \oplus a`. The action
*covers* :math:`i` iff

1. the row differs from :math:`x_i` only outside the immutable features (the same list
   for every method);
2. no increase-only feature decreased (numeric, or an ordered categorical's rank);
3. every numeric value lies inside the feature's training range ``[min, max]`` (no
   clipping) and every categorical value is one seen in training;
4. the real model accepts the row (``predict(row) == 1``).

Each person takes the cheapest covering action (the "minimum cost" convention of
GLOBE-CE and AReS); *coverage* is the share of all rejected people covered, *mean cost*
the mean of those minimum costs over the covered people.

Cost (GLOBE-CE's definition, Ley et al. 2023, Sec. 5 and their code)
--------------------------------------------------------------------
.. math::

    c(x, x') = \sum_{l\ \text{numeric}} \frac{|x'_l - x_l|}{w_l}
             + \sum_{l\ \text{categorical}} [x'_l \ne x_l], \qquad
    w_l = \frac{\max_l - \min_l}{10},

the width of one of 10 equal bins of feature :math:`l`'s training range (GLOBE-CE takes
it from AReS's ``pd.cut(..., bins=10)``). Ordinal and binary features count as
categorical (1 per change). A numeric feature constant in training has no width: any
change of it is not covering.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: numeric values this far outside the training range still count as inside (float noise)
DOMAIN_TOL = 1e-9
N_BINS = 10


@dataclass
class Rules:
    """Feature kinds, the actionability rules and the cost scale, from the training data.

    Attributes
    ----------
    numeric, categorical
        Feature names (columns of the raw frame) of each kind.
    immutable, increase_only
        Rules shared by every method scored.
    low, high
        Training range of each numeric feature (the domain).
    width
        Bin width ``(high - low) / n_bins`` of each numeric feature (the cost unit).
    categories
        Values seen in training for each categorical feature.
    """

    numeric: list
    categorical: list
    immutable: list = field(default_factory=list)
    increase_only: list = field(default_factory=list)
    low: dict = field(default_factory=dict)
    high: dict = field(default_factory=dict)
    width: dict = field(default_factory=dict)
    categories: dict = field(default_factory=dict)

    @classmethod
    def from_training(cls, X: pd.DataFrame, immutable: Sequence[str] = (), increase_only: Sequence[str] = (),
                      numeric: Sequence[str] | None = None, n_bins: int = N_BINS) -> Rules:
        """Rules from the training frame ``X``: numeric = numeric dtypes unless given."""
        if numeric is None:
            numeric = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c])
                       and not isinstance(X[c].dtype, pd.CategoricalDtype) and not pd.api.types.is_bool_dtype(X[c])]
        numeric = list(numeric)
        categorical = [c for c in X.columns if c not in numeric]
        unknown = set(immutable) | set(increase_only)
        unknown -= set(X.columns)
        if unknown:
            raise KeyError(f"rules name unknown features {sorted(unknown)}")
        low = {c: float(X[c].min()) for c in numeric}
        high = {c: float(X[c].max()) for c in numeric}
        return cls(numeric=numeric, categorical=categorical, immutable=list(immutable),
                   increase_only=list(increase_only), low=low, high=high,
                   width={c: (high[c] - low[c]) / n_bins for c in numeric},
                   categories={c: set(pd.unique(X[c].dropna())) for c in categorical})


def _normalise(action) -> tuple[list, dict]:
    if isinstance(action, Mapping):
        return list(action.get("changes", [])), dict(action.get("when", {}) or {})
    return list(action), {}


def apply_action(X: pd.DataFrame, action) -> pd.DataFrame:
    """Each row of ``X`` after ``action`` (module docstring); rows outside ``when`` unchanged."""
    changes, when = _normalise(action)
    applies = np.ones(len(X), dtype=bool)
    for f, v in when.items():
        if isinstance(v, Mapping) and "interval" in v:
            lo, hi = v["interval"]
            x = X[f].to_numpy(dtype=float)
            applies &= (x > lo) & (x <= hi)
        else:
            vals = list(v) if isinstance(v, list | tuple | set) else [v]
            applies &= X[f].isin(vals).to_numpy()
    out = X.copy()
    for f in {c["feature"] for c in changes}:
        out[f] = out[f].astype(object)
    for c in changes:
        f, op, v = c["feature"], c["op"], c["value"]
        col = out[f].to_numpy(dtype=object).copy()
        if op == "set":
            col[applies] = v
        elif op == "shift":
            col[applies] = col[applies] + v
        elif op == "map":
            col[applies] = [v.get(x, x) for x in col[applies]]
        else:
            raise ValueError(f"unknown op {op!r} (set, shift, map)")
        out[f] = col
    for f in {c["feature"] for c in changes}:
        if isinstance(X[f].dtype, pd.CategoricalDtype):
            out[f] = pd.Categorical(out[f], dtype=X[f].dtype)
        else:
            out[f] = out[f].infer_objects()
            if pd.api.types.is_numeric_dtype(X[f]) and pd.api.types.is_numeric_dtype(out[f]):
                out[f] = out[f].astype(np.result_type(X[f].dtype, out[f].dtype))
    return out


def check_rows(X: pd.DataFrame, Xcf: pd.DataFrame, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """``(valid, cost)`` per row: rules 1–3 of the module docstring, GLOBE-CE's cost."""
    n = len(X)
    valid = np.ones(n, dtype=bool)
    cost = np.zeros(n)
    for f in rules.numeric:
        x = X[f].to_numpy(dtype=float)
        xc = Xcf[f].to_numpy(dtype=float)
        d = xc - x
        moved = np.abs(d) > 0
        valid &= (xc >= rules.low[f] - DOMAIN_TOL) & (xc <= rules.high[f] + DOMAIN_TOL) | ~moved
        if f in rules.immutable:
            valid &= ~moved
        if f in rules.increase_only:
            valid &= d >= 0
        w = rules.width[f]
        if w > 0:
            cost += np.abs(d) / w
        else:
            valid &= ~moved
    for f in rules.categorical:
        x, xc = X[f].astype(object).to_numpy(), Xcf[f].astype(object).to_numpy()
        moved = np.array([a != b for a, b in zip(x, xc, strict=True)], dtype=bool)
        known = rules.categories.get(f)
        if known is not None:
            valid &= np.array([b in known for b in xc], dtype=bool) | ~moved
        if f in rules.immutable:
            valid &= ~moved
        if f in rules.increase_only:
            dt = X[f].dtype
            if not (isinstance(dt, pd.CategoricalDtype) and dt.ordered):
                raise ValueError(f"increase-only categorical {f!r} needs an ordered categorical dtype")
            order = {c: r for r, c in enumerate(dt.categories)}
            valid &= np.array([order.get(b, -1) >= order[a] for a, b in zip(x, xc, strict=True)]) | ~moved
        cost += moved
    return valid, cost


@dataclass
class Score:
    """The scorer's answer for one method's actions on one population.

    Attributes
    ----------
    cost_matrix
        ``n × A``: person ``i``'s cost under action ``a``, ``inf`` where it does not cover.
    best
        Per person: index of the cheapest covering action, -1 when uncovered.
    cost
        Per person: that action's cost, NaN when uncovered.
    coverage, n_covered, n, mean_cost
        Share covered, people covered, people scored, mean cost of the covered.
    """

    cost_matrix: np.ndarray
    best: np.ndarray
    cost: np.ndarray
    coverage: float
    n_covered: int
    n: int
    mean_cost: float


def score(X: pd.DataFrame, actions: Sequence, predict: Callable[[pd.DataFrame], np.ndarray], rules: Rules) -> Score:
    """Apply every action to every row of ``X`` (the rejected people), re-check, score.

    Parameters
    ----------
    X
        Raw rows of the rejected people (the same for every method).
    actions
        One spec per action (module docstring).
    predict
        Raw frame → 0/1 per row (the real model, e.g. ``pipe.predict``).
    rules
        :class:`Rules` (immutable, increase-only, domain, bin widths).

    Returns
    -------
    Score
    """
    n = len(X)
    if n and np.asarray(predict(X)).astype(int).any():
        raise ValueError("X must hold rejected people only")
    M = np.full((n, len(actions)), np.inf)
    for a, act in enumerate(actions):
        Xcf = apply_action(X, act)
        valid, cost = check_rows(X, Xcf, rules)
        ok = valid.copy()
        if ok.any():
            ok[ok] = np.asarray(predict(Xcf.loc[ok])).astype(int) == 1
        M[ok, a] = cost[ok]
    best = np.where(np.isfinite(M).any(axis=1), M.argmin(axis=1), -1) if len(actions) else np.full(n, -1)
    cost = np.where(best >= 0, M.min(axis=1) if len(actions) else np.nan, np.nan)
    n_cov = int((best >= 0).sum())
    return Score(cost_matrix=M, best=best, cost=cost, coverage=n_cov / n if n else float("nan"), n_covered=n_cov,
                 n=n, mean_cost=float(np.nanmean(cost)) if n_cov else float("nan"))
