r"""Quality metrics for counterfactual explanations, so methods can be compared on equal terms.

Every metric takes *raw* rows (pandas DataFrames / Series of original feature values, as
:class:`~groupcf.results.explanation.Explanation` returns them) plus, where distances
are needed, the fitted :class:`~groupcf.FeatureSpace`; none of them trusts what a method
says about itself.

* :func:`validity` — fraction of counterfactuals the real model accepts;
* :func:`proximity` — distance of each counterfactual to the instance: ``kind="mace"``
  is MACE's normalised mix of l0 / l1 / linf, *the very definition the MACE MIP
  minimises* (:mod:`groupcf.formulations.distances`), so for a MACE explanation
  ``proximity(...)`` equals ``exp.distances``; ``kind="gower"`` is Gower's (1971)
  distance;
* :func:`sparsity` — number of original features changed;
* :func:`diversity` — mean pairwise distance between the counterfactuals of one
  instance, raw or normalised by the largest distance the space allows;
* :func:`coverage` — fraction of instances that got a (valid) counterfactual;
* :func:`summarize` — all of them for a list of explanations, as a one-row DataFrame.

Per-feature distances :math:`\delta_l \in [0, 1]` (MACE): binary and categorical 0/1;
ordinal one-hot (ordered categoricals, binned numerics) :math:`|\Delta\,\mathrm{code}|/(k-1)`;
numeric passthrough :math:`|\Delta| / (\mathrm{high} - \mathrm{low})` with the space's
(training) range. Then :math:`\ell_0 = \frac1{|T|}\sum_l[\delta_l > 0]`,
:math:`\ell_1 = \frac1{|T|}\sum_l \delta_l` (a *mean* over all :math:`|T|` original
features, MACE's normalised convention) and :math:`\ell_\infty = \max_l \delta_l`.
"""
from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from .exceptions import InvalidInputError
from .features.validation import validate_instance
from .formulations.distances import (
    CHANGE_TOL,
    feature_distances,
    feature_distances_codes,
    max_feature_distances,
    parse_distance,
    weight_value,
)
from .metrics_hd import (  # noqa: F401  Shekhar et al. 2023 metrics (eqs. 8-15), re-exported
    categorical_proximity,
    continuous_proximity,
    coverage_hd,
    diversity_hd,
    diversity_over_proximity,
    mad,
    normalized_diversity,
    pairwise_distance_hd,
    sparsity_hd,
    summarize_hd,
)
from .models import resolve_model

log = logging.getLogger(__name__)

__all__ = ["validity", "proximity", "sparsity", "diversity", "coverage", "summarize"]

KINDS = ("mace", "gower")


def _frame(X, what: str) -> pd.DataFrame:
    if isinstance(X, pd.Series):
        return X.to_frame().T
    if not isinstance(X, pd.DataFrame):
        raise InvalidInputError(f"{what} must be a pandas DataFrame of raw features, got {type(X).__name__}")
    return X




# ----------------------------------------------------------------------------- metrics
def validity(model, X_cf, *, space=None, threshold: float = 0.5) -> float:
    """Fraction of the rows of ``X_cf`` that the *real* model accepts.

    Parameters
    ----------
    model : object
        A fitted ``Pipeline(FeatureSpace, classifier)``, or a bare model with ``space=``.
    X_cf : pandas.DataFrame or pandas.Series
        Counterfactuals (raw values), one per row.
    space : FeatureSpace or None, default None
        The fitted feature space of a bare model.
    threshold : float, default 0.5
        Probability of the positive class from which a row is accepted (at 0.5 the
        model's own ``predict`` must agree).

    Returns
    -------
    float
        The accepted share; ``nan`` for no rows.

    Raises
    ------
    InvalidInputError
        ``X_cf`` is not a DataFrame / Series, or rows the space cannot encode.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> X = pd.DataFrame({"age": [20, 30, 40, 50], "job": ["a", "b", "b", "c"]})
    >>> pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), LogisticRegression(C=100))
    >>> pipe = pipe.fit(X, [0, 0, 1, 1])
    >>> gcf.metrics.validity(pipe, pd.DataFrame({"age": [20, 50], "job": ["a", "c"]}))
    0.5
    """
    X_cf = _frame(X_cf, "X_cf")
    if len(X_cf) == 0:
        return float("nan")
    tm = resolve_model(model, space=space, threshold=threshold)
    return float(np.mean(tm.is_positive(X_cf)))


