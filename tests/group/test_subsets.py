"""The depth-first search behind seed pricing and auxiliary MIP 1, against brute force.

(The empty set is always admissible with value 0: the search starts from it.)"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from groupcf.group.formulations.subsets import bits, masks_of, max_weight_union


def brute(masks, w, T, floor, must=None, conflicts=(), forbidden=(), feasible=None):
    best, best_set = floor, None
    n = len(w)
    for r in range(n + 1):
        for sub in itertools.combinations(range(n), r):
            if must is not None and must not in sub:
                continue
            if any(a in sub and b in sub for a, b in conflicts):
                continue
            U = 0
            for k in sub:
                U |= int(masks[k])
            if bin(U).count("1") > T or (sub and any((U & int(c)) == int(c) for c in forbidden)):
                continue
            if feasible is not None and sub and not feasible(np.int64(U)):
                continue
            val = float(w[list(sub)].sum())
            if val > best + 1e-12:
                best, best_set = val, sub
    return best, best_set


@pytest.mark.parametrize("seed", range(60))
def test_max_weight_union_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, L = int(rng.integers(1, 10)), int(rng.integers(2, 9))
    D = rng.random((n, L)) < rng.uniform(0.1, 0.6)
    masks = masks_of(D)
    w = rng.uniform(0, 1, n) * (rng.random(n) < 0.85)
    T = int(rng.integers(1, L + 1))
    floor = float(rng.choice([-1.0, 0.5, 1.0]))
    must = int(rng.integers(n)) if rng.random() < 0.4 else None
    conflicts = [tuple(rng.choice(n, 2, replace=False)) for _ in range(int(rng.integers(0, 3)))] if n > 1 else []
    forbidden = [np.int64(int(masks_of(rng.random(L) < 0.3)))] if rng.random() < 0.3 else []
    g = rng.uniform(0, 1, L)
    feasible = (lambda U: sum(g[l] for l in bits(int(U))) <= 1.5) if rng.random() < 0.3 else None
    val, chosen, complete = max_weight_union(masks, w, T, floor, must=must, conflicts=conflicts,
                                             forbidden=forbidden, feasible=feasible)
    ref, ref_set = brute(masks, w, T, floor, must, conflicts, forbidden, feasible)
    assert complete
    assert val == pytest.approx(ref)
    assert (chosen is None) == (ref_set is None)
    if chosen is not None:                      # the returned set is admissible and worth val
        U = int(np.bitwise_or.reduce(masks[chosen])) if chosen else 0
        assert bin(U).count("1") <= T
        assert float(w[chosen].sum()) == pytest.approx(val)
        assert must is None or must in chosen


def test_node_limit_is_reported():
    rng = np.random.default_rng(0)
    masks = masks_of(rng.random((40, 30)) < 0.2)
    val, chosen, complete = max_weight_union(masks, rng.uniform(0.1, 1, 40), 15, 0.0, node_limit=5)
    assert not complete
