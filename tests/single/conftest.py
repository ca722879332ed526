"""Fixtures of the single-instance tests: the PSO cases (a small mixed-type forest, a
120-feature one, a forest on the rule a > 0.6)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf


def _data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 6)), columns=[f"f{i}" for i in range(6)])
    X["color"] = pd.Categorical(rng.choice(["red", "green", "blue"], n))
    X["level"] = pd.Categorical(rng.choice(["low", "mid", "high"], n), categories=["low", "mid", "high"],
                                ordered=True)
    X["flag"] = rng.integers(0, 2, n)
    X["count"] = rng.integers(0, 12, n)
    y = ((X.f0 + X.f1 + (X.color == "red") + 0.5 * X.level.cat.codes + X["count"] / 6) > 1.5).astype(int)
    return X, y


@pytest.fixture(scope="module")
def pso_rf():
    """A mixed-type forest (numeric, categorical, ordered, binary, integer features), two
    immutable and two increase-only: ``(X, y, pipe, rejected rows)``."""
    X, y = _data()
    space = gcf.FeatureSpace(numeric="passthrough", immutable=["f2", "color"], increase_only=["count", "level"])
    pipe = make_pipeline(space, RandomForestClassifier(n_estimators=30, random_state=0)).fit(X, y)
    rejected = X[pipe.predict(X) == 0]
    return X, y, pipe, rejected


@pytest.fixture(scope="module")
def pso_wide():
    """120 features (10 informative), a random forest; two immutable, eight increase-only."""
    from sklearn.datasets import make_classification

    Xa, y = make_classification(n_samples=600, n_features=120, n_informative=10, random_state=0)
    X = pd.DataFrame(Xa, columns=[f"f{i:03d}" for i in range(120)])
    inc = [f"f{i:03d}" for i in range(2, 10)]
    space = gcf.FeatureSpace(numeric="passthrough", immutable=["f000", "f001"], increase_only=inc)
    pipe = make_pipeline(space, RandomForestClassifier(n_estimators=40, random_state=0)).fit(X[:400], y[:400])
    test = X[400:]
    return X[:400], pipe, test[pipe.predict(test) == 0], inc


@pytest.fixture(scope="module")
def pso_line():
    """Accepts a > 0.6 (a forest on a noiseless rule); b and c are irrelevant."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0, 1, size=(2000, 3)), columns=["a", "b", "c"])
    X.iloc[0], X.iloc[1] = [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]                 # ranges exactly [0, 1]
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"),
                         RandomForestClassifier(n_estimators=20, random_state=0)).fit(X, (X.a > 0.6).astype(int))
    return pipe

