"""Fixtures of the global-actions tests."""
from __future__ import annotations

import pytest

import groupcf as gcf


@pytest.fixture(scope="session")
def german_lr():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    ds = gcf.datasets.load("german")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.3, random_state=0)
    fs = gcf.FeatureSpace(numeric="passthrough", immutable=["age", "personal_status_sex", "foreign_worker"])
    pipe = make_pipeline(fs, LogisticRegression(max_iter=2000)).fit(X_tr, y_tr)
    S = X_te[pipe.predict(X_te) == 0].iloc[:30]
    return pipe, S


@pytest.fixture(scope="session")
def german_global(german_lr):
    """A small answer on German credit: 3 actions, Tmax 2, 30 people."""
    pipe, S = german_lr
    return gcf.explain_global(S, pipe, Tmax=2, k=3, progress=False)
