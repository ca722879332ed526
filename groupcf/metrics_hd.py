r"""Metrics of Shekhar et al., "A PSO Based Method to Generate Actionable Counterfactuals
for High Dimensional Data" (arXiv 2311.12825, eqs. 8-15), following DiCE's definitions
(Mothilal, Sharma & Tan 2020), on *raw* rows.

For a query :math:`x`, its :math:`k` counterfactuals :math:`c^1..c^k`, continuous
features :math:`C` (scaled by their median absolute deviation :math:`\mathrm{MAD}_j` on
the training data; a zero MAD counts as 1) and categorical features :math:`K`:

* continuous proximity (eq. 8, reported as a distance: lower is closer)
  :math:`\frac1k\sum_i \frac1{|C|}\sum_{j\in C} |c^i_j - x_j| / \mathrm{MAD}_j`;
* categorical proximity (eq. 9, as a distance)
  :math:`\frac1k\sum_i \frac1{|K|}\sum_{j\in K} [c^i_j \ne x_j]`;
* sparsity (eqs. 10-11): mean fraction of features changed (lower is sparser);
* pairwise distance :math:`d(a, b) = \frac1{|C|}\sum_{C} |a_j-b_j|/\mathrm{MAD}_j +
  \frac1{|K|}\sum_K [a_j \ne b_j]` (a term is dropped when its set is empty);
* diversity (eqs. 12-13): mean :math:`d(c^i, c^l)` over pairs :math:`i < l`;
* :func:`normalized_diversity` (eq. 15 as implemented here): mean over pairs of
  :math:`d(c^i, c^l) / (d(c^i, x) + d(c^l, x))`, in [0, 1] by the triangle inequality
  (1: the two counterfactuals lie on opposite sides of the query; 0: identical);
* :func:`diversity_over_proximity`: diversity divided by the (continuous) proximity —
  what the paper's Table II prints in its "Norm. Div" column (23 of its 24 rows agree
  to four decimals), **not** eq. 15;
* coverage (eq. 14): fraction of queries with at least one valid counterfactual.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .exceptions import InvalidInputError

__all__ = [
    "categorical_proximity",
    "continuous_proximity",
    "coverage_hd",
    "diversity_hd",
    "diversity_over_proximity",
    "mad",
    "normalized_diversity",
    "pairwise_distance_hd",
    "sparsity_hd",
    "summarize_hd",
]


def mad(data: pd.DataFrame, continuous: Sequence[str] | None = None) -> pd.Series:
    """Median absolute deviation of each continuous column of ``data`` (0 -> 1).

    Parameters
    ----------
    data : pandas.DataFrame
        Training rows (raw values).
    continuous : sequence of str or None, default None
        The continuous columns (``None``: every numeric column).

    Returns
    -------
    pandas.Series
        The MAD per column; a zero MAD is replaced by 1.

    Examples
    --------
    >>> from groupcf.metrics_hd import mad
    >>> mad(pd.DataFrame({"a": [0, 2, 4, 6, 20], "b": [0, 0, 1, 1, 1], "c": list("uvuvu")}))
    a    2.0
    b    1.0
    dtype: float64
    """
    cols = list(continuous) if continuous is not None else \
        [c for c in data.columns if pd.api.types.is_numeric_dtype(data[c])]
    X = data[cols].astype(float)
    m = (X - X.median()).abs().median()
    return m.where(m > 0, 1.0)


def _split(cols, scale: pd.Series, categorical):
    """Continuous columns: those with a MAD in ``scale`` and not listed as categorical;
    every other column is compared as a category."""
    cat_set = set(categorical)
    cont = [c for c in cols if c in scale.index and c not in cat_set]
    cat = [c for c in cols if c not in set(cont)]
    return cont, cat


def _frame(X) -> pd.DataFrame:
    if isinstance(X, pd.Series):
        return X.to_frame().T
    if not isinstance(X, pd.DataFrame):
        raise InvalidInputError(f"expected a DataFrame of raw rows, got {type(X).__name__}")
    return X


def _dist(A: pd.DataFrame, B: pd.DataFrame, scale: pd.Series, categorical) -> np.ndarray:
    """Row-wise :math:`d(a, b)` of aligned frames."""
    cont, cat = _split(list(A.columns), scale, categorical)
    out = np.zeros(len(A))
    if cont:
        diff = np.abs(A[cont].to_numpy(float) - B[cont].to_numpy(float)) / scale[cont].to_numpy(float)
        out += diff.mean(axis=1)
    if cat:
        out += (A[cat].to_numpy(object) != B[cat].to_numpy(object)).mean(axis=1)
    return out


def continuous_proximity(x, X_cf, scale: pd.Series, categorical: Iterable = ()) -> float:
    """Eq. 8 (distance form): mean MAD-scaled |Δ| over continuous features and counterfactuals.

    Parameters
    ----------
    x : pandas.Series or pandas.DataFrame
        The query (raw values).
    X_cf : pandas.DataFrame or pandas.Series
        Its counterfactuals (raw values), one per row.
    scale : pandas.Series
        MAD of each continuous column (:func:`mad`); a column without one is compared
        as a category.
    categorical : iterable of str, default ()
        Columns compared as categories even when ``scale`` has them.

    Returns
    -------
    float
        Lower is closer; ``nan`` without rows or continuous columns.

    Raises
    ------
    InvalidInputError
        Rows that are not a DataFrame / Series.

    Examples
    --------
    >>> from groupcf.metrics_hd import mad, continuous_proximity
    >>> scale = mad(pd.DataFrame({"a": [0, 2, 4, 6, 20], "b": [0, 0, 1, 1, 1]}))   # a: 2, b: 1 (0 -> 1)
    >>> x = pd.Series({"a": 4, "b": 0, "c": "u"})
    >>> X_cf = pd.DataFrame({"a": [6, 8], "b": [0, 1], "c": ["u", "v"]})
    >>> continuous_proximity(x, X_cf, scale)        # (2/2 + 0 + 4/2 + 1/1) / 4
    1.0
    """
    X_cf = _frame(X_cf)
    cont, _ = _split(list(X_cf.columns), scale, categorical)
    if not len(X_cf) or not cont:
        return float("nan")
    xv = _frame(x)[cont].to_numpy(float)
    return float((np.abs(X_cf[cont].to_numpy(float) - xv) / scale[cont].to_numpy(float)).mean())


def categorical_proximity(x, X_cf, categorical: Iterable) -> float:
    """Eq. 9 (distance form): mean fraction of categorical features changed.

    Parameters
    ----------
    x : pandas.Series or pandas.DataFrame
        The query (raw values).
    X_cf : pandas.DataFrame or pandas.Series
        Its counterfactuals (raw values), one per row.
    categorical : iterable of str
        The categorical columns.

    Returns
    -------
    float
        Lower is closer; ``nan`` without rows or categorical columns.

    Raises
    ------
    InvalidInputError
        Rows that are not a DataFrame / Series.

    Examples
    --------
    >>> from groupcf.metrics_hd import mad, categorical_proximity
    >>> scale = mad(pd.DataFrame({"a": [0, 2, 4, 6, 20], "b": [0, 0, 1, 1, 1]}))   # a: 2, b: 1 (0 -> 1)
    >>> x = pd.Series({"a": 4, "b": 0, "c": "u"})
    >>> X_cf = pd.DataFrame({"a": [6, 8], "b": [0, 1], "c": ["u", "v"]})
    >>> categorical_proximity(x, X_cf, ["c"])
    0.5
    """
    X_cf, cat = _frame(X_cf), list(categorical)
    if not len(X_cf) or not cat:
        return float("nan")
    return float((X_cf[cat].to_numpy(object) != _frame(x)[cat].to_numpy(object)).mean())


def sparsity_hd(x, X_cf, atol: float = 1e-9) -> float:
    """Eqs. 10-11: mean fraction of features changed (numeric: by more than ``atol``).

    Parameters
    ----------
    x : pandas.Series or pandas.DataFrame
        The query (raw values).
    X_cf : pandas.DataFrame or pandas.Series
        Its counterfactuals (raw values), one per row.
    atol : float, default 1e-9
        A numeric feature changes when it moves by more than this.

    Returns
    -------
    float
        Lower is sparser; ``nan`` without rows.

    Raises
    ------
    InvalidInputError
        Rows that are not a DataFrame / Series.

    Examples
    --------
    >>> from groupcf.metrics_hd import mad, sparsity_hd
    >>> scale = mad(pd.DataFrame({"a": [0, 2, 4, 6, 20], "b": [0, 0, 1, 1, 1]}))   # a: 2, b: 1 (0 -> 1)
    >>> x = pd.Series({"a": 4, "b": 0, "c": "u"})
    >>> X_cf = pd.DataFrame({"a": [6, 8], "b": [0, 1], "c": ["u", "v"]})
    >>> round(sparsity_hd(x, X_cf), 4)               # 1 of 3, then 3 of 3 features
    0.6667
    """
    X_cf = _frame(X_cf)
    if not len(X_cf):
        return float("nan")
    xr = _frame(x)[X_cf.columns]
    changed = np.zeros((len(X_cf), X_cf.shape[1]), dtype=bool)
    for j, c in enumerate(X_cf.columns):
        if pd.api.types.is_numeric_dtype(X_cf[c]) and pd.api.types.is_numeric_dtype(xr[c]):
            changed[:, j] = np.abs(X_cf[c].to_numpy(float) - float(xr[c].iloc[0])) > atol
        else:
            changed[:, j] = X_cf[c].to_numpy(object) != xr[c].iloc[0]
    return float(changed.mean())


def pairwise_distance_hd(A, B, scale: pd.Series, categorical: Iterable = ()) -> np.ndarray:
    """:math:`d(a, b)` for each pair of aligned rows of ``A`` and ``B``.

    Parameters
    ----------
    A, B : pandas.DataFrame or pandas.Series
        Rows (raw values) compared row by row (``B``'s columns are aligned to ``A``'s).
    scale : pandas.Series
        MAD of each continuous column (:func:`mad`); a column without one is compared
        as a category.
    categorical : iterable of str, default ()
        Columns compared as categories even when ``scale`` has them.

    Returns
    -------
    numpy.ndarray
        One distance per row: the mean MAD-scaled |Δ| over continuous columns plus the
        share of categorical columns that differ.

    Raises
    ------
    InvalidInputError
        Rows that are not a DataFrame / Series.

    Examples
    --------
    >>> from groupcf.metrics_hd import mad, pairwise_distance_hd
    >>> scale = mad(pd.DataFrame({"a": [0, 2, 4, 6, 20], "b": [0, 0, 1, 1, 1]}))   # a: 2, b: 1 (0 -> 1)
    >>> x = pd.Series({"a": 4, "b": 0, "c": "u"})
    >>> X_cf = pd.DataFrame({"a": [6, 8], "b": [0, 1], "c": ["u", "v"]})
    >>> pairwise_distance_hd(X_cf.iloc[[0]], X_cf.iloc[[1]], scale)   # (2/2 + 1/1) / 2 + 1/1
    array([2.])
    """
    A, B = _frame(A), _frame(B)
    return _dist(A.reset_index(drop=True), B[A.columns].reset_index(drop=True), scale, categorical)


def _pairs(X_cf):
    X_cf = _frame(X_cf).reset_index(drop=True)
    idx = list(itertools.combinations(range(len(X_cf)), 2))
    return X_cf, idx


def diversity_hd(X_cf, scale: pd.Series, categorical: Iterable = ()) -> float:
    """Eqs. 12-13: mean pairwise distance :math:`d` between the counterfactuals.

    Parameters
    ----------
    X_cf : pandas.DataFrame or pandas.Series
        Its counterfactuals (raw values), one per row.
    scale : pandas.Series
        MAD of each continuous column (:func:`mad`); a column without one is compared
        as a category.
    categorical : iterable of str, default ()
        Columns compared as categories even when ``scale`` has them.

    Returns
    -------
    float
        Higher is more diverse; ``nan`` for fewer than two rows.

    Raises
    ------
    InvalidInputError
        Rows that are not a DataFrame / Series.

    Examples
    --------
    >>> from groupcf.metrics_hd import mad, diversity_hd
    >>> scale = mad(pd.DataFrame({"a": [0, 2, 4, 6, 20], "b": [0, 0, 1, 1, 1]}))   # a: 2, b: 1 (0 -> 1)
    >>> x = pd.Series({"a": 4, "b": 0, "c": "u"})
    >>> X_cf = pd.DataFrame({"a": [6, 8], "b": [0, 1], "c": ["u", "v"]})
    >>> diversity_hd(X_cf, scale)
    2.0
    """
    X_cf, idx = _pairs(X_cf)
    if not idx:
        return float("nan")
    i, j = map(list, zip(*idx))
    return float(_dist(X_cf.iloc[i].reset_index(drop=True), X_cf.iloc[j].reset_index(drop=True),
                       scale, categorical).mean())


def normalized_diversity(x, X_cf, scale: pd.Series, categorical: Iterable = ()) -> float:
    """Eq. 15 as implemented here: mean over pairs of :math:`d(c^i, c^l) / (d(c^i, x) + d(c^l, x))`.

    Parameters
    ----------
    x : pandas.Series or pandas.DataFrame
        The query (raw values).
    X_cf : pandas.DataFrame or pandas.Series
        Its counterfactuals (raw values), one per row.
    scale : pandas.Series
        MAD of each continuous column (:func:`mad`); a column without one is compared
        as a category.
    categorical : iterable of str, default ()
        Columns compared as categories even when ``scale`` has them.

    Returns
    -------
    float
        In [0, 1] (1: two counterfactuals on opposite sides of the query); ``nan`` for
        fewer than two rows.

    Raises
    ------
    InvalidInputError
        Rows that are not a DataFrame / Series.

    Examples
    --------
    >>> from groupcf.metrics_hd import mad, normalized_diversity
    >>> scale = mad(pd.DataFrame({"a": [0, 2, 4, 6, 20], "b": [0, 0, 1, 1, 1]}))   # a: 2, b: 1 (0 -> 1)
    >>> x = pd.Series({"a": 4, "b": 0, "c": "u"})
    >>> X_cf = pd.DataFrame({"a": [6, 8], "b": [0, 1], "c": ["u", "v"]})
    >>> round(normalized_diversity(x, X_cf, scale), 4)     # 2 / (0.5 + 2.5)
    0.6667
    """
    X_cf, idx = _pairs(X_cf)
    if not idx:
        return float("nan")
    X0 = pd.concat([_frame(x)[X_cf.columns]] * len(X_cf), ignore_index=True)
    to_x = _dist(X_cf, X0, scale, categorical)
    i, j = map(list, zip(*idx))
    num = _dist(X_cf.iloc[i].reset_index(drop=True), X_cf.iloc[j].reset_index(drop=True), scale, categorical)
    den = to_x[i] + to_x[j]
    return float(np.mean(np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)))


def diversity_over_proximity(x, X_cf, scale: pd.Series, categorical: Iterable = ()) -> float:
    """Diversity / continuous proximity: the paper's Table II "Norm. Div" column (not eq. 15).

    Parameters
    ----------
    x : pandas.Series or pandas.DataFrame
        The query (raw values).
    X_cf : pandas.DataFrame or pandas.Series
        Its counterfactuals (raw values), one per row.
    scale : pandas.Series
        MAD of each continuous column (:func:`mad`); a column without one is compared
        as a category.
    categorical : iterable of str, default ()
        Columns compared as categories even when ``scale`` has them.

    Returns
    -------
    float
        :func:`diversity_hd` over :func:`continuous_proximity`; ``nan`` when the
        proximity is zero or undefined.

    Raises
    ------
    InvalidInputError
        Rows that are not a DataFrame / Series.

    Examples
    --------
    >>> from groupcf.metrics_hd import mad, diversity_over_proximity
    >>> scale = mad(pd.DataFrame({"a": [0, 2, 4, 6, 20], "b": [0, 0, 1, 1, 1]}))   # a: 2, b: 1 (0 -> 1)
    >>> x = pd.Series({"a": 4, "b": 0, "c": "u"})
    >>> X_cf = pd.DataFrame({"a": [6, 8], "b": [0, 1], "c": ["u", "v"]})
    >>> diversity_over_proximity(x, X_cf, scale)
    2.0
    """
    prox = continuous_proximity(x, X_cf, scale, categorical)
    div = diversity_hd(X_cf, scale, categorical)
    return float(div / prox) if prox and np.isfinite(prox) and prox > 0 else float("nan")


def coverage_hd(found: Iterable[bool]) -> float:
    """Eq. 14: fraction of queries with at least one valid counterfactual.

    Parameters
    ----------
    found : iterable of bool
        Per query, whether a valid counterfactual was found.

    Returns
    -------
    float
        The share; ``nan`` for no queries.

    Examples
    --------
    >>> from groupcf.metrics_hd import coverage_hd
    >>> coverage_hd([True, False, True, True])
    0.75
    """
    found = np.asarray(list(found), dtype=bool)
    return float(found.mean()) if len(found) else float("nan")


def summarize_hd(x, X_cf, scale: pd.Series, categorical: Iterable = ()) -> dict:
    """All per-query metrics of one query's counterfactuals (valid rows only).

    Parameters
    ----------
    x : pandas.Series or pandas.DataFrame
        The query (raw values).
    X_cf : pandas.DataFrame or pandas.Series
        Its counterfactuals (raw values), one per row.
    scale : pandas.Series
        MAD of each continuous column (:func:`mad`); a column without one is compared
        as a category.
    categorical : iterable of str, default ()
        Columns compared as categories even when ``scale`` has them.

    Returns
    -------
    dict
        ``proximity``, ``proximity_cat``, ``sparsity``, ``diversity``,
        ``norm_div_eq15`` and ``div_over_prox``.

    Raises
    ------
    InvalidInputError
        Rows that are not a DataFrame / Series.

    Examples
    --------
    >>> from groupcf.metrics_hd import mad, summarize_hd
    >>> scale = mad(pd.DataFrame({"a": [0, 2, 4, 6, 20], "b": [0, 0, 1, 1, 1]}))   # a: 2, b: 1 (0 -> 1)
    >>> x = pd.Series({"a": 4, "b": 0, "c": "u"})
    >>> X_cf = pd.DataFrame({"a": [6, 8], "b": [0, 1], "c": ["u", "v"]})
    >>> {k: round(v, 4) for k, v in summarize_hd(x, X_cf, scale).items()}
    {'proximity': 1.0, 'proximity_cat': 0.5, 'sparsity': 0.6667, 'diversity': 2.0, 'norm_div_eq15': 0.6667, 'div_over_prox': 2.0}
    """
    _, cat = _split(list(_frame(X_cf).columns), scale, categorical)
    return {"proximity": continuous_proximity(x, X_cf, scale, cat),
            "proximity_cat": categorical_proximity(x, X_cf, cat),
            "sparsity": sparsity_hd(x, X_cf),
            "diversity": diversity_hd(X_cf, scale, cat),
            "norm_div_eq15": normalized_diversity(x, X_cf, scale, cat),
            "div_over_prox": diversity_over_proximity(x, X_cf, scale, cat)}
