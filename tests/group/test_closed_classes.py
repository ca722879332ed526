"""Maximal classes found from the types, and their set cover as a lower bound (group/closed_classes.py)."""
from __future__ import annotations

import numpy as np
import pytest

import groupcf as gcf
from groupcf.group.closed_classes import close_gap_by_maximal_classes, maximal_classes
from groupcf.group.enumeration import enumerate_classes
from groupcf.group.heuristics import maximal_change_sets
from groupcf.utils import Deadline
from tests.group.test_enumeration import problem_of
from tests.params import sweep
from tests.reference import group as group_ref


def all_cases(n: int) -> tuple:
    """The first ``n`` random tiny cases, increase-only features and immutable ones included
    (built when a test first asks, not at collection: 35 s of fits for 40)."""
    out = []
    for seed in range(5000):
        case = group_ref.cached_case(seed)
        if case is not None:
            out.append(case)
            if len(out) == n:
                return tuple(out)
    raise AssertionError("not enough random cases")


def maximal_of(covers: np.ndarray) -> set[bytes]:
    """The covers contained in no other (brute force)."""
    out = set()
    for c in covers:
        if not any((c <= d).all() and (c != d).any() for d in covers):
            out.add(c.tobytes())
    return out


@pytest.mark.parametrize("i", sweep(range(40), fast=range(12)))
def test_maximal_classes_are_the_maximal_classes_of_every_maximal_change_set(i):
    """The same maximal covers as listing every change set of size min(Tmax, #mutable)
    (enumeration.py), and each cover is the class of the change sets it names."""
    p = problem_of(*all_cases(i + 1)[i])
    sets, _ = maximal_change_sets(p, 10**6)
    expected = maximal_of(enumerate_classes(p, sets).covers)
    found = maximal_classes(p)
    assert found is not None
    assert {c.tobytes() for c in found.covers} == expected and len(found) == len(expected)
    mutable = np.array([not f.immutable for f in p.space])
    need = p.n_features - min(p.Tmax, int(mutable.sum()))
    imm = sum(1 << l for l in np.flatnonzero(~mutable).tolist())
    for r in range(len(found)):
        for F in found.change_sets(r, need, imm):
            assert F in sets
            outside = np.ones(p.n_features, dtype=bool)
            outside[sorted(F)] = False
            s = found.seeds[r]
            assert np.array_equal(np.all(p.codes[:, outside] == p.codes[s, outside], axis=1), found.covers[r])


@pytest.mark.slow
def test_the_set_cover_over_maximal_classes_is_a_bound_and_its_verified_cover_optimal():
    """Never above the brute-force optimum; a cover it returns is accepted, covers every
    type within Tmax and has the brute-force size."""
    done = returned = 0
    for pipe, S, Tmax in all_cases(80):
        best, _, explainable = group_ref.brute_force_group(pipe[0], group_ref.real_logit(pipe), S, Tmax)
        if not explainable.all():
            continue
        p = problem_of(pipe, S, Tmax)
        res = close_gap_by_maximal_classes(p, p.completions("highs"), np.ones(p.n_types, dtype=bool), "highs",
                                           Deadline(None))
        assert res is not None and 1 <= res.lower <= best
        if res.columns is not None:
            assert len(res.columns) == res.lower == best
            assert np.any([c.cover for c in res.columns], axis=0).all()
            assert all(p.is_positive(c.v) and len(c.F) <= Tmax for c in res.columns)
            returned += 1
        done += 1
    assert done >= 40 and returned >= 20


def test_too_many_intents_gives_up():
    pipe, S, Tmax = all_cases(1)[0]
    p = problem_of(pipe, S, Tmax)
    assert maximal_classes(p, limit=0) is None


