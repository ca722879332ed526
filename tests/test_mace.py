"""gcf.explain(method="mace") with l0 / l1 / linf / mixed distances equals brute force over
every point of tiny mixed spaces (binary, categorical, ordinal, integer numerics)."""
import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import InvalidInputError, NoCounterfactualError
from groupcf.models import resolve_model

from conftest import backend_params

MARGIN = 1e-6
TOL = 1e-6
DISTANCES = ["l0", "l1", "linf", {"l0": 0.3, "l1": 0.5, "linf": 0.2}]
ORD = ["low", "mid", "high", "top"]


# --------------------------------------------------------------------------- fixtures
def _data(seed: int, n_rows: int = 300) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "smoker": rng.choice(["no", "yes"], n_rows),
        "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n_rows)),
        "level": pd.Categorical(rng.choice(ORD, n_rows), categories=ORD, ordered=True),
        "kids": rng.integers(0, 5, n_rows),          # integer 0..4
        "cars": rng.integers(0, 4, n_rows),          # integer 0..3
    })
    X.loc[0, ["kids", "cars"]] = [0, 0]
    X.loc[1, ["kids", "cars"]] = [4, 3]
    Z = gcf.FeatureSpace(numeric="passthrough").fit(X).transform(X)
    w = rng.normal(size=Z.shape[1]) * 3
    s = Z @ w + rng.normal(size=n_rows) * 0.5
    return X, (s > np.quantile(s, 0.6)).astype(int)


def _pipe(X, y, kind, immutable=(), increase_only=(), seed=0):
    clf = (LogisticRegression(C=10) if kind == "lr"
           else MLPClassifier((8, 6), max_iter=800, random_state=seed))
    space = gcf.FeatureSpace(numeric="passthrough", immutable=list(immutable), increase_only=list(increase_only))
    return make_pipeline(space, clf).fit(X, y)


def all_points(space) -> pd.DataFrame:
    """Every point of the space: categories x every integer of each numeric range."""
    values = []
    for f in space:
        if f.encoding == "continuous":
            assert f.integer
            values.append(list(range(int(f.low), int(f.high) + 1)))
        else:
            values.append(list(f.categories))
    P = pd.DataFrame(list(itertools.product(*values)), columns=[f.name for f in space])
    for f in space:
        if isinstance(f.dtype, pd.CategoricalDtype):
            P[f.name] = pd.Categorical(P[f.name], dtype=f.dtype)
        else:
            P[f.name] = P[f.name].astype(f.dtype)
    return P


def _ref_feature_distances(space, x, P) -> np.ndarray:
    """Independent, loop-based per-feature distances (the definition in the docs)."""
    out = np.zeros((len(P), len(space)))
    for l, f in enumerate(space):
        col = P[f.name].tolist()
        if f.encoding == "continuous":
            out[:, l] = [abs(float(v) - float(x[f.name])) / (f.high - f.low) for v in col]
        elif f.kind == "categorical" or f.encoding == "binary":
            out[:, l] = [float(v != x[f.name]) for v in col]
        else:
            cats = list(f.categories)
            out[:, l] = [abs(cats.index(v) - cats.index(x[f.name])) / (len(cats) - 1) for v in col]
    return out


def _ref_distance(D: np.ndarray, weights) -> np.ndarray:
    w = {weights: 1.0} if isinstance(weights, str) else weights
    n = D.shape[1]
    return (w.get("l0", 0) * (D > 0).sum(1) / n + w.get("l1", 0) * D.sum(1) / n
            + w.get("linf", 0) * D.max(1))


def _allowed(space, x, P) -> np.ndarray:
    ok = np.ones(len(P), dtype=bool)
    for f in space:
        if f.immutable:
            ok &= (P[f.name] == x[f.name]).to_numpy()
        if f.increase_only:
            if f.encoding == "continuous":
                ok &= (P[f.name].astype(float) >= float(x[f.name])).to_numpy()
            else:
                cats = list(f.categories)
                ok &= np.array([cats.index(v) >= cats.index(x[f.name]) for v in P[f.name]])
    return ok


