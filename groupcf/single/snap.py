"""Keep a MIP's continuous values on the model's side of every split threshold.

A tree ensemble's MIP (:mod:`groupcf.embeddings.trees`) puts a changed continuous input
exactly at a threshold ``t`` or at ``t+`` (the next float above it), and the solver's
feasibility tolerance may leave it a hair beyond. Rounding the solution and decoding it to
raw values (scaling, rounding integer features) can then cross the threshold, and the
real model rejects the counterfactual. The embedding record knows, from the solution's
integral split levels, the interval of each input that reaches the same leaves
(``constr.input_cells(solution)``); :func:`snap_to_cells` moves each continuous value
into its interval *through the raw round trip* (decode, then encode as the model sees
it), choosing the raw value nearest the solver's.
"""
from __future__ import annotations

import math

import numpy as np

#: raw values tried per feature when stepping into a cell one float at a time
MAX_STEPS = 64


def snap_to_cells(space, v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``v`` (expanded, rounded) with every continuous column moved so that its decoded
    raw value, encoded again, lies in ``[lo, hi]``; columns already inside, or whose
    cell has no such value, are left as they are."""
    v = np.array(v, dtype=float)
    for f in space:
        if f.encoding != "continuous":
            continue
        c = int(f.columns[0])
        rng = f.high - f.low
        if not rng > 0 or lo[c] > hi[c]:
            continue

        def enc(raw, f=f, rng=rng):
            return (raw - f.low) / rng

        def dec(z, f=f, rng=rng):
            raw = f.low + z * rng
            return float(np.round(raw)) if f.integer else float(raw)

        def inside(raw, c=c):
            z = enc(raw)
            return lo[c] <= z <= hi[c] and lo[c] <= enc(dec(z)) <= hi[c]

        if inside(dec(v[c])):
            continue
        target = f.low + min(max(v[c], lo[c]), hi[c]) * rng
        if f.integer:
            base = [math.floor(target), math.ceil(target)]
            cands = sorted({b + d for b in base for d in (-1, 0, 1)}, key=lambda r: abs(r - target))
            found = next((float(r) for r in cands if inside(r)), None)
        else:
            toward = f.low + 0.5 * (max(lo[c], 0.0) + min(hi[c], 1.0)) * rng
            raw, found = target, None
            for _ in range(MAX_STEPS):
                if inside(raw):
                    found = raw
                    break
                raw = float(np.nextafter(raw, toward))
            if found is None and inside(toward):
                found = _bisect_inside(inside, target, toward)
        if found is not None:
            v[c] = enc(found)
    return v


def _bisect_inside(inside, out: float, inn: float) -> float:
    """The raw value nearest ``out`` (outside the cell) on the way to ``inn`` (inside) for
    which ``inside`` holds, by bisection: stepping one float at a time can take millions
    of steps when a float of the raw value is much finer than one of the scaled value."""
    for _ in range(200):
        mid = 0.5 * (out + inn)
        if mid in (out, inn):
            break
        if inside(mid):
            inn = mid
        else:
            out = mid
    return inn


def off_cell(space, z0: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> set[int]:
    """Indices of the features with a continuous column whose cell ``[lo, hi]`` excludes
    the query's value ``z0``: changed in the model's eyes, however small the move."""
    z0 = np.asarray(z0, dtype=float)
    return {l for l, f in enumerate(space) if f.encoding == "continuous"
            and not lo[f.columns[0]] <= z0[f.columns[0]] <= hi[f.columns[0]]}