def test_explain_group_closes_the_triangles_gap_with_them(triangles):
    """LP 3, optimum 4 (test_branching): with the change sets over the enumeration limit
    (max_enumerated_sets=1) the set cover over the maximal classes certifies 4 at once, no
    branch and price (components=False: the bound per triangle would certify before)."""
    S, models = triangles
    res = gcf.explain_group(S, models["nn"], Tmax=2, progress=False, max_change_sets=0, max_enumerated_sets=1,
                            components=False)
    res.validate()
    assert res.stats["lp_bound"] == pytest.approx(3.0)
    assert res.stats["maximal_classes"] > 0 and res.stats["maximal_classes_bound"] == 4
    assert res.stats["gap_closed_by_enumeration"] and res.stats.get("bp_nodes", 0) == 0
    assert res.n_explanations == 4 and res.lower_bound == 4 and res.is_optimal


def _fewest_cover(C):
    """Brute force: the fewest rows of ``C`` (columns × types) covering every type."""
    import itertools
    for r in range(1, len(C) + 1):
        for rows in itertools.combinations(range(len(C)), r):
            if C[list(rows)].any(axis=0).all():
                return r
    raise AssertionError("no cover")


def _triangles(n: int) -> np.ndarray:
    """``n`` disjoint triangles of types, a column per edge: LP ``1.5 n``, optimum ``2 n``."""
    C = np.zeros((3 * n, 3 * n), dtype=bool)
    for t in range(n):
        for j, (a, b) in enumerate(((0, 1), (1, 2), (0, 2))):
            C[3 * t + j, [3 * t + a, 3 * t + b]] = True
    return C


@pytest.mark.parametrize("seed", [*range(12), "triangles"])
def test_cover_at_lp_bound_is_a_cover_of_the_optimum_size(seed, monkeypatch):
    """``_cover_at_lp_bound``: a cover it returns has exactly ``ceil(LP)`` columns and is
    optimal (brute force); it returns none where ``ceil(LP)`` is below the optimum (three
    triangles: 5 < 6), and, with every column allowed, one wherever the LP bound is tight."""
    from groupcf.group import closed_classes as cc
    from groupcf.utils import Deadline
    if seed == "triangles":
        C = _triangles(3)
    else:
        rng = np.random.default_rng(seed)
        C = rng.random((9, 7)) < 0.35
        C[rng.integers(9, size=7), np.arange(7)] = True          # every type coverable
    from scipy.optimize import linprog
    opt = _fewest_cover(C)
    lp = linprog(np.ones(len(C)), A_ub=-C.T.astype(float), b_ub=-np.ones(C.shape[1]), bounds=(0, None))
    tight = int(np.ceil(lp.fun - 1e-9)) == opt
    monkeypatch.setattr(cc, "NEAR_LP_FRACTION", 1.0)       # the search itself, whatever the LP's fraction
    for near in (0.35, 10.0):
        monkeypatch.setattr(cc, "NEAR_LP", near)
        got = cc._cover_at_lp_bound(C, "highs", Deadline(30.0))
        if got is None:             # none: the LP bound is below the optimum, or the filter dropped it
            assert near < 10.0 or not tight
            continue
        b, rows = got
        assert tight and b == opt
        assert C[rows].any(axis=0).all() and len(rows) == b


def test_the_full_set_cover_gets_all_the_time_left(monkeypatch):
    """The time split (module docstring, *Time*): the cover at the LP bound at most
    ``NEAR_LP_SHARE`` of the time left, then the full set cover everything that remains —
    not a share of it (was 60 %), so branch and price only gets what the set cover leaves."""
    from groupcf.group import closed_classes as cc
    clock = [0.0]
    deadline = Deadline(100.0, clock=lambda: clock[0])
    got: dict[str, float] = {}

    def near(C, solver, d, lp=None):
        got["near"] = d.left()
        clock[0] += 20.0                  # the heuristic spends 20 s and finds no cover
        return None

    def full(C, solver, d, start=None):
        got["full"] = d.left()
        clock[0] += d.left()              # runs to its limit, nothing proved
        return 1, None

    monkeypatch.setattr(cc, "_cover_at_lp_bound", near)
    monkeypatch.setattr(cc, "set_cover_by_components", full)
    p = problem_of(*all_cases(1)[0])
    res = cc.close_gap_by_maximal_classes(p, p.completions("highs"), np.ones(p.n_types, dtype=bool), "highs", deadline)
    assert got["full"] == pytest.approx(80.0)             # 100 - 20: all that is left (40 with a 60 % share)
    assert got["near"] == pytest.approx(cc.NEAR_LP_SHARE * 100.0, abs=0.5)
    assert deadline.passed and res is not None and res.columns is None and res.lower == 1


