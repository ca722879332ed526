"""The polish's MIP start (``ActionMIP.cheapest(..., start=)``): the start's values are the
action itself, and a cheapest action found from a start is as cheap as the one found
without it (the start only prunes; it is returned only when the dual bound proves that
nothing is cheaper), on tiny random cases with networks and linear models, lazy and not."""
from __future__ import annotations

import numpy as np
import pytest

from groupcf.global_actions import pricing
from groupcf.global_actions.actions import ActionSpace
from groupcf.global_actions.api import _polish
from groupcf.global_actions.pricing import ActionMIP
from groupcf.models import resolve_model
from groupcf.utils import Deadline
from tests.global_actions.test_costs import random_action
from tests.params import sweep
from tests.reference.global_actions import tiny_cases


def covering(aspace: ActionSpace, rng, tries: int = 30):
    """Random actions with the types they cover (with room above the margin)."""
    for _ in range(tries):
        action = random_action(aspace, rng)
        Zp, valid = aspace.apply(action)
        score = np.full(aspace.n_types, -np.inf)
        score[valid] = aspace.embedding.score(Zp[valid])
        types = [int(t) for t in np.flatnonzero(score >= aspace.tau + 10 * aspace.margin)]
        if types:
            yield action, types


def covering_cases(seeds, models, per: int):
    """``(aspace, action, types)``: up to ``per`` covering actions of each tiny case with a
    mutable feature (:func:`covering`, seeded by the case)."""
    for seed, _, (pipe, S, *_) in tiny_cases(seeds, models):
        aspace = ActionSpace(resolve_model(pipe), S)
        if aspace.mutable:
            for action, types in list(covering(aspace, np.random.default_rng(seed)))[:per]:
                yield aspace, action, types


def total(aspace: ActionSpace, action, types) -> float:
    return float(aspace.m[types] @ aspace.costs(action)[types])


def test_start_values_fix_the_action():
    """The action variables fixed at ``_start_values`` give the MIP the action's numpy cost."""
    checked = 0
    for aspace, action, types in covering_cases(range(8), ("lr",), 4):
        mip = ActionMIP(aspace)
        be, V, _, cost = mip._build(types, True, None)
        assert be is not None
        idx, coef, offset = cost.arrays()
        be.set_objective(idx, coef, sense="min", offset=offset)
        vi, vv = mip._start_values(V, action)
        be.set_bounds(vi, vv, vv)
        sol = be.solve()
        assert sol.status.has_solution, sol.status
        assert float(sol.objective) == pytest.approx(total(aspace, action, types), abs=1e-6)
        checked += 1
    assert checked >= 8


@pytest.mark.parametrize("lazy_from", [1, 8])
@pytest.mark.parametrize("model", sweep(["lr", "mlp"], fast="lr"))
def test_cheapest_from_a_start_is_as_cheap(model, lazy_from, monkeypatch):
    """From a start covering the types: the same least cost as without it (up to the
    solver's relative gap), never above the start's, and the action covers every type."""
    monkeypatch.setattr(pricing, "LAZY_FROM", lazy_from)
    checked = 0
    for aspace, action, types in covering_cases(range(10), (model,), 3):
        free = ActionMIP(aspace).cheapest(types)
        warm = ActionMIP(aspace).cheapest(types, start=action)
        assert free.optimal and warm.optimal
        want, got = total(aspace, free.actions[0], types), total(aspace, warm.actions[0], types)
        assert got == pytest.approx(want, rel=2e-4, abs=1e-6)
        assert got <= total(aspace, action, types) + 1e-9
        Zp, valid = aspace.apply(warm.actions[0])
        assert valid[types].all()
        assert (aspace.embedding.score(Zp[types]) >= aspace.tau).all()
        checked += 1
    assert checked >= 5


def test_polish_never_makes_an_action_dearer():
    """``_polish`` from random covering actions: each stays or gets cheaper on its types
    and still covers them; an action already at its types' nearest cost is kept."""
    checked = 0
    for aspace, action, types in covering_cases(range(8), ("lr", "mlp"), 2):
        assign = np.full(aspace.n_types, -1)
        assign[types] = 0
        new = _polish(aspace, [action], assign, [0], ActionMIP(aspace), Deadline(None))[0]
        assert total(aspace, new, types) <= total(aspace, action, types) + 1e-9
        col = aspace.column(new)
        assert col.cover[types].all()
        checked += 1
    assert checked >= 5


def test_min_coverage_out_of_time_skips_its_stages():
    """``min_coverage`` past its deadline (issue 23: Adult MLP took 83 s for 60): the MIP is
    not built (no type embedded), the category-set enumeration and the MIP are skipped,
    the answer comes back unchanged with status ``"time limit"``."""
    from groupcf.global_actions.cheapest import TIME_LIMIT, cheapest_reaching, reach_share

    checked = 0
    for aspace, action, types in covering_cases(range(6), ("mlp",), 1):
        mip = ActionMIP(aspace)
        res = cheapest_reaching(mip, range(aspace.n_types), len(types), time_limit=0.0)
        assert res.status.value == "time_limit" and res.action is None
        assert not mip._partial                       # stopped before the first type's embedding
        cover = aspace.cover(action)
        acts, info = reach_share(aspace, mip, [action], float(aspace.m[cover].sum()), cover, Deadline(0.0))
        assert [a.key for a in acts] == [action.key]
        assert info["status"] == TIME_LIMIT and info["skipped"] == ["sets", "mip"] and info["mips"] == 0
        checked += 1
    assert checked >= 2
