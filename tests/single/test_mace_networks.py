"""MACE on ReLU networks with the numpy upper bound and its radius (groupcf.single.net_bound):
still exact, with the options on and off — brute force on tiny mixed spaces, the plain MIP
on spaces with real-valued and wide integer columns — and the pieces it rests on (the
exact first crossing along a segment, the l1-budget bounds of the neurons)."""
import numpy as np
import pandas as pd
import pytest
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.embeddings.network import ReLUNetwork
from groupcf.embeddings.tighten import Option, budget_tightened
from groupcf.features.domain import InputDomain

OPTIONS = [dict(upper_bound=True, radius=True, obbt=True), dict(upper_bound=True, radius=True, obbt=False),
           dict(upper_bound=True, radius=False), dict(upper_bound=False, radius=False)]
OPT_IDS = ["bound+radius+obbt", "bound+radius", "bound", "off"]


@pytest.fixture(scope="module")
def datasets(mace_ref):
    return {seed: mace_ref.data(seed) for seed in range(4)}


# --------------------------------------------------------------------------- brute force
@pytest.mark.parametrize("options", OPTIONS, ids=OPT_IDS)
@pytest.mark.parametrize("distance", ["l0", "l1", "linf", {"l0": 0.1, "l1": 0.9}, {"l0": 0.3, "l1": 0.5, "linf": 0.2}],
                         ids=["l0", "l1", "linf", "l0l1", "mix"])
@pytest.mark.parametrize("actionable", [False, True], ids=["free", "actionable"])
def test_matches_brute_force(mace_ref, datasets, options, distance, actionable):
    seed = 2 + int(actionable)
    X, y = datasets[seed]
    act = dict(immutable=["colour"], increase_only=["level", "kids"]) if actionable else {}
    pipe = mace_ref.pipe(X, y, "mlp", seed=seed, **act)
    rejected = X[pipe.predict(X) == 0].drop_duplicates().head(5)
    mace_ref.matches_brute_force(pipe, rejected, distance, **options)


def test_single_change_proof_is_used(mace_ref, datasets):
    """With a strong l0 weight most optima change one feature: the scan proves them (no
    MIP solved) and they equal brute force."""
    X, y = datasets[2]
    pipe = mace_ref.pipe(X, y, "mlp", seed=2)
    used = 0
    for _, x in X[pipe.predict(X) == 0].drop_duplicates().head(6).iterrows():
        ref, _ = mace_ref.brute_force(pipe, x, {"l0": 0.9, "l1": 0.1})
        exp = gcf.explain(x, pipe, distance={"l0": 0.9, "l1": 0.1})
        assert exp.is_optimal and exp.distances[0] == pytest.approx(ref[0], abs=mace_ref.TOL)
        used += bool(exp.stats.get("single_optimal"))
    assert used >= 1


# --------------------------------------------------------------------------- real-valued columns
def _real_data(seed: int, n_rows: int = 400):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "income": rng.uniform(0, 100, n_rows),                   # real-valued
        "debt": rng.uniform(-5, 5, n_rows),
        "amount": rng.integers(0, 200_000, n_rows),              # integer, range > MAX_INTEGER_RANGE
        "kids": rng.integers(0, 4, n_rows),                       # integer grid
        "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n_rows)),
        "smoker": rng.choice(["no", "yes"], n_rows),
    })
    s = (X.income / 30 - X.debt / 2 + X.amount / 60_000 - 0.5 * X.kids + (X.colour == "red") * 1.5
         + np.sin(X.income / 10) + rng.normal(size=n_rows) * 0.3)
    y = (s > np.quantile(s, 0.55)).astype(int)
    space = gcf.FeatureSpace(numeric="passthrough", increase_only=["kids"])
    pipe = make_pipeline(space, MLPClassifier((10, 8), max_iter=1500, random_state=seed)).fit(X, y)
    return X, pipe


@pytest.mark.parametrize("distance", ["l1", {"l0": 0.1, "l1": 0.9}, {"l0": 0.5, "l1": 0.3, "linf": 0.2}],
                         ids=["l1", "l0l1", "mix"])
