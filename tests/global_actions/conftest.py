"""Fixtures of the global-actions tests."""
from __future__ import annotations

import numpy as np
import pandas as pd
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


def logit(X: pd.DataFrame) -> np.ndarray:
    """0.1 u - 1 + 0.5 [c = yes] + 0.3 [d = yes] + 0.01 (v - 5): ``c -> yes`` adds 0.5,
    ``d -> yes`` 0.3 (``v``, trained on 0 … 10, is 5 unless said otherwise)."""
    return (0.1 * X["u"].to_numpy(float) - 1.0 + 0.5 * (X["c"] == "yes").to_numpy()
            + 0.3 * (X["d"] == "yes").to_numpy() + 0.01 * (X["v"].to_numpy(float) - 5.0))


@pytest.fixture(scope="session")
def placed():
    """A pipeline whose decision function is exactly :func:`logit` (``u`` immutable): people's
    scores placed by hand."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    grid = np.linspace(0.0, 10.0, 41)
    X = pd.DataFrame([(u, c, d, v) for u in grid for c in ("no", "maybe", "yes") for d in ("no", "yes")
                      for v in (0, 5, 10)], columns=["u", "c", "d", "v"])
    fs = gcf.FeatureSpace(numeric="passthrough", immutable=["u"])
    pipe = make_pipeline(fs, LogisticRegression(max_iter=1000)).fit(X, (logit(X) > 0).astype(int))
    Z = np.asarray(pipe[0].transform(X), dtype=float)
    w = np.linalg.lstsq(np.column_stack([Z, np.ones(len(Z))]), logit(X), rcond=None)[0]
    pipe[-1].coef_, pipe[-1].intercept_ = w[None, :-1], w[-1:]
    np.testing.assert_allclose(pipe.decision_function(X), logit(X), atol=1e-12)
    return pipe
