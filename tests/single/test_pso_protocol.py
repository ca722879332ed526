"""What the PSO tuning protocol (benchmarks/pso.py) relies on: disjoint tuning and
evaluation queries, the paper's proximity on hand-computed cases, the selection rule, the
exact limit's answers as the original forest sees them."""
from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest


@pytest.fixture(scope="module")
def bench():
    """The protocol (benchmarks/pso_protocol.py), the tuning (pso_tune.py) and the limit
    (pso_limit.py) as one namespace, benchmarks/ on sys.path while loaded."""
    folder = str(Path(__file__).resolve().parents[2] / "benchmarks")
    sys.path.insert(0, folder)
    names = ("pso_protocol", "pso_tune", "pso_limit")
    try:
        mods = [importlib.import_module(n) for n in names]
        yield SimpleNamespace(**{k: v for m in mods for k, v in vars(m).items() if not k.startswith("__")})
    finally:
        for n in names:
            sys.modules.pop(n, None)
        if folder in sys.path:
            sys.path.remove(folder)


def test_split_pools_are_disjoint_and_cover_the_test_rows(bench):
    idx = pd.Index(np.arange(100, 177))
    for seed in range(5):
        tune, ev = bench.split_pools(idx, seed)
        assert not set(tune) & set(ev)
        assert sorted([*tune, *ev]) == list(idx)
        assert len(tune) == 39 and len(ev) == 38
        again = bench.split_pools(idx, seed)
        assert list(again[0]) == list(tune)          # reproducible
    assert list(bench.split_pools(idx, 0)[0]) != list(bench.split_pools(idx, 1)[0])


def _data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    X["k"] = rng.integers(0, 3, n).astype(float)
    y = pd.Series((X.a + X.b + 0.5 * X.k > 1.0).astype(int))
    return X, y, ["k"], ["d"], []


@pytest.mark.parametrize("split_seed, model_seed", [(0, 0), (1, 2)])
def test_case_queries_are_rejected_test_rows_and_disjoint(bench, split_seed, model_seed):
    case = bench.Case("toy", _data(), split_seed, model_seed, "gb")
    tune, ev = case.queries("tune", 1000), case.queries("eval", 1000)
    assert len(tune) and len(ev)
    assert not set(tune.index) & set(ev.index)
    assert not set(tune.index) & set(case.X_tr.index) and not set(ev.index) & set(case.X_tr.index)
    assert (case.pipe.predict(pd.concat([tune, ev])) == 0).all()
    assert set(tune.index) <= set(case.pools["tune"]) and set(ev.index) <= set(case.pools["eval"])
    # the pools do not depend on the model: another model on the same split draws from the same halves
    other = bench.Case("toy", _data(), split_seed, model_seed + 1, "gb")
    assert list(other.pools["tune"]) == list(case.pools["tune"])


def test_proximity_and_best_hand_computed(bench):
    x = pd.Series({"a": 1.0, "b": 0.0, "k": 2.0})
    cfs = pd.DataFrame({"a": [3.0, 1.0], "b": [0.0, -1.0], "k": [2.0, 0.0]})
    mad = pd.Series({"a": 2.0, "b": 0.5})
    # row 0: (|3-1|/2 + 0/0.5) / 2 = 0.5; row 1: (0 + 1/0.5) / 2 = 1.0 (k is categorical: not in it)
    np.testing.assert_allclose(bench.per_cf_proximity(x, cfs, mad, ["k"]), [0.5, 1.0])
    m = bench.query_metrics(x, cfs, mad, ["k"])
    assert m["proximity"] == pytest.approx(0.75)        # eq. 8: mean over the counterfactuals
    assert m["best"] == pytest.approx(0.5)
    assert m["proximity_cat"] == pytest.approx(0.5)     # eq. 9: one of two changes k
    assert m["sparsity"] == pytest.approx((1 / 3 + 2 / 3) / 2)
    # diversity: d(c0, c1) = (|3-1|/2 + |0+1|/0.5) / 2 + [2 != 0] = 1.5 + 1
    assert m["diversity"] == pytest.approx(2.5)
    assert m["changed_max"] == 2


def test_score_and_choose(bench):
    paper = pd.DataFrame({"dataset": ["COMPAS", "LSVT"], "method": ["MD-PSO", "MD-PSO"], "proximity": [0.2, 2.0]})
    summary = pd.DataFrame({
        "config": ["A", "A", "B", "B", "C", "C"], "dataset": ["compas", "lsvt"] * 3,
        "coverage": [1, 1, 1, 1, 1, 0.9], "time_median": [0.5, 0.6, 0.5, 2.0, 0.1, 0.1],
        "cpu_median": [0.5, 0.6, 0.5, 2.0, 0.1, 0.1],
        "proximity": [0.4, 1.0, 0.1, 0.5, 0.01, 0.01]})
    s = bench.score(summary, paper)
    assert s.set_index("config").geo_ratio["A"] == pytest.approx(math.sqrt(2 * 0.5))
    # B is closer but too slow, C closest but misses a query: A is chosen
    assert bench.choose(s) == "A"
    assert bench.choose(s, max_time=3.0) == "B"


def test_off_band_moves_a_threshold_answer_just_past_it_for_the_original_model(bench):
    """A MIP answer sitting on the original tree's threshold (``x <= t`` goes left, the
    rejected side) is moved just past it on its changed non-integer feature only; rows
    the model accepts, immutable and integer features stay as they are."""
    from sklearn.tree import DecisionTreeClassifier

    X = pd.DataFrame({"a": np.linspace(0.0, 1.0, 21) + 0.01, "n": np.arange(21.0) % 3, "i": np.ones(21)})
    y = (X.a > 0.5).astype(int)
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    t = float(tree.tree_.threshold[0])
    assert tree.tree_.feature[0] == 0
    case = SimpleNamespace(X_tr=X, pipe=tree, imm=["i"])
    x = pd.Series({"a": 0.2, "n": 0.0, "i": 1.0})
    on = np.float32(t)                                  # the tree reads float32: on its threshold
    on = float(on if float(on) <= t else np.nextafter(on, np.float32(-1)))
    cfs = pd.DataFrame({"a": [on, 0.9], "n": [2.0, 3.0], "i": [1.0, 1.0]})
    assert list(tree.predict(cfs)) == [0, 1]
    out, note = bench.off_band(case, x, cfs)
    assert list(tree.predict(out)) == [1, 1]
    assert t < out.a[0] <= t + 1e-4 * (X.a.max() - X.a.min())       # just past, on the far side
    assert out.n[0] == 2.0 and out.i[0] == 1.0                        # integer / immutable: untouched
    pd.testing.assert_series_equal(out.iloc[1], cfs.iloc[1])
    assert note.startswith("1 of 1")
    same, note = bench.off_band(case, x, cfs.iloc[[1]])
    assert note == "" and same.a[0] == 0.9
