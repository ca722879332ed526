"""The swarm's partial evaluation (SwarmModel.score_near): the same probabilities as a
full evaluation, for tree ensembles (only the trees a change reaches are walked) and for
models without a cheap one (scored in full)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.single.pso.model import SwarmModel


def _data(seed=3, n=300):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 5)), columns=list("abcde"))
    X["k"] = rng.integers(0, 4, n).astype(float)
    y = ((X.a - X.b + 0.3 * X.k + 0.5 * X.c * X.d) > 0.2).astype(int)
    return X, y


@pytest.mark.parametrize("clf", [RandomForestClassifier(n_estimators=20, random_state=0),
                                 GradientBoostingClassifier(n_estimators=20, random_state=0),
                                 MLPClassifier((6,), max_iter=400, random_state=0)],
                         ids=["rf", "gb", "mlp"])
def test_score_near_equals_score(clf):
    X, y = _data()
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), clf).fit(X, y)
    bb = SwarmModel(pipe, None, 0.5)
    Z = bb.space.transform(X)
    rng = np.random.default_rng(0)
    for r in range(5):
        z = Z[r]
        m = 60
        Q = np.repeat(z[None, :], m, axis=0)
        for i in range(m):                       # 0-3 columns changed, some to split points
            cols = rng.choice(Z.shape[1], size=rng.integers(0, 4), replace=False)
            Q[i, cols] = rng.random(len(cols))
            pts = bb.split_points()
            if pts is not None and len(cols) and len(pts[cols[0]]):
                Q[i, cols[0]] = rng.choice(pts[cols[0]])           # exactly on a threshold
        np.testing.assert_allclose(bb.score_near(z, Q), bb.score(Q), rtol=0, atol=1e-12)
    assert bb.score_near(Z[0], Z[:0]).shape == (0,)
