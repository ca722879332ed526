"""The branch-and-bound lower bound on sequence costs (groupcf.sequential.bnb) against
exhaustive enumeration of small synthetic action sets (every subset, every order, a grid of
tweak values, each sequence replayed by the vectorised engine): the bound never exceeds
the cheapest enumerated sequence, and meets it where the relaxation is tight."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from groupcf.embeddings import ReLUNetwork
from groupcf.models import resolve_encoded
from groupcf.sequential import AbsChange, Action, ActionSet, Nonlinear, OneHotEncoding, RelativeSquared
from groupcf.sequential.bnb import bnb_bound
from groupcf.sequential.bound import proven
from groupcf.sequential.engine import Problem, feature_ranges, rollout

FEATS = ["x1", "x2", "c"]


def _net(rng, enc, hidden=(8,), margin=0.3, x0=None):
    """A random ReLU network that rejects ``x0`` with score ``-margin``."""
    sizes = [enc.n_inputs, *hidden, 1]
    layers = [(rng.normal(size=(o, i)), rng.normal(size=o)) for i, o in zip(sizes[:-1], sizes[1:])]
    s0 = ReLUNetwork(layers).score(enc(np.zeros(3) if x0 is None else x0))[0]
    layers[-1] = (layers[-1][0], layers[-1][1] - s0 - margin)
    return ReLUNetwork(layers)


def _problem(aset, net, enc, x0=None, decimals=None):
    x0 = np.zeros(3) if x0 is None else np.asarray(x0, float)
    return Problem(x0, aset, resolve_encoded(net, enc), None, decimals, 1e-9, False, feature_ranges(FEATS, None))


def _enumerate(p, grid=41):
    """Cheapest valid accepted sequence over every ordered subset of the actions and a grid
    of values per action (a real sequence: an upper bound on the true optimum)."""
    nA = len(p.actions)
    g = np.linspace(0.0, 1.0, grid)
    best = np.inf
    for k in range(1, nA + 1):
        for order in itertools.permutations(range(nA), k):
            vals = np.array(list(itertools.product(*[g if p.actions[i].kind == "add" else [0.0] for i in order])))
            G = np.full((len(vals), 2 * nA), 0.9)
            for t, i in enumerate(order):
                G[:, i] = 0.1 + 0.1 * t
                G[:, nA + i] = vals[:, t]
            r = rollout(p, G)
            if r.feasible.any():
                best = min(best, float(r.cost[r.feasible].min()))
    return best


def _linear_actions():
    return [Action("up1", "x1", (-2.0, 2.0), cost="abs", consequences={"x2": 0.5}),
            Action("up2", "x2", (-1.5, 1.5), cost=AbsChange(2.0)),
            Action("set", "c", kind="set", values=[1.0], cost=1.5, pre=["c == 0"])]


@pytest.mark.parametrize("seed", range(24))
def test_bound_below_enumeration_relu(seed):
    """Random 4-8-1 and 4-6-6-1 networks, linear costs and a consequence: the bound is at
    most the enumerated optimum, and (the order-free relaxation is exact here) reaches it
    up to the grid's resolution when the search closes."""
    rng = np.random.default_rng(seed)
    enc = OneHotEncoding(FEATS, {"c": [0.0, 1.0]})
    net = _net(rng, enc, hidden=(8,) if seed % 2 else (6, 6))
    aset = ActionSet(_linear_actions(), FEATS)
    p = _problem(aset, net, enc)
    best = _enumerate(p)
    b = bnb_bound(p, enc, time_limit=5.0, cap=best if np.isfinite(best) else None)
    assert b is not None
    if not np.isfinite(best):
        assert b.value <= np.inf
        return
    assert b.value <= best + 1e-9
    if b.steps is not None:       # a sequence found by the search is real and not below the bound
        cost, _, _, final = p.replay(b.steps)
        assert p.accepts(final) and cost >= b.value - 1e-9 and cost == pytest.approx(b.steps_cost)
    if str(b.status) == "optimal":
        # grid spacing 0.1 (x1, weight 1) and 0.075 (x2, weight 2): the true optimum is within 0.25
        assert b.value >= best - 0.25 - 1e-9


