"""GeCo's ``decode`` (candidates back to raw rows) against a cell-by-cell reference: the
instance's value where a feature is unchanged, the domain value where it changes, each
column converted to the data's dtype one value at a time."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from groupcf.single.geco import decode
from groupcf.single.geco.domain import ActiveDomain


def _reference(domain, x, M, V):
    cols = {}
    for l, f in enumerate(domain.features):
        vals = np.empty(len(M), dtype=object)
        for i in range(len(M)):
            vals[i] = f.values[V[i, l]] if M[i, l] else x[f.name]
        dt = f.dtype
        if isinstance(dt, pd.CategoricalDtype):
            with warnings.catch_warnings():               # a value outside the categories: NaN
                warnings.simplefilter("ignore")
                cols[f.name] = pd.Categorical(list(vals), dtype=dt)
        else:
            try:
                cols[f.name] = pd.array(vals, dtype=dt)
            except (TypeError, ValueError):
                cols[f.name] = vals
    return pd.DataFrame(cols)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 60
    return pd.DataFrame({
        "cat_str": pd.Categorical(rng.choice(["a", "b", "c"], n), categories=["a", "b", "c", "unseen"]),
        "cat_int": pd.Categorical(rng.choice([1, 2, 5], n)),
        "ordered": pd.Categorical(rng.choice(["lo", "mid", "hi"], n), categories=["lo", "mid", "hi"], ordered=True),
        "int": rng.integers(0, 40, n),
        "float": np.round(rng.random(n) * 10, 2),
        "flag": rng.random(n) < 0.5,
        "text": rng.choice(["x", "y", "z"], n).astype(object),
        "nullable": pd.array(rng.integers(0, 5, n), dtype="Int64"),
    })


def test_decode_equals_cell_by_cell_reference(data):
    """Every dtype (categoricals of strings / ints / ordered, int, float, bool, object,
    nullable Int64), instances from the data and instances holding values the data never
    shows (a category outside the dtype, a float in an int column, an int-valued float in a
    categorical of ints): the same frame, dtypes included."""
    dom = ActiveDomain(data)
    rng = np.random.default_rng(1)
    xs = [data.iloc[i].copy() for i in range(4)]
    odd = data.iloc[0].copy()
    odd["cat_str"], odd["int"], odd["cat_int"], odd["float"] = "zzz", 2.5, 2.0, 7
    xs.append(odd)
    for x in xs:
        M = rng.random((9, len(dom))) < 0.4
        M[0] = False                                          # the instance itself
        V = np.full(M.shape, -1, dtype=np.int32)
        for l, f in enumerate(dom.features):
            V[M[:, l], l] = rng.integers(f.size, size=int(M[:, l].sum()))
        got = decode(dom, x, M, V)
        pd.testing.assert_frame_equal(got, _reference(dom, x, M, V))
        if x is not odd:                                      # else 2.5 leaves "int" an object column
            assert list(got.dtypes) == [f.dtype for f in dom.features]
