"""The compiled walk of ``TreeDelta.score_rows`` (numba, the ``fast`` extra) against the
numpy walk, bit for bit, and against the model's own scores."""
from __future__ import annotations

import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

from groupcf.embeddings import _tree_walk, get_embedding
from groupcf.embeddings.tree_delta import TreeDelta

needs_numba = pytest.mark.skipif(not _tree_walk.COMPILED, reason="numba is not installed (the fast extra)")


def _data(n=800, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    X[:, :3] = (X[:, :3] < 0.4).astype(float)                      # binaries
    X[: n // 3, 5] = np.round(X[: n // 3, 5], 1)                   # ties at thresholds
    y = (X[:, 0] + 2 * X[:, 5] - X[:, 7] + X[:, 3] * X[:, 9] + rng.normal(0, 0.3, n) > 1.1).astype(int)
    return X, y


MODELS = {
    "rf": RandomForestClassifier(40, max_depth=8, max_features=0.5, random_state=0),
    "gb": GradientBoostingClassifier(n_estimators=30, max_depth=4, random_state=0),
}


@pytest.fixture(scope="module", params=list(MODELS))
def fitted(request):
    X, y = _data()
    model = clone(MODELS[request.param]).fit(X, y)
    return X, get_embedding(model)[1]


def _scores(ev, Z, changed, compiled):
    saved = TreeDelta.compiled
    TreeDelta.compiled = compiled
    try:
        return ev.score_rows(Z, changed)
    finally:
        TreeDelta.compiled = saved


@needs_numba
def test_compiled_walk_equals_numpy_walk_bit_for_bit(fitted):
    """Random changed-column masks (empty, one column, many, some marked columns keeping
    ``z0``'s value), values from the data and on the thresholds: the compiled scores are the
    numpy walk's to the bit and the full rows' scores to rounding."""
    X, emb = fitted
    rng = np.random.default_rng(5)
    thr = emb.threshold[emb.feature >= 0]
    for z0 in X[rng.choice(len(X), 4, replace=False)]:
        ev = emb.delta_evaluator(z0)
        m = 400
        changed = rng.random((m, X.shape[1])) < rng.choice([0.0, 0.1, 0.3, 0.9], size=(m, 1))
        values = np.where(rng.random((m, X.shape[1])) < 0.3, rng.choice(thr, size=(m, X.shape[1])),
                          X[rng.integers(len(X), size=m)])
        moved = changed & (rng.random(changed.shape) < 0.8)
        Z = np.where(moved, values, z0[None, :])
        fast, slow = _scores(ev, Z, changed, True), _scores(ev, Z, changed, False)
        assert np.array_equal(fast, slow)
        np.testing.assert_allclose(fast, emb.score(Z), atol=1e-12, rtol=0)


@needs_numba
def test_compiled_walk_rows_sharing_masks(fitted):
    """GeCo's shape: many rows share a few changed-column masks (start levels computed once
    per distinct mask), in any order, with different values: the numpy walk's scores to the
    bit and the full rows' to rounding."""
    X, emb = fitted
    rng = np.random.default_rng(11)
    z0 = X[3]
    ev = emb.delta_evaluator(z0)
    masks = rng.random((5, X.shape[1])) < np.array([[0.1], [0.2], [0.4], [0.6], [0.0]])
    changed = masks[rng.integers(len(masks), size=300)]
    Z = np.where(changed, X[rng.integers(len(X), size=300)], z0[None, :])
    fast, slow = _scores(ev, Z, changed, True), _scores(ev, Z, changed, False)
    assert np.array_equal(fast, slow)
    np.testing.assert_allclose(fast, emb.score(Z), atol=1e-12, rtol=0)


@needs_numba
def test_compiled_walk_empty_and_single_rows(fitted):
    X, emb = fitted
    ev = emb.delta_evaluator(X[0])
    assert _scores(ev, np.zeros((0, X.shape[1])), np.zeros((0, X.shape[1]), bool), True).shape == (0,)
    Z, changed = X[1:2].copy(), np.ones((1, X.shape[1]), bool)
    np.testing.assert_allclose(_scores(ev, Z, changed, True), emb.score(Z), atol=1e-12, rtol=0)
    none = np.zeros((1, X.shape[1]), bool)                         # nothing changed: z0's score
    np.testing.assert_allclose(_scores(ev, X[:1], none, True), emb.score(X[:1]), atol=1e-12, rtol=0)


def test_node_table_leaves_are_their_own_children():
    feature = np.array([1, -2, -1])
    nodes, thr = _tree_walk.node_table(feature, np.array([0.5, 7.0, 3.0]), np.array([1, -1, -1]),
                                       np.array([2, -1, -1]))
    assert nodes.dtype == np.uint32                 # unsigned: no wraparound check in the compiled step
    np.testing.assert_array_equal(nodes, [[1, 2, 1], [0, 1, 1], [0, 2, 2]])
    np.testing.assert_array_equal(thr, [0.5, np.inf, np.inf])


def test_numba_that_does_not_import_falls_back_to_numpy_with_a_warning(monkeypatch):
    """numba installed but broken (e.g. built for another numpy): one warning, then the
    numpy walk, same scores."""
    X, y = _data(300)
    emb = get_embedding(clone(MODELS["rf"]).fit(X, y))[1]
    ev = emb.delta_evaluator(X[0])
    changed = np.zeros((20, X.shape[1]), bool)
    changed[:, 5] = True
    Z = X[:1].repeat(20, axis=0)
    Z[:, 5] = X[1:21, 5]
    monkeypatch.setattr(_tree_walk, "_JIT", [])
    monkeypatch.setattr(_tree_walk, "COMPILED", True)
    monkeypatch.setitem(sys.modules, "numba", None)                # import numba raises ImportError
    with pytest.warns(RuntimeWarning, match="numba is installed but does not import"):
        got = _scores(ev, Z, changed, True)
    assert _tree_walk.COMPILED is False
    np.testing.assert_allclose(got, emb.score(Z), atol=1e-12, rtol=0)