@pytest.mark.parametrize("seed", range(12))
def test_bound_exact_on_a_linear_model(seed):
    """No hidden layer, |delta| costs: the optimum is a fractional knapsack; the bound meets
    it (the relaxation is tight) once given that optimum's cost as the cap."""
    rng = np.random.default_rng(100 + seed)
    enc = OneHotEncoding(FEATS, {"c": [0.0, 1.0]})
    w = rng.normal(size=4)
    need = 0.2 + rng.uniform()
    net = ReLUNetwork([(w[None, :], [-need - w @ enc(np.zeros(3))[0]])])
    acts = [Action("up1", "x1", (-3.0, 3.0), cost="abs"), Action("up2", "x2", (-3.0, 3.0), cost=AbsChange(2.0))]
    aset = ActionSet(acts, FEATS)
    p = _problem(aset, net, enc)
    # fractional knapsack: cheapest gain per cost first
    gains = np.array([abs(w[0]) / 1.0, abs(w[1]) / 2.0])
    left, opt, point = need, 0.0, np.zeros(2)
    for j in np.argsort(-gains):
        take = min(3.0, left / abs(w[j]))
        point[j] = np.sign(w[j]) * take
        opt += take * (1.0 if j == 0 else 2.0)
        left -= take * abs(w[j])
    if left > 1e-12:
        b = bnb_bound(p, enc, time_limit=2.0)
        assert b is not None and str(b.status) == "infeasible"
        return
    steps = [(n, float(v * (1 + 1e-7))) for n, v in zip(["up1", "up2"], point) if abs(v) > 1e-12]
    cost, _, _, final = p.replay(steps)
    assert p.accepts(final)
    b = bnb_bound(p, enc, time_limit=5.0, cap=cost)
    assert opt - 1e-9 <= cost
    assert b.value <= cost + 1e-12
    assert b.value == pytest.approx(opt, rel=1e-3)


def _interacting_actions():
    """Two actions on x1 (one with a relative cost, so their order matters), and one whose
    consequence on x2 is nonlinear (x2 := x2 * (2 + delta / x1), the authors' German rule)."""
    def adj(before, after):
        return before["x2"] * (2.0 + (after["x1"] - before["x1"]) / before["x1"])

    def adj_interval(lo, hi, dlo, dhi):
        ok = lo["x1"] > 0
        cl, ch = np.where(ok, lo["x1"], 1.0), np.where(ok, hi["x1"], 1.0)
        r = np.stack([dlo / cl, dlo / ch, dhi / cl, dhi / ch])
        f = np.stack([2 + r.min(0), 2 + r.max(0)])
        pr = np.stack([lo["x2"] * f[0], lo["x2"] * f[1], hi["x2"] * f[0], hi["x2"] * f[1]])
        return np.where(ok, pr.min(0), -np.inf), np.where(ok, pr.max(0), np.inf)

    return [Action("rel", "x1", (-1.5, 1.5), cost=RelativeSquared(), post=["x1' > 0"]),
            Action("abs", "x1", (-1.0, 1.0), cost=AbsChange(0.5), post=["x1' > 0"]),
            Action("adj", "x1", (-1.5, 1.5), cost=RelativeSquared(offset=0.5),
                   consequences={"x2": Nonlinear(adj, (-10.0, 10.0), adj_interval, ("x1", "x2"))},
                   post=["x1' > 0", "x2' > -10", "x2' < 10"]),
            Action("lin", "x2", (-1.0, 1.0), cost=RelativeSquared(offset=-1.0))]


@pytest.mark.parametrize("seed", range(8))
def test_bound_below_enumeration_interacting(seed):
    """Relative costs whose old value depends on the order and a nonlinear consequence: the
    bound never exceeds the cheapest of every order and grid of values (four actions,
    64 ordered subsets, 9 values each)."""
    rng = np.random.default_rng(200 + seed)
    enc = OneHotEncoding(FEATS, {"c": [0.0, 1.0]})
    x0 = np.array([1.0 + rng.uniform(), 0.5 * rng.normal(), 0.0])
    net = _net(rng, enc, hidden=(6,), margin=0.2 + 0.3 * rng.uniform(), x0=x0)
    aset = ActionSet(_interacting_actions(), FEATS)
    p = _problem(aset, net, enc, x0)
    best = _enumerate(p, grid=9)
    b = bnb_bound(p, enc, time_limit=1.5, cap=best if np.isfinite(best) else None)
    assert b is not None
    assert b.value <= best + 1e-9
    if b.steps is not None:
        cost, _, _, final = p.replay(b.steps)
        assert p.accepts(final) and cost >= b.value - 1e-9


def test_nonlinear_consequence_is_not_lost():
    """Only the nonlinear consequence (x2 doubles, almost for free) reaches the accepted
    region cheaply: the bound must stay below that sequence's tiny cost."""
    enc = OneHotEncoding(FEATS, {"c": [0.0, 1.0]})
    net = ReLUNetwork([(np.array([[0.0, 1.0, 0.0, 0.0]]), [-1.8])])     # accepts x2 >= 1.8
    aset = ActionSet(_interacting_actions(), FEATS)
    p = _problem(aset, net, enc, [1.0, 1.0, 0.0])
    cost, _, _, final = p.replay([("adj", 0.01)])
    assert p.accepts(final) and cost < 1e-3
    b = bnb_bound(p, enc, time_limit=2.0, cap=cost)
    assert b.value <= cost + 1e-12
    b = bnb_bound(p, enc, time_limit=2.0)
    assert b.value <= cost + 1e-12