def proximity(x, X_cf, space, kind: str = "mace", weights=None) -> np.ndarray:
    r"""Distance of each counterfactual (row of ``X_cf``) to the instance ``x``.

    Parameters
    ----------
    x : pandas.Series or pandas.DataFrame
        The instance (raw values; a Series or a one-row DataFrame).
    X_cf : pandas.DataFrame or pandas.Series
        Counterfactuals (raw values), one per row.
    space : FeatureSpace
        The fitted feature space (ranges, categories, bins).
    kind : {"mace", "gower"}, default "mace"
        ``"mace"``: MACE's distance, the value the MACE MIP minimises. ``"gower"``:
        Gower's distance, the (weighted) mean over original features of
        :math:`|\Delta| / \mathrm{range}` for numeric passthrough features and a 0/1
        mismatch for every other feature (binary, categorical, *and* ordinal / binned:
        the classic Gower treats them as qualitative, unlike MACE's l1).
    weights : str, dict or None, default None
        With ``kind="mace"``: the norm mix exactly as ``distance=`` of
        :func:`groupcf.explain` (``"l0"``, ``"l1"`` (``None``), ``"linf"`` or a dict such
        as ``{"l0": 0.1, "l1": 0.9}``). With ``kind="gower"``: an optional
        ``{feature: weight >= 0}`` (default 1 each), giving
        :math:`\sum_l w_l \delta_l / \sum_l w_l`.

    Returns
    -------
    numpy.ndarray
        One distance per row of ``X_cf``.

    Raises
    ------
    InvalidInputError
        An unknown ``kind`` or distance, negative or all-zero weights, weights naming
        unknown features, or rows the space cannot encode.

    Examples
    --------
    >>> X = pd.DataFrame({"age": [20, 30, 40, 50], "job": ["a", "b", "b", "c"]})
    >>> space = gcf.FeatureSpace(numeric="passthrough").fit(X)
    >>> x, X_cf = X.iloc[0], pd.DataFrame({"age": [30, 20], "job": ["a", "c"]})
    >>> gcf.metrics.proximity(x, X_cf, space)            # mean per-feature distance (l1)
    array([0.16666667, 0.5       ])
    >>> gcf.metrics.proximity(x, X_cf, space, weights="l0")
    array([0.5, 0.5])
    """
    x, X_cf = validate_instance(x), _frame(X_cf, "X_cf")
    if kind not in KINDS:
        raise InvalidInputError(f"unknown proximity kind {kind!r}; use one of {list(KINDS)}")
    if len(X_cf) == 0:
        return np.zeros(0)
    if kind == "mace":
        return parse_distance("l1" if weights is None else weights).aggregate(feature_distances(space, x, X_cf))
    return _gower(space, x, X_cf, weights)


def _gower(space, x, X_cf, weights) -> np.ndarray:
    names = [f.name for f in space]
    w = np.ones(len(names))
    if weights is not None:
        if not isinstance(weights, Mapping):
            raise InvalidInputError("Gower weights must be a {feature: weight} dict")
        unknown = set(weights) - set(names)
        if unknown:
            raise InvalidInputError(f"Gower weights name unknown features: {sorted(unknown)}")
        for k, val in weights.items():
            w[names.index(k)] = weight_value(val, f"Gower weight of {k!r}")
    if w.sum() <= 0:
        raise InvalidInputError("Gower weights are all zero")
    xc = space.codes(x.to_frame().T)[0]
    C = space.codes(X_cf)
    D = np.abs(C - xc[None, :])
    for l, f in enumerate(space):
        if f.encoding != "continuous":
            D[:, l] = (D[:, l] > 0.5).astype(float)
    return D @ w / w.sum()


def sparsity(x, X_cf, space=None) -> np.ndarray:
    """Number of original features each counterfactual changes.

    Parameters
    ----------
    x : pandas.Series or pandas.DataFrame
        The instance (raw values).
    X_cf : pandas.DataFrame or pandas.Series
        Counterfactuals (raw values), one per row.
    space : FeatureSpace or None, default None
        With a space, features are compared as the model sees them (category / bin
        codes, scaled numerics): the count of per-feature distances above zero, i.e.
        ``|T| * proximity(..., weights="l0")``. Without it raw values are compared
        (numbers with a relative tolerance of 1e-9; a ``pd.Interval`` — a decoded bin —
        equals a number inside it).

    Returns
    -------
    numpy.ndarray
        One integer per row of ``X_cf``.

    Raises
    ------
    InvalidInputError
        Columns of ``x`` missing from ``X_cf``, or rows the space cannot encode.

    Examples
    --------
    >>> X = pd.DataFrame({"age": [20, 30, 40, 50], "job": ["a", "b", "b", "c"]})
    >>> space = gcf.FeatureSpace(numeric="passthrough").fit(X)
    >>> x, X_cf = X.iloc[0], pd.DataFrame({"age": [30, 20], "job": ["a", "c"]})
    >>> gcf.metrics.sparsity(x, X_cf)
    array([1, 1])
    """
    x, X_cf = validate_instance(x), _frame(X_cf, "X_cf")
    if len(X_cf) == 0:
        return np.zeros(0, dtype=np.int64)
    if space is not None:
        return (feature_distances(space, x, X_cf) > CHANGE_TOL).sum(axis=1).astype(np.int64)
    missing = [c for c in x.index if c not in X_cf.columns]
    if missing:
        raise InvalidInputError(f"columns missing from X_cf: {missing}")
    out = np.zeros(len(X_cf), dtype=np.int64)
    for c in x.index:
        out += np.array([not _same(x[c], v) for v in X_cf[c].tolist()], dtype=np.int64)
    return out


