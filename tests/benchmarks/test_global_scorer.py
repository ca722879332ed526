"""The global-actions benchmark's scorer (benchmarks/global_scorer.py) on a hand-computed case."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "global_scorer.py"
_spec = importlib.util.spec_from_file_location("global_scorer", _PATH)
gs = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("global_scorer", gs)
_spec.loader.exec_module(gs)

HOUSING = pd.CategoricalDtype(["rent", "own", "free"])


def _frame(rows):
    X = pd.DataFrame(rows, columns=["age", "income", "debt", "housing"])
    X["housing"] = X["housing"].astype(HOUSING)
    return X


# training ranges: age 20..70 (bin width 5), income 0..10 (width 1), debt 0..20 (width 2)
TRAIN = _frame([[20, 0, 0, "rent"], [70, 10, 20, "own"], [45, 5, 10, "free"]])
PEOPLE = _frame([[30, 2, 0, "rent"], [40, 4, 6, "rent"], [50, 1, 2, "own"], [60, 9, 8, "free"]])


def predict(X):
    """Accept iff income - debt >= 5, or housing is own and income >= 3."""
    return (((X["income"] - X["debt"]) >= 5) | ((X["housing"] == "own") & (X["income"] >= 3))).to_numpy().astype(int)


RULES = gs.Rules.from_training(TRAIN, immutable=["age"], increase_only=["income"])

A = [{"feature": "income", "op": "shift", "value": 3}]                      # p0 3, p2 3; p3 leaves the domain
B = [{"feature": "housing", "op": "set", "value": "own"}]                   # p1 1, p3 1; p2 unchanged
C = [{"feature": "debt", "op": "shift", "value": -6}]                       # p3 6/2 = 3; p0, p2 below 0
D = {"changes": [{"feature": "income", "op": "shift", "value": -1}], "when": {"housing": "free"}}  # decreases
E = [{"feature": "age", "op": "set", "value": 20}, {"feature": "housing", "op": "set", "value": "own"}]  # immutable
F = [{"feature": "housing", "op": "map", "value": {"rent": "own"}}]         # p1 1; p3 (free) unchanged


def test_rules_from_training():
    assert RULES.numeric == ["age", "income", "debt"] and RULES.categorical == ["housing"]
    assert RULES.width == {"age": 5.0, "income": 1.0, "debt": 2.0}


def test_hand_computed_cost_matrix_coverage_and_cost():
    sc = gs.score(PEOPLE, [A, B, C, D, E, F], predict, RULES)
    inf = np.inf
    expected = np.array([[3, inf, inf, inf, inf, inf],
                         [inf, 1, inf, inf, inf, 1],
                         [3, inf, inf, inf, inf, inf],
                         [inf, 1, 3, inf, inf, inf]])
    np.testing.assert_array_equal(sc.cost_matrix, expected)
    assert sc.best.tolist() == [0, 1, 0, 1]
    assert sc.n_covered == 4 and sc.coverage == 1.0 and sc.mean_cost == pytest.approx(2.0)

    sc = gs.score(PEOPLE, [C, D, E], predict, RULES)
    assert sc.best.tolist() == [-1, -1, -1, 0] and sc.coverage == 0.25 and sc.mean_cost == pytest.approx(3.0)
    assert np.isnan(sc.cost[:3]).all()


def test_no_action_covers_nobody_and_accepted_people_are_refused():
    sc = gs.score(PEOPLE, [], predict, RULES)
    assert sc.n_covered == 0 and np.isnan(sc.mean_cost)
    with pytest.raises(ValueError, match="rejected"):
        gs.score(_frame([[30, 9, 0, "rent"]]), [A], predict, RULES)


def test_apply_matches_groupcf_specs():
    from groupcf.results.global_actions import apply_spec

    spec = [{"feature": "income", "op": "shift", "value": 2}, {"feature": "housing", "op": "set", "value": "own"}]
    pd.testing.assert_frame_equal(gs.apply_action(PEOPLE, spec), apply_spec(PEOPLE, spec), check_dtype=False)
