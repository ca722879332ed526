"""`FeatureSpace`: raw tabular features <-> the expanded 0/1 space the optimisation sees.

The one-for-many paper works on an expanded binary space ``T̄``: every original feature
``l`` owns a group of columns ``T_l``. A *binary* feature is one 0/1 column; a
*categorical* or *ordinal* feature is one-hot (``Σ_{h∈T_l} v_h = 1``); a *numeric* feature
is either binned into ordered intervals (one-hot, ordinal) or passed through as one
continuous column scaled to ``[0, 1]``.

`FeatureSpace` is a scikit-learn transformer, so it goes first in a pipeline::

    pipe = make_pipeline(gcf.FeatureSpace(immutable=["Race"]), LogisticRegression())

and it carries the actionability of each feature (immutable, increase-only), readable and
settable after fitting in the style of actionable-recourse::

    space = pipe[0]
    space["PriorsCount"].increase_only = True

Feature kinds are inferred from pandas dtypes (override with ``kinds=``):

* exactly two distinct values (or ``bool``)                 -> ``binary``
* ``Categorical(ordered=True)``                              -> ``ordinal``
* unordered ``Categorical``, ``object`` or ``string``        -> ``categorical``
* numeric with more than two values                         -> ``numeric``
  (binned into ``n_bins`` quantile bins, or given ``bins`` edges, unless
  ``numeric="passthrough"``)

For Categorical dtypes the *declared* categories are used (not only those observed), so
a dataset can fix the encoding size independently of a sample.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..exceptions import InvalidInputError
from ..utils import AnyArray, FloatArray, IntArray
from ._small import transform_small
from ._values import _key, _numbers, _sort_key
from .domain import InputDomain

log = logging.getLogger(__name__)

KINDS = ("binary", "categorical", "ordinal", "numeric")


@dataclass(eq=False)
class Feature:
    """One original feature and its expanded columns.

    Built by :meth:`FeatureSpace.fit` (read them as ``space["age"]`` or by iterating over
    the space); ``immutable`` and ``increase_only`` may be set afterwards, and every
    formulation respects them.

    Parameters
    ----------
    name : str
        The raw column's name.
    kind : {"binary", "categorical", "ordinal", "numeric"}
        What the values are.
    encoding : {"binary", "onehot", "continuous"}
        ``"binary"``: one 0/1 column meaning ``value == categories[1]``; ``"onehot"``: one
        column per category, exactly one is 1; ``"continuous"``: one column
        ``(value - low) / (high - low)``.
    categories : list
        The values (ordered for ordinal features; intervals for binned numerics); empty
        for a continuous feature.
    columns : numpy.ndarray
        Indices of its expanded columns (``T_l``).
    column_names : list of str
        Names of the expanded columns (``"race=White"``, ``"age"``).
    immutable : bool, default False
        The feature may never change.
    increase_only : bool, default False
        The feature may only increase (ordered features only).
    edges : numpy.ndarray or None
        Bin edges of a binned numeric feature (outer edges infinite).
    low, high : float
        Range of a numeric feature (the scale of a continuous column).
    integer : bool, default False
        A continuous feature whose values are integers (counterfactuals are rounded).
    dtype : object
        The pandas dtype of the raw column.

    Raises
    ------
    InvalidInputError
        When ``increase_only`` is set on an unordered (categorical) feature.

    See Also
    --------
    FeatureSpace : fits the features from data.

    Examples
    --------
    >>> X = pd.DataFrame({"age": [25, 40, 61, 33], "job": ["a", "b", "c", "a"]})
    >>> space = gcf.FeatureSpace(numeric="passthrough").fit(X)
    >>> space["age"]
    Feature('age', numeric, continuous, columns=1, range=[25, 61])
    >>> space["job"].column_names
    ['job=a', 'job=b', 'job=c']
    >>> space["age"].increase_only = True
    >>> space["job"].increase_only = True
    Traceback (most recent call last):
    ...
    groupcf.exceptions.InvalidInputError: feature 'job' is categorical (unordered): increase_only needs an order; ...
    """

    name: str
    kind: str
    encoding: str
    categories: list[Any] = field(default_factory=list)
    columns: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    column_names: list[str] = field(default_factory=list)
    immutable: bool = False
    increase_only: bool = False
    edges: FloatArray | None = None      # bin edges of a binned numeric feature
    low: float = 0.0                     # range of a continuous feature
    high: float = 1.0
    integer: bool = False                # continuous feature with integer values
    dtype: object = None                 # pandas dtype of the raw column

    @property
    def ordered(self) -> bool:
        """Whether the feature's values have an order (increase-only makes sense)."""
        return self.kind in ("ordinal", "numeric", "binary")

    @property
    def is_onehot(self) -> bool:
        return self.encoding == "onehot"

    def __setattr__(self, key: str, value: object) -> None:
        if key == "increase_only" and value and getattr(self, "kind", None) == "categorical":
            raise InvalidInputError(
                f"feature {self.name!r} is categorical (unordered): increase_only needs an "
                "order; declare it ordinal (kinds={...: 'ordinal'} or an ordered Categorical)")
        super().__setattr__(key, value)

    def __repr__(self) -> str:
        flags = [f for f, on in (("immutable", self.immutable), ("increase_only", self.increase_only)) if on]
        cats = "" if self.encoding == "continuous" else f", {len(self.categories)} categories"
        rng = f", range=[{self.low:g}, {self.high:g}]" if self.encoding == "continuous" else ""
        return (f"Feature({self.name!r}, {self.kind}, {self.encoding}, columns={len(self.columns)}"
                f"{cats}{rng}{', ' + ', '.join(flags) if flags else ''})")