def _same(a, b) -> bool:
    if isinstance(b, pd.Interval) and not isinstance(a, pd.Interval):
        a, b = b, a
    if isinstance(a, pd.Interval):
        return b in a if not isinstance(b, pd.Interval) else a == b
    num = (int, float, np.integer, np.floating)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, (bool, np.bool_)):
        return bool(np.isclose(float(a), float(b), rtol=1e-9, atol=0.0))
    return a == b or str(a) == str(b)


def diversity(X_cf, space, weights="l1", normalized: bool = False) -> float:
    """Mean pairwise MACE distance between the counterfactuals of *one* instance.

    Parameters
    ----------
    X_cf : pandas.DataFrame
        The counterfactuals (raw values), one per row.
    space : FeatureSpace
        The fitted feature space.
    weights : str or dict, default "l1"
        The norm mix, as in :func:`proximity`.
    normalized : bool, default False
        Divide by the largest distance two points of the space can be apart under the
        same weights (``w0 + w1 + winf`` unless some feature has a single category), so
        the result lies in [0, 1].

    Returns
    -------
    float
        The mean distance; ``nan`` with fewer than two rows.

    Raises
    ------
    InvalidInputError
        An unknown distance or negative weights.

    Examples
    --------
    >>> X = pd.DataFrame({"age": [20, 30, 40, 50], "job": ["a", "b", "b", "c"]})
    >>> space = gcf.FeatureSpace(numeric="passthrough").fit(X)
    >>> x, X_cf = X.iloc[0], pd.DataFrame({"age": [30, 20], "job": ["a", "c"]})
    >>> round(gcf.metrics.diversity(X_cf, space), 4)     # (10/30 + 1) / 2 features
    0.6667
    """
    X_cf = _frame(X_cf, "X_cf")
    dist = parse_distance(weights)
    m = len(X_cf)
    if m < 2:
        return float("nan")
    C = space.codes(X_cf)
    total = 0.0
    pairs = list(itertools.combinations(range(m), 2))
    for i, j in pairs:
        total += float(dist.aggregate(feature_distances_codes(space, C[i], C[j:j + 1]))[0])
    value = total / len(pairs)
    if normalized:
        top = float(dist.aggregate(max_feature_distances(space)[None, :])[0])
        value = value / top if top > 0 else 0.0
    return value


def coverage(explanations: Iterable, model=None, *, space=None, threshold: float = 0.5) -> float:
    """Fraction of instances that got at least one counterfactual.

    Parameters
    ----------
    explanations : iterable
        One entry per instance: an :class:`~groupcf.results.explanation.Explanation`, or
        ``None`` / an exception for a failure (e.g. a caught ``NoCounterfactualError``).
    model : object or None, default None
        With a model, an instance counts only if at least one of its counterfactuals is
        accepted by the real model.
    space : FeatureSpace or None, default None
        The fitted feature space of a bare model.
    threshold : float, default 0.5
        Probability of the positive class from which a row is accepted.

    Returns
    -------
    float
        The covered share; ``nan`` for no instances.

    Raises
    ------
    InvalidInputError
        An entry that is neither an explanation, ``None`` nor an exception.

    Examples
    --------
    >>> gcf.metrics.coverage([None, ValueError("no counterfactual")])
    0.0
    >>> exps = [gcf.explain(x, pipe) for x in rejected]        # doctest: +SKIP
    >>> gcf.metrics.coverage(exps, pipe)                         # doctest: +SKIP
    """
    items = list(explanations)
    if not items:
        return float("nan")
    tm = resolve_model(model, space=space, threshold=threshold) if model is not None else None
    ok = 0
    for e in items:
        cfs = _counterfactuals(e)
        if cfs is None or len(cfs) == 0:
            continue
        if tm is None or bool(np.any(tm.is_positive(cfs))):
            ok += 1
    return ok / len(items)


