"""The FeatureSpace side of :mod:`groupcf.features.preprocessing`: one feature per raw
column the transformer reads, with the encoder's categories and the numeric ranges of a
reference FeatureSpace (training rows) or of the scalers' statistics."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InvalidInputError, UnsupportedModelError
from .space import Feature, FeatureSpace

SUPPORTED = ("ColumnTransformer", "OneHotEncoder", "OrdinalEncoder", "StandardScaler", "MinMaxScaler",
             "RobustScaler", "MaxAbsScaler", "SimpleImputer", "'passthrough'", "'drop'")
HOW = ("supported preprocessing: a ColumnTransformer / make_column_transformer (or a chain) of "
       + ", ".join(SUPPORTED) + "; otherwise put a groupcf FeatureSpace first "
       "(make_pipeline(gcf.FeatureSpace(), classifier)), or use a black-box method "
       "(method='geco' or 'pso') with data=")


@dataclass
class Spec:
    """What the transformer needs of one raw column."""

    kind: str                       # "numeric" | "categorical" | "ordinal"
    categories: list[Any] | None = None
    binary: bool = False            # encoded as one 0/1 column (value == categories[1])
    stats: tuple[float, float, str] | None = None  # (low, high, how) estimated from the first scaler
    clip: tuple[float, float] | None = None        # MinMaxScaler(clip=True): the range it clips to
    dtype: np.dtype[Any] | None = None



def build_space(specs: Mapping[str, Spec], order: Sequence[str], reference: FeatureSpace | None,
                ) -> tuple[FeatureSpace, dict[str, tuple[float, float]]]:
    feats: list[Feature] = []
    estimated: dict[str, tuple[float, float]] = {}
    for name in [n for n in order if n in specs]:
        sp = specs[name]
        ref = _ref_feature(reference, name)
        cats = list(sp.categories or ())   # set for every encoded (non-numeric) column
        if sp.kind == "numeric":
            lo, hi, integer = _numeric_range(name, sp, ref)
            if sp.stats is not None and ref is None and not sp.stats[2].startswith("MinMaxScaler"):
                estimated[name] = (lo, hi)
            f = Feature(name, "numeric", "continuous", low=lo, high=hi if hi > lo else lo + 1.0,
                        integer=integer, dtype=np.dtype(float))
        elif sp.binary:
            f = Feature(name, "binary", "binary", categories=cats, dtype=_dtype(ref, sp))
        elif ref is not None and ref.kind == "ordinal" and _same_set(ref.categories, cats):
            # the data declares an order: keep it (distances, increase-only); columns map by value
            f = Feature(name, "ordinal", "onehot", categories=list(ref.categories), dtype=_dtype(ref, sp))
        else:
            f = Feature(name, sp.kind, "onehot", categories=cats, dtype=_dtype(ref, sp))
        if ref is not None:
            f.immutable = bool(ref.immutable)
            if ref.increase_only and f.ordered:
                f.increase_only = True
        feats.append(f)
    space = FeatureSpace(immutable=[f.name for f in feats if f.immutable],
                         increase_only=[f.name for f in feats if f.increase_only], numeric="passthrough",
                         features=[f.name for f in feats])
    return space._set_features(feats), estimated


def _same_set(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return sorted(map(str, a)) == sorted(map(str, b)) and len(a) == len(b)


def _ref_feature(reference: FeatureSpace | None, name: str) -> Feature | None:
    if reference is None:
        return None
    if not hasattr(reference, "features_"):
        raise InvalidInputError("the FeatureSpace passed as space= is not fitted: call .fit(X_train) first")
    try:
        return reference[name]
    except KeyError:
        return None


def _ref_range(ref: Feature) -> tuple[float, float, bool | None] | None:
    if ref.encoding == "continuous" or ref.edges is not None:
        return float(ref.low), float(ref.high), bool(ref.integer) if ref.encoding == "continuous" else None
    vals = [c for c in ref.categories if isinstance(c, (int, float, np.integer, np.floating))
            and not isinstance(c, (bool, np.bool_))]
    if vals and len(vals) == len(ref.categories):
        return float(min(vals)), float(max(vals)), all(float(v).is_integer() for v in vals)
    return None


def _numeric_range(name: str, sp: Spec, ref: Feature | None) -> tuple[float, float, bool]:
    rng = _ref_range(ref) if ref is not None else None
    if ref is not None and rng is None:
        raise UnsupportedModelError(f"column {name!r} reaches the classifier as a number (passthrough or a "
                                    f"scaler) but it is {ref.kind} in the data: encode it (OneHotEncoder)")
    if rng is not None:
        lo, hi, integer = rng
        integer = bool(integer) if integer is not None else False
    elif sp.stats is not None:
        lo, hi, integer = sp.stats[0], sp.stats[1], False
    else:
        raise UnsupportedModelError(
            f"numeric column {name!r} passes through without a scaler, so its range is unknown: pass "
            "space=gcf.FeatureSpace(numeric='passthrough').fit(X_train) (any FeatureSpace fitted on the "
            "training rows) to give the training ranges")
    if sp.clip is not None:
        lo, hi = max(lo, sp.clip[0]), min(hi, sp.clip[1])
    return float(lo), float(hi), integer


def _dtype(ref: Feature | None, sp: Spec) -> object:
    if ref is not None and ref.dtype is not None:
        dt = ref.dtype
        if not isinstance(dt, pd.CategoricalDtype) or set(map(str, sp.categories or ())) <= set(
                map(str, dt.categories)):
            return dt
    return sp.dtype if sp.dtype is not None and sp.dtype.kind in "biuf" else None
