"""A bare model explained with ``space=`` is checked against that space before any work:
width, names, and (for a model fitted on a numpy array over numeric features) a sample of
the domain that tells a model fitted on raw values from one fitted on the encoding."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import groupcf as gcf
from groupcf.exceptions import GroupCFWarning, InvalidInputError
from groupcf.models import resolve_model


@pytest.fixture(scope="module")
def numeric():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.integers(18, 70, 400).astype(float), "income": rng.normal(50, 15, 400),
                      "hours": rng.uniform(10, 60, 400)})
    y = ((X.age - 40) / 10 + (X.income - 50) / 15 + rng.normal(0, 1, 400) > 0.3).astype(int)
    return X, y, gcf.FeatureSpace(numeric="passthrough").fit(X)


def test_a_model_fitted_on_raw_values_is_named(numeric):
    X, y, space = numeric
    raw = LogisticRegression(max_iter=1000).fit(X.to_numpy(), y)
    with pytest.warns(GroupCFWarning, match=r"looks fitted on raw values.*'age': \[18, 69\] -> \[0, 1\]"):
        resolve_model(raw, space=space)
    good = LogisticRegression().fit(space.transform(X), y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GroupCFWarning)
        resolve_model(good, space=space)


def test_width_and_raw_column_names_are_named(numeric):
    X, y, _ = numeric
    binned = gcf.FeatureSpace().fit(X)                       # 4 bins each: 12 columns
    raw = LogisticRegression(max_iter=1000).fit(X.to_numpy(), y)
    with pytest.raises(InvalidInputError, match=r"takes 3 inputs.*12 columns.*3 = the number of raw features"):
        resolve_model(raw, space=binned)
    X2 = X.assign(big=(X.age > 40).astype(int))
    space2 = gcf.FeatureSpace(numeric="passthrough").fit(X2)  # 'big' is binary: named big=1
    by_name = LogisticRegression(max_iter=1000).fit(X2, y)
    with pytest.raises(InvalidInputError, match=r"fitted on the raw columns.*feature_names_in_"):
        resolve_model(by_name, space=space2)