def test_branch_and_price_gets_what_the_set_cover_leaves(triangles, monkeypatch):
    """When the set cover over the maximal classes returns early with a bound below the
    incumbent and no verified cover (a relaxation gap), branch and price still runs on the
    time left and certifies (triangles: LP 3, optimum 4; the stage made to stop at 3)."""
    from groupcf.group import closed_classes as cc
    monkeypatch.setattr(cc, "_cover_at_lp_bound", lambda C, solver, d, lp=None: None)
    monkeypatch.setattr(cc, "set_cover_by_components", lambda C, solver, d, start=None: (3, None))
    S, models = triangles
    res = gcf.explain_group(S, models["nn"], Tmax=2, progress=False, max_change_sets=0, max_enumerated_sets=1,
                            components=False, time_limit=60)
    res.validate()
    assert res.stats["maximal_classes_bound"] == 3 and not res.stats["gap_closed_by_enumeration"]
    assert res.stats["bp_nodes"] >= 1
    assert res.n_explanations == 4 and res.lower_bound == 4 and res.is_optimal


@pytest.mark.parametrize("n", [1, 3])
def test_no_cover_at_lp_bound_is_sought_when_the_lp_fraction_is_high(n, monkeypatch):
    """``NEAR_LP_FRACTION``: triangles have LP ``1.5 n`` (fraction 0.5): only the LP is
    solved, no search; with the gate off the search runs: it finds the 2-cover of one
    triangle (the gate is a heuristic: it can skip a cover that exists) and none for three
    (optimum 6 > 5)."""
    from groupcf.group import closed_classes as cc
    calls: list[bool] = []
    real = cc.solve_set_cover

    def counted(C, solver, **kw):
        calls.append(kw.get("integer", True))
        return real(C, solver, **kw)

    monkeypatch.setattr(cc, "solve_set_cover", counted)
    C = _triangles(n)
    assert cc._cover_at_lp_bound(C, "highs", Deadline(30.0)) is None
    assert calls == [False]                                 # the LP only
    calls.clear()
    monkeypatch.setattr(cc, "NEAR_LP", 10.0)
    monkeypatch.setattr(cc, "NEAR_LP_FRACTION", 1.0)
    got = cc._cover_at_lp_bound(C, "highs", Deadline(30.0))
    assert calls == [False, True]                           # the LP, then the search for a cover of ceil(LP)
    assert (got is None) == (n == 3)
    if got is not None:
        assert got[0] == 2 and len(got[1]) == 2 and C[got[1]].any(axis=0).all()


@pytest.mark.parametrize("seed", range(12))
def test_within_reach_keeps_every_cover_smaller_than_the_cutoff(seed):
    """``_within_reach`` (LP reduced-cost fixing): every column of every cover with fewer
    columns than the cutoff is kept (brute force over all covers), so the set cover over the
    kept columns and a known cover of the cutoff's size has the same optimum."""
    import itertools

    from groupcf.group import closed_classes as cc
    rng = np.random.default_rng(seed)
    C = rng.random((10, 7)) < 0.3
    C[rng.integers(10, size=7), np.arange(7)] = True
    opt = _fewest_cover(C)
    for cutoff in (opt + 1, opt + 2):
        keep = cc._within_reach(C, "highs", Deadline(30.0), cutoff)
        assert keep is not None
        for r in range(1, cutoff):
            for rows in itertools.combinations(range(len(C)), r):
                if C[list(rows)].any(axis=0).all():
                    assert keep[list(rows)].all(), (cutoff, rows)
    keep = cc._within_reach(_triangles(2), "highs", Deadline(30.0), 3)   # LP 3 > 2: no cover of 2 or fewer
    assert keep is not None and not keep.any()
    keep = cc._within_reach(_triangles(2), "highs", Deadline(30.0), 4)   # every edge has reduced cost 0
    assert keep is not None and keep.all()
