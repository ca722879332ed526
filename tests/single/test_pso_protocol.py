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


def _heavy(n=240, seed=0):
    """Toy data with a heavy-tailed column (range / MAD in the thousands, as on LSVT)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.standard_cauchy(n) * 1e3, "b": rng.normal(size=n), "c": rng.normal(size=n) * 1e-4})
    X["k"] = rng.integers(0, 3, n).astype(float)
    y = pd.Series((np.tanh(X.a / 1e3) + X.b + 2e3 * X.c + 0.3 * X.k > 0.8).astype(int))
    return X, y, ["k"], [], []


def test_align_puts_the_answer_on_the_original_forests_side_of_every_split(bench):
    """Values within one float32 step of the original forest's splits: the re-scaled
    float64 forest (:func:`mad_model`) sends some of them the other way; after
    :func:`align` both forests reach the same leaf in every tree."""
    case = bench.Case("toy", _heavy(), 0, 0, "rf100")
    x = case.queries("eval", 1).iloc[0]
    forest, space, c = bench.mad_model(case, x, 3.0)
    assert c == 6.0
    old_space, rows = case.pipe[0], []
    for est in case.pipe[-1].estimators_[:20]:
        t = est.tree_
        for node in np.flatnonzero(t.feature >= 0)[:5]:
            f = next(f for f in old_space if t.feature[node] in f.columns)
            if f.encoding != "continuous":
                continue
            raw = f.low + (f.high - f.low) * t.threshold[node]
            for k in np.linspace(-3, 3, 13):      # around the split, within float32 steps of it
                r = x.copy()
                r[f.name] = raw * (1 + k * 2.0 ** -25) if raw else k * 1e-12
                rows.append(r)
    cfs = pd.DataFrame(rows).reset_index(drop=True)

    def disagree(frame):
        zo = old_space.transform(frame).astype(np.float32)
        leaves = forest.apply(space.transform(frame)) - forest.roots[None, :]
        return sum(int((o.apply(zo) != leaves[:, k]).sum()) for k, o in enumerate(case.pipe[-1].estimators_))

    assert disagree(cfs) > 0                           # the defect align repairs
    out, note = bench.align(case, forest, space, cfs)
    assert disagree(out) == 0 and note
    rng = np.array([f.high - f.low if f.encoding == "continuous" else 0.0 for f in old_space])
    assert (np.abs(out.to_numpy() - cfs.to_numpy()) <= 2.0 ** -22 * rng).all()   # float32 steps of the range


def test_mace_limit_is_proven_positive_and_accepted_by_the_original_forest(bench):
    """The exact limit on a heavy-tailed toy case: proven, its bound positive and equal to
    the accepted answer's proximity, and no larger than the PSO point that sets the box."""
    case = bench.Case("toy", _heavy(), 1, 0, "rf100")
    run = bench.mace_runner(case, 40.0)
    for i, (_, x) in enumerate(case.queries("eval", 3).iterrows()):
        good = bench.valid_rows(case, x, run(x, i))
        assert len(good) == 1 and run.proven and run.lower_bound > 0
        prox = bench.per_cf_proximity(x, good, case.mad, case.cat)[0]
        assert prox == pytest.approx(run.lower_bound, rel=1e-5)
        assert run.lower_bound <= run.upper * (1 + 1e-6)       # (the MIP gap)
