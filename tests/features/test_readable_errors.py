"""Input mistakes are named: a text value in a numeric column (column and row), a dataset's own rules."""
from __future__ import annotations

import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import InvalidInputError


@pytest.mark.parametrize("numeric", ["passthrough", "bins"])
def test_text_in_a_numeric_column_names_column_and_row(numeric):
    ds = gcf.datasets.load("german")
    space = ds.space(numeric="passthrough") if numeric == "passthrough" else ds.space()
    pipe = make_pipeline(space, LogisticRegression(max_iter=1000)).fit(ds.X, ds.y)
    x = ds.X.iloc[[3]].copy()
    x["duration"] = x["duration"].astype(object)
    x.loc[x.index[0], "duration"] = "forty"
    with pytest.raises(InvalidInputError, match=r"column 'duration' is numeric but row 3 holds 'forty'"):
        gcf.explain(x, pipe, progress=False)


def test_dataset_space_applies_its_rules():
    ds = gcf.datasets.load("adult")
    space = ds.space(numeric="passthrough", immutable=["workclass"] if "workclass" in ds.X else [])
    assert set(ds.immutable) <= set(space.immutable) and set(ds.increase_only) <= set(space.increase_only)
    assert "relationship" in ds.immutable          # Husband -> Wife would change sex
    space.fit(ds.X.iloc[:500])
    assert all(space[c].immutable for c in ds.immutable)
