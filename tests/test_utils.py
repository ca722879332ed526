"""The neutral helpers every layer shares (groupcf.utils)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from groupcf.utils import Deadline, cells, column_values, value_key


def test_value_key_equal_values_share_a_key():
    assert value_key(np.array([0.1 + 0.2, -0.0])) == value_key(np.array([0.3, 0.0]))
    assert value_key(np.array([0.3])) != value_key(np.array([0.3 + 1e-6]))
    a, b = np.array([True, False, True]), np.array([True, True, False])
    assert value_key(np.ones(2), a) == value_key(np.ones(2), a.copy())
    assert value_key(np.ones(2), a) != value_key(np.ones(2), b)
    # parts are delimited: moving an element across arrays changes the key
    assert value_key(np.array([1.0, 2.0]), np.array([3.0])) != value_key(np.array([1.0]), np.array([2.0, 3.0]))


def test_deadline():
    assert Deadline(None).left() is None and not Deadline(None).passed
    assert Deadline(0.0).passed and Deadline(0.0).left() == 0.0
    d = Deadline(1e6)
    assert not d.passed and 0 < d.left() <= 1e6 and d.elapsed() >= 0


def test_column_values_equal_tolist():
    """``column_values`` reads a categorical column through its codes: the same Python
    values, of the same types, as ``Series.tolist`` (missing values, numeric, ordered and
    bool categories, non-categorical columns)."""
    cols = [pd.Series(pd.Categorical(["a", None, "b", "a"], categories=["a", "b", "c"])),
            pd.Series(pd.Categorical([1, 2, None, 5])),
            pd.Series(pd.Categorical(["lo", "hi", "lo"], categories=["lo", "hi"], ordered=True)),
            pd.Series(pd.Categorical([1.5, 2.5])), pd.Series(pd.Categorical([True, False])),
            pd.Series([1, 2, 3]), pd.Series(["x", None]), pd.Series([0.5, np.nan])]
    for col in cols:
        got, want = column_values(col), col.tolist()
        assert [type(v) for v in got] == [type(v) for v in want]
        assert all(a == b or (a != a and b != b) for a, b in zip(got, want)), (col.dtype, got, want)


@pytest.mark.parametrize("shape", [(0, 3), (5, 0), (1, 1), (40, 23), (7, 130)])
def test_cells_is_nonzero_of_a_2d_mask(shape):
    M = np.random.default_rng(sum(shape)).random(shape) < 0.3
    rows, cols = cells(M)
    want = np.nonzero(M)
    assert np.array_equal(rows, want[0]) and np.array_equal(cols, want[1])
    assert rows.dtype == want[0].dtype and cols.dtype == want[1].dtype


def test_cells_needs_two_dimensions():
    with pytest.raises(ValueError, match="2-D"):
        cells(np.ones(3, dtype=bool))