def brute_force(pipe, x, weights, Tmax=None):
    """Sorted distances of every admissible counterfactual (empty if none)."""
    space = pipe[0]
    P = all_points(space)
    tm = resolve_model(pipe)
    score = tm.embedding.score(space.transform(P))
    D = _ref_feature_distances(space, x, P)
    ok = (score >= tm.logit_threshold + MARGIN) & _allowed(space, x, P)
    if Tmax is not None:
        ok &= (D > 0).sum(1) <= Tmax
    return np.sort(_ref_distance(D[ok], weights)), P[ok]


@pytest.fixture(scope="module")
def datasets():
    return {seed: _data(seed) for seed in range(3)}


def _check_cf(pipe, x, exp, k=0):
    """The k-th counterfactual is accepted by the real model, plausible and actionable."""
    space = pipe[0]
    cf = exp.counterfactuals.iloc[[k]]
    assert pipe.predict(cf)[0] == 1
    for f in space:
        v = cf.iloc[0][f.name]
        if f.encoding == "continuous":
            assert float(v) == int(v) and f.low <= v <= f.high, (f.name, v)
        if f.immutable:
            assert v == x[f.name]
        if f.increase_only and f.encoding == "continuous":
            assert v >= x[f.name]
    assert _allowed(space, x, cf).all()
    changed = [f.name for f in space if cf.iloc[0][f.name] != x[f.name]]
    assert sorted(changed) == sorted(exp.changes[k])


# --------------------------------------------------------------------------- brute force
@pytest.mark.parametrize("distance", DISTANCES, ids=["l0", "l1", "linf", "mix"])
@pytest.mark.parametrize("kind", ["lr", "mlp"])
@pytest.mark.parametrize("actionable", [False, True], ids=["free", "actionable"])
def test_matches_brute_force(datasets, distance, kind, actionable):
    seed = {"lr": 0, "mlp": 1}[kind] + (1 if actionable else 0)
    X, y = datasets[seed]
    act = dict(immutable=["colour"], increase_only=["level", "kids"]) if actionable else {}
    pipe = _pipe(X, y, kind, seed=seed, **act)
    rejected = X[pipe.predict(X) == 0].drop_duplicates().head(4)
    for x, exp, ref in matches_brute_force(pipe, rejected, distance):
        assert exp.objectives[0] == pytest.approx(ref[0], abs=TOL)
        # the metric computes the very same number from the raw rows
        prox = gcf.metrics.proximity(x, exp.counterfactuals.iloc[[0]], pipe[0], weights=distance)
        assert prox[0] == pytest.approx(ref[0], abs=TOL)


def matches_brute_force(pipe, rejected, distance, **options):
    """MACE on each row of ``rejected`` against :func:`brute_force`: no counterfactual
    raises when brute force finds none, else proven optimal at the brute-force distance,
    the lower bound below it, the point checked (:func:`_check_cf`). Returns
    ``(x, explanation, brute-force distances)`` of the rows explained (at least one)."""
    found = []
    for _, x in rejected.iterrows():
        ref, _ = brute_force(pipe, x, distance)
        if len(ref) == 0:
            with pytest.raises(NoCounterfactualError):
                gcf.explain(x, pipe, method="mace", distance=distance, **options)
            continue
        exp = gcf.explain(x, pipe, method="mace", distance=distance, **options)
        assert exp.is_optimal and exp.status == gcf.Status.OPTIMAL
        assert exp.distances[0] == pytest.approx(ref[0], abs=TOL)
        assert exp.lower_bound is None or exp.lower_bound <= ref[0] + TOL
        _check_cf(pipe, x, exp)
        found.append((x, exp, ref))
    assert found
    return found


@pytest.mark.parametrize("solver", backend_params())
@pytest.mark.parametrize("distance", ["l1", {"l0": 0.5, "linf": 0.5}], ids=["l1", "mix"])
def test_backends_match_brute_force(datasets, solver, distance):
    X, y = datasets[2]
    pipe = _pipe(X, y, "mlp", seed=2, increase_only=["kids"])
    for _, x in X[pipe.predict(X) == 0].drop_duplicates().head(2).iterrows():
        ref, _ = brute_force(pipe, x, distance)
        exp = gcf.explain(x, pipe, distance=distance, solver=solver)
        assert exp.is_optimal
        assert exp.distances[0] == pytest.approx(ref[0], abs=1e-5)
        _check_cf(pipe, x, exp)


