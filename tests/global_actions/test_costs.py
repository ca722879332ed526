"""One cost definition: the numpy cost of an action (``ActionSpace.costs``) equals both linear
forms of the pricing MIP — per type through its inputs (``ActionMIP.cheapest``) and through
the action variables (``ActionMIP._total_cost``, the lazy form) — with the action fixed,
on random actions, people and weights."""
from __future__ import annotations

import numpy as np
import pytest

from groupcf.global_actions.actions import Action, ActionSpace
from groupcf.global_actions.pricing import ActionMIP
from groupcf.models import resolve_model
from tests.reference.global_actions import tiny_cases


def random_action(aspace: ActionSpace, rng) -> Action:
    """One to three mutable features, each set to a random category or shifted (set) by a grid step."""
    feats = rng.choice(aspace.mutable, size=min(len(aspace.mutable), int(rng.integers(1, 4))), replace=False)
    changes = []
    for l in sorted(int(l) for l in feats):
        f = aspace.feats[l]
        if f.encoding in ("onehot", "binary"):
            changes.append((l, int(rng.integers(len(f.categories)))))
        else:
            R = f.high - f.low
            n = int(rng.integers(-int(R), int(R) + 1)) if aspace.numeric == "shift" else int(rng.integers(0, int(R) + 1))
            changes.append((l, n / R))
    return Action(tuple(changes))


def fix(be, V, aspace: ActionSpace, action: Action) -> None:
    """Bounds fixing the MIP's action variables to ``action``."""
    ch = dict(action.changes)
    for l in aspace.mutable:
        d, f = V[l], aspace.feats[l]
        on = float(l in ch)
        be.set_bounds([d["b"]], [on], [on])
        if f.encoding == "onehot":
            vals = np.zeros(len(d["s"]))
            if l in ch:
                vals[int(ch[l])] = 1.0
            be.set_bounds(d["s"], vals, vals)
        elif f.encoding == "binary":
            v = float(ch.get(l, 0))
            be.set_bounds([d["s"][0]], [v], [v])
        else:
            v = float(ch.get(l, 0.0)) / d["scale"]
            be.set_bounds([d["d"]], [v], [v])


def mip_cost(aspace, mip, action, types, form):
    """The MIP's optimal cost over ``types`` with the action fixed (``form``: "types" or "actions")."""
    if form == "types":
        be, V, _, cost = mip._build(types, True, None)
        idx, coef, offset = cost.arrays()
    else:
        be, V, _, _ = mip._build(types, True, None, costs=False)
        idx, coef, offset = mip._total_cost(be, V, np.asarray(types))
    assert be is not None
    be.set_objective(idx, coef, sense="min", offset=offset)
    fix(be, V, aspace, action)
    sol = be.solve()
    assert sol.status.has_solution, sol.status
    return float(sol.objective)


@pytest.mark.parametrize("numeric", ["shift", "set"])
def test_numpy_cost_equals_both_mip_forms(numeric):
    """On random tiny cases, actions and weights: numpy == per-type MIP form == action form."""
    checked = 0
    for seed, _, (pipe, S, *_) in tiny_cases(range(12)):
        rng = np.random.default_rng(seed)
        weights = {c: float(rng.uniform(0.2, 3.0)) for c in S.columns}
        aspace = ActionSpace(resolve_model(pipe), S, numeric=numeric, cost=weights)
        if not aspace.mutable:
            continue
        mip = ActionMIP(aspace)
        for _ in range(6):
            action = random_action(aspace, rng)
            Zp, valid = aspace.apply(action)
            score = np.full(aspace.n_types, -np.inf)
            score[valid] = aspace.embedding.score(Zp[valid])
            types = [int(t) for t in np.flatnonzero(score >= aspace.tau + 10 * aspace.margin)]
            if not types:
                continue
            want = float(aspace.m[types] @ aspace.costs(action)[types])
            assert mip_cost(aspace, mip, action, types, "types") == pytest.approx(want, abs=1e-6)
            if numeric == "shift":
                assert mip_cost(aspace, mip, action, types, "actions") == pytest.approx(want, abs=1e-6)
            checked += 1
    assert checked >= 10