class FeatureSpace(TransformerMixin, BaseEstimator):  # type: ignore[misc, unused-ignore]  # scikit-learn has no stubs: its bases are Any
    """Raw DataFrame -> expanded 0/1 matrix, with feature kinds, groups and actionability.

    A scikit-learn transformer: put it first in a pipeline (see the module docstring for
    how feature kinds are inferred from pandas dtypes).

    Parameters
    ----------
    immutable, increase_only : sequence of str, default ()
        Names of original features that may never change / may only increase (ordered
        features only: binary, ordinal, numeric).
    kinds : dict or None, default None
        ``{feature: kind}`` overriding the dtype-based inference (kinds: ``"binary"``,
        ``"categorical"``, ``"ordinal"``, ``"numeric"``).
    numeric : {"bin", "passthrough"} or dict, default "bin"
        ``"bin"`` discretises numeric features into ordered bins; ``"passthrough"`` keeps
        them as one continuous column scaled to [0, 1]. A dict gives it per feature.
    n_bins : int, default 4
        Number of quantile bins for binned numeric features.
    bins : dict or None, default None
        ``{feature: edges}`` with explicit inner bin edges (the outer edges are open).
    features : sequence of str or None, default None
        Subset / order of the input columns to use (``None``: all).

    Attributes
    ----------
    features_ : list of Feature
        The fitted features.
    n_features_out_ : int
        Number of expanded columns.
    feature_names_in_ : numpy.ndarray
        The input columns.

    Raises
    ------
    InvalidInputError
        From :meth:`fit` / :meth:`transform`: input that is not a DataFrame, a missing
        value (NaN), an unknown category, a missing column, names in ``kinds``,
        ``immutable`` or ``increase_only`` that are not features, or an impossible kind.

    Examples
    --------
    >>> X = pd.DataFrame({"age": [25, 40, 61, 33], "sex": ["F", "M", "M", "F"],
    ...                   "job": ["a", "b", "c", "a"]})
    >>> space = gcf.FeatureSpace(numeric="passthrough", immutable=["sex"]).fit(X)
    >>> space.summary()[["kind", "encoding", "columns", "immutable"]]
             kind    encoding  columns  immutable
    feature
    age   numeric  continuous        1      False
    sex    binary      binary        1       True
    job   categorical  onehot        3      False
    >>> space.transform(X.iloc[[1]])
    array([[0.41666667, 1.        , 0.        , 1.        , 0.        ]])
    >>> space.inverse_transform(space.transform(X)).equals(X)
    True

    In a pipeline:

    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> pipe = make_pipeline(gcf.FeatureSpace(), LogisticRegression()).fit(X, [0, 1, 1, 0])
    >>> pipe[0].n_features_out_        # age in 4 quantile bins (one-hot), sex 1, job 3
    8
    """

    def __init__(self, immutable: Sequence[str] = (), increase_only: Sequence[str] = (),
                 kinds: Mapping[str, str] | None = None, numeric: str | Mapping[str, str] = "bin",
                 n_bins: int = 4, bins: Mapping[str, Sequence[float]] | None = None,
                 features: Sequence[str] | None = None) -> None:
        self.immutable = immutable
        self.increase_only = increase_only
        self.kinds = kinds
        self.numeric = numeric
        self.n_bins = n_bins
        self.bins = bins
        self.features = features

    # ------------------------------------------------------------------ fitting
    def fit(self, X: pd.DataFrame, y: object = None) -> FeatureSpace:
        """Learn each feature's kind, categories, bins or range from raw rows.

        Parameters
        ----------
        X : pandas.DataFrame
            Raw training rows, one column per original feature.
        y : None
            Ignored (scikit-learn's signature).

        Returns
        -------
        FeatureSpace
            ``self``, fitted.

        Raises
        ------
        InvalidInputError
            Not a DataFrame, a missing value (NaN), ``features`` / ``kinds`` / ``immutable`` /
            ``increase_only`` naming columns ``X`` lacks, or a kind the values cannot have.
        """
        X = self._as_frame(X, fitting=True)
        cols = list(self.features) if self.features is not None else list(X.columns)
        missing = [c for c in cols if c not in X.columns]
        if missing:
            raise InvalidInputError(f"features not in the data: {missing}")
        kinds = dict(self.kinds or {})
        unknown = set(kinds) - set(cols)
        for what, names in (("kinds", unknown), ("immutable", set(self.immutable) - set(cols)),
                            ("increase_only", set(self.increase_only) - set(cols))):
            if names:
                raise InvalidInputError(f"{what} names features not in the data: {sorted(names)}")
        feats: list[Feature] = []
        for name in cols:
            col = X[name]
            self._check_nan(col, name)
            f = self._fit_feature(name, col, kinds.get(name))
            f.immutable = name in set(self.immutable)
            f.increase_only = name in set(self.increase_only)
            feats.append(f)
        return self._set_features(feats)

    def _set_features(self, feats: list[Feature]) -> FeatureSpace:
        """Lay fitted features out in consecutive expanded columns (``fit``, and spaces
        built from another encoder: :mod:`groupcf.features.sklearn`)."""
        start = 0
        for f in feats:
            name = f.name
            k = 1 if f.encoding in ("binary", "continuous") else len(f.categories)
            f.columns = np.arange(start, start + k, dtype=np.int64)
            start += k
            if f.encoding == "onehot":
                f.column_names = [f"{name}={c}" for c in f.categories]
            elif f.encoding == "binary":
                f.column_names = [f"{name}={f.categories[-1]}"]
            else:
                f.column_names = [name]
        cols = [f.name for f in feats]
        self.features_ = feats
        self.feature_names_in_ = np.array(cols, dtype=object)
        self.n_features_in_ = len(cols)
        self.n_features_out_ = start
        self._index = {f.name: i for i, f in enumerate(feats)}
        log.debug("FeatureSpace fitted: %d features -> %d columns", len(feats), start)
        return self

    def _numeric_mode(self, name: str) -> str:
        mode = self.numeric.get(name, "bin") if isinstance(self.numeric, Mapping) else self.numeric
        if mode not in ("bin", "passthrough"):
            raise InvalidInputError(f"numeric mode for {name!r} must be 'bin' or 'passthrough', got {mode!r}")
        return mode

    def _fit_feature(self, name: str, col: pd.Series, kind: str | None) -> Feature:
        dtype = col.dtype
        if kind is not None and kind not in KINDS:
            raise InvalidInputError(f"kind of {name!r} must be one of {KINDS}, got {kind!r}")
        is_cat = isinstance(dtype, pd.CategoricalDtype)
        if is_cat:
            cats = list(dtype.categories)
        elif pd.api.types.is_bool_dtype(dtype):
            cats = [False, True]
        else:
            cats = sorted(pd.unique(col).tolist(), key=_sort_key)
        is_num = pd.api.types.is_numeric_dtype(dtype) and not is_cat and not pd.api.types.is_bool_dtype(dtype)
        if kind is None:
            if len(cats) == 2:
                kind = "binary"
            elif is_cat:
                kind = "ordinal" if dtype.ordered else "categorical"
            elif is_num:
                kind = "numeric"
            else:
                kind = "categorical"
        if kind == "binary":
            if len(cats) != 2:
                raise InvalidInputError(f"feature {name!r} declared binary has {len(cats)} values: {cats[:10]}")
            return Feature(name, kind, "binary", categories=cats, dtype=dtype)
        if kind in ("categorical", "ordinal"):
            return Feature(name, kind, "onehot", categories=cats, dtype=dtype)
        # numeric
        if not is_num:
            raise InvalidInputError(f"feature {name!r} declared numeric has dtype {dtype}")
        values = col.to_numpy(dtype=float)
        if self._numeric_mode(name) == "passthrough":
            lo, hi = float(values.min()), float(values.max())
            integer = bool(np.all(np.mod(values, 1) == 0))
            return Feature(name, "numeric", "continuous", low=lo, high=hi if hi > lo else lo + 1.0,
                           integer=integer, dtype=dtype)
        edges = self._bin_edges(name, values)
        intervals = list(pd.IntervalIndex.from_breaks(edges, closed="left"))
        return Feature(name, "numeric", "onehot", categories=intervals, edges=edges, dtype=dtype,
                       low=float(values.min()), high=float(values.max()))

    def _bin_edges(self, name: str, values: FloatArray) -> FloatArray:
        if self.bins and name in self.bins:
            inner = np.asarray(self.bins[name], dtype=float)
        else:
            qs = np.quantile(values, np.linspace(0, 1, self.n_bins + 1)[1:-1])
            inner = np.unique(qs)
            # a left-closed bin [q, next) must not be empty: drop the minimum as an edge
            inner = inner[inner > values.min()]
        inner = np.unique(inner)
        return np.concatenate([[-np.inf], inner, [np.inf]])

    # ------------------------------------------------------------------ transform
    def transform(self, X: pd.DataFrame | pd.Series) -> FloatArray:
        """Encode raw rows into the expanded matrix.

        Parameters
        ----------
        X : pandas.DataFrame or pandas.Series
            Raw rows (a Series is one row).

        Returns
        -------
        numpy.ndarray
            Float, ``(n_rows, n_features_out_)``: 0/1 except continuous columns.

        Raises
        ------
        InvalidInputError
            A missing column, a missing value (NaN) or an unknown category.
        """
        check_is_fitted(self, "features_")
        small = transform_small(self, X)
        if small is not None:
            return small
        X = self._as_frame(X)
        missing = [f.name for f in self.features_ if f.name not in X.columns]
        if missing:
            raise InvalidInputError(f"columns missing from the input: {missing}")
        if not X.columns.is_unique:
            twice = sorted({str(c) for c in X.columns[X.columns.duplicated()]} & {f.name for f in self.features_})
            if twice:
                raise InvalidInputError(f"columns given more than once: {twice}")
        Z = np.zeros((len(X), self.n_features_out_))
        # which columns hold a missing value, in one pass over the frame's blocks
        has_nan = dict(zip(X.columns.tolist(), X.isna().to_numpy().any(axis=0).tolist()))
        for f in self.features_:
            col = X[f.name]
            if has_nan.get(f.name, True):
                self._check_nan(col, f.name)
            if f.encoding == "continuous":
                Z[:, f.columns[0]] = (_numbers(col, f.name) - f.low) / (f.high - f.low)
                continue
            codes = self._codes(f, col)
            if f.encoding == "binary":
                Z[:, f.columns[0]] = codes
            else:
                Z[np.arange(len(X)), f.columns[codes]] = 1.0
        return Z

    def _lookup(self, f: Feature) -> dict[tuple[str, object], int]:
        """Key of each category of ``f`` (:func:`_key`) -> its index; built once per fitted
        feature (its ``categories`` list), read only."""
        cache: dict[str, tuple[list[Any], dict[tuple[str, object], int]]] = self.__dict__.setdefault("_lookups", {})
        hit = cache.get(f.name)
        if hit is None or hit[0] is not f.categories:
            hit = cache[f.name] = (f.categories, {_key(c): i for i, c in enumerate(f.categories)})
        return hit[1]

    #: frames of at most this many rows are read value by value (:mod:`groupcf.features._small`)
    SMALL_FRAME = 16

    def _codes(self, f: Feature, col: pd.Series) -> IntArray:
        """Index of each value's category (bin for binned numerics)."""
        if f.edges is not None:
            if pd.api.types.is_numeric_dtype(col.dtype):
                return np.searchsorted(f.edges[1:-1], _numbers(col, f.name), side="right")
            # decoded counterfactuals carry the bin itself (a pd.Interval) for binned numerics
            nums = _numbers(col.map(lambda v: np.nan if isinstance(v, pd.Interval) else v), f.name)
            return np.array([f.categories.index(v) if isinstance(v, pd.Interval)
                             else int(np.searchsorted(f.edges[1:-1], x, side="right"))
                             for v, x in zip(col.tolist(), nums)], dtype=np.int64)
        lookup = self._lookup(f)
        if isinstance(col.dtype, pd.CategoricalDtype):
            # a categorical column: each of its categories looked up once, the codes mapped
            cat = col.array                            # a pandas Categorical
            known = np.array([lookup.get(_key(c), -1) for c in cat.categories.tolist()] + [-1], dtype=np.int64)
            mapped: IntArray = known[np.asarray(cat.codes)]
            if (mapped >= 0).all():
                return mapped                          # else the loop below names the value
        values = col.tolist()
        codes = np.empty(len(values), dtype=np.int64)
        for r, v in enumerate(values):
            i = lookup.get(_key(v))
            if i is None:
                raise InvalidInputError(
                    f"unknown category {v!r} in column {f.name!r} (row {col.index[r]!r}); "
                    f"known: {f.categories[:20]}")
            codes[r] = i
        return codes

    def inverse_transform(self, Z: npt.ArrayLike) -> pd.DataFrame:
        """Decode expanded rows back to raw values (category, interval, or number).

        Parameters
        ----------
        Z : array-like
            Expanded rows, ``(n_rows, n_features_out_)`` (one row may be 1-D).

        Returns
        -------
        pandas.DataFrame
            Raw values: a binned numeric feature comes back as its bin (a ``pd.Interval``).

        Raises
        ------
        InvalidInputError
            ``Z`` does not have ``n_features_out_`` columns.
        """
        check_is_fitted(self, "features_")
        Z = np.atleast_2d(np.asarray(Z, dtype=np.float64))
        if Z.shape[1] != self.n_features_out_:
            raise InvalidInputError(f"expected {self.n_features_out_} columns, got {Z.shape[1]}")
        out: dict[str, Any] = {}
        for f in self.features_:
            block = Z[:, f.columns]
            if f.encoding == "continuous":
                v = f.low + block[:, 0] * (f.high - f.low)
                out[f.name] = np.round(v).astype(np.int64) if f.integer else v
                continue
            codes = (block[:, 0] >= 0.5).astype(int) if f.encoding == "binary" else block.argmax(axis=1)
            vals = [f.categories[c] for c in codes]
            if isinstance(f.dtype, pd.CategoricalDtype):
                out[f.name] = pd.Categorical(vals, dtype=f.dtype)
            elif f.edges is not None:
                out[f.name] = vals
            else:
                out[f.name] = pd.Series(vals, dtype=f.dtype if f.dtype is not None else object).to_numpy()
        return pd.DataFrame(out)

    def get_feature_names_out(self, input_features: object = None) -> AnyArray:
        """Names of the expanded columns (``"job=a"``, ``"age"``).

        Parameters
        ----------
        input_features : None
            Ignored (scikit-learn's signature).

        Returns
        -------
        numpy.ndarray
            One name per expanded column.
        """
        check_is_fitted(self, "features_")
        return np.array([n for f in self.features_ for n in f.column_names], dtype=object)

    # ------------------------------------------------------------------ structure
    def __getitem__(self, name: str) -> Feature:
        check_is_fitted(self, "features_")
        try:
            return self.features_[self._index[name]]
        except KeyError:
            raise KeyError(f"no feature {name!r}; features: {[f.name for f in self.features_]}") from None

    def __iter__(self) -> Iterator[Feature]:
        check_is_fitted(self, "features_")
        return iter(self.features_)

    def __len__(self) -> int:
        check_is_fitted(self, "features_")
        return len(self.features_)

    @property
    def groups(self) -> list[IntArray]:
        """``T_l``: the expanded columns of each original feature, in order."""
        return [f.columns for f in self]

    @property
    def column_feature(self) -> IntArray:
        """For each expanded column, the index of its original feature."""
        out = np.empty(self.n_features_out_, dtype=np.int64)
        for i, f in enumerate(self):
            out[f.columns] = i
        return out

    def domain(self) -> InputDomain:
        """The model's input domain: bounds, integrality, one-hot groups.

        Returns
        -------
        InputDomain
            Every column in [0, 1]; one-hot features as groups; continuous columns of integer
            features with their grid.
        """
        n = self.n_features_out_
        integer = np.ones(n, dtype=bool)
        for f in self:
            if f.encoding == "continuous":
                integer[f.columns] = False
        grids = {int(f.columns[0]): (float(f.low), float(f.high)) for f in self
                 if f.encoding == "continuous" and f.integer and f.high > f.low}
        return InputDomain(np.zeros(n), np.ones(n), integer,
                           tuple(f.columns for f in self if f.is_onehot), grids)

    def codes(self, X: pd.DataFrame | pd.Series) -> FloatArray:
        """Raw rows -> category code per original feature. Handy for grouping and enumeration.

        Parameters
        ----------
        X : pandas.DataFrame or pandas.Series
            Raw rows.

        Returns
        -------
        numpy.ndarray
            ``(n_rows, n_features)``: the category (bin) index, or the scaled value for
            continuous features.
        """
        X = self._as_frame(X)
        out = np.zeros((len(X), len(self)))
        for i, f in enumerate(self):
            if f.encoding == "continuous":
                out[:, i] = (_numbers(X[f.name], f.name) - f.low) / (f.high - f.low)
            else:
                out[:, i] = self._codes(f, X[f.name])
        return out

    def summary(self) -> pd.DataFrame:
        """One row per original feature: kind, encoding, columns, actionability.

        Returns
        -------
        pandas.DataFrame
            Indexed by feature name.
        """
        return pd.DataFrame([{
            "feature": f.name, "kind": f.kind, "encoding": f.encoding, "columns": len(f.columns),
            "categories": len(f.categories) if f.encoding != "continuous" else None,
            "immutable": f.immutable, "increase_only": f.increase_only} for f in self]).set_index("feature")

    def set_actionability(self, immutable: Iterable[str] = (), increase_only: Iterable[str] = ()) -> FeatureSpace:
        """Mark more features immutable / increase-only (after fitting).

        Parameters
        ----------
        immutable : iterable of str, default ()
            Features that may never change.
        increase_only : iterable of str, default ()
            Features that may only increase (ordered features only).

        Returns
        -------
        FeatureSpace
            ``self``.

        Raises
        ------
        KeyError
            An unknown feature.
        InvalidInputError
            ``increase_only`` on an unordered (categorical) feature.
        """
        for n in immutable:
            self[n].immutable = True
        for n in increase_only:
            self[n].increase_only = True
        return self

    def __repr__(self) -> str:  # sklearn's repr of params, plus the fitted shape
        base: str = super().__repr__()
        if hasattr(self, "features_"):
            return f"{base} [{len(self.features_)} features -> {self.n_features_out_} columns]"
        return base

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _as_frame(X: object, fitting: bool = False) -> pd.DataFrame:
        if isinstance(X, pd.Series):
            X = X.to_frame().T
        if not isinstance(X, pd.DataFrame):
            raise InvalidInputError(
                f"FeatureSpace expects a pandas DataFrame of raw features, got {type(X).__name__}")
        return X

    @staticmethod
    def _check_nan(col: pd.Series, name: str) -> None:
        bad = col.isna()
        if bad.any():
            rows = col.index[bad].tolist()
            raise InvalidInputError(f"missing value (NaN) in column {name!r} at rows {rows[:10]}"
                                    f"{' ...' if len(rows) > 10 else ''}")

