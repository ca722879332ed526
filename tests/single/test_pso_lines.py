"""Line crossings (groupcf.single.pso.lines): for a network (exact line search, no split
points), the cheapest one-feature move to the decision boundary, checked by brute force."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf import metrics_hd


@pytest.fixture(scope="module")
def mlp_case():
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(400, 6)) * [1, 2, 0.5, 1, 3, 1], columns=[f"f{i}" for i in range(6)])
    y = (X.f0 + 0.5 * X.f1 - X.f2 + 0.2 * X.f3 ** 2 > 0.5).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough", immutable=["f5"]),
                         MLPClassifier((12,), max_iter=2000, random_state=0)).fit(X, y)
    return X, pipe, X[pipe.predict(X) == 0].iloc[:4]


def _best_single(x, pipe, X, mad):
    """Brute force: per mutable feature and direction, the first accepted value on a fine
    grid over the data's range; the smallest MAD-scaled change (eq. 8) among them."""
    best = np.inf
    for c in X.columns[:5]:
        grid = np.linspace(X[c].min(), X[c].max(), 20001)
        rows = pd.DataFrame(np.repeat(x.to_frame().T.to_numpy(float), len(grid), axis=0), columns=X.columns)
        rows[c] = grid
        ok = pipe.predict(rows) == 1
        if ok.any():
            best = min(best, np.abs(grid[ok] - x[c]).min() / mad[c] / len(X.columns))
    return best


def test_line_crossings_find_the_cheapest_single_feature_move(mlp_case):
    X, pipe, queries = mlp_case
    mad = metrics_hd.mad(X)
    step = (X.max() - X.min()) / 20000 / mad / len(X.columns)       # the grid's resolution in eq. 8
    for i, (_, x) in enumerate(queries.iterrows()):
        brute = _best_single(x, pipe, X, mad)
        e = gcf.explain(x, pipe, method="pso", data=X, n=3, random_state=i, progress=False)
        assert (pipe.predict(e.counterfactuals) == 1).all()
        prox = (np.abs(e.counterfactuals[X.columns] - x) / mad).mean(axis=1)
        # at least as close as the best one-feature move (the polish may improve on it)
        assert prox.min() <= brute + step.max() + 1e-9
        assert e.stats["rounds"][-1]["crossings"] >= 1
        off = gcf.explain(x, pipe, method="pso", data=X, n=3, random_state=i, progress=False, split_search=False)
        assert "crossings" not in off.stats["rounds"][-1]
