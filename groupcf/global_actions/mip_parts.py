"""Small builders of :mod:`~groupcf.global_actions.pricing`'s MIPs: a linear cost, rows
made once per template across many types, and the distinct actions of a solution pool."""
from __future__ import annotations

from typing import Any

import numpy as np


class CostBuilder:
    """A linear cost being built: variables, their coefficients and a constant."""

    def __init__(self):
        self.idx: list[np.ndarray] = []
        self.coef: list[np.ndarray] = []
        self.offset = 0.0

    def add(self, idx, coef) -> None:
        self.idx.append(np.asarray(idx, dtype=np.int64).ravel())
        self.coef.append(np.asarray(coef, dtype=float).ravel())

    def arrays(self) -> tuple[np.ndarray, np.ndarray, float]:
        if not self.idx:
            return np.zeros(0, dtype=np.int64), np.zeros(0), self.offset
        return np.concatenate(self.idx), np.concatenate(self.coef), self.offset


def unique_actions(actions):
    """``actions`` without repeats (by :attr:`Action.key`), in order."""
    seen, out = set(), []
    for act in actions:
        if act.key not in seen:
            seen.add(act.key)
            out.append(act)
    return out


class RowTemplates:
    """Rows built once per template across ``T`` types: ``cols`` and ``coefs`` are lists
    of per-type arrays (or scalars: the same variable / coefficient for every type)."""

    def __init__(self, T: int):
        self.T = T
        self.parts: list[tuple[Any, ...]] = []

    def add(self, cols, coefs, lo, hi, mask=None) -> None:
        T = self.T
        C = np.stack([np.broadcast_to(np.asarray(c, dtype=np.int64), (T,)) for c in cols], axis=1)
        A = np.stack([np.broadcast_to(np.asarray(c, dtype=float), (T,)) for c in coefs], axis=1)
        lo = np.broadcast_to(np.asarray(lo, dtype=float), (T,))
        hi = np.broadcast_to(np.asarray(hi, dtype=float), (T,))
        if mask is not None:
            C, A, lo, hi = C[mask], A[mask], lo[mask], hi[mask]
        if len(C):
            self.parts.append((C, A, lo, hi))

    def flush(self, be) -> None:
        import scipy.sparse as sp

        for C, A, lo, hi in self.parts:
            n, k = C.shape
            M = sp.csr_matrix((A.ravel(), C.ravel(), np.arange(0, n * k + 1, k)), shape=(n, be.num_vars))
            be.add_rows(M, lo, hi)
        self.parts = []


def best_cover(pool, t: int):
    """The action of ``pool`` (a :class:`~groupcf.colgen.ColumnPool` of actions) of least
    cost to type ``t`` among those covering it (a MIP start for its nearest action), or ``None``."""
    best = min((c for c in pool.columns if c.cover[t]), key=lambda c: c.element_costs[t], default=None)
    return None if best is None else best.payload
