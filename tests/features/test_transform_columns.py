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


def _frame_path(space, x):
    """``transform`` of the one-row frame (the path every frame takes)."""
    return space.transform(x.to_frame().T)


def _outcome(f, x):
    """The encoded row ``f(x)`` (as a tuple) or the error's message."""
    try:
        return tuple(np.asarray(f(x)).ravel().tolist())
    except InvalidInputError as e:
        return str(e)


@pytest.mark.parametrize("numeric", ["passthrough", "bin"])
def test_a_series_encodes_as_its_one_row_frame(numeric):
    """A row given as a Series is read value by value, without a frame: the same encoding
    as its one-row frame on real rows (binned and continuous numerics, binary and one-hot
    categoricals), and, for the values it does not read itself (a missing value, an unknown
    category, text or a bool in a numeric column, a missing column, a repeated label, a
    bin given as an interval), the same encoding or the same error."""
    ds = gcf.datasets.load("adult")
    X = ds.X.iloc[:300]
    space = gcf.FeatureSpace(numeric=numeric).fit(X)
    for i in range(0, 300, 7):
        x = X.iloc[i]
        np.testing.assert_array_equal(space.transform(x), _frame_path(space, x))
    x = X.iloc[3]
    num = next(f.name for f in space if f.kind == "numeric")
    cat = next(f.name for f in space if f.encoding == "onehot")
    odd = {num: [np.nan, "12", True, np.float32(3.5), 10**17], cat: [np.nan, "never seen", None]}
    for name, values in odd.items():
        for v in values:
            y = x.copy().astype(object)
            y[name] = v
            assert _outcome(space.transform, y) == _outcome(lambda r: _frame_path(space, r), y)
    if numeric == "bin":
        y = x.copy().astype(object)
        y[num] = space[num].categories[1]                         # the bin itself
        np.testing.assert_array_equal(space.transform(y), _frame_path(space, y))
    assert _outcome(space.transform, x.drop(num)) == _outcome(lambda r: _frame_path(space, r), x.drop(num))
    twice = pd.concat([x, x.iloc[:1]])
    assert _outcome(space.transform, twice) == _outcome(lambda r: _frame_path(space, r), twice)


@pytest.mark.parametrize("numeric", ["passthrough", "bin"])
def test_small_frames_encode_as_the_frame_path(numeric, monkeypatch):
    """Frames of at most ``SMALL_FRAME`` rows are read value by value: the frame path's
    encoding (categorical and object columns, a repeated row), and its errors (a missing
    value, an unknown category, text in a numeric column) named the same."""
    space, X, as_object = _frames()
    space = gcf.FeatureSpace(numeric=numeric).fit(X)
    num = next(f.name for f in space if f.kind == "numeric")
    cat = next(f.name for f in space if f.encoding == "onehot")
    frames = [X.iloc[:space.SMALL_FRAME], X.iloc[[100]], as_object.iloc[5:12], X.iloc[[3, 3, 7]]]
    for col, bad in ((num, np.nan), (num, "text"), (cat, "never seen"), (cat, np.nan)):
        odd = as_object.iloc[:4].copy().astype({num: object})
        odd.iloc[2, odd.columns.get_loc(col)] = bad
        frames.append(odd)

    def frame_path(frame):
        with monkeypatch.context() as m:
            m.setattr(gcf.FeatureSpace, "SMALL_FRAME", 0)
            return space.transform(frame)

    for frame in frames:
        assert _outcome(space.transform, frame) == _outcome(frame_path, frame)
    assert any(isinstance(_outcome(space.transform, f), str) for f in frames)      # errors compared too
