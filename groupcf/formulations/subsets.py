"""Change sets as 64-bit masks: enumerate them once, score many coverages at once.

A change set ``F`` and a type's difference set ``D`` are bitmasks over original feature
indices (at most 62 features); the type is covered iff ``D & ~F == 0``. Scoring every
``k``-subset of a feature list against a weighted list of types is then a few vectorised
numpy operations per chunk of subsets, which beats a MIP by one to two orders of
magnitude while the number of subsets stays in the hundreds of thousands.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

#: subsets are scored in chunks of this many (memory: chunk x types booleans)
CHUNK = 32768


def masks_of(D: np.ndarray) -> np.ndarray:
    """Bool ``(..., features)`` -> int64 bitmasks ``(...)``."""
    return (D.astype(np.int64) << np.arange(D.shape[-1], dtype=np.int64)).sum(axis=-1)


def affordable(n_features: int, k: int, limit: int) -> bool:
    return n_features <= 62 and math.comb(n_features, k) <= limit


@functools.lru_cache(maxsize=16)
def subset_masks(features: tuple[int, ...], k: int) -> np.ndarray:
    """Bitmasks of every ``k``-subset of ``features`` (read-only, cached)."""
    bits = [1 << int(l) for l in features]
    out = np.fromiter((sum(c) for c in itertools.combinations(bits, k)), dtype=np.int64,
                      count=math.comb(len(bits), k))
    out.flags.writeable = False
    return out


def covered_weight(Fm: np.ndarray, Dm: np.ndarray, w: np.ndarray) -> np.ndarray:
    """For every change set mask in ``Fm``: the total weight ``w`` of the types (masks
    ``Dm``) it covers."""
    out = np.empty(len(Fm))
    for a in range(0, len(Fm), CHUNK):
        out[a:a + CHUNK] = ((Dm[None, :] & ~Fm[a:a + CHUNK, None]) == 0) @ w
    return out


def bits(mask: int) -> list[int]:
    """Feature indices set in ``mask``."""
    return [l for l in range(63) if mask >> l & 1]
