"""benchmarks/global_actions.py: the whole curve read from one watched ``explain_global`` call."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf
import groupcf.global_actions.api as api

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "global_actions.py"
_spec = importlib.util.spec_from_file_location("global_actions_bench", _PATH)
ga = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ga)
gs = sys.modules["global_scorer"]


def _case(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"income": rng.integers(10, 90, n).astype(float),
                      "housing": pd.Categorical(rng.choice(["rent", "own", "free"], n)),
                      "sex": pd.Categorical(rng.choice(["f", "m"], n))})
    score = 0.05 * (X["income"] - 50) + (X["housing"] == "own") + 0.3 * (X["sex"] == "m") - 0.5
    y = (score + rng.normal(0, 0.3, n) > 0).astype(int)
    space = gcf.FeatureSpace(numeric="passthrough", immutable=["sex"])
    pipe = make_pipeline(space, LogisticRegression(max_iter=1000)).fit(X, y)
    S = X[pipe.predict(X) == 0].iloc[:12]
    rules = gs.Rules.from_training(X, immutable=["sex"], numeric=["income"])
    return S, pipe, rules


def test_the_curve_of_one_call_is_scored_at_every_k_and_the_search_is_restored():
    S, pipe, rules = _case()
    search = api.search
    curve = ga.run_groupcf_curve(S, pipe, rules, Tmax=1, ks=[1, 2, 3], time_limit=60)
    assert api.search is search
    assert sorted(curve) == [1, 2, 3]
    for k, (specs, _, own) in curve.items():
        assert len(specs) <= k
        sc = gs.score(S, specs, pipe.predict, rules)
        # the scorer re-checks each point's actions with the model: the same people covered
        assert sc.coverage == own["own_coverage"]
        assert own["own_coverage"] <= own["upper_bound_coverage"] + 1e-9


def test_explain_watched_returns_the_search_and_restores_it():
    S, pipe, rules = _case()
    search = api.search
    res, seen = ga.explain_watched(S, pipe, Tmax=1, k=2, time_limit=60)
    assert api.search is search
    assert set(seen) == {"aspace", "search"}
    assert [p.k for p in seen["search"].curve] == list(res.curve["k"])
