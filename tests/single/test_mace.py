"""gcf.explain(method="mace") with l0 / l1 / linf / mixed distances equals brute force over
every point of tiny mixed spaces (binary, categorical, ordinal, integer numerics)."""
import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import InvalidInputError, NoCounterfactualError
from tests.params import backend_params


@pytest.fixture(scope="module")
def datasets(mace_ref):
    return {seed: mace_ref.data(seed) for seed in range(3)}


# --------------------------------------------------------------------------- brute force
DISTANCES = ["l0", "l1", "linf", {"l0": 0.3, "l1": 0.5, "linf": 0.2}]


@pytest.mark.parametrize("distance", DISTANCES, ids=["l0", "l1", "linf", "mix"])
@pytest.mark.parametrize("kind", ["lr", "mlp"])
@pytest.mark.parametrize("actionable", [False, True], ids=["free", "actionable"])
def test_matches_brute_force(mace_ref, datasets, distance, kind, actionable):
    seed = {"lr": 0, "mlp": 1}[kind] + (1 if actionable else 0)
    X, y = datasets[seed]
    act = dict(immutable=["colour"], increase_only=["level", "kids"]) if actionable else {}
    pipe = mace_ref.pipe(X, y, kind, seed=seed, **act)
    rejected = X[pipe.predict(X) == 0].drop_duplicates().head(4)
    for x, exp, ref in mace_ref.matches_brute_force(pipe, rejected, distance):
        assert exp.objectives[0] == pytest.approx(ref[0], abs=mace_ref.TOL)
        # the metric computes the very same number from the raw rows
        prox = gcf.metrics.proximity(x, exp.counterfactuals.iloc[[0]], pipe[0], weights=distance)
        assert prox[0] == pytest.approx(ref[0], abs=mace_ref.TOL)


@pytest.mark.parametrize("solver", backend_params())
@pytest.mark.parametrize("distance", ["l1", {"l0": 0.5, "linf": 0.5}], ids=["l1", "mix"])
def test_backends_match_brute_force(mace_ref, datasets, solver, distance):
    X, y = datasets[2]
    pipe = mace_ref.pipe(X, y, "mlp", seed=2, increase_only=["kids"])
    for _, x in X[pipe.predict(X) == 0].drop_duplicates().head(2).iterrows():
        ref, _ = mace_ref.brute_force(pipe, x, distance)
        exp = gcf.explain(x, pipe, distance=distance, solver=solver)
        assert exp.is_optimal
        assert exp.distances[0] == pytest.approx(ref[0], abs=1e-5)
        mace_ref.check_cf(pipe, x, exp)


def test_tmax_with_l1(mace_ref, datasets):
    X, y = datasets[0]
    pipe = mace_ref.pipe(X, y, "lr")
    for _, x in X[pipe.predict(X) == 0].drop_duplicates().head(4).iterrows():
        ref, _ = mace_ref.brute_force(pipe, x, "l1", Tmax=1)
        if len(ref) == 0:
            with pytest.raises(NoCounterfactualError, match="Tmax"):
                gcf.explain(x, pipe, distance="l1", Tmax=1)
        else:
            exp = gcf.explain(x, pipe, distance="l1", Tmax=1)
            assert exp.distances[0] == pytest.approx(ref[0], abs=mace_ref.TOL)
            assert len(exp.changed_features[0]) <= 1


# --------------------------------------------------------------------------- diversity
@pytest.mark.parametrize("distance", ["l0", "l1", "linf"])
def test_diversity_is_the_k_best_points(mace_ref, datasets, distance):
    """On a discrete space "differs in at least one feature" means "another point", so the
    k counterfactuals are k distinct points with the k smallest distances."""
    X, y = datasets[1]
    pipe = mace_ref.pipe(X, y, "mlp", seed=1)
    space = pipe[0]
    x = X[pipe.predict(X) == 0].iloc[0]
    ref, _ = mace_ref.brute_force(pipe, x, distance)
    exp = gcf.explain(x, pipe, distance=distance, n=3)
    cfs = exp.counterfactuals
    assert len(cfs) == 3
    assert exp.distances == sorted(exp.distances)
    assert np.allclose(exp.distances, ref[:3], atol=mace_ref.TOL)
    assert np.allclose(exp.objectives, exp.distances, atol=mace_ref.TOL)
    assert all(pipe.predict(cfs) == 1)
    codes = space.codes(cfs)
    for i in range(3):
        mace_ref.check_cf(pipe, x, exp, i)
        for j in range(i):
            assert np.any(np.abs(codes[i] - codes[j]) > 1e-9), "each differs from the earlier ones"


