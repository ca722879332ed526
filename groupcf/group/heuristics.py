"""Cheap pricing levels tried before the exact pricing MIP (issue: pricing in levels).

**Known change sets.** For a change set ``F`` the types that one counterfactual can cover
are a class of types equal outside ``F``; whether the class can be covered
is one feasibility question (:meth:`~groupcf.formulations.completion.Completions.best`:
closed form for an additive model, enumeration or a small MIP otherwise). Change sets recur
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

from ..formulations.completion import Completions
from ..utils import EPS
from .problem import Column, GroupProblem


def price_known_change_sets(problem: GroupProblem, completions: Completions, change_sets, w: np.ndarray,
                            max_columns: int = 20, allow_mip: bool = True, deadline=None
                            ) -> tuple[list[Column], bool]:
    """Improving columns (dual value > 1) from the given change sets, best first, and
    whether every class was decided (``False`` when a question was answered "unknown",
    needed a MIP with ``allow_mip=False``, or the ``deadline`` passed)."""
    inc = np.array([f.increase_only for f in problem.space])
    found: dict[bytes, tuple[float, Column]] = {}
    decided = True
    for F in change_sets:
        if deadline is not None and deadline.passed:
            decided = False
            break
        _, cls = np.unique(problem.outside_keys(F), return_inverse=True)
        cls = cls.ravel()
        weight = np.bincount(cls, weights=w)
        for c in np.flatnonzero(weight > 1 + EPS):
            members = np.flatnonzero(cls == c)
            low = np.where(inc, problem.codes[members].max(axis=0), 0.0)
            score, v = completions.best(problem.Z[members[0]], F, low, allow_mip=allow_mip)
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
                found.setdefault(col.key, (val, col))
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
