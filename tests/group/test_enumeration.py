"""Enumeration of classes and the model-free relaxation that closes gaps (group/enumeration.py)."""
from __future__ import annotations

import numpy as np
import pytest

import groupcf as gcf
from groupcf.group.enumeration import close_gap_by_enumeration, enumerate_classes
from groupcf.group.heuristics import maximal_change_sets
from groupcf.group.problem import GroupProblem
from groupcf.models import resolve_model
from groupcf.utils import Deadline
from tests.params import sweep
from tests.reference import group as group_ref


def cases(n: int) -> tuple:
    """Random tiny cases without increase-only features (classes are covered whole). Built
    when a test first asks (once per process), not at collection: fitting them takes 20 s,
    which every xdist worker would pay even for deselected tests."""
    out = []
    for seed in range(5000):
        case = group_ref.cached_case(seed)
        if case is None or any(f.increase_only and not f.immutable for f in case[0][0]):
            continue
        out.append(case)
        if len(out) == n:
            return tuple(out)
    raise AssertionError("not enough random cases")


def problem_of(pipe, S, Tmax):
    return GroupProblem(S, resolve_model(pipe), Tmax)


def outside_of(p, F) -> np.ndarray:
    outside = np.ones(p.n_features, dtype=bool)
    outside[sorted(F)] = False
    return outside


def completions_of(p):
    return p.completions("highs")


def relaxed_cases(n: int, checker=completions_of):
    """``(problem, brute-force optimum, Tmax, close_gap_by_enumeration result)`` for the
    cases among the first ``n`` whose every type is explainable."""
    for pipe, S, Tmax in cases(n):
        best, _, explainable = group_ref.brute_force_group(pipe[0], group_ref.real_logit(pipe), S, Tmax)
        if not explainable.all():
            continue
        p = problem_of(pipe, S, Tmax)
        sets, _ = maximal_change_sets(p, 10**6)
        res = close_gap_by_enumeration(p, enumerate_classes(p, sets), checker(p),
                                       np.ones(p.n_types, dtype=bool), "highs", Deadline(None))
        yield p, best, Tmax, res


@pytest.mark.parametrize("i", sweep(range(40), fast=range(12)))
def test_classes_are_every_class_of_every_maximal_change_set(i):
    case = cases(i + 1)[i]
    p = problem_of(*case)
    sets, _ = maximal_change_sets(p, 10**6)
    classes = enumerate_classes(p, sets)
    expected = set()
    for F in sets:
        outside = outside_of(p, F)
        for i in range(p.n_types):
            expected.add(np.all(p.codes[:, outside] == p.codes[i, outside], axis=1).tobytes())
    assert {c.tobytes() for c in classes.covers} == expected
    assert len(classes.covers) == len(expected)            # distinct
    for r in range(len(classes)):
        for F, seed in classes.pairs(r):
            outside = outside_of(p, F)
            assert np.array_equal(np.all(p.codes[:, outside] == p.codes[seed, outside], axis=1),
                                  classes.covers[r])


def test_outside_keys_are_equality_outside_F():
    rng = np.random.default_rng(1)
    for pipe, S, Tmax in cases(20):
        p = problem_of(pipe, S, Tmax)
        for _ in range(5):
            F = [l for l in range(p.n_features) if rng.random() < 0.4]
            outside = outside_of(p, F)
            keys = p.outside_keys(F)
            same = np.all(p.codes[:, None, outside] == p.codes[None, :, outside], axis=2)
            assert np.array_equal(keys[:, None] == keys[None, :], same)


@pytest.mark.slow
def test_relaxation_with_lazy_checks_finds_the_brute_force_optimum():
    """The set cover over every class, verified lazily, is the exact optimum — including
    cases where the relaxation first picks a class no accepted point covers."""
    removed = done = 0
    for p, best, Tmax, res in relaxed_cases(60):
        assert res.columns is not None and res.unknown == 0
        assert res.lower == len(res.columns) == best
        covered = np.zeros(p.n_types, dtype=bool)
        for col in res.columns:
            assert p.is_positive(col.v) and len(col.F) <= Tmax
            covered |= col.cover
        assert covered.all()
        removed += res.removed
        done += 1
    assert done >= 30
    assert removed > 0, "no case exercised the removal of an infeasible class"


