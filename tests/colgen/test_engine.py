"""The generic column-generation engine against brute force on random incidence matrices:
set cover (fewest columns) and budgeted maximum coverage (most weight with k columns,
cheapest among the best), each with the bound it certifies."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from groupcf.colgen import (
    Column,
    ColumnPool,
    MaxCoverageMaster,
    PoolLevel,
    Priced,
    PricingLevel,
    SetCoverMaster,
    column_generation,
    solve_integer_master,
    sync_master,
)
from groupcf.utils import EPS


class EnumerateLevel(PricingLevel):
    """Exact pricing by listing a hidden full column set (the test's oracle)."""

    name = "enumerate"
    exact = True

    def __init__(self, full: list[Column]):
        super().__init__()
        self.full = full

    def price(self, duals, ctx):
        vals = np.array([c.value(duals.pi) / c.weight for c in self.full])
        best = np.argsort(-vals)[:3]
        return Priced([self.full[j] for j in best], dual_bound=float(vals.max()), proof=True)


def random_case(rng, n=7, n_cols=12, p=0.3):
    C = rng.random((n_cols, n)) < p
    D = np.round(rng.random((n_cols, n)) * 3, 1)
    m = rng.integers(1, 3, size=n).astype(float)
    cols = [Column(key=j, cover=C[j], element_costs=D[j]) for j in range(n_cols)]
    return C, D, m, cols


def brute_max_coverage(C, D, m, k):
    """(most weight covered by <= k columns, least cost among those)."""
    best = (0.0, 0.0)
    for r in range(1, min(k, len(C)) + 1):
        for sub in itertools.combinations(range(len(C)), r):
            cov = C[list(sub)].any(axis=0)
            Dc = np.where(C[list(sub)], D[list(sub)], np.inf).min(axis=0)
            val = (float(m[cov].sum()), -float((m[cov] * Dc[cov]).sum()))
            if val > (best[0], -best[1]):
                best = (val[0], -val[1])
    return best


def brute_set_cover(C, active):
    for r in range(1, len(C) + 1):
        for sub in itertools.combinations(range(len(C)), r):
            if C[list(sub)].any(axis=0)[active].all():
                return r
    return 0


def run(master, cols, seed_cols):
    pool = ColumnPool(len(cols[0].cover))
    for c in seed_cols:
        pool.add(c)
    sync_master(master, pool)
    return pool, column_generation(master, pool, [PoolLevel(), EnumerateLevel(cols)])


@pytest.mark.parametrize("case", range(25))
def test_max_coverage_matches_brute_force(case):
    rng = np.random.default_rng(case)
    C, D, m, cols = random_case(rng)
    for k in (1, 2, 3):
        master = MaxCoverageMaster(C.shape[1], "highs", k, weights=m)
        pool, cg = run(master, cols, cols[:1])
        assert cg.converged
        res = solve_integer_master(pool.matrix(), pool.cost_matrix(), "max_coverage", "highs", m=m, k=k)
        want_cov, want_cost = brute_max_coverage(C, D, m, k)
        assert cg.bound >= want_cov - 1e-6                    # the LP bound is valid
        if res.objective >= math.floor(cg.bound + EPS):       # certified by the bound ...
            assert res.objective == pytest.approx(want_cov)   # ... then it is the optimum
        # the pool holds every column the brute force needs? not always; the IP over the
        # full column set is exact and must agree with brute force
        full = solve_integer_master(C, D, "max_coverage", "highs", m=m, k=k)
        assert full.objective == pytest.approx(want_cov)
        assert full.cost == pytest.approx(want_cost)
        assert res.objective <= want_cov + 1e-9


@pytest.mark.parametrize("case", range(25))
def test_set_cover_matches_brute_force(case):
    rng = np.random.default_rng(100 + case)
    C, D, m, cols = random_case(rng, p=0.35)
    active = C.any(axis=0)
    if not active.any():
        return
    want = brute_set_cover(C, active)
    master = SetCoverMaster(C.shape[1], "highs", active=active)
    # seeds: for each element, one full column covering it
    seed = [cols[int(np.flatnonzero(C[:, i])[0])] for i in np.flatnonzero(active)]
    pool, cg = run(master, cols, seed)
    assert cg.converged
    assert math.ceil(cg.bound - EPS) <= want
    res = solve_integer_master(pool.matrix(), pool.cost_matrix(), "set_cover", "highs", m=m, active=active)
    assert res.objective >= want
    if res.objective <= math.ceil(cg.bound - EPS):
        assert res.objective == want
    full = solve_integer_master(C, D, "set_cover", "highs", m=m, active=active)
    assert full.objective == want
    assert (full.assign[active] >= 0).all()


def test_farley_and_lagrangian_bounds_are_valid_each_round():
    """Stop after every single round: the reported bound still holds."""
    for case in range(10):
        rng = np.random.default_rng(500 + case)
        C, D, m, cols = random_case(rng, n=8, n_cols=15)
        for k in (1, 2):
            master = MaxCoverageMaster(C.shape[1], "highs", k, weights=m)
            pool = ColumnPool(C.shape[1])
            pool.add(cols[0])
            sync_master(master, pool)
            cg = column_generation(master, pool, [EnumerateLevel(cols)], max_iterations=1)
            assert cg.bound >= brute_max_coverage(C, D, m, k)[0] - 1e-6


@pytest.mark.parametrize("seed", range(30))
def test_min_cover_one_column_without_time_for_the_mip(seed):
    """k = 1 with ``min_cover`` and no time for the least-cost MIP (``tie_break_time=0``):
    still the cheapest single column reaching the share (brute force), never the
    max-coverage fallback (no start used to mean no solution, issue 23's benchmark)."""
    rng = np.random.default_rng(seed)
    C, D, m, _ = random_case(rng)
    cov = C.astype(float) @ m
    target = float(rng.choice(cov[cov > 0]))
    cost = np.where(C, D, 0.0) @ m                  # a single column pays for everyone it covers
    best = cost[cov >= target - 1e-9].min()
    res = solve_integer_master(C, D, "max_coverage", "highs", m=m, k=1, min_cover=target, tie_break_time=0.0)
    assert res.status.has_solution
    assert res.objective >= target - 1e-9
    assert res.cost == pytest.approx(best)


def test_min_cover_cheapest():
    rng = np.random.default_rng(7)
    C, D, m, cols = random_case(rng)
    k = 2
    target = brute_max_coverage(C, D, m, k)[0]
    res = solve_integer_master(C, D, "max_coverage", "highs", m=m, k=k, min_cover=target)
    assert res.objective >= target - 1e-9
    assert res.cost == pytest.approx(brute_max_coverage(C, D, m, k)[1])
