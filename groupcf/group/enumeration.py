r"""Every class of every maximal change set: complete columns and a model-free relaxation.

For a change set :math:`F` the types one counterfactual can cover are a subset of a
*class* — types equal outside :math:`F` — and, without increase-only
features, a feasible class is covered whole. Coverage is monotone in :math:`F`, so the
change sets of size :math:`\min(T_{max}, \#\text{mutable})` dominate. When there are few
enough of them, :func:`enumerate_classes` lists every distinct class cover, with every
(change set, member) pair that produces it.

**Relaxation.** Every column covers a subset of some class, so the set cover over all
classes, *ignoring the model*, is a relaxation of the group problem (paper eqs. 15–18
with :math:`K` replaced by a superset of its maximal columns): its optimum is a lower
bound on :math:`y^*`. If its optimal cover uses only classes that an accepted point
covers, that cover is optimal for the group problem. :func:`close_gap_by_enumeration`
solves the relaxation and verifies only the classes it chooses (a completion check on
:math:`F`: greedy in numpy, a small MIP when the greedy search fails on a network);
a class proven infeasible under every change set that produces it is removed and the
relaxation re-solved. The bound stays valid throughout, because only proven-infeasible
classes are ever removed. An additive model (logistic regression, linear classifiers)
needs no verification: :mod:`~groupcf.group.complete` lists its feasible columns in
closed form, so one set cover is the exact optimum.

Measured on German, ReLU net 20×20, :math:`|S| = 100`, :math:`T_{max} = 15` (15,504
change sets, 40,479 distinct classes — all feasible): column generation stops at the LP
bound 5.70 with an integer master of 7, and 703 branch-and-price nodes in 300 s did not
close the gap; enumerating the classes takes 0.65 s, HiGHS solves the relaxation over
them to 7 in 5.7 s, and its seven classes pass the greedy check: :math:`y^* = 7` is
certified (11 s for the whole run, BENCHMARKS.md).

Classes are found by hashing (:meth:`~groupcf.group.problem.GroupProblem.outside_keys`),
and a class's identity is the (wrapping) sum of random 64-bit values of its members —
collisions have probability about ``n² / 2⁶⁴``; every verified column's cover is
recomputed exactly from the codes and must equal its class.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..exceptions import SolverError
from .formulations.master import set_cover_by_components
from .problem import Column, GroupProblem

log = logging.getLogger(__name__)


@dataclass
class Classes:
    """Distinct class covers over a list of change sets.

    ``covers[r]`` (bool over types) is produced by the pairs ``(sets[pair_F[j]],
    pair_seed[j])`` for ``j`` in ``pairs(r)``; the first pair of each cover is its
    representative (:meth:`representative`).
    """

    sets: list[frozenset]
    covers: np.ndarray          # (m, n_types) bool
    pair_ptr: np.ndarray        # (m + 1,) CSR pointers into pair_F / pair_seed
    pair_F: np.ndarray          # change-set index of each pair
    pair_seed: np.ndarray       # a member type of each pair

    def __len__(self) -> int:
        return len(self.covers)

    def __repr__(self) -> str:
        return (f"Classes({len(self)} covers from {len(self.pair_F)} (change set, class) pairs "
                f"over {len(self.sets)} change sets)")

    def pairs(self, r: int) -> list[tuple[frozenset, int]]:
        lo, hi = self.pair_ptr[r], self.pair_ptr[r + 1]
        return [(self.sets[f], int(s)) for f, s in zip(self.pair_F[lo:hi], self.pair_seed[lo:hi])]

    def representative(self, r: int) -> tuple[frozenset, int]:
        """The first ``(change set, member)`` pair of cover ``r``."""
        j = self.pair_ptr[r]
        return self.sets[self.pair_F[j]], int(self.pair_seed[j])


def classes_of(keys: np.ndarray, member: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The classes of equal ``keys`` (one per type): ``(first member of each, class of
    each type, identity of each)``, the identity being the wrapping sum of the members'
    ``member`` ids. Classes are numbered by key order. (``np.unique`` with indices sorts
    stably, 4× slower on these sizes; this is called once per change set.)"""
    order = np.argsort(keys)
    sk = keys[order]
    starts = np.r_[0, np.flatnonzero(sk[1:] != sk[:-1]) + 1]
    gid = np.zeros(len(keys), dtype=np.int64)
    gid[starts[1:]] = 1
    cls = np.empty(len(keys), dtype=np.int64)
    cls[order] = np.cumsum(gid)
    first = np.minimum.reduceat(order, starts)
    ident = np.add.reduceat(member[order], starts, dtype=np.uint64)
    return first, cls, ident


