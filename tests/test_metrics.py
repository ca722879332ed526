"""gcf.metrics: hand-computed values, and agreement with the MACE MIP's objective."""
import math

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.exceptions import InvalidInputError, NoCounterfactualError
from groupcf.results.explanation import Explanation

M = gcf.metrics


@pytest.fixture(scope="module")
def toy(mace_ref):
    """smoker (binary), colour (categorical, 3), level (ordinal, 4), kids 0..4, cars 0..3."""
    X, y = mace_ref.data(0)
    pipe = mace_ref.pipe(X, y, "lr")
    space = pipe[0]
    x = pd.Series({"smoker": "no", "colour": "red", "level": "low", "kids": 0, "cars": 0}, name="me")
    cfs = pd.DataFrame({"smoker": ["yes", "no"], "colour": ["red", "blue"], "level": ["high", "low"],
                        "kids": [2, 0], "cars": [0, 3]})
    cfs["level"] = pd.Categorical(cfs["level"], categories=mace_ref.ORD, ordered=True)
    cfs["colour"] = pd.Categorical(cfs["colour"], dtype=X["colour"].dtype)
    return X, pipe, space, x, cfs


def test_proximity_by_hand(toy):
    _, _, space, x, cfs = toy
    # per-feature distances: cf0 = [1, 0, 2/3, 2/4, 0], cf1 = [0, 1, 0, 0, 3/3]
    assert np.allclose(M.proximity(x, cfs, space, weights="l0"), [3 / 5, 2 / 5])
    assert np.allclose(M.proximity(x, cfs, space), [(1 + 2 / 3 + 0.5) / 5, 2 / 5])       # l1 = mean
    assert np.allclose(M.proximity(x, cfs, space, weights="linf"), [1.0, 1.0])
    mix = {"l0": 0.5, "l1": 0.25, "linf": 0.25}
    assert np.allclose(M.proximity(x, cfs, space, weights=mix),
                       [0.5 * 0.6 + 0.25 * (13 / 6) / 5 + 0.25, 0.5 * 0.4 + 0.25 * 0.4 + 0.25])
    # Gower: ordinal counts as a mismatch, numerics |d| / range
    assert np.allclose(M.proximity(x, cfs, space, kind="gower"), [(1 + 1 + 0.5) / 5, 2 / 5])
    assert np.allclose(M.proximity(x, cfs, space, kind="gower", weights={"kids": 0.0, "smoker": 2.0}),
                       [(2 + 1) / 5, 2 / 5])
    assert np.allclose(M.proximity(x, x.to_frame().T, space), [0.0])


def test_sparsity_and_diversity_by_hand(toy):
    _, _, space, x, cfs = toy
    assert M.sparsity(x, cfs, space).tolist() == [3, 2]
    assert M.sparsity(x, cfs).tolist() == [3, 2]                  # raw comparison agrees
    # cf0 vs cf1: [1, 1, 2/3, 2/4, 1]
    assert M.diversity(cfs, space) == pytest.approx((3 + 2 / 3 + 0.5) / 5)
    assert M.diversity(cfs, space, normalized=True) == pytest.approx((3 + 2 / 3 + 0.5) / 5)
    assert M.diversity(cfs, space, "l0") == pytest.approx(1.0)
    assert M.diversity(cfs, space, {"l0": 1, "linf": 1}, normalized=True) == pytest.approx(1.0)
    assert math.isnan(M.diversity(cfs.iloc[[0]], space))


def test_sparsity_with_bins():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.integers(18, 80, 200), "job": rng.choice(["a", "b"], 200)})
    space = gcf.FeatureSpace(bins={"age": [30, 50]}).fit(X)
    x = pd.Series({"age": 35, "job": "a"})
    cf = pd.DataFrame({"age": [pd.Interval(30.0, 50.0, closed="left"), 40, 60], "job": ["a", "b", "a"]})
    assert M.sparsity(x, cf).tolist() == [0, 2, 1]
    assert M.sparsity(x, cf, space).tolist() == [0, 1, 1]         # 40 is in x's bin
    assert np.allclose(M.proximity(x, cf, space, weights="l1"), [0, 0.5, 0.25])   # bins: |1| / 2


