r"""scikit-learn preprocessing as a :class:`~groupcf.FeatureSpace` plus an exact affine map.

A fitted ``ColumnTransformer`` (or a bare encoder / scaler, or a chain of them) of
``OneHotEncoder``, ``OrdinalEncoder``, ``StandardScaler``, ``MinMaxScaler``,
``RobustScaler``, ``MaxAbsScaler``, ``SimpleImputer`` (identity on complete rows),
``"passthrough"`` and ``"drop"`` is translated into

* a fitted :class:`~groupcf.FeatureSpace` ``space`` over the raw columns it reads: one
  categorical / ordinal one-hot feature (the encoder's own ``categories_``; a binary
  column when the encoder keeps one column of two categories) or one continuous numeric
  feature per raw column, and
* an affine map ``(A, c)`` such that, for every raw row ``x`` in the space's domain,

  .. math::

      \mathrm{transformer}(x) = A\, \mathrm{space}(x) + c

  *column for column*: a one-hot column copies a column of the space (a dropped category
  simply has no output column), an ordinal code is :math:`\sum_k k\, z_k` over the one-hot
  columns, and a scaled numeric is :math:`a v + b` with :math:`v = \mathrm{low} +
  z\,(\mathrm{high} - \mathrm{low})`. The embeddings fold ``(A, c)`` into the model
  (:mod:`groupcf.embeddings.preprocessing`); :func:`translate_preprocessing` checks the
  identity on sampled rows of the domain before returning.

Numeric domains (the range ``[low, high]`` a counterfactual may take) come, in order, from

1. ``reference``: a fitted FeatureSpace over the same raw columns, e.g.
   ``gcf.FeatureSpace(immutable=["race"]).fit(X_train)`` — its ranges (the training
   data's min / max), integrality and actionability are used;
2. the first scaler's statistics: ``MinMaxScaler`` — the exact training range;
   ``StandardScaler`` — mean ± 3 standard deviations; ``RobustScaler`` — median ± 2 IQR;
   ``MaxAbsScaler`` — ± the largest absolute value (reported in
   :attr:`Preprocessing.estimated`);
3. otherwise (a ``"passthrough"`` numeric column) an
   :class:`~groupcf.exceptions.UnsupportedModelError` asking for ``reference`` (the
   black-box methods then query the pipeline on raw rows instead).

Anything else raises :class:`~groupcf.exceptions.UnsupportedModelError` naming the step.
Rows must be complete (no NaN) and use the encoder's known categories.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..exceptions import UnsupportedModelError
from ..utils import FloatArray
from ._preprocessing_space import HOW as _HOW
from ._preprocessing_space import Spec as _Spec
from ._preprocessing_space import build_space as _build_space
from .space import FeatureSpace

__all__ = ["Preprocessing", "translate_preprocessing"]

@dataclass
class Preprocessing:
    """A translated preprocessing: ``transform(X) == space.transform(X) @ matrix.T + offset``.

    Attributes
    ----------
    space
        The fitted FeatureSpace over the raw columns the preprocessing reads.
    matrix, offset
        The affine map from the space's columns to the preprocessing's output columns.
    output_names
        Names of the output columns (``get_feature_names_out`` when available).
    ignored
        Raw columns the transformer requires but drops (``"drop"``).
    estimated
        ``{feature: (low, high)}`` ranges estimated from a scaler's statistics.
    """

    space: FeatureSpace
    matrix: FloatArray
    offset: FloatArray
    output_names: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    estimated: dict[str, tuple[float, float]] = field(default_factory=dict)


# an output column: ({(feature, key): coef}, const); key ("v",) is the raw numeric value,
# ("c", category) the indicator of a category
_Col = tuple[dict[tuple[str, tuple[Any, ...]], float], float]
#: a fitted scikit-learn estimator (scikit-learn ships no type stubs)
_Estimator = Any


def translate_preprocessing(steps: Sequence[_Estimator], reference: FeatureSpace | None = None, *,
                            check_rows: int = 64, random_state: int | np.random.Generator | None = 0,
                            ) -> Preprocessing:
    """Translate fitted preprocessing ``steps`` (a Pipeline's steps before the classifier).

    Parameters
    ----------
    steps
        Fitted estimators, in order: a ``ColumnTransformer`` or an encoder / scaler fitted
        on a DataFrame, then optionally more element-wise scalers.
    reference
        Optional fitted :class:`FeatureSpace` over the same raw columns (from the
        training data): numeric ranges, integrality and actionability are taken from it.
    check_rows
        Rows of the domain on which the translation is checked against the transformer.
    random_state
        Seed of those rows.

    Returns
    -------
    Preprocessing
        The space and the affine map.

    Raises
    ------
    UnsupportedModelError
        A step (or a transformer inside the ColumnTransformer) that is not supported,
        named, with what works instead.
        Also a numeric column whose range is unknown (no reference, no scaler statistics).
    InvalidInputError
        ``reference`` is not fitted.

    Examples
    --------
    >>> pre = translate_preprocessing([step for _, step in pipe.steps[:-1]])  # doctest: +SKIP
    >>> Y = pre.space.transform(X) @ pre.matrix.T + pre.offset               # doctest: +SKIP
    >>> np.allclose(Y, pipe[:-1].transform(X))                               # doctest: +SKIP
    True
    """
    steps = [s for s in steps if s is not None and not (isinstance(s, str) and s == "passthrough")]
    if not steps:
        raise UnsupportedModelError("the pipeline has no preprocessing step; " + _HOW)
    first, rest = steps[0], steps[1:]
    names = getattr(first, "feature_names_in_", None)
    if names is None:
        raise UnsupportedModelError(
            f"the pipeline's first step {type(first).__name__} was fitted without column names (on a "
            "numpy array): refit the pipeline on a pandas DataFrame, so raw rows can be encoded; " + _HOW)
    specs: dict[str, _Spec] = {}
    ignored: list[str] = []
    if type(first).__name__ == "ColumnTransformer":
        cols = _column_transformer(first, specs, ignored)
    else:
        cols = _chain([first], [str(n) for n in names], specs)
    for step in rest:
        cols = _elementwise(step, cols, context="after the first step")
    space, estimated = _build_space(specs, [str(n) for n in names], reference)
    matrix, offset = _affine(cols, space)
    out_names = _output_names(steps[-1], len(cols))
    pre = Preprocessing(space, matrix, offset, out_names, ignored, estimated)
    _check(pre, steps, check_rows, random_state)
    return pre


# ---------------------------------------------------------------------------- parsing
def _column_transformer(ct: _Estimator, specs: dict[str, _Spec], ignored: list[str]) -> list[_Col]:
    names = [str(n) for n in ct.feature_names_in_]
    out: list[tuple[int, list[_Col]]] = []
    for name, trans, columns in ct.transformers_:
        used = _resolve_columns(columns, names)
        if isinstance(trans, str) and trans == "drop" or not used:
            ignored.extend(c for c in used if c not in ignored)
            continue
        sl = ct.output_indices_[name]
        block = _chain([trans], used, specs)
        if len(block) != sl.stop - sl.start:
            raise UnsupportedModelError(f"transformer {name!r} ({type(trans).__name__}) gives "
                                        f"{sl.stop - sl.start} columns, expected {len(block)}")
        out.append((sl.start, block))
    out.sort(key=lambda t: t[0])
    for name in list(ignored):
        if name in specs:
            ignored.remove(name)
    return [c for _, block in out for c in block]


def _resolve_columns(columns: Any, names: list[str]) -> list[str]:
    if isinstance(columns, (str, int, np.integer)):
        columns = [columns]
    if isinstance(columns, slice):
        return names[columns]
    arr = np.asarray(columns)
    if arr.dtype == bool:
        return [n for n, keep in zip(names, arr) if keep]
    return [names[int(c)] if isinstance(c, (int, np.integer)) else str(c) for c in arr.tolist()]


def _flatten(steps: Iterable[_Estimator]) -> list[_Estimator]:
    flat: list[_Estimator] = []
    for s in steps:
        if type(s).__name__ == "Pipeline":
            flat.extend(_flatten([e for _, e in s.steps]))
        elif s is not None and not (isinstance(s, str) and s == "passthrough"):
            flat.append(s)
    return flat


def _chain(steps: Iterable[_Estimator], used: list[str], specs: dict[str, _Spec]) -> list[_Col]:
    """Output columns of a chain of transformers applied to the raw columns ``used``."""
    steps = _flatten(steps)
    cols: list[_Col] | None = None
    for step in steps:
        kind = type(step).__name__
        if kind == "SimpleImputer":
            if getattr(step, "add_indicator", False):
                raise UnsupportedModelError("SimpleImputer(add_indicator=True) is not supported: " + _HOW)
            continue                      # identity on complete rows
        if kind in ("OneHotEncoder", "OrdinalEncoder"):
            if cols is not None:
                raise UnsupportedModelError(f"{kind} after a scaler is not supported: " + _HOW)
            cols = _encoder(step, used, specs)
            continue
        if cols is None:                  # first numeric step on raw values
            cols = [({(n, ("v",)): 1.0}, 0.0) for n in used]
            for n in used:
                _merge(specs, n, _Spec("numeric"))
            _record_stats(step, used, specs)
        cols = _elementwise(step, cols, context=f"on columns {used}")
    if cols is None:                      # only identities: passthrough
        cols = [({(n, ("v",)): 1.0}, 0.0) for n in used]
        for n in used:
            _merge(specs, n, _Spec("numeric"))
    return cols


def _encoder(enc: _Estimator, used: list[str], specs: dict[str, _Spec]) -> list[_Col]:
    kind = type(enc).__name__
    if getattr(enc, "infrequent_categories_", None) is not None and \
            any(c is not None for c in enc.infrequent_categories_):
        raise UnsupportedModelError(f"{kind} with infrequent categories (min_frequency / max_categories) "
                                    "is not supported: " + _HOW)
    cols: list[_Col] = []
    drop_idx = getattr(enc, "drop_idx_", None)
    for i, n in enumerate(used):
        cats = list(enc.categories_[i])
        dtype = np.asarray(enc.categories_[i]).dtype
        if kind == "OrdinalEncoder":
            _merge(specs, n, _Spec("ordinal", cats, dtype=dtype))
            cols.append(({(n, ("c", cats[k])): float(k) for k in range(1, len(cats))}, 0.0))
            continue
        drop = None if drop_idx is None or drop_idx[i] is None else int(drop_idx[i])
        keep = [k for k in range(len(cats)) if k != drop]
        binary = len(cats) == 2 and keep == [1]
        _merge(specs, n, _Spec("categorical", cats, binary=binary, dtype=dtype))
        cols.extend(({(n, ("c", cats[k])): 1.0}, 0.0) for k in keep)
    return cols


def _scaler_params(step: _Estimator, width: int) -> tuple[FloatArray, FloatArray]:
    """``(a, b)`` of an element-wise affine step ``y = a x + b`` (arrays of ``width``)."""
    kind = type(step).__name__
    ones, zeros = np.ones(width), np.zeros(width)
    if kind == "StandardScaler":
        a = ones if step.scale_ is None else 1.0 / np.asarray(step.scale_, float)
        b = zeros if step.mean_ is None else -np.asarray(step.mean_, float) * a
    elif kind == "RobustScaler":
        a = ones if step.scale_ is None else 1.0 / np.asarray(step.scale_, float)
        b = zeros if step.center_ is None else -np.asarray(step.center_, float) * a
    elif kind == "MinMaxScaler":
        a, b = np.asarray(step.scale_, float), np.asarray(step.min_, float)
    elif kind == "MaxAbsScaler":
        a, b = 1.0 / np.asarray(step.scale_, float), zeros
    elif kind == "FunctionTransformer" and step.func is None and step.inverse_func is None:
        a, b = ones, zeros                # "passthrough" (and remainder="passthrough")
    elif kind == "SimpleImputer" and not getattr(step, "add_indicator", False):
        a, b = ones, zeros
    else:
        raise UnsupportedModelError(f"the preprocessing step {kind} is not supported: " + _HOW)
    if len(a) != width:
        raise UnsupportedModelError(f"{kind} has {len(a)} columns, its input {width}")
    return a, b


def _elementwise(step: _Estimator, cols: list[_Col], context: str) -> list[_Col]:
    for s in _flatten([step]):
        if type(s).__name__ == "MinMaxScaler" and s.clip and any(k != ("v",) for c in cols for _, k in c[0]):
            raise UnsupportedModelError(f"MinMaxScaler(clip=True) {context} is only supported on raw numeric "
                                        "columns: " + _HOW)
        a, b = _scaler_params(s, len(cols))
        cols = [({k: ai * v for k, v in terms.items()}, ai * const + bi)
                for (terms, const), ai, bi in zip(cols, a, b)]
    return cols


def _record_stats(step: _Estimator, used: list[str], specs: dict[str, _Spec]) -> None:
    """Range of raw numeric columns from the first scaler that reads them."""
    kind = type(step).__name__
    for i, n in enumerate(used):
        sp = specs[n]
        if sp.stats is not None:
            continue
        if kind == "MinMaxScaler":
            lo, hi = float(step.data_min_[i]), float(step.data_max_[i])
            sp.stats = (lo, hi, "MinMaxScaler's training range")
            if step.clip:
                sp.clip = (lo, hi)
        elif kind == "StandardScaler" and step.mean_ is not None and step.scale_ is not None:
            m, s = float(step.mean_[i]), float(np.sqrt(step.var_[i])) if step.var_ is not None else 1.0
            sp.stats = (m - 3 * s, m + 3 * s, "StandardScaler: mean ± 3 std")
        elif kind == "RobustScaler" and step.center_ is not None and step.scale_ is not None:
            m, s = float(step.center_[i]), float(step.scale_[i])
            sp.stats = (m - 2 * s, m + 2 * s, "RobustScaler: median ± 2 IQR")
        elif kind == "MaxAbsScaler":
            s = float(step.max_abs_[i])
            sp.stats = (-s, s, "MaxAbsScaler: ± max |value|")


def _merge(specs: dict[str, _Spec], name: str, spec: _Spec) -> None:
    old = specs.get(name)
    if old is None:
        specs[name] = spec
    elif old.kind != spec.kind or (old.categories is not None and spec.categories is not None
                                   and list(map(str, old.categories)) != list(map(str, spec.categories))):
        raise UnsupportedModelError(f"column {name!r} is encoded in two incompatible ways ({old.kind} and "
                                    f"{spec.kind}) by the ColumnTransformer: " + _HOW)
    elif spec.kind == "categorical" and not spec.binary:
        old.binary = False


# ---------------------------------------------------------------------------- the map
def _affine(cols: list[_Col], space: FeatureSpace) -> tuple[FloatArray, FloatArray]:
    A = np.zeros((len(cols), space.n_features_out_))
    c = np.zeros(len(cols))
    for j, (terms, const) in enumerate(cols):
        c[j] = const
        for (name, key), coef in terms.items():
            f = space[name]
            if key == ("v",):
                A[j, f.columns[0]] += coef * (f.high - f.low)
                c[j] += coef * f.low
                continue
            k = [str(v) for v in f.categories].index(str(key[1]))
            if f.encoding == "onehot":
                A[j, f.columns[k]] += coef
            elif k == 1:                   # binary column: value == categories[1]
                A[j, f.columns[0]] += coef
            else:                          # the other category: 1 - z
                A[j, f.columns[0]] -= coef
                c[j] += coef
    return A, c


def _output_names(step: _Estimator, n: int) -> list[str]:
    try:
        return [str(s) for s in step.get_feature_names_out()]
    except Exception:  # noqa: BLE001 - names are cosmetic
        return [f"x{j}" for j in range(n)]


def _check(pre: Preprocessing, steps: Sequence[_Estimator], n: int,
           random_state: int | np.random.Generator | None) -> None:
    """The translation equals the transformer on ``n`` rows of the domain."""
    rng = np.random.default_rng(random_state)
    space = pre.space
    Z = space.domain().sample(n, rng)
    rows = space.inverse_transform(Z)
    for c in pre.ignored:
        rows[c] = np.nan
    rows = rows[[str(c) for c in steps[0].feature_names_in_]]
    Z = space.transform(rows)
    Y = rows
    for s in steps:
        Y = s.transform(Y)
    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=float)
    mine = Z @ pre.matrix.T + pre.offset
    if Y.shape != mine.shape or not np.allclose(Y, mine, rtol=1e-9, atol=1e-9):
        j = int(np.argmax(np.abs(Y - mine).max(axis=0))) if Y.shape == mine.shape else -1
        raise UnsupportedModelError(
            "the preprocessing could not be reproduced exactly "
            f"(output {Y.shape} vs {mine.shape}{'' if j < 0 else f', column {pre.output_names[j]!r}'}); "
            + _HOW)