def test_diversity_on_real_valued_feature(mace_ref):
    """A real-valued feature 'differs' by at least diversity_tol (scaled units)."""
    rng = np.random.default_rng(5)
    n = 300
    X = pd.DataFrame({"income": rng.uniform(10.0, 90.0, n), "debt": rng.uniform(0.0, 50.0, n),
                      "kids": rng.integers(0, 4, n), "months": rng.integers(0, 101, n)})
    X.loc[0, "months"], X.loc[1, "months"] = 0, 100
    y = (X["income"] - 1.2 * X["debt"] - 5 * X["kids"] + 0.2 * X["months"] + rng.normal(0, 5, n) > 30).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough", immutable=["kids"]),
                         LogisticRegression(C=10)).fit(X, y)
    space = pipe[0]
    assert not space["income"].integer and space["kids"].integer and space["months"].integer
    x = X[pipe.predict(X) == 0].iloc[0]
    tol = 0.05                                   # months: at least 5 whole units
    exp = gcf.explain(x, pipe, distance="l1", n=3, diversity_tol=tol)
    cfs = exp.counterfactuals
    assert len(cfs) == 3 and all(pipe.predict(cfs) == 1)
    assert exp.distances == sorted(exp.distances)
    assert (cfs["kids"] == x["kids"]).all()
    assert (cfs["months"] == cfs["months"].round()).all() and cfs["months"].between(0, 100).all()
    for f in ("income", "debt"):
        assert cfs[f].between(space[f].low - 1e-9, space[f].high + 1e-9).all()
    codes = space.codes(cfs)
    for i in range(3):
        for j in range(i):
            assert np.max(np.abs(codes[i] - codes[j])) >= tol - 1e-7
    # the l1 optimum is at most the best point of a fine grid (every grid point is feasible)
    grid = pd.DataFrame(list(itertools.product(np.linspace(10, 90, 81), np.linspace(0, 50, 51),
                                               range(0, 101, 10))), columns=["income", "debt", "months"])
    grid["kids"] = x["kids"]
    ok = pipe[-1].decision_function(space.transform(grid)) >= mace_ref.MARGIN
    d_grid = gcf.metrics.proximity(x, grid[ok], space, weights="l1")
    assert exp.distances[0] <= d_grid.min() + mace_ref.TOL


def test_fewer_than_n_when_exhausted(mace_ref):
    """When fewer than n points are accepted, all of them come back (no error)."""
    X = pd.DataFrame({"a": ["u", "v", "w"] * 40, "b": ["p"] * 60 + ["q"] * 60})
    y = ((X["a"] == "w") & (X["b"] == "q")).astype(int).to_numpy()
    pipe = make_pipeline(gcf.FeatureSpace(), LogisticRegression(C=1000, max_iter=2000)).fit(X, y)
    x = X[pipe.predict(X) == 0].iloc[0]
    P = mace_ref.all_points(pipe[0])
    n_pos = int((pipe.decision_function(P) >= mace_ref.MARGIN).sum())
    assert 1 <= n_pos < 6
    exp = gcf.explain(x, pipe, n=6)
    assert exp.n_counterfactuals == n_pos
    assert all(pipe.predict(exp.counterfactuals) == 1)


# --------------------------------------------------------------------------- errors
def test_distance_errors(mace_ref, datasets):
    X, y = datasets[0]
    pipe = mace_ref.pipe(X, y, "lr")
    x = X[pipe.predict(X) == 0].iloc[0]
    with pytest.raises(InvalidInputError, match="unknown distance"):
        gcf.explain(x, pipe, distance="l2")
    with pytest.raises(InvalidInputError, match=">= 0"):
        gcf.explain(x, pipe, distance={"l0": -0.5, "l1": 1.0})
    with pytest.raises(InvalidInputError, match="unknown norm"):
        gcf.explain(x, pipe, distance={"l3": 1.0})
    with pytest.raises(InvalidInputError, match="all zero"):
        gcf.explain(x, pipe, distance={"l0": 0, "l1": 0.0})
    with pytest.raises(InvalidInputError, match="distance"):
        gcf.explain(x, pipe, distance=3)
    with pytest.raises(InvalidInputError, match="diversity_tol"):
        gcf.explain(x, pipe, n=2, diversity_tol=0)


def test_no_counterfactual_when_everything_immutable(mace_ref, datasets):
    X, y = datasets[0]
    pipe = mace_ref.pipe(X, y, "lr", immutable=list(X.columns))
    x = X[pipe.predict(X) == 0].iloc[0]
    with pytest.raises(NoCounterfactualError) as info:
        gcf.explain(x, pipe, distance="linf")
    assert info.value.rows == [x.name]


def test_explanation_reports(mace_ref, datasets):
    X, y = datasets[0]
    pipe = mace_ref.pipe(X, y, "lr")
    x = X[pipe.predict(X) == 0].iloc[0]
    exp = gcf.explain(x, pipe, distance={"l0": 0.1, "l1": 0.9}, n=2)
    assert exp.distance_name == "0.1*l0+0.9*l1"
    assert exp.n_changed == [len(c) for c in exp.changes]
    d = exp.to_dict()
    assert d["distance"] == exp.distance_name and len(d["objectives"]) == exp.n_counterfactuals
    assert "distance=" in repr(exp)
