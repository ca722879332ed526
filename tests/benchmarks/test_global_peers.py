"""The peers' adapter (benchmarks/global_peers.py): their one-hot rows <-> groupcf's pipelines."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "global_peers.py"
_spec = importlib.util.spec_from_file_location("global_peers", _PATH)
gp = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("global_peers", gp)
_spec.loader.exec_module(gp)


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"age": rng.integers(18, 70, n), "income": rng.normal(50, 15, n).round(1),
                      "housing": pd.Categorical(rng.choice(["rent", "own", "free"], n)),
                      "edu": pd.Categorical(rng.choice(["low", "mid", "high"], n), categories=["low", "mid", "high"],
                                            ordered=True),
                      "car": rng.integers(0, 2, n).astype(bool)})
    score = 0.04 * (X["income"] - 50) + (X["housing"] == "own") + 0.5 * X["edu"].cat.codes + X["car"] - 1.2
    return X, (score + rng.normal(0, 0.5, n) > 0).astype(int)


@pytest.mark.parametrize("clf", [LogisticRegression(max_iter=1000),
                                 MLPClassifier((8,), max_iter=500, random_state=0)], ids=["lr", "mlp"])
def test_onehot_fast_path_equals_the_pipeline(clf):
    X, y = _data()
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), clf).fit(X, y)
    oh = gp.OneHot(X, ["age", "income"])
    fast = gp.onehot_predict(pipe, oh, X)
    assert fast is not None
    # perturbed rows as GLOBE-CE makes them: numeric shifts (also out of range), categories moved
    rng = np.random.default_rng(1)
    A = oh.encode(X).to_numpy()
    B = A.copy()
    B[:, 0] += rng.normal(0, 30, len(B))
    B[:, 1] += rng.normal(0, 40, len(B))
    perm = rng.permutation(len(B))
    B[:, 2:] = A[perm, 2:]
    slow = gp._Model(oh, pipe.predict)
    np.testing.assert_array_equal(fast(B), slow.predict(B))
    np.testing.assert_array_equal(gp._Model(oh, pipe.predict, fast).predict(A), pipe.predict(X))


def test_onehot_fast_path_refuses_a_nonlinear_encoding():
    X, y = _data()
    pipe = make_pipeline(gcf.FeatureSpace(), LogisticRegression(max_iter=1000)).fit(X, y)   # numeric binned
    assert gp.onehot_predict(pipe, gp.OneHot(X, ["age", "income"]), X) is None


def test_ares_triple_as_scorer_action():
    X, _ = _data()
    oh = gp.OneHot(X, ["age", "income"])
    ares = SimpleNamespace(bin_mids={"income = (40.0, 50.0]": 45.0, "income = (50.0, 60.0]": 55.0})
    triple = (frozenset({"housing = rent"}), frozenset({"income = (40.0, 50.0]", "car = False"}),
              frozenset({"income = (50.0, 60.0]", "car = True"}))
    spec = gp.ares_spec(triple, ares, oh)
    assert spec["when"] == {"housing": "rent", "income": {"interval": [40.0, 50.0]}, "car": False}
    assert sorted(spec["changes"], key=lambda c: c["feature"]) == [
        {"feature": "car", "op": "set", "value": True}, {"feature": "income", "op": "shift", "value": 10.0}]
