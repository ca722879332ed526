"""groupcf.features.display: bins with the training range's bounds and a representative value."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.features.display import bin_bounds, bin_label, bin_value, set_column, show_value


@pytest.fixture(scope="module")
def german_space():
    ds = gcf.datasets.load("german")
    return gcf.FeatureSpace().fit(ds.X), ds.X


def test_bins_show_the_training_range(german_space):
    space, X = german_space
    f = space["duration"]
    first, last = f.categories[0], f.categories[-1]
    assert not np.isfinite(first.left) and not np.isfinite(last.right)      # the space's own edges
    assert bin_label(f, first) == f"[{X['duration'].min():g}, {first.right:g})"
    assert bin_label(f, last) == f"[{last.left:g}, {X['duration'].max():g}]"  # closed at the maximum
    for iv in f.categories:
        text = show_value(f, iv)
        assert "inf" not in text and "(~" in text
        lo, hi, closed_right = bin_bounds(f, iv)
        v = bin_value(f, iv)
        assert isinstance(v, int)                      # an integer column: a whole number
        assert lo <= v and (v <= hi if closed_right else v < hi)
        assert X["duration"].min() <= v <= X["duration"].max()


def test_representative_value_is_the_midpoint(german_space):
    space, _ = german_space
    f = space["duration"]
    iv = pd.Interval(4.0, 12.0, closed="left")
    assert bin_value(f, iv) == 8 and show_value(f, iv) == "[4, 12) (~8)"


def test_plain_values():
    assert show_value(None, np.int64(3448)) == "3448"
    assert show_value(None, np.float64(-8.3e-17)) == "0"
    assert show_value(None, 2.5) == "2.5"
    assert show_value(None, "car (new)") == "car (new)"


def test_set_column_keeps_values_already_in_the_bin():
    ages = pd.Series([34, 55, np.nan, 42], index=list("abcd"), name="age")
    b = pd.Interval(42.0, np.inf, closed="left")
    out = set_column(ages, b)
    assert out["a"] == b and pd.isna(out["c"]) is False and out["c"] == b
    assert out["b"] == 55 and out["d"] == 42
    assert list(out.index) == list("abcd") and out.name == "age"
    same = set_column(ages.iloc[[1, 3]], b)              # everyone inside: unchanged, still numeric
    assert pd.api.types.is_numeric_dtype(same.dtype) and list(same) == [55, 42]
    cat = pd.Series(pd.Categorical(["x", "y"], categories=["x", "y", "z"]))
    z = set_column(cat, "z")
    assert isinstance(z.dtype, pd.CategoricalDtype) and list(z) == ["z", "z"]
    assert list(set_column(pd.Series([1, 2]), 7)) == [7, 7]
    assert list(set_column(pd.Series(["p", "q"]), b)) == [b, b]   # not numeric: set as is