def test_validity_and_coverage(toy):
    X, pipe, space, x, cfs = toy
    rows = X.head(50)
    assert M.validity(pipe, rows) == pytest.approx(float(np.mean(pipe.predict(rows) == 1)))
    assert M.validity(pipe[-1], rows, space=space) == M.validity(pipe, rows)
    assert math.isnan(M.validity(pipe, rows.iloc[:0]))
    rejected = X[pipe.predict(X) == 0].iloc[0]
    good = gcf.explain(rejected, pipe)
    fake = Explanation(instance=rejected, counterfactuals=rejected.to_frame().T, changes=[[]], distances=[0.0],
                       probabilities=np.zeros(1), status=gcf.Status.FEASIBLE, is_optimal=False,
                       solve_time=0.0, method="fake")
    items = [good, None, NoCounterfactualError("none"), fake]
    assert M.coverage(items) == pytest.approx(2 / 4)
    assert M.coverage(items, pipe) == pytest.approx(1 / 4)        # fake's counterfactual is rejected
    with pytest.raises(InvalidInputError):
        M.coverage([object()])


@pytest.mark.parametrize("distance", ["l0", "l1", "linf", {"l0": 0.2, "l1": 0.6, "linf": 0.2}])
def test_metrics_agree_with_the_mip(mace_ref, distance):
    X, y = mace_ref.data(1)
    pipe = mace_ref.pipe(X, y, "mlp", seed=1, increase_only=["kids"])
    space = pipe[0]
    for _, x in X[pipe.predict(X) == 0].drop_duplicates().head(3).iterrows():
        exp = gcf.explain(x, pipe, distance=distance, n=2)
        prox = M.proximity(x, exp.counterfactuals, space, weights=distance)
        assert np.allclose(prox, exp.distances, atol=1e-9)
        assert np.allclose(prox, exp.objectives, atol=1e-6)       # the solver's own objective
        assert M.sparsity(x, exp.counterfactuals, space).tolist() == exp.n_changed
        assert M.validity(pipe, exp.counterfactuals) == 1.0


def test_summarize(toy):
    X, pipe, space, _, _ = toy
    S = X[pipe.predict(X) == 0].drop_duplicates().head(4)
    exps = [gcf.explain(x, pipe, distance="l1", n=2) for _, x in S.iterrows()] + [None]
    df = M.summarize(exps, pipe, distance="l1")
    assert df.shape[0] == 1 and df.index.tolist() == ["mace"]
    r = df.iloc[0]
    assert r["n_instances"] == 5 and r["coverage"] == pytest.approx(0.8) and r["validity"] == 1.0
    assert r["proximity"] == pytest.approx(np.mean([e.distances[0] for e in exps[:4]]))
    assert r["sparsity"] == pytest.approx(np.mean([e.n_changed[0] for e in exps[:4]]))
    assert r["diversity"] == pytest.approx(np.mean([M.diversity(e.counterfactuals, space) for e in exps[:4]]))
    assert 0 <= r["diversity_normalized"] <= 1 and r["proximity_gower"] >= 0 and r["time"] > 0
    assert M.summarize(exps, pipe, method="MACE").index.tolist() == ["MACE"]


def test_errors(toy):
    _, pipe, space, x, cfs = toy
    with pytest.raises(InvalidInputError, match="kind"):
        M.proximity(x, cfs, space, kind="euclid")
    with pytest.raises(InvalidInputError, match="unknown distance"):
        M.proximity(x, cfs, space, weights="l2")
    with pytest.raises(InvalidInputError, match=">= 0"):
        M.proximity(x, cfs, space, weights={"l1": -1})
    with pytest.raises(InvalidInputError, match=">= 0"):
        M.proximity(x, cfs, space, kind="gower", weights={"kids": -1})
    with pytest.raises(InvalidInputError, match="unknown features"):
        M.proximity(x, cfs, space, kind="gower", weights={"nope": 1})
    with pytest.raises(InvalidInputError, match="DataFrame"):
        M.proximity(x, cfs.to_numpy(), space)
    with pytest.raises(InvalidInputError, match="one row"):
        M.sparsity(cfs, cfs)