def enumerate_classes(problem: GroupProblem, change_sets, deadline=None) -> Classes | None:
    """Every distinct class of types equal outside some ``F`` in ``change_sets`` (the
    model-free relaxation); ``None`` when the deadline passes."""
    n = problem.n_types
    member = np.random.default_rng(54321).integers(1, 2**63, size=n, dtype=np.uint64)
    idents, p_F, p_seed = [], [], []
    for j, F in enumerate(change_sets):
        if deadline is not None and j % 1024 == 0 and deadline.passed:
            return None
        first, _, ident = classes_of(problem.outside_keys(sorted(F)), member)
        idents.append(ident)
        p_F.append(np.full(len(first), j, dtype=np.int32))
        p_seed.append(first.astype(np.int32))
    sets = list(change_sets)
    if not idents:
        empty = np.zeros(0, dtype=np.int32)
        return Classes(sets, np.zeros((0, n), dtype=bool), np.zeros(1, dtype=np.int64), empty, empty)
    ident, pF, pS = np.concatenate(idents), np.concatenate(p_F), np.concatenate(p_seed)
    # distinct covers numbered in order of first appearance; pairs grouped by cover
    _, first_pos, inverse = np.unique(ident, return_index=True, return_inverse=True)
    rank = np.empty(len(first_pos), dtype=np.int64)
    rank[np.argsort(first_pos, kind="stable")] = np.arange(len(first_pos))
    rows = rank[inverse.ravel()]
    order = np.argsort(rows, kind="stable")          # first pair of each cover first
    ptr = np.searchsorted(rows[order], np.arange(len(first_pos) + 1))
    pF, pS = pF[order], pS[order]
    return Classes(sets, class_covers(problem, sets, pF[ptr[:-1]], pS[ptr[:-1]]), ptr, pF, pS)


