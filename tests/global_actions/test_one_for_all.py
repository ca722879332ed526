"""k = 1 asks first whether one action covers everyone coverable (``ActionMIP.cheapest`` over
every coverable type, rows added lazily) before the max-coverage MIP over every type, which
took minutes at 10,000 people (BENCHMARKS.md, "Scale"). The pipeline ``placed``
(conftest.py) scores 0.1 u - 1 + 0.5 [c = yes] + 0.3 [d = yes] + 0.01 (v - 5)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.global_actions.actions import ActionSpace
from groupcf.global_actions.pricing import ActionMIP
from groupcf.models import resolve_model
from groupcf.solvers.base import Status


def cheapest(pipe, S):
    aspace = ActionSpace(resolve_model(pipe), S, Tmax=1)
    return aspace, ActionMIP(aspace).cheapest(np.arange(aspace.n_types))


def test_one_action_covering_everyone_is_found_and_is_the_cheapest(placed):
    # u = 6.5, 7.5, 8.5: c -> yes (+0.5) covers all three; d -> yes (+0.3) only the last two;
    # v + 5 (+0.05) nobody. The cheapest covering action is c -> yes (cost 1 each).
    S = pd.DataFrame({"u": [6.5, 7.5, 8.5], "c": "no", "d": "no", "v": 5}, index=["a", "b", "c"])
    aspace, res = cheapest(placed, S)
    assert res.status == Status.OPTIMAL
    (act,) = res.actions
    Zp, valid = aspace.apply(act, aspace.Z, aspace.codes)
    assert valid.all() and (aspace.embedding.score(Zp) >= aspace.tau).all()
    assert "c" in aspace.describe(act) and "yes" in aspace.describe(act), aspace.describe(act)
    np.testing.assert_allclose(aspace.costs(act), 1.0)
    out = gcf.explain_global(S, placed, Tmax=1, k=1, progress=False)
    assert out.n_covered == 3 and out.is_optimal and out.mean_cost == pytest.approx(1.0)


def test_no_single_action_covers_people_who_need_different_ones(placed):
    # a (c = no, u = 6) needs c -> yes; b (c = yes already, u = 3) needs d -> yes: Tmax = 1
    S = pd.DataFrame({"u": [6.0, 3.0], "c": ["no", "yes"], "d": "no", "v": 5}, index=["a", "b"])
    _, res = cheapest(placed, S)
    assert res.status == Status.INFEASIBLE and not res.actions
    out = gcf.explain_global(S, placed, Tmax=1, k=1, progress=False)
    assert out.n_covered == 1 and out.curve["upper_bound"].tolist() == [1] and out.is_optimal
