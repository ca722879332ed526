"""The engine's extension points used by one-for-many groups (:mod:`groupcf.group.colgen`):
non-improving ``pool`` columns, the pool level in pool order, a cheap dual bound each
round, a stop after columns entered, and what the run reports (``x``, ``stopped``)."""
from __future__ import annotations

import math

import numpy as np

from groupcf.colgen import (
    Column,
    ColumnPool,
    Duals,
    PoolLevel,
    Priced,
    PricingContext,
    PricingLevel,
    SetCoverMaster,
    column_generation,
    sync_master,
)
from groupcf.utils import EPS, Deadline

from .test_engine import EnumerateLevel, brute_set_cover, random_case


class SplitLevel(PricingLevel):
    """Exact pricing that files every non-improving column under ``pool``."""

    name = "split"
    exact = True

    def __init__(self, full):
        super().__init__()
        self.full = full

    def price(self, duals, ctx):
        vals = np.array([c.value(duals.pi) for c in self.full])
        good = [c for c, v in zip(self.full, vals) if v > 1 + EPS]
        rest = [c for c, v in zip(self.full, vals) if v <= 1 + EPS]
        return Priced(good, pool=rest, dual_bound=float(vals.max()), proof=not good)


def _case(seed):
    rng = np.random.default_rng(seed)
    C, D, m, cols = random_case(rng, n=8, n_cols=14, p=0.35)
    active = C.any(axis=0)
    return C, cols, active


def _start(C, cols, active):
    master = SetCoverMaster(C.shape[1], "highs", active=active)
    pool = ColumnPool(C.shape[1])
    for i in np.flatnonzero(active):
        pool.add(cols[int(np.flatnonzero(C[:, i])[0])])
    sync_master(master, pool)
    return master, pool


def test_pool_columns_never_enter_and_the_answer_is_exact():
    for seed in range(8):
        C, cols, active = _case(seed)
        if not active.any():
            continue
        master, pool = _start(C, cols, active)
        cg = column_generation(master, pool, [PoolLevel(None, best_first=False), SplitLevel(cols)])
        assert cg.converged and cg.stopped == "converged"
        assert len(cg.x) == master.n_columns
        assert math.ceil(cg.bound - EPS) <= brute_set_cover(C, active)
        # every column is in the pool, and the pool level never left an improving one out
        assert len(pool) == len({c.key for c in cols} | {c.key for c in master.columns})
        reduced = cg.duals.reduced_many(pool.matrix(pool.outside()), np.ones(len(pool.outside())))
        assert (reduced <= EPS).all()


def test_pool_level_in_pool_order_takes_every_improving_column():
    pool = ColumnPool(3)
    for j, cover in enumerate([[1, 0, 0], [1, 1, 0], [0, 0, 1], [1, 1, 1]]):
        pool.add(Column(key=j, cover=np.array(cover, bool)))
    duals = Duals(np.array([0.6, 0.6, 0.3]), 1.0)     # values 0.6, 1.2, 0.3, 1.5
    ctx = PricingContext(pool, Deadline(None))
    assert [c.key for c in PoolLevel(None, best_first=False)(duals, ctx).columns] == [1, 3]
    assert [c.key for c in PoolLevel()(duals, ctx).columns] == [3, 1]
    assert [c.key for c in PoolLevel(1)(duals, ctx).columns] == [3]


def test_dual_bound_hook_and_stop_after_entering():
    C, cols, active = _case(3)
    master, pool = _start(C, cols, active)
    seen = []

    def trivial(duals):               # every column lies inside the active elements
        return float(duals.pi.sum())

    def stop(it, res, bound):
        seen.append((it, len(res.columns), bound))
        return True

    cg = column_generation(master, pool, [EnumerateLevel(cols)], dual_bound=trivial, on_entered=stop)
    if seen:                          # some column improved: the loop ended after the first round
        assert cg.stopped == "callback" and cg.iterations == 1 and not cg.converged
    else:
        assert cg.stopped == "converged"
    assert cg.lp_solves == cg.iterations and cg.time_master >= 0
    # Farley's bound from the hook holds
    assert math.ceil(cg.bound - EPS) <= brute_set_cover(C, active)


def test_stopped_reasons():
    C, cols, active = _case(5)
    master, pool = _start(C, cols, active)
    cg = column_generation(master, pool, [EnumerateLevel(cols)], max_iterations=1)
    assert cg.stopped in ("max_iterations", "converged")
    master, pool = _start(C, cols, active)
    assert column_generation(master, pool, [], max_iterations=3).stopped == "no_improvement"
    dl = Deadline(0.0)
    master, pool = _start(C, cols, active)
    assert column_generation(master, pool, [EnumerateLevel(cols)], deadline=dl).stopped == "deadline"
