"""Split points of tree ensembles (Embedding.split_points / path_splits): the score is
constant between consecutive split points of a column, and moving a column just past a
split on a point's path changes that point's leaves."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from groupcf.embeddings import get_embedding


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    y = ((X[:, 0] + 0.5 * X[:, 1] - X[:, 2] ** 2 + rng.normal(0, 0.2, n)) > 0.5).astype(int)
    return X, y


@pytest.fixture(scope="module", params=["rf", "gb"])
def ens(request):
    X, y = _data()
    m = (RandomForestClassifier(10, max_depth=5, random_state=0) if request.param == "rf"
         else GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=0)).fit(X, y)
    return get_embedding(m)[1], X


def test_every_threshold_is_a_split_point_and_nothing_else(ens):
    e, _ = ens
    pts = e.split_points()
    assert len(pts) == e.n_inputs
    for c in range(e.n_inputs):
        expected = np.unique(e.threshold[(e.feature == c)])
        assert np.array_equal(pts[c], expected)
        assert np.all(np.diff(pts[c]) > 0)


def test_score_is_constant_between_split_points(ens):
    e, X = ens
    rng = np.random.default_rng(1)
    for z in X[:2]:
        for c in range(e.n_inputs):
            t = np.concatenate([[-1.0], e.split_points()[c], [2.0]])
            for lo, hi in zip(t[:-1], t[1:]):
                vals = np.concatenate([[np.nextafter(lo, np.inf)], lo + (hi - lo) * rng.random(3), [hi]])
                Z = np.repeat(z[None, :], len(vals), axis=0)
                Z[:, c] = vals
                s = e.score(Z)
                assert np.ptp(s) == 0.0


def test_path_splits_are_the_tests_the_point_goes_through(ens):
    e, X = ens
    for z in X[:2]:
        cols, ths = e.path_splits(z)
        assert len(cols) == len(ths) > 0
        leaves = e.apply(z[None, :])[0]
        on_path = set(zip(cols.tolist(), ths.tolist()))
        for c, t in on_path:                            # just past a path test: some leaf changes
            w = z.copy()
            w[c] = t + 1e-9 if z[c] <= t else t
            assert not np.array_equal(e.apply(w[None, :])[0], leaves)
        for c in range(e.n_inputs):                     # past a split point on no path: no leaf changes
            for t in e.split_points()[c]:
                if (c, t) in on_path:
                    continue
                w = z.copy()
                w[c] = t + 1e-9 if z[c] <= t else t
                between = e.split_points()[c][(e.split_points()[c] >= min(z[c], w[c]))
                                              & (e.split_points()[c] < max(z[c], w[c]))]
                if not any((c, b) in on_path for b in between):
                    assert np.array_equal(e.apply(w[None, :])[0], leaves)


def test_models_without_splits_say_so():
    X, y = _data()
    e = get_embedding(LogisticRegression().fit(X, y))[1]
    assert e.split_points() is None and e.path_splits(X[0]) is None
