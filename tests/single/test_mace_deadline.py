"""MACE's ``time_limit`` bounds the whole call: one Deadline through the search, the build
and every solve (a fake clock, no timed assertions)."""
from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import SolverTimeLimitError
from groupcf.formulations.nearest import NearestCounterfactual
from groupcf.solvers.highs import HighsBackend
from groupcf.utils import Deadline

mace_mod = importlib.import_module("groupcf.single.mace")    # (the package's `mace` is the function)
tb = importlib.import_module("groupcf.single.tree_bound")

DISTANCE = {"l0": 0.1, "l1": 0.9}


class FakeClock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def forest():
    """Accepts only when a and b are both high: a rejected row with both low needs two changes."""
    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame({"a": rng.uniform(0, 1, n).round(3), "b": rng.uniform(0, 1, n).round(3),
                      "c": rng.uniform(0, 1, n).round(3)})
    y = ((X["a"] > 0.6) & (X["b"] > 0.6)).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"),
                         RandomForestClassifier(20, max_depth=4, random_state=0)).fit(X, y)
    low = X[(X["a"] < 0.4) & (X["b"] < 0.4) & (pipe.predict(X) == 0)]
    return pipe, low.iloc[0]


@pytest.fixture
def clock(monkeypatch):
    c = FakeClock()
    monkeypatch.setattr(mace_mod, "Deadline", lambda limit: Deadline(limit, clock=c))
    return c


def _advance_during(monkeypatch, owner, name, clock, seconds):
    """Move the fake clock by ``seconds`` when ``owner.name`` is called."""
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        clock.t += seconds
        return original(*args, **kwargs)
    monkeypatch.setattr(owner, name, wrapped)


def test_each_phase_receives_what_is_left(forest, clock, monkeypatch):
    pipe, x = forest
    _advance_during(monkeypatch, tb, "single_changes", clock, 3.0)          # the search takes 3 s
    _advance_during(monkeypatch, NearestCounterfactual, "build", clock, 2.0)  # the build 2 s
    seen = []
    solve = HighsBackend.solve

    def recording(self, *args, **kwargs):
        seen.append(self.options.time_limit)
        return solve(self, *args, **kwargs)
    monkeypatch.setattr(HighsBackend, "solve", recording)
    exp = gcf.explain(x, pipe, method="mace", distance=DISTANCE, time_limit=100.0)
    left = exp.stats["time_left"]
    assert left["search"] == 100.0 and left["build"] == 97.0
    assert left["solve"] == [95.0] and seen == [95.0]          # the solver got what was left
    assert exp.is_optimal and not exp.stats.get("time_limit_reached")
    assert pipe.predict(exp.counterfactuals)[0] == 1


def test_deadline_passed_in_the_search_returns_its_incumbent(forest, clock, monkeypatch):
    """The deadline passes while the search polishes its point: no MIP is built, the point
    is the answer (FEASIBLE), re-checked by the real model, with a proven lower bound."""
    pipe, x = forest
    _advance_during(monkeypatch, tb, "_polish", clock, 50.0)
    built = []
    monkeypatch.setattr(NearestCounterfactual, "build", lambda self: built.append(1) or self)
    exp = gcf.explain(x, pipe, method="mace", distance=DISTANCE, time_limit=10.0)
    assert not built and "build" not in exp.stats["time_left"]
    assert exp.status == gcf.Status.FEASIBLE and not exp.is_optimal
    assert exp.stats["time_limit_reached"]
    assert pipe.predict(exp.counterfactuals)[0] == 1
    assert exp.lower_bound is not None and 0 < exp.lower_bound <= exp.distances[0]
    # the bound is valid: the exact optimum (no time limit) lies between it and the answer
    monkeypatch.undo()
    best = gcf.explain(x, pipe, method="mace", distance=DISTANCE)
    assert best.is_optimal
    assert exp.lower_bound <= best.distances[0] + 1e-9 <= exp.distances[0] + 2e-9


def test_deadline_passed_during_the_build_skips_the_solve(forest, clock, monkeypatch):
    pipe, x = forest
    _advance_during(monkeypatch, NearestCounterfactual, "build", clock, 50.0)
    exp = gcf.explain(x, pipe, method="mace", distance=DISTANCE, time_limit=10.0)
    assert exp.stats["time_left"]["solve"] == []               # no solve started
    assert exp.stats["distance_cuts"] == 0                     # the build left the cuts out
    assert exp.status == gcf.Status.FEASIBLE and exp.stats["time_limit_reached"]
    assert pipe.predict(exp.counterfactuals)[0] == 1


def test_deadline_passed_before_any_point_raises(forest, clock, monkeypatch):
    """No accepted single change exists, and the deadline passes during the scan: the
    search stops before the pairs, there is no incumbent -> SolverTimeLimitError."""
    pipe, x = forest
    _advance_during(monkeypatch, tb, "single_changes", clock, 50.0)
    with pytest.raises(SolverTimeLimitError):
        gcf.explain(x, pipe, method="mace", distance=DISTANCE, time_limit=10.0)


def test_a_deadline_already_passed_raises(forest):
    pipe, x = forest
    with pytest.raises(SolverTimeLimitError):
        gcf.explain(x, pipe, method="mace", distance=DISTANCE, time_limit=1e-9)


def test_too_little_time_left_for_a_mip_returns_the_incumbent(forest, clock, monkeypatch):
    """With less than MIN_MIP_SHARE of the limit left after the search, no MIP is built
    (a large ensemble's takes seconds): the search's point, FEASIBLE."""
    pipe, x = forest
    _advance_during(monkeypatch, tb, "_polish", clock, 100.0 * (1 - mace_mod.MIN_MIP_SHARE) + 1.0)
    exp = gcf.explain(x, pipe, method="mace", distance=DISTANCE, time_limit=100.0)
    assert "build" not in exp.stats["time_left"]
    assert exp.status == gcf.Status.FEASIBLE and exp.stats["time_limit_reached"]
    assert not exp.stats.get("pruned")
    assert pipe.predict(exp.counterfactuals)[0] == 1
