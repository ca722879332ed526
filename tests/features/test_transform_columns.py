"""``FeatureSpace.transform`` reads a categorical column through its codes and finds
missing values in one pass over the frame: the same encoding as reading every value,
and the same errors, named."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.exceptions import InvalidInputError


def _frames():
    ds = gcf.datasets.load("adult")
    X = ds.X.iloc[:400]
    space = gcf.FeatureSpace(numeric="passthrough").fit(X)
    as_object = X.astype({c: object for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)})
    return space, X, as_object


def test_categorical_columns_encode_as_their_values():
    """Categorical dtypes (the dataset's own, a category subset, categories in another
    order, unused categories) encode as the same values given one by one."""
    space, X, as_object = _frames()
    assert any(isinstance(X[c].dtype, pd.CategoricalDtype) for c in X.columns)
    np.testing.assert_array_equal(space.transform(X), space.transform(as_object))
    shuffled = X.copy()
    for c in X.columns:
        if isinstance(X[c].dtype, pd.CategoricalDtype):
            cats = list(X[c].cat.categories)[::-1] + ["never seen"]
            shuffled[c] = pd.Categorical(X[c].astype(object), categories=cats)
    np.testing.assert_array_equal(space.transform(shuffled.iloc[:7]), space.transform(as_object.iloc[:7]))
    one = X.iloc[[5]].copy()
    for c in X.columns:
        if isinstance(X[c].dtype, pd.CategoricalDtype):
            one[c] = one[c].astype(object).astype("category")     # only its own value as category
    np.testing.assert_array_equal(space.transform(one), space.transform(as_object.iloc[[5]]))


def test_unknown_category_and_missing_value_named_in_categorical_columns():
    space, X, _ = _frames()
    c = next(c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype))
    bad = X.iloc[:3].copy()
    bad[c] = pd.Categorical(["martian"] + list(X[c].iloc[1:3].astype(object)))
    with pytest.raises(InvalidInputError, match=rf"unknown category 'martian' in column '{c}' \(row {X.index[0]}\)"):
        space.transform(bad)
    nan = X.iloc[:3].copy()
    nan.loc[nan.index[1], c] = np.nan
    with pytest.raises(InvalidInputError, match=rf"missing value \(NaN\) in column '{c}' at rows \[{X.index[1]}\]"):
        space.transform(nan)
    num = next(c for c in X.columns if pd.api.types.is_numeric_dtype(X[c].dtype))
    nan = X.iloc[:3].astype({num: float})
    nan.loc[nan.index[2], num] = np.nan
    with pytest.raises(InvalidInputError, match=rf"missing value \(NaN\) in column '{num}' at rows \[{X.index[2]}\]"):
        space.transform(nan)
    extra = X.iloc[:3].assign(unused=np.nan)               # a NaN in a column the space ignores
    np.testing.assert_array_equal(space.transform(extra), space.transform(X.iloc[:3]))