def test_real_valued_columns_match_the_plain_mip(distance):
    X, pipe = _real_data(0)
    for _, x in X[pipe.predict(X) == 0].head(6).iterrows():
        off = gcf.explain(x, pipe, distance=distance, upper_bound=False, radius=False)
        for opts in OPTIONS[:3]:
            on = gcf.explain(x, pipe, distance=distance, **opts)
            assert on.is_optimal and off.is_optimal
            # equal up to the rounding of the wide integer column (one unit in 200,000)
            assert on.distances[0] == pytest.approx(off.distances[0], abs=2e-6)
            assert pipe.predict(on.counterfactuals.iloc[[0]])[0] == 1
            assert float(on.counterfactuals.iloc[0]["amount"]) == int(on.counterfactuals.iloc[0]["amount"])


# --------------------------------------------------------------------------- the pieces
def _net(rng, n=5):
    return ReLUNetwork([(rng.normal(size=(8, n)), rng.normal(size=8)), (rng.normal(size=(6, 8)), rng.normal(size=6)),
                        (rng.normal(size=(1, 6)), rng.normal(size=1))])


def test_first_crossing_is_the_first_point_above_the_bound():
    rng = np.random.default_rng(0)
    T = np.linspace(0, 3, 60_001)
    for _ in range(100):
        net = _net(rng)
        z, d = rng.normal(size=5), rng.normal(size=5)
        lo = net.score(z)[0] + abs(rng.normal())
        S = net.score(z[None] + T[:, None] * d[None])
        above = np.flatnonzero(lo <= S)
        t = net.first_crossing(z, d, 3.0, lo)
        if len(above) == 0:
            assert t is None
            continue
        assert T[above[0]] - 3 / 60_000 - 1e-9 <= t <= T[above[0]] + 1e-9
        assert net.score(z + t * d)[0] >= lo - 1e-9
    net = _net(rng)
    z = rng.normal(size=5)
    assert net.first_crossing(z, np.ones(5), 1.0, net.score(z)[0] - 1.0) == 0.0


@pytest.mark.parametrize("with_options", [False, True], ids=["continuous", "with-options"])
def test_budget_bounds_hold_inside_the_budget(with_options):
    """Sampled points of the box within the budget keep every pre-activation inside the
    budget bounds (with the second layer by LP too), which are within the box's own.
    Columns 0-3 are continuous (cost |x_c - z_c|), 4-6 one one-hot group: free (outside
    the budget) or its other categories as options costing 1 and 0.5."""
    rng = np.random.default_rng(1)
    n = 7
    for _ in range(20):
        net = _net(rng, n)
        z = np.r_[rng.uniform(0, 1, 4), 1.0, 0.0, 0.0]
        dom = InputDomain(np.zeros(n), np.ones(n), np.r_[np.zeros(4, bool), np.ones(3, bool)],
                          [np.array([4, 5, 6])], {})
        budget = rng.uniform(0.05, 1.5)
        g = np.array([4, 5, 6])
        costs = {5: 1.0, 6: 0.5}
        options = [Option(g, np.eye(3)[h - 4], costs[h], h, 1.0, 0.0) for h in (5, 6)] if with_options else []
        tight = budget_tightened(net, dom, z, np.arange(4), budget, options=options)
        B, B0 = tight.bounds(dom), net.bounds(dom)
        for (L, U), (L0, U0) in zip(B, B0):
            assert np.all(L >= L0 - 1e-12) and np.all(U <= U0 + 1e-12)
        B_lp = budget_tightened(net, dom, z, np.arange(4), budget, lp=True, options=options).bounds(dom)
        for (L, U), (L0, U0) in zip(B_lp, B):
            assert np.all(L >= L0 - 1e-12) and np.all(U <= U0 + 1e-12)
        for _ in range(300):
            h = int(rng.integers(3)) + 4
            left = budget - (costs.get(h, 0.0) if with_options else 0.0)
            if left < 0:
                h, left = 4, budget
            delta = rng.normal(size=4) * rng.exponential(size=4)
            delta *= rng.uniform(0, left) / max(np.abs(delta).sum(), 1e-12)
            x = z.copy()
            x[:4] = np.clip(z[:4] + delta, 0, 1)
            x[4:] = np.eye(3)[h - 4]
            for (L, U), a in zip(B_lp, net.preactivations(x[None])):
                assert np.all(a[0] >= L - 1e-6) and np.all(a[0] <= U + 1e-6)
