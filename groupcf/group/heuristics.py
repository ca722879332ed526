"""Cheap pricing levels tried before the exact pricing MIP (issue: pricing in levels).

**Known change sets.** For a change set ``F`` the types that one counterfactual can cover
are a class of types equal outside ``F`` (design §3); whether the class can be covered
is one feasibility question (:class:`~groupcf.group.oracle.FeasibilityOracle`: closed
form for a logistic model, enumeration or a small MIP otherwise). Change sets recur
across iterations, so every change set seen in a column is re-tried with the new duals:
group the types by their codes outside ``F`` and price each class at once. A class whose
dual weight does not exceed 1 is skipped without any feasibility check.

This level is a heuristic (it only looks at known change sets and, with increase-only
features, at whole classes); the exact pricing MIP still runs whenever it finds nothing,
so optimality proofs are unaffected. **Complete enumeration**: when the maximal change
sets are few (:func:`maximal_change_sets`), all of them are priced; without increase-only
features that is exact pricing and no MIP is needed at all.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .problem import Column, GroupProblem

EPS = 1e-6


def price_known_change_sets(problem: GroupProblem, oracle, change_sets, w: np.ndarray,
                            max_columns: int = 20) -> tuple[list[Column], bool]:
    """Improving columns (dual value > 1) from the given change sets, best first, and
    whether every class was decided (``False`` when the oracle answered "unknown")."""
    inc = np.array([f.increase_only for f in problem.space])
    found: dict[bytes, tuple[float, Column]] = {}
    decided = True
    L = problem.n_features
    for F in change_sets:
        outside = np.ones(L, dtype=bool)
        outside[list(F)] = False
        _, cls = np.unique(np.round(problem.codes[:, outside], 9), axis=0, return_inverse=True)
        cls = cls.ravel()
        weight = np.bincount(cls, weights=w)
        for c in np.flatnonzero(weight > 1 + EPS):
            members = np.flatnonzero(cls == c)
            low = np.where(inc, problem.codes[members].max(axis=0), 0.0)
            score, v = oracle.best(problem.Z[members[0]], F, low)
            if v is None:
                decided &= score < problem.score_lo      # +inf: unknown
                continue
            if score < problem.score_lo:
                continue
            col = problem.make_column(v, F, "known-F")
            if not problem.is_positive(col.v):
                continue
            val = float(col.cover @ w)
            if val > 1 + EPS:
                found.setdefault(col.key(), (val, col))
    best = sorted(found.values(), key=lambda t: -t[0])[:max_columns]
    return [c for _, c in best], decided


def maximal_change_sets(problem: GroupProblem, limit: int) -> tuple[list[frozenset], bool]:
    """Every change set of size ``min(Tmax, #mutable)`` over the mutable features, when
    there are at most ``limit`` of them (else ``[]``), and whether pricing them is exact.

    Coverage and feasibility are monotone in ``F``, so the maximal sets dominate. Pricing
    all of them is exact when no feature is increase-only: a class of types equal outside
    ``F`` is then covered entirely or not at all.
    """
    mutable = [l for l, f in enumerate(problem.space) if not f.immutable]
    k = min(problem.Tmax, len(mutable))
    if math.comb(len(mutable), k) > limit:
        return [], False
    exact = not any(problem.space.features_[l].increase_only for l in mutable)
    return [frozenset(F) for F in itertools.combinations(mutable, k)], exact


def enumerate_all_columns(problem: GroupProblem, oracle, change_sets, gains=None, deadline=None):
    """Every distinct maximal cover ``(cover, F, seed type)`` over the given change sets.

    With all maximal change sets and no increase-only feature this is the complete column
    set, so the integer set cover over it is the exact optimum — used to close a gap
    between the integer master and the LP bound when enumeration is affordable. For a
    linear model ``gains = (s, G)`` (current scores and per-feature best gains) decides
    feasibility of every type at once; otherwise each class asks the oracle. Returns
    ``None`` when the deadline passes or the oracle cannot decide a class.

    Classes are found by hashing: each (type, feature) code gets a random 64-bit value,
    a type's key for ``F`` is the (wrapping) sum over the features outside ``F``, and a
    class's identity is the sum of its members' random values — collisions have
    probability about ``n² / 2⁶⁴``.
    """
    rng = np.random.default_rng(12345)
    n, L = problem.codes.shape
    codes = np.round(problem.codes * 1e6).astype(np.int64)
    H = (rng.integers(1, 2**63, size=L, dtype=np.uint64)[None, :] * codes.astype(np.uint64)
         + rng.integers(1, 2**63, size=L, dtype=np.uint64)[None, :])            # n x L
    total = H.sum(axis=1, dtype=np.uint64)
    member = rng.integers(1, 2**63, size=n, dtype=np.uint64)
    seen: dict[int, tuple[frozenset, int]] = {}
    for count, F in enumerate(change_sets):
        if deadline is not None and count % 1024 == 0 and deadline.passed:
            return None
        Fl = sorted(F)
        keys = total - H[:, Fl].sum(axis=1, dtype=np.uint64)
        _, first, cls = np.unique(keys, return_index=True, return_inverse=True)
        if gains is not None:
            s, G = gains
            feasible = (s + G[:, Fl].sum(axis=1) >= problem.score_lo)[first]
        else:
            feasible = np.zeros(len(first), dtype=bool)
            for c, i in enumerate(first):
                score, v = oracle.best(problem.Z[i], F)
                if v is None and score > 0:
                    return None               # undecided: the set is not complete
                feasible[c] = score >= problem.score_lo
        if not feasible.any():
            continue
        ident = np.zeros(len(first), dtype=np.uint64)
        np.add.at(ident, cls, member)
        for c in np.flatnonzero(feasible):
            seen.setdefault(int(ident[c]), (F, int(first[c])))
    out = []
    for F, seed in seen.values():
        outside = np.ones(L, dtype=bool)
        outside[sorted(F)] = False
        cover = np.all(np.abs(problem.codes[:, outside] - problem.codes[seed, outside]) <= 1e-9, axis=1)
        out.append((cover, F, seed))
    return out
