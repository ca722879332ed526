r"""Least-cost selections by local search (the integer master's tie-break, before its MIP).

Given columns :math:`C` (columns × elements), element costs :math:`D`, weights :math:`m`,
a selection :math:`K` costs :math:`\sum_{i \text{ covered}} m_i \min_{a \in K \ni i} d_{ia}`
(each element pays its cheapest chosen covering column) and covers
:math:`\sum_{i \text{ covered}} m_i`. :func:`improve` keeps the covered weight at least
``target`` and the size at most ``k_max`` and applies the best improving move — add a
column (while fewer than ``k_max``) or swap one chosen column for another — until none
improves; each round is a few matrix operations (``O(k · columns · elements)``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["greedy", "improve", "improve_coverage", "selection_value"]


def selection_value(C: np.ndarray, D: np.ndarray, m: np.ndarray, chosen) -> tuple[float, float]:
    """``(covered weight, total cost)`` of the selection ``chosen``."""
    chosen = list(chosen)
    if not chosen:
        return 0.0, 0.0
    Dc = np.where(C[chosen], D[chosen], np.inf).min(axis=0)
    ok = np.isfinite(Dc)
    return float(m[ok].sum()), float((m[ok] * Dc[ok]).sum())


def improve(C: np.ndarray, D: np.ndarray, m: np.ndarray, chosen, target: float, k_max: int,
            max_rounds: int = 200) -> list[int]:
    """Best-improvement add/swap local search from ``chosen`` (module docstring); the
    result covers at least ``min(target, covered(chosen))`` and costs no more."""
    chosen = list(dict.fromkeys(int(j) for j in chosen))
    n_cols = len(C)
    if n_cols == 0 or not chosen:
        return chosen
    Dinf = np.where(C, D, np.inf)                  # columns × elements
    W = m[None, :]
    cov0, cost0 = selection_value(C, D, m, chosen)
    target = min(target, cov0)
    for _ in range(max_rounds):
        best: tuple[float, tuple[Any, ...] | None] = (cost0, None)   # (cost, move)
        cur = Dinf[chosen].min(axis=0)
        if len(chosen) < k_max:                    # add a column
            new = np.minimum(cur[None, :], Dinf)
            cov, cost = _value(new, W)
            cost[chosen] = np.inf
            masked = np.where(cov >= target - 1e-9, cost, np.inf)
            j = int(np.argmin(masked))
            if masked[j] < best[0] - 1e-9:
                best = (cost[j], ("add", j))
        for p in range(len(chosen)):               # swap chosen[p] for another column
            rest = [c for q, c in enumerate(chosen) if q != p]
            base = Dinf[rest].min(axis=0) if rest else np.full(C.shape[1], np.inf)
            new = np.minimum(base[None, :], Dinf)
            cov, cost = _value(new, W)
            cost[chosen] = np.inf
            masked = np.where(cov >= target - 1e-9, cost, np.inf)
            j = int(np.argmin(masked))
            if masked[j] < best[0] - 1e-9:
                best = (cost[j], ("swap", p, j))
        if best[1] is None:
            break
        move = best[1]
        if move[0] == "add":
            chosen.append(move[1])
        else:
            chosen[move[1]] = move[2]
        cost0 = best[0]
    return chosen


def _value(Dmin: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ok = np.isfinite(Dmin)
    return (W * ok).sum(axis=1), (W * np.where(ok, Dmin, 0.0)).sum(axis=1)


def greedy(C: np.ndarray, m: np.ndarray, k: int) -> list[int]:
    """Greedy maximum coverage: ``k`` times the column covering the most uncovered weight
    (the classical ``1 − 1/e`` approximation); a fallback when no time is left for a MIP."""
    covered = np.zeros(C.shape[1], dtype=bool)
    chosen: list[int] = []
    for _ in range(min(k, len(C))):
        gain = (C & ~covered[None, :]).astype(float) @ m
        gain[chosen] = -1.0
        j = int(np.argmax(gain))
        if gain[j] <= 0:
            break
        chosen.append(j)
        covered |= C[j]
    return chosen


def improve_coverage(C: np.ndarray, m: np.ndarray, chosen, k_max: int, max_rounds: int = 100) -> list[int]:
    """Best-improvement add/swap local search maximising the covered weight of at most
    ``k_max`` columns, from ``chosen`` (never covers less)."""
    chosen = list(dict.fromkeys(int(j) for j in chosen))
    Cf = C.astype(float)
    for _ in range(max_rounds):
        cur = C[chosen].any(axis=0) if chosen else np.zeros(C.shape[1], dtype=bool)
        move: tuple[Any, ...] | None
        best, move = float(m[cur].sum()), None
        if len(chosen) < k_max:
            gain = ((~cur)[None, :] * Cf) @ m
            gain[chosen] = -1.0
            j = int(np.argmax(gain))
            if gain[j] > 1e-9:
                best, move = best + gain[j], ("add", j)
        for p in range(len(chosen)):
            rest = [c for q, c in enumerate(chosen) if q != p]
            base = np.asarray(C[rest].any(axis=0)) if rest else np.zeros(C.shape[1], dtype=bool)
            val = float(m[base].sum()) + ((~base)[None, :] * Cf) @ m
            val[chosen] = -1.0
            j = int(np.argmax(val))
            if val[j] > best + 1e-9:
                best, move = val[j], ("swap", p, j)
        if move is None:
            break
        if move[0] == "add":
            chosen.append(move[1])
        else:
            chosen[move[1]] = move[-1]
    return chosen