def class_covers(problem: GroupProblem, sets, set_of: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Bool ``(len(seed), types)``: row ``r`` is the class of type ``seed[r]`` under the
    change set ``sets[set_of[r]]`` (types equal to it outside that set); the keys are
    computed once per change set."""
    covers = np.zeros((len(seed), problem.n_types), dtype=bool)
    by_F = np.argsort(set_of, kind="stable")
    for group in np.split(by_F, np.flatnonzero(np.diff(set_of[by_F])) + 1):
        if len(group):
            key = problem.outside_keys(sorted(sets[int(set_of[group[0]])]))
            covers[group] = key[None, :] == key[seed[group]][:, None]
    return covers


@dataclass
class GapResult:
    """Outcome of closing a gap by enumeration: a lower bound and, when verified, an optimal cover."""

    lower: int                       # proven lower bound on the number of explanations
    columns: list[Column] | None     # an optimal cover when the relaxation was verified
    rounds: int                      # relaxations solved
    removed: int                     # classes proven infeasible under every change set
    unknown: int                     # classes whose check ran out of time


def close_gap_by_enumeration(problem: GroupProblem, classes: Classes, checker, active: np.ndarray,
                             solver, deadline, incumbent: Sequence[Column] = ()) -> GapResult:
    """Solve the set cover over ``classes`` (a relaxation unless every class is known to be
    feasible) and verify the classes it chooses; see the module docstring.

    ``checker``: the completion service
    (:class:`~groupcf.formulations.completion.Completions`); ``active``:
    the types to explain; ``incumbent``: columns of a cover found before (they enter as
    verified columns and as the MIP start; each lies inside a class, so the relaxation is
    unchanged). Each set cover is solved per connected component
    (:func:`~groupcf.group.formulations.master.set_cover_by_components`). Returns the
    bound and, when the chosen classes all have accepted points, the optimal columns.

    With increase-only features a class is covered whole only by a point at or above its
    members' largest codes, and a class that is not may still have coverable subsets: the
    chosen classes are checked with those lower codes (closed form or enumeration, never
    a MIP) and no class is ever removed — the bound stands, and the optimum is returned
    only when every chosen class passes.
    """
    inc = np.array([f.increase_only and not f.immutable for f in problem.space])
    extra = [c for c in incumbent if (c.cover & active).any()]
    covers = np.vstack([classes.covers] + [c.cover[None, :] for c in extra]) if extra else classes.covers
    C = covers[:, active]
    n_cls = len(classes.covers)
    alive = np.asarray(C.any(axis=1))
    verified: dict[int, Column] = {n_cls + t: c for t, c in enumerate(extra)}
    lower, rounds, removed, unknown = 0, 0, 0, set()
    while not deadline.passed:
        rounds += 1
        idx = np.flatnonzero(alive)
        start = (idx >= n_cls).astype(float) if extra else None
        bound, chosen = set_cover_by_components(C[idx], solver, deadline, start)
        lower = max(lower, bound)
        if chosen is None:
            break
        chosen = idx[chosen]
        progress = False
        for r in chosen:
            if r in verified or r in unknown:
                continue
            if inc.any():
                answer, col = _verify_with_lows(problem, classes, checker, r, inc)
            else:
                answer, col = _verify(problem, classes, checker, r, deadline)
            if answer is True:
                assert col is not None   # a verified class comes with its column
                verified[r] = col
            elif answer is False:
                alive[r] = False
                removed += 1
                progress = True
            else:
                unknown.add(r)
        if all(r in verified for r in chosen):
            return GapResult(lower, [verified[r] for r in chosen], rounds, removed, len(unknown))
        if not progress:
            break        # an unknown class blocks: the bound stands, no verified optimum
    return GapResult(lower, None, rounds, removed, len(unknown))


def _verify_with_lows(problem, classes, checker, r, inc) -> tuple[bool | None, Column | None]:
    """Class ``r`` with increase-only features: an accepted point on one of its change sets
    at or above the members' largest codes (``Completions.best`` without a MIP), else
    ``None`` — never ``False``, since a subset of the class may still be coverable."""
    members = np.flatnonzero(classes.covers[r])
    low = np.where(inc, problem.codes[members].max(axis=0), 0.0)
    for F, seed in classes.pairs(r):
        score, v = checker.best(problem.Z[seed], F, low, allow_mip=False)
        if v is not None and score >= problem.score_lo:
            return True, _column(problem, classes, r, v, F)
    return None, None


def _verify(problem, classes, checker, r, deadline) -> tuple[bool | None, Column | None]:
    """Does an accepted point cover class ``r`` under one of the change sets producing it?
    Greedy checks on every pair first (cheap), then the checker's MIP pair by pair."""
    pairs = classes.pairs(r)
    for F, seed in pairs:
        answer, v, _ = checker.check(problem.Z[seed], F, 0, prove=False)
        if answer:
            return True, _column(problem, classes, r, v, F)
    all_infeasible = True
    for F, seed in pairs:
        if deadline.passed:
            return None, None
        t = time.perf_counter()
        answer, v, _ = checker.check(problem.Z[seed], F, 0, time_limit=deadline.left())
        log.debug("class %d, F=%s: completion MIP %s in %.2fs", r, sorted(F), answer, time.perf_counter() - t)
        if answer:
            return True, _column(problem, classes, r, v, F)
        all_infeasible &= answer is False
    return (False, None) if all_infeasible else (None, None)


def _column(problem, classes, r, v, F) -> Column:
    col = problem.make_column(v, F, "enumeration")
    if not np.array_equal(col.cover, classes.covers[r]) or not problem.is_positive(col.v):
        raise SolverError("internal error: a verified class point does not cover its class")
    return col
