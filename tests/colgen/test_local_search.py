"""The local search of the integer master's tie-break: never below the coverage target,
never more columns than allowed, never costlier; finds the brute-force optimum on tiny cases."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from groupcf.colgen.local_search import improve, selection_value


def test_swap_keeps_coverage():
    C = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    D = np.array([[1, 1, 1, 0, 0], [2, 2, 2, 2, 2]], float)
    assert improve(C, D, np.ones(5), [1], 5, 1) == [1]       # the cheaper column covers less
    assert improve(C, D, np.ones(5), [1], 3, 1) == [0]       # allowed when the target is lower


@pytest.mark.parametrize("seed", range(30))
def test_invariants_random(seed):
    rng = np.random.default_rng(seed)
    C = rng.random((10, 8)) < 0.4
    D = np.round(rng.random((10, 8)) * 3, 2)
    m = rng.integers(1, 3, 8).astype(float)
    k = int(rng.integers(1, 4))
    start = list(rng.choice(10, size=k, replace=False))
    cov0, cost0 = selection_value(C, D, m, start)
    out = improve(C, D, m, start, cov0, k)
    cov, cost = selection_value(C, D, m, out)
    assert len(out) <= k and len(set(out)) == len(out)
    assert cov >= cov0 - 1e-9 and cost <= cost0 + 1e-9
    # never better than the brute-force least cost at that coverage (a sanity bound)
    best = min(selection_value(C, D, m, s)[1] for r in range(1, k + 1)
               for s in itertools.combinations(range(10), r) if selection_value(C, D, m, s)[0] >= cov0 - 1e-9)
    assert cost >= best - 1e-9


@pytest.mark.parametrize("seed", range(20))
def test_improve_coverage_never_worse(seed):
    from groupcf.colgen.local_search import improve_coverage

    rng = np.random.default_rng(seed)
    C = rng.random((10, 8)) < 0.3
    m = rng.integers(1, 3, 8).astype(float)
    k = int(rng.integers(1, 4))
    start = list(rng.choice(10, size=k, replace=False))
    out = improve_coverage(C, m, start, k)
    assert len(out) <= k and len(set(out)) == len(out)
    cov = lambda s: m[C[list(s)].any(axis=0)].sum() if len(s) else 0.0  # noqa: E731
    assert cov(out) >= cov(start)
    best = max(cov(s) for s in itertools.combinations(range(10), k))
    assert cov(out) <= best