def test_tmax_with_l1(datasets):
    X, y = datasets[0]
    pipe = _pipe(X, y, "lr")
    for _, x in X[pipe.predict(X) == 0].drop_duplicates().head(4).iterrows():
        ref, _ = brute_force(pipe, x, "l1", Tmax=1)
        if len(ref) == 0:
            with pytest.raises(NoCounterfactualError, match="Tmax"):
                gcf.explain(x, pipe, distance="l1", Tmax=1)
        else:
            exp = gcf.explain(x, pipe, distance="l1", Tmax=1)
            assert exp.distances[0] == pytest.approx(ref[0], abs=TOL)
            assert len(exp.changed_features[0]) <= 1


# --------------------------------------------------------------------------- diversity
@pytest.mark.parametrize("distance", ["l0", "l1", "linf"])
def test_diversity_is_the_k_best_points(datasets, distance):
    """On a discrete space "differs in at least one feature" means "another point", so the
    k counterfactuals are k distinct points with the k smallest distances."""
    X, y = datasets[1]
    pipe = _pipe(X, y, "mlp", seed=1)
    space = pipe[0]
    x = X[pipe.predict(X) == 0].iloc[0]
    ref, _ = brute_force(pipe, x, distance)
    exp = gcf.explain(x, pipe, distance=distance, n=3)
    cfs = exp.counterfactuals
    assert len(cfs) == 3
    assert exp.distances == sorted(exp.distances)
    assert np.allclose(exp.distances, ref[:3], atol=TOL)
    assert np.allclose(exp.objectives, exp.distances, atol=TOL)
    assert all(pipe.predict(cfs) == 1)
    codes = space.codes(cfs)
    for i in range(3):
        _check_cf(pipe, x, exp, i)
        for j in range(i):
            assert np.any(np.abs(codes[i] - codes[j]) > 1e-9), "each differs from the earlier ones"


def test_diversity_on_real_valued_feature():
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
    ok = pipe[-1].decision_function(space.transform(grid)) >= MARGIN
    d_grid = gcf.metrics.proximity(x, grid[ok], space, weights="l1")
    assert exp.distances[0] <= d_grid.min() + TOL


def test_fewer_than_n_when_exhausted():
    """When fewer than n points are accepted, all of them come back (no error)."""
    X = pd.DataFrame({"a": ["u", "v", "w"] * 40, "b": ["p"] * 60 + ["q"] * 60})
    y = ((X["a"] == "w") & (X["b"] == "q")).astype(int).to_numpy()
    pipe = make_pipeline(gcf.FeatureSpace(), LogisticRegression(C=1000, max_iter=2000)).fit(X, y)
    x = X[pipe.predict(X) == 0].iloc[0]
    P = all_points(pipe[0])
    n_pos = int((pipe.decision_function(P) >= MARGIN).sum())
    assert 1 <= n_pos < 6
    exp = gcf.explain(x, pipe, n=6)
    assert exp.n_counterfactuals == n_pos
    assert all(pipe.predict(exp.counterfactuals) == 1)


# --------------------------------------------------------------------------- errors
def test_distance_errors(datasets):
    X, y = datasets[0]
    pipe = _pipe(X, y, "lr")
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


def test_no_counterfactual_when_everything_immutable(datasets):
    X, y = datasets[0]
    pipe = _pipe(X, y, "lr", immutable=list(X.columns))
    x = X[pipe.predict(X) == 0].iloc[0]
    with pytest.raises(NoCounterfactualError) as info:
        gcf.explain(x, pipe, distance="linf")
    assert info.value.rows == [x.name]


def test_explanation_reports(datasets):
    X, y = datasets[0]
    pipe = _pipe(X, y, "lr")
    x = X[pipe.predict(X) == 0].iloc[0]
    exp = gcf.explain(x, pipe, distance={"l0": 0.1, "l1": 0.9}, n=2)
    assert exp.distance == "0.1*l0+0.9*l1"
    assert exp.n_changed == [len(c) for c in exp.changes]
    d = exp.to_dict()
    assert d["distance"] == exp.distance and len(d["objectives"]) == exp.n_counterfactuals
    assert "distance=" in repr(exp)