def test_preconditions_between_actions_are_kept():
    """Two actions that exclude each other through their pre-conditions (the authors'
    capital gain / capital loss): the bound is not fooled into combining them."""
    enc = OneHotEncoding(FEATS, {"c": [0.0, 1.0]})
    net = ReLUNetwork([(np.array([[1.0, 1.0, 0.0, 0.0]]), [-1.5])])     # x1 + x2 >= 1.5
    acts = [Action("gain", "x1", (-2.0, 2.0), cost="abs", pre=["x2 < 0.1"], post=["x1' > 0.1"]),
            Action("loss", "x2", (-2.0, 2.0), cost=AbsChange(1.2), pre=["x1 < 0.1"], post=["x2' > 0.1"])]
    p = _problem(ActionSet(acts, FEATS), net, enc)
    best = _enumerate(p, grid=81)
    assert best == pytest.approx(1.5)       # gain alone: both together are never valid
    b = bnb_bound(p, enc, time_limit=3.0, cap=best)
    assert 1.5 - 1e-3 <= b.value <= best + 1e-9


def test_rounding_keeps_the_bound_valid():
    """States rounded to 1 decimal after every action (the authors round to 3), integer
    consequence factors; a non-integer factor makes the bound decline (None)."""
    acts = _linear_actions()
    acts[0] = Action("up1", "x1", (-2.0, 2.0), cost="abs", consequences={"x2": 2.0})
    for seed in range(4):
        rng = np.random.default_rng(300 + seed)
        enc = OneHotEncoding(FEATS, {"c": [0.0, 1.0]})
        net = _net(rng, enc)
        p = _problem(ActionSet(acts, FEATS), net, enc, decimals=1)
        best = _enumerate(p, grid=21)
        b = bnb_bound(p, enc, time_limit=1.5, cap=best if np.isfinite(best) else None)
        assert b.value <= best + 1e-9
    p = _problem(ActionSet(_linear_actions(), FEATS), net, enc, decimals=1)
    assert bnb_bound(p, enc, time_limit=1.0) is None


@pytest.mark.parametrize("seed", range(4))
def test_rounding_bound_meets_the_exhaustive_optimum(seed):
    """States rounded to 1 decimal: every action's change is a multiple of 0.1, and a grid of
    41 values per action reaches every such multiple in its range (steps of 0.1 and 0.075), so
    the enumeration is the exact optimum. The bound, with no incumbent given, is below it
    and proves it (it searched to its time limit with a gap of 11-56 % when its boxes were
    continuous)."""
    acts = _linear_actions()
    acts[0] = Action("up1", "x1", (-2.0, 2.0), cost="abs", consequences={"x2": 2.0})
    rng = np.random.default_rng(300 + seed)
    enc = OneHotEncoding(FEATS, {"c": [0.0, 1.0]})
    p = _problem(ActionSet(acts, FEATS), _net(rng, enc), enc, decimals=1)
    best = _enumerate(p, grid=41)
    assert np.isfinite(best)
    b = bnb_bound(p, enc, time_limit=5.0)
    assert b.value <= best + 1e-9
    assert b.status == "optimal" and proven(best, b.value) and b.steps_cost == pytest.approx(best)


def test_linear_upper_is_an_upper_bound():
    """The batched linear relaxation of a ReLU network lies above it on every box."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        net = ReLUNetwork([(rng.normal(size=(8, 6)), rng.normal(size=8)), (rng.normal(size=(7, 8)), rng.normal(size=7)),
                           (rng.normal(size=(1, 7)), rng.normal(size=1))])
        A, c = rng.normal(size=(6, 3)), rng.normal(size=(10, 6))
        lo = rng.normal(size=(10, 3))
        hi = lo + rng.uniform(0, 2, size=(10, 3))
        a, d = net.linear_upper(A, c, lo, hi)
        Y = lo[:, None, :] + rng.uniform(size=(10, 300, 3)) * (hi - lo)[:, None, :]
        for k in range(10):
            assert np.all(net.score(Y[k] @ A.T + c[k]) <= Y[k] @ a[k] + d[k] + 1e-9)


def test_result_reports_bound_gap_and_proof():
    """Per person: best cost, bound, gap, proven optimal (explain_sequence end to end)."""
    import pandas as pd

    import groupcf as gcf
    enc = OneHotEncoding(FEATS, {"c": [0.0, 1.0]})
    w = np.array([1.0, 0.5, 0.0, 0.2])
    net = ReLUNetwork([(w[None, :], [-0.8])])
    e = gcf.explain_sequence(pd.Series(np.zeros(3), index=FEATS), net, ActionSet(_linear_actions(), FEATS),
                             encode=enc, categorical=["c"], random_state=0, bound_time_limit=5.0,
                             population=60, offspring=48, mutants=12, generations=25)
    assert e.lower_bound is not None and e.lower_bound <= e.best_cost + 1e-9
    assert e.gap == pytest.approx((e.best_cost - e.lower_bound) / e.best_cost)
    if e.is_optimal:
        assert e.best_cost <= e.lower_bound + 1e-3 * max(1.0, e.lower_bound)
    assert "gap" in e.summary()
    e.validate()
