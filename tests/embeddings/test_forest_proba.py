"""``ForestProba``: a scikit-learn forest's ``predict_proba`` tree by tree, which
``TrainedModel.check`` uses for the real model's re-check. It must be the forest's own
``predict_proba`` bit for bit, raise what it raises, and step aside where it would not be."""
from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.tree import DecisionTreeClassifier

import groupcf as gcf
from groupcf.embeddings import get_embedding
from groupcf.embeddings.sklearn_trees import ForestProba
from groupcf.models import TrainedModel, resolve_model

FORESTS = {"rf": RandomForestClassifier, "et": ExtraTreesClassifier}


def _frame(n=800, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(size=n), "c": rng.integers(0, 5, n).astype(float)})
    y = (X.a + X.b * X.c + rng.normal(0, 0.5, n) > 1).astype(int)
    if nan:
        X.loc[X.index[::7], "a"] = np.nan          # forests accept missing values
    return X, y


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("kind", list(FORESTS))
def test_equals_predict_proba_bit_for_bit(kind, nan):
    """On a DataFrame with feature names (and with missing values), rows the forest never
    saw: the same float64 array as ``predict_proba``, exactly."""
    X, y = _frame(nan=nan)
    forest = FORESTS[kind](60, max_depth=9, random_state=0).fit(X, y)
    _, emb = get_embedding(forest)
    assert isinstance(emb.model_proba, ForestProba)
    Xt, _ = _frame(n=2000, seed=1, nan=nan)
    for rows in (Xt.iloc[:1], Xt.iloc[:7], Xt):
        got = emb.model_proba(rows)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, forest.predict_proba(rows))


def test_raises_what_predict_proba_raises():
    """The forest's own validation runs first: a wrong width, or a NaN for a forest
    fitted without missing values: whatever ``predict_proba`` says, it says too."""
    X, y = _frame()
    forest = RandomForestClassifier(5, random_state=0).fit(X.to_numpy(), y)
    fp = ForestProba(forest)
    for bad in (np.zeros((2, 4)), np.array([[np.inf, 0.0, 1.0]])):
        with pytest.raises(ValueError) as own:
            forest.predict_proba(bad)
        with pytest.raises(ValueError) as ours:
            fp(bad)
        assert str(ours.value) == str(own.value)


def test_parallel_forest_large_batches_use_its_own_predict_proba(monkeypatch):
    """A forest with ``n_jobs=2``: a small batch is summed tree by tree (equal up to the
    order its threads add the trees in), a batch above ``PARALLEL_ROWS`` goes to its own
    parallel ``predict_proba``."""
    X, y = _frame()
    forest = RandomForestClassifier(20, max_depth=6, random_state=0, n_jobs=2).fit(X, y)
    fp = ForestProba(forest)
    small = X.iloc[:50]
    np.testing.assert_allclose(fp(small), forest.predict_proba(small), rtol=0, atol=1e-14)
    calls = []
    own = forest.predict_proba
    monkeypatch.setattr(forest, "predict_proba", lambda Z: calls.append(len(Z)) or own(Z))
    monkeypatch.setattr(ForestProba, "PARALLEL_ROWS", 100)
    fp(small)
    assert calls == []
    fp(X)
    assert calls == [len(X)]


def test_a_subclass_with_its_own_predict_proba_keeps_it():
    """A forest subclass overriding ``predict_proba`` gets no ``model_proba``: the
    re-check must run the subclass's method, not the forest's arithmetic."""
    class Flipped(RandomForestClassifier):
        def predict_proba(self, X):
            return super().predict_proba(X)[:, ::-1]

    X, y = _frame()
    forest = Flipped(10, max_depth=4, random_state=0).fit(X, y)
    _, emb = get_embedding(forest)
    assert emb.model_proba is None
    p, _ = TrainedModel(forest, None, emb).check(X.iloc[:20])
    np.testing.assert_array_equal(p, forest.predict_proba(X.iloc[:20])[:, 1])


def test_check_uses_it_in_a_pipeline_and_pickles(monkeypatch):
    """``TrainedModel.check`` (the re-check of every counterfactual) on a
    ``Pipeline(FeatureSpace, forest)`` reads the probabilities from ``model_proba``
    without calling the forest's ``predict_proba``, with the same verdict; the embedding
    pickles with it (joblib and Dask workers get it)."""
    X, y = _frame()
    X["d"] = np.where(X.c > 2, "hi", "lo")
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"),
                         RandomForestClassifier(30, max_depth=6, random_state=0)).fit(X, y)
    tm = resolve_model(pipe)
    rows = X.iloc[:300]
    want = pipe.predict_proba(rows)[:, 1]
    verdict = pipe.predict(rows) == 1

    def forbidden(Z):
        raise AssertionError("the forest's predict_proba was called")

    monkeypatch.setattr(pipe[-1], "predict_proba", forbidden)
    p, ok = tm.check(rows)
    np.testing.assert_array_equal(p, want)
    np.testing.assert_array_equal(ok, verdict)
    np.testing.assert_array_equal(tm.proba(rows), want)
    monkeypatch.undo()
    emb = pickle.loads(pickle.dumps(tm.embedding))
    np.testing.assert_array_equal(emb.model_proba(pipe[0].transform(rows))[:, 1], want)


class _CountingTree(DecisionTreeClassifier):
    calls = 0

    def predict_proba(self, X, check_input=True):
        _CountingTree.calls += 1
        return super().predict_proba(X, check_input=check_input)


def test_trees_with_their_own_predict_proba_are_asked_through_it():
    """Plain trees are read through their fitted ``tree_.predict`` (what their
    ``predict_proba`` returns); a tree class that overrides ``predict_proba`` is asked
    through its override, as the forest asks it."""
    X, y = _frame()
    plain = RandomForestClassifier(12, max_depth=5, random_state=0).fit(X, y)
    assert ForestProba(plain).plain
    forest = RandomForestClassifier(12, max_depth=5, random_state=0).fit(X, y)
    for e in forest.estimators_:                 # as if the forest had grown such trees
        e.__class__ = _CountingTree
    fp = ForestProba(forest)
    assert not fp.plain
    _CountingTree.calls = 0
    got = fp(X.iloc[:40])
    assert _CountingTree.calls == 12
    np.testing.assert_array_equal(got, forest.predict_proba(X.iloc[:40]))
