"""Exact pricing by branch and bound over boxes of actions (groupcf/global_actions/boxes.py):
its maximum equals brute force over every action on the tiny random cases (LR, MLP, forest;
Tmax 1, 2, None; weighted π), with and without exact leaves; the curve's bound is never below
the brute-force optimum when the boxes price in place of the enumeration, with the k = 1
search first or after the curve (``BoxLevel.single_share``), and the late search's bounds
(its own at k = 1, subadditivity beyond) stay above brute force."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import groupcf as gcf
from groupcf.global_actions.actions import ActionSpace
from groupcf.global_actions.boxes import ActionBoxes, BoxLevel
from groupcf.global_actions.search import CurvePoint
from groupcf.models import resolve_model
from groupcf.solvers.base import Status
from tests.params import sweep
from tests.reference.global_actions import best_coverage, brute_force, tiny_cases


def _one_row_per_type(aspace: ActionSpace) -> np.ndarray:
    rows = np.zeros(aspace.n_types, dtype=np.int64)
    rows[aspace.type_of_row[::-1]] = np.arange(len(aspace.type_of_row))[::-1]
    return rows


@pytest.mark.parametrize("model", sweep(["lr", "mlp", "forest"], fast="lr"))
def test_the_maximum_equals_brute_force(model):
    seen = 0
    for seed, _, (pipe, S, X, imm, inc) in tiny_cases(range(8), (model,)):
        tm = resolve_model(pipe)
        for Tmax in (1, 2, None):
            _, C, _ = brute_force(pipe, S, X, imm, inc, Tmax)
            aspace = ActionSpace(tm, S, Tmax=Tmax)
            boxes = ActionBoxes.of(aspace)
            assert boxes is not None
            Ct = C[:, _one_row_per_type(aspace)].astype(float)      # actions × types, by the real model
            rng = np.random.default_rng(seed)
            for pi in (aspace.m, rng.random(aspace.n_types) * (rng.random(aspace.n_types) < 0.7)):
                want = float((Ct @ pi).max())
                for leaf_size in (1, 64):
                    res = boxes.maximise(pi, leaf_size=leaf_size)
                    assert res.finished, (seed, Tmax, leaf_size)
                    assert res.value == pytest.approx(want) and res.bound == pytest.approx(want), (seed, Tmax)
                    for act, v in zip(res.actions, res.values):       # what it reports, the covers give
                        assert float(aspace.cover(act) @ pi) == pytest.approx(v)
                        assert Tmax is None or len(act) <= Tmax
                # a floor above the maximum: nothing found, the bound is the floor
                res = boxes.maximise(pi, floor=want + 1.0, leaf_size=1)
                assert res.finished and res.actions == [] and res.bound == pytest.approx(want + 1.0)
            seen += 1
    assert seen >= 12


def test_a_stopped_search_still_bounds_the_maximum():
    for _seed, _, (pipe, S, X, imm, inc) in tiny_cases(range(6), ("mlp",)):
        _, C, _ = brute_force(pipe, S, X, imm, inc, None)
        aspace = ActionSpace(resolve_model(pipe), S)
        want = float((C[:, _one_row_per_type(aspace)].astype(float) @ aspace.m).max())
        res = ActionBoxes.of(aspace).maximise(aspace.m, time_limit=0.0, leaf_size=1)
        assert res.bound >= want - 1e-9 and res.value <= want + 1e-9


@pytest.mark.parametrize("share", [None, 0.25])
@pytest.mark.parametrize("model", sweep(["lr", "mlp", "forest"], fast="lr"))
def test_the_curve_bound_is_never_below_brute_force(model, share, monkeypatch):
    monkeypatch.setattr(BoxLevel, "single_share", share)   # k = 1's search after the curve / first
    seen = used = 0
    for seed, _, (pipe, S, X, imm, inc) in tiny_cases(range(8), (model,)):
        for Tmax in (2, None):
            _, C, _ = brute_force(pipe, S, X, imm, inc, Tmax)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = gcf.explain_global(S, pipe, Tmax=Tmax, k=3, enumerate_work=0, progress=False)
            assert res.stats["enumeration"] == "declined"
            used += bool(res.stats.get("box_nodes"))
            assert res.curve["n_covered"].is_monotonic_increasing      # a late better k = 1 lifts every k' below it
            for _, p in res.curve.iterrows():
                want = best_coverage(C, int(p["k"]))
                assert p["n_covered"] <= want <= p["upper_bound"], (seed, Tmax, int(p["k"]))
            seen += 1
    # the search prices with boxes on non-linear scores only; tiny forests: one pooled action covers everyone
    assert seen >= 8 and (used or model != "mlp")


@pytest.mark.parametrize("model", ["lr", "mlp", "forest"])
def test_box_upper_bounds_the_score_inside_every_box(model):
    seed, _, (pipe, S, X, imm, inc) = next(iter(tiny_cases(range(8), (model,))))
    emb = resolve_model(pipe).embedding
    Z = np.asarray(pipe[0].transform(X), dtype=float)
    rng = np.random.default_rng(seed)
    a, b = Z[rng.integers(0, len(Z), 40)], Z[rng.integers(0, len(Z), 40)]
    lb, ub = np.minimum(a, b), np.maximum(a, b)
    u = emb.box_upper(lb, ub)
    assert u.shape == (40,)
    for _ in range(50):
        pts = lb + rng.random(lb.shape) * (ub - lb)
        assert (emb.score(pts) <= u + 1e-9).all()
    np.testing.assert_allclose(emb.box_upper(a, a), emb.score(a), atol=1e-9)   # a point: exact


@pytest.mark.parametrize("model", sweep(["lr", "mlp", "forest"], fast="forest"))
def test_the_late_single_search_tightens_the_curve_and_stays_valid(model):
    seen = 0
    for _seed, _, (pipe, S, X, imm, inc) in tiny_cases(range(6), (model,)):
        for Tmax in (1, 2, None):
            _, C, _ = brute_force(pipe, S, X, imm, inc, Tmax)
            aspace = ActionSpace(resolve_model(pipe), S, Tmax=Tmax)
            want = [best_coverage(C, k) for k in (1, 2, 3)]
            n, extra = float(aspace.m.sum()), 2.0            # 2 undecided people added to every bound
            for limit in (None, 0.0):                         # finished, or stopped at once
                curve = [CurvePoint(k, [], np.full(aspace.n_types, -1), 0.0, 0.0, n + extra, Status.FEASIBLE)
                         for k in (1, 2, 3)]
                res = BoxLevel(ActionBoxes.of(aspace), leaf_size=1).late(curve, aspace.m, extra, limit)
                assert res is not None
                for p, w in zip(curve, want):
                    assert w + extra <= p.upper <= n + extra + 1e-9, (Tmax, limit, p.k)
                if res.finished:                               # exact at k = 1, subadditive beyond
                    assert curve[0].upper == pytest.approx(want[0] + extra)
                    assert curve[2].upper <= 3 * want[0] + extra + 1e-9
            seen += 1
    assert seen >= 12



@pytest.mark.parametrize("model", ["lr", "forest"])
def test_a_box_of_one_shift_keeps_only_the_types_it_is_valid_for(model):
    """The input box's validity test is exact on a single shift: out of the domain, or a
    decrease of an increase-only feature, the type is dead (no value beyond it is let in)."""
    from groupcf.global_actions.actions import Action
    from groupcf.global_actions.boxes import _Box

    checked = 0
    for _, _, (pipe, S, _, _, _) in tiny_cases(range(12), (model,)):
        aspace = ActionSpace(resolve_model(pipe), S)
        boxes = ActionBoxes.of(aspace)
        M = len(boxes.feat)
        for j, l in enumerate(boxes.feat):
            if aspace.feats[l].encoding != "continuous":
                continue
            for i, v in enumerate(boxes.V[j]):
                keep, lo, hi = np.ones(M, dtype=bool), np.zeros(M, dtype=np.int64), np.zeros(M, dtype=np.int64)
                keep[j], lo[j], hi[j] = False, i, i + 1
                box = _Box((), keep, lo, hi, np.arange(aspace.n_types))
                boxes._bound([box], aspace.m)
                _, valid = aspace.apply(Action(((l, float(v)),)))
                assert valid[box.alive].all(), (l, v)
                checked += int((~valid).any())
    assert checked > 0       # some shift is invalid for some type: the test bites