def _counterfactuals(e):
    if e is None or isinstance(e, BaseException):
        return None
    cfs = getattr(e, "counterfactuals", None)
    if cfs is None:
        raise InvalidInputError(f"expected Explanation objects (or None for a failure), got {type(e).__name__}")
    return cfs


def summarize(explanations: Iterable, model, *, method: str | None = None, space=None,
              distance="l1", threshold: float = 0.5) -> pd.DataFrame:
    """Every metric over a list of explanations of different instances, as one row.

    Parameters
    ----------
    explanations : iterable
        One entry per instance: an :class:`~groupcf.results.explanation.Explanation`, or
        ``None`` / an exception for a failure.
    model : object
        A fitted ``Pipeline(FeatureSpace, classifier)``, or a bare model with ``space=``.
    method : str or None, default None
        The row's label (``None``: the explanations' common ``method``, else
        ``"method"``).
    space : FeatureSpace or None, default None
        The fitted feature space of a bare model.
    distance : str or dict, default "l1"
        The MACE norm mix of ``proximity`` and ``diversity``.
    threshold : float, default 0.5
        Probability of the positive class from which a row is accepted.

    Returns
    -------
    pandas.DataFrame
        One row indexed by ``method``: ``n_instances``, ``coverage`` (fraction with a
        valid counterfactual), ``validity`` (fraction of all returned counterfactuals the
        real model accepts), ``n_counterfactuals`` (mean per covered instance),
        ``proximity`` (MACE distance ``distance`` of the *best* — first — counterfactual,
        mean over covered instances), ``proximity_gower``, ``sparsity`` (features changed
        by the best counterfactual), ``diversity`` / ``diversity_normalized`` (mean over
        instances with at least two counterfactuals, ``nan`` if none), ``time`` (mean
        ``solve_time`` of the explanations returned), ``distance`` (its name).

    Raises
    ------
    InvalidInputError
        An entry that is neither an explanation, ``None`` nor an exception, or an unknown
        distance.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> X = pd.DataFrame({"income": [1, 2, 3, 4, 5, 6], "debt": ["hi", "hi", "lo", "hi", "lo", "lo"]})
    >>> pipe = make_pipeline(gcf.FeatureSpace(), LogisticRegression(C=100)).fit(X, [0, 0, 1, 0, 1, 1])
    >>> exps = [gcf.explain(x, pipe, n=2) for _, x in X[pipe.predict(X) == 0].iterrows()]
    >>> row = gcf.metrics.summarize(exps, pipe)
    >>> row[["n_instances", "coverage", "validity", "n_counterfactuals"]]
            n_instances  coverage  validity  n_counterfactuals
    method
    mace              3       1.0       1.0                2.0
    """
    items = list(explanations)
    tm = resolve_model(model, space=space, threshold=threshold)
    sp = tm.space
    dist = parse_distance(distance)
    valid_all, prox, gower, spars, div, div_n, ncf, times = [], [], [], [], [], [], [], []
    for e in items:
        cfs = _counterfactuals(e)
        if cfs is None:
            continue
        if hasattr(e, "solve_time"):
            times.append(float(e.solve_time))
        if len(cfs) == 0:
            continue
        ok = tm.is_positive(cfs)
        valid_all.extend(ok.tolist())
        if not ok.any():
            continue
        x, best = e.instance, cfs.iloc[[0]]
        ncf.append(len(cfs))
        prox.append(float(proximity(x, best, sp, "mace", dist)[0]))
        gower.append(float(proximity(x, best, sp, "gower")[0]))
        spars.append(int(sparsity(x, best, sp)[0]))
        if len(cfs) >= 2:
            div.append(diversity(cfs, sp, dist))
            div_n.append(diversity(cfs, sp, dist, normalized=True))
    if method is None:
        names = {getattr(e, "method", None) for e in items if _counterfactuals(e) is not None}
        method = next(iter(names)) if len(names) == 1 else "method"

    def mean(a):
        return float(np.mean(a)) if len(a) else float("nan")

    row = {
        "n_instances": len(items),
        "coverage": coverage(items, tm) if items else float("nan"),
        "validity": mean(valid_all),
        "n_counterfactuals": mean(ncf),
        "proximity": mean(prox),
        "proximity_gower": mean(gower),
        "sparsity": mean(spars),
        "diversity": mean(div),
        "diversity_normalized": mean(div_n),
        "time": mean(times),
        "distance": dist.name,
    }
    return pd.DataFrame([row], index=pd.Index([method], name="method"))
