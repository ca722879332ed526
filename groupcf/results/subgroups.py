r"""Who each global action is for, and recourse gaps between groups.

**Readable subgroups** (:func:`best_rule`): for a target set of people :math:`Y` (those
assigned to one action), the conjunction of at most ``max_depth`` (≤ 2) atoms over the raw
features — ``feature = value`` for a categorical feature, ``feature < t`` / ``feature ≥ t``
for a numeric one (``t`` among its quantiles) — with the best F1 score

.. math::

    \mathrm{precision} = \frac{|R \cap Y|}{|R|}, \qquad
    \mathrm{recall} = \frac{|R \cap Y|}{|Y|}, \qquad
    F_1 = \frac{2\,|R \cap Y|}{|R| + |Y|}

(:math:`R` the people the rule selects); every pair of atoms is scored at once by one
matrix product (``Aᵀ diag(y) A``).

**Gaps between groups** (:func:`bootstrap_gaps`): coverage (share covered) and mean cost
(over the covered) per group with percentile bootstrap intervals, resampling people within
each group, and each group's difference to the largest group with its interval (FACTS'
"equal effectiveness" and "equal cost of effectiveness").
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = ["atoms", "best_rule", "bootstrap_gaps"]


def atoms(X: pd.DataFrame, n_thresholds: int = 8) -> tuple[np.ndarray, list[str]]:
    """The atoms rules are made of, over the raw rows ``X``: ``(A, names)`` with ``A`` bool
    (rows × atoms) — ``feature = value`` per category, ``feature < t`` and ``feature >= t``
    at up to ``n_thresholds`` readable quantile cut points per numeric feature."""
    cols, names = [], []
    for c in X.columns:
        s = X[c]
        if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype) and s.nunique() > 2:
            v = s.to_numpy(dtype=float)
            q = np.quantile(v, np.linspace(0, 1, n_thresholds + 2)[1:-1])
            # readable cut points: whole numbers for integer columns, 3 significant digits else
            q = np.ceil(q) if pd.api.types.is_integer_dtype(s.dtype) else np.array([float(f"{t:.3g}") for t in q])
            for t in np.unique(q):
                lo = v < t
                if 0 < lo.sum() < len(v):
                    cols += [lo, ~lo]
                    names += [f"{c} < {t:g}", f"{c} >= {t:g}"]
        else:
            for val in pd.unique(s.astype(object)):
                eq = (s.astype(object) == val).to_numpy()
                if 0 < eq.sum() < len(s):
                    cols.append(eq)
                    names.append(f"{c} = {val}")
    A = np.array(cols, dtype=bool).T if cols else np.zeros((len(X), 0), dtype=bool)
    return A, names


def best_rule(X: pd.DataFrame, y: npt.ArrayLike, max_depth: int = 2, n_thresholds: int = 8) -> dict[str, Any]:
    """The rule of depth ≤ ``max_depth`` with the best F1 for the bool target ``y`` over
    the raw rows ``X`` (module docstring): ``{"rule", "precision", "recall", "f1",
    "n_selected"}``; ``"everyone"`` when no atom beats selecting every row."""
    yb = np.asarray(y, dtype=bool)
    n, ny = len(yb), int(yb.sum())
    out: dict[str, Any] = {"rule": "everyone", "precision": ny / n if n else float("nan"), "recall": 1.0 if ny else float("nan"),
           "f1": 2 * ny / (n + ny) if n + ny else 0.0, "n_selected": n}
    if ny == 0 or ny == n:
        return out
    A, names = atoms(X, n_thresholds)
    if not A.shape[1]:
        return out
    Af = A.astype(float)
    tp1, sel1 = Af[yb].sum(axis=0), Af.sum(axis=0)
    f1 = 2 * tp1 / (sel1 + ny)
    best: tuple[float, tuple[int, ...]] = (float(f1.max()), (int(f1.argmax()),))
    if max_depth >= 2:
        TP = Af[yb].T @ Af[yb]
        SEL = Af.T @ Af
        F = np.where(SEL > 0, 2 * TP / (SEL + ny), 0.0)
        np.fill_diagonal(F, -1.0)
        i, j = np.unravel_index(int(F.argmax()), F.shape)
        if F[i, j] > best[0] + 1e-12:
            best = (float(F[i, j]), (int(i), int(j)))
    if best[0] <= out["f1"] + 1e-12:
        return out
    mask = A[:, list(best[1])].all(axis=1)
    tp = int((mask & yb).sum())
    return {"rule": " and ".join(names[a] for a in best[1]), "precision": tp / int(mask.sum()),
            "recall": tp / ny, "f1": best[0], "n_selected": int(mask.sum())}


def _ci(samples: np.ndarray, level: float) -> tuple[float, float]:
    s = samples[np.isfinite(samples)]
    if not len(s):
        return float("nan"), float("nan")
    a = (1 - level) / 2
    return float(np.quantile(s, a)), float(np.quantile(s, 1 - a))


def bootstrap_gaps(covered: npt.ArrayLike, cost: npt.ArrayLike, groups: npt.ArrayLike, n_boot: int = 1000,
                   level: float = 0.95, random_state: int | np.random.Generator | None = None) -> pd.DataFrame:
    """Coverage and mean cost per group with bootstrap intervals, and the differences to
    the largest group (module docstring). ``covered`` bool, ``cost`` (NaN where uncovered)
    and ``groups`` are aligned per person."""
    rng = np.random.default_rng(random_state)
    cov = np.asarray(covered, dtype=bool)
    costs = np.asarray(cost, dtype=float)
    g = pd.Series(np.asarray(groups, dtype=object))
    labels = list(g.value_counts().index)
    boots: dict[Any, tuple[np.ndarray, np.ndarray]] = {}
    rows: list[dict[str, Any]] = []
    for lab in labels:
        idx = np.flatnonzero((g == lab).to_numpy())
        cv, cs = cov[idx], costs[idx]
        draw = rng.integers(0, len(idx), size=(n_boot, len(idx)))
        cov_b = cv[draw].mean(axis=1)
        with warnings.catch_warnings():      # a draw of only uncovered people has no mean cost: NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            cost_b = np.nanmean(np.where(cv[draw], cs[draw], np.nan), axis=1) if cv.any() else np.full(n_boot, np.nan)
        boots[lab] = (cov_b, cost_b)
        rows.append({"group": lab, "n": len(idx), "coverage": cv.mean(),
                     "coverage_lo": _ci(cov_b, level)[0], "coverage_hi": _ci(cov_b, level)[1],
                     "mean_cost": float(np.nanmean(cs[cv])) if cv.any() else float("nan"),
                     "mean_cost_lo": _ci(cost_b, level)[0], "mean_cost_hi": _ci(cost_b, level)[1]})
    ref = labels[0]
    for r in rows:
        dc = boots[r["group"]][0] - boots[ref][0]
        dm = boots[r["group"]][1] - boots[ref][1]
        r.update(coverage_gap=r["coverage"] - rows[0]["coverage"], coverage_gap_lo=_ci(dc, level)[0],
                 coverage_gap_hi=_ci(dc, level)[1], cost_gap=r["mean_cost"] - rows[0]["mean_cost"],
                 cost_gap_lo=_ci(dm, level)[0], cost_gap_hi=_ci(dm, level)[1])
    return pd.DataFrame(rows).set_index("group")
