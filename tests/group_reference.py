"""Brute-force reference for group counterfactuals, independent of groupcf's algorithms.

Enumerate every change set F (|F| <= Tmax, mutable features only) and every point v of
the (tiny, discrete) space that the *real model* accepts; the types v covers with F are
those equal to v outside F (and not above v on increase-only features). Then solve the
set cover exactly by dynamic programming over subsets of types.
"""
from __future__ import annotations

import itertools

import numpy as np

from conftest import all_points


def coverable_sets(space, logit_fn, S, Tmax, margin=1e-6):
    """Distinct maximal covered sets (as bitmasks over the distinct rows of ``S``)."""
    types = S.drop_duplicates()
    X = space.codes(types)
    P = all_points(space)
    positive = logit_fn(P) >= margin
    V = space.codes(P)[positive]
    names = [f.name for f in space]
    mutable = [l for l, f in enumerate(space) if not f.immutable]
    inc = np.array([f.increase_only for f in space])
    masks = set()
    for k in range(1, Tmax + 1):
        for F in itertools.combinations(mutable, k):
            outside = np.ones(len(names), dtype=bool)
            outside[list(F)] = False
            eq = (X[None, :, :] == V[:, None, :])                      # points x types x features
            ok = eq[:, :, outside].all(axis=2)
            ok &= ~((X[None, :, :] > V[:, None, :]) & inc).any(axis=2)
            for row in ok:
                m = int(sum(1 << i for i in np.flatnonzero(row)))
                if m:
                    masks.add(m)
    return types, masks


def min_set_cover(masks, n) -> int | None:
    """Fewest masks whose union is ``(1 << n) - 1`` (BFS over unions)."""
    full = (1 << n) - 1
    if n == 0:
        return 0
    frontier, seen = {0}, {0}
    for depth in range(1, n + 1):
        nxt = set()
        for u in frontier:
            for m in masks:
                w = u | m
                if w == full:
                    return depth
                if w not in seen:
                    seen.add(w)
                    nxt.add(w)
        frontier = nxt
        if not frontier:
            return None
    return None


def brute_force_group(space, logit_fn, S, Tmax, margin=1e-6):
    """``(optimum over the explainable types, bool per distinct type: explainable)``."""
    types, masks = coverable_sets(space, logit_fn, S, Tmax, margin)
    n = len(types)
    union = 0
    for m in masks:
        union |= m
    explainable = np.array([(union >> i) & 1 for i in range(n)], dtype=bool)
    idx = np.flatnonzero(explainable)
    remap = {int(i): j for j, i in enumerate(idx)}
    sub = set()
    for m in masks:
        sub.add(int(sum(1 << remap[i] for i in range(n) if (m >> i) & 1 and i in remap)))
    return min_set_cover(sub, len(idx)), types, explainable