class Undecided:
    """A checker that can never decide: the relaxation's bound must still be valid."""

    def __init__(self, problem):
        pass

    def check(self, z, F, k, time_limit=None, prove=True):
        return None, None, frozenset()


def test_undecided_checks_leave_a_valid_bound_and_no_claim():
    for _, best, _, res in relaxed_cases(20, checker=Undecided):
        assert res.columns is None and res.unknown > 0
        assert 1 <= res.lower <= best


def test_enumeration_closes_the_triangles_gap_without_branching(triangles):  # noqa: F811
    """LP 3, optimum 4 (test_branching): for the network the relaxation over all classes
    certifies 4 at once; with enumeration off, branch-and-price has to (components=False:
    the bound per triangle would certify before either)."""
    S, models = triangles
    res = gcf.explain_group(S, models["nn"], Tmax=2, progress=False, max_change_sets=0, components=False)
    res.validate()
    assert res.stats["lp_bound"] == pytest.approx(3.0)
    assert res.stats["gap_closed_by_enumeration"] and res.stats.get("bp_nodes", 0) == 0
    assert res.n_explanations == 4 and res.lower_bound == 4 and res.is_optimal


def test_a_solver_refusing_the_relaxation_falls_back_to_branch_and_price(triangles, monkeypatch):  # noqa: F811
    """E.g. a size-limited Gurobi licence refuses the set cover over all classes: a
    GroupCFWarning, and branch-and-price certifies instead."""
    import groupcf.group.colgen as colgen
    from groupcf.exceptions import SolverLicenseError

    def refuse(*args, **kwargs):
        raise SolverLicenseError("model too large for the licence")

    monkeypatch.setattr(colgen, "close_gap_by_enumeration", refuse)
    S, models = triangles
    with pytest.warns(gcf.exceptions.GroupCFWarning, match="could not be solved"):
        res = gcf.explain_group(S, models["nn"], Tmax=2, progress=False, max_change_sets=0, components=False)
    assert res.stats["bp_nodes"] >= 2 and "gap_closed_by_enumeration" not in res.stats
    assert res.n_explanations == 4 and res.is_optimal
    res.validate()


@pytest.mark.slow
def test_relaxation_with_increase_only_features_is_a_bound():
    """With increase-only features the class relaxation is only a bound (no class is ever
    removed): never above the brute-force optimum, and an optimum it returns is one —
    every type covered by accepted points, as many as brute force. With an incumbent
    (each type's own initial column) the same holds."""
    from groupcf.group.common import initial_columns

    done = returned = 0
    for seed in range(5000):
        case = group_ref.random_case(seed)
        if case is None or not any(f.increase_only and not f.immutable for f in case[0][0]):
            continue
        pipe, S, Tmax = case
        best, _, explainable = group_ref.brute_force_group(pipe[0], group_ref.real_logit(pipe), S, Tmax)
        if not explainable.all():
            continue
        p = problem_of(pipe, S, Tmax)
        sets, _ = maximal_change_sets(p, 10**6)
        classes = enumerate_classes(p, sets)
        own, _ = initial_columns(p, "highs", Deadline(None), completions=completions_of(p), prove=False)
        for incumbent in ([], own):
            res = close_gap_by_enumeration(p, classes, completions_of(p), np.ones(p.n_types, dtype=bool),
                                           "highs", Deadline(None), incumbent)
            assert res.lower <= best and res.removed == 0
            if res.columns is not None:
                assert len(res.columns) == best
                assert np.any([c.cover for c in res.columns], axis=0).all()
                assert all(p.is_positive(c.v) for c in res.columns)
                returned += 1
        done += 1
        if done == 40:
            break
    assert done == 40 and returned >= 20


def test_classes_of_matches_unique():
    """``classes_of`` = ``np.unique`` (first index, inverse) plus the members' id sums."""
    from groupcf.group.enumeration import classes_of

    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 300):
        keys = rng.integers(0, max(1, n // 3), size=n).astype(np.uint64) * np.uint64(2**40)
        member = rng.integers(1, 2**63, size=n, dtype=np.uint64)
        first, cls, ident = classes_of(keys, member)
        _, f2, c2 = np.unique(keys, return_index=True, return_inverse=True)
        assert np.array_equal(first, f2) and np.array_equal(cls, c2.ravel())
        expect = np.zeros(len(f2), dtype=np.uint64)
        np.add.at(expect, c2.ravel(), member)
        assert np.array_equal(ident, expect)
