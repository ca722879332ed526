"""The enumeration's vectorised evaluation and filter (groupcf/global_actions/enum_grid.py,
enum_filter.py): the covers of every action of a feature set equal one-at-a-time
``cover_many`` (trees: one row per split cell), the filter keeps exactly the pairwise
non-dominated columns and maximal covers, the curve equals brute force at Tmax 3 and None,
and the level declines when its time estimate passes its share of the time left."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import groupcf as gcf
from groupcf.colgen import ColumnPool
from groupcf.global_actions.actions import Action, ActionSpace
from groupcf.global_actions.enum_filter import maximal_covers, non_dominated
from groupcf.global_actions.enum_grid import FeatureGrid
from groupcf.global_actions.enumerate import Declined, enumerate_actions, enumeration_for, feature_values
from groupcf.models import resolve_model
from groupcf.utils import Deadline
from tests.global_actions.test_enumerate import _continuous_case
from tests.params import sweep
from tests.reference.global_actions import best_coverage, brute_force, tiny_case, tiny_cases


def _grid_matches_cover_many(aspace) -> int:
    values = {l: feature_values(aspace, l)[0] for l in aspace.mutable}
    grid = FeatureGrid(aspace, values)
    seen = 0
    for r in range(1, len(aspace.mutable) + 1):
        for F in itertools.combinations(aspace.mutable, r):
            for J, C, scored in grid.covers(F, batch_rows=50):      # small chunks: several per set
                acts = [Action(tuple((l, float(values[l][j])) for l, j in zip(F, row))) for row in J]
                assert (aspace.cover_many(acts) == C).all(), F
                assert scored <= C.size
                seen += len(J)
    return seen


@pytest.mark.parametrize("model", sweep(["lr", "mlp", "forest"], fast=("lr", "forest")))
def test_grid_covers_equal_cover_many(model):
    seen = 0
    for _, _, (pipe, S, *_) in tiny_cases(range(6), [model]):
        for numeric in ("shift", "set"):
            seen += _grid_matches_cover_many(ActionSpace(resolve_model(pipe), S, None, numeric))
    assert seen > 100


@pytest.mark.parametrize("Tmax", [1, 2])
def test_grid_covers_equal_cover_many_on_forest_split_cells(Tmax):
    pipe, S = _continuous_case("forest")
    aspace = ActionSpace(resolve_model(pipe), S, Tmax)
    assert _grid_matches_cover_many(aspace) > 100


def _pairwise(C, D, tol=1e-12):
    """Reference: indices no other row dominates (of identical ones the first), and maximal covers."""
    m = len(C)
    dom = np.zeros(m, bool)
    for a in range(m):
        for b in range(m):
            if a == b or not (C[b] >= C[a]).all():
                continue
            le = (D[b][C[a]] <= D[a][C[a]] + tol).all()
            same = (C[b] == C[a]).all() and np.allclose(D[b][C[a]], D[a][C[a]], atol=tol, rtol=0)
            if le and (not same or b < a):
                dom[a] = True
    keep = np.flatnonzero(~dom)
    Ck = C[keep]
    maxi = np.array([not any((Ck[j] >= Ck[i]).all() and (Ck[j].sum() > Ck[i].sum() or j < i)
                             for j in range(len(Ck)) if j != i) for i in range(len(Ck))], dtype=bool)
    return keep, maxi


def test_filter_equals_pairwise_dominance():
    rng = np.random.default_rng(0)
    for trial in range(60):
        m, n = int(rng.integers(1, 40)), int(rng.integers(1, 7))
        C = rng.random((m, n)) < rng.uniform(0.2, 0.9)
        if trial % 2:      # costs equal for every type (shifts), with ties
            D = np.repeat(rng.integers(0, 4, (m, 1)).astype(float), n, axis=1)
        else:              # costs by type (categories set), with ties
            D = rng.integers(0, 3, (m, n)).astype(float)
        C[rng.integers(0, m, m // 3)] = C[rng.integers(0, m, m // 3)]      # repeated covers
        keep, maxi = _pairwise(C, D)
        got = non_dominated(C, D, block=int(rng.integers(1, 9)))
        assert list(got) == list(keep), trial
        assert (maximal_covers(C[got], block=int(rng.integers(1, 9))) == maxi).all(), trial


@pytest.mark.parametrize("model", sweep(["lr", "mlp", "forest"], fast="forest"))
def test_curve_equals_brute_force_at_tmax_3_and_none(model):
    seen = 0
    for seed, _, (pipe, S, X, imm, inc) in tiny_cases(range(5), [model]):
        for Tmax in (3, None):
            _, C, _ = brute_force(pipe, S, X, imm, inc, Tmax)
            res = gcf.explain_global(S, pipe, Tmax=Tmax, k=3, progress=False)
            assert res.stats["enumeration"]["in_pool"]
            for _, p in res.curve.iterrows():
                want = best_coverage(C, int(p["k"]))
                assert p["n_covered"] == want == p["upper_bound"] and p["status"] == "optimal", (seed, Tmax)
            seen += 1
    assert seen >= 6


def test_declines_when_the_time_estimate_passes_its_share(monkeypatch):
    import groupcf.global_actions.enumerate as enumerate_mod

    pipe, S, *_ = tiny_case(0, "lr")
    aspace = ActionSpace(resolve_model(pipe), S, 2)
    monkeypatch.setattr(enumerate_mod, "MIN_ESTIMATE_S", 0.0)      # trust the rate from the second chunk
    why = enumerate_actions(aspace, 10**9, Deadline(60.0), share=1e-9)
    assert isinstance(why, Declined) and "s left" in why
    ok = enumerate_actions(aspace, 10**9, Deadline(60.0))
    assert not isinstance(ok, str)
    assert ok.scored <= ok.candidates * aspace.n_types


def test_what_was_enumerated_before_declining_seeds_the_pool(monkeypatch):
    """The estimate stops the level after its second chunk: the columns found so far enter the
    pool, each one a real action whose cover is the real model's (``aspace.covers``)."""
    import groupcf.global_actions.enumerate as enumerate_mod

    pipe, S, *_ = tiny_case(0, "lr")
    aspace = ActionSpace(resolve_model(pipe), S, 2)
    monkeypatch.setattr(enumerate_mod, "MIN_ESTIMATE_S", 0.0)
    why = enumerate_actions(aspace, 10**9, Deadline(60.0), batch_rows=5, share=1e-9)
    assert isinstance(why, Declined) and why.partial is not None
    full = enumerate_actions(aspace, 10**9)
    assert not isinstance(full, Declined) and 0 < why.partial.candidates < full.candidates
    pool = ColumnPool(aspace.n_types)
    assert enumeration_for(aspace, 10**9, Deadline(60.0), pool) is not None      # control: no decline
    pool = ColumnPool(aspace.n_types)
    monkeypatch.setattr(enumerate_mod, "enumerate_actions", lambda *a, **k: why)
    assert enumeration_for(aspace, 10**9, Deadline(60.0), pool) is None
    cols = pool.columns
    assert len(cols) == int(why.partial.maximal.sum()) > 0
    for c in cols:
        assert c.source == "enumeration (partial)"
        assert np.array_equal(c.cover, aspace.cover(c.payload))
