r"""The enumeration's columns: which of the evaluated actions are kept, and which covers are
maximal — without comparing every pair of actions.

Column :math:`a` is *dominated* by :math:`b` when :math:`C_a \subseteq C_b` and
:math:`d_{ib} \le d_{ia}` for every :math:`i \in C_a`
(:mod:`~groupcf.global_actions.enumerate`); a cover is *maximal* when no other column's
cover strictly contains it (of equal covers, the first).

1. **Per chunk, as the actions are evaluated** (:meth:`Found.add`): columns covering nobody
   are dropped; columns with equal covers form a group, whose *leader* is a member of least
   total cost (the first of equal ones); a member the leader dominates is dropped (a
   vectorised comparison with its leader, not with every member). Dropping a dominated
   column is safe: whatever dominates it stays, or is dropped for a column that dominates
   it in turn (dominance is transitive).
2. **At the end** (:meth:`Found.result`): step 1 again across chunks, then the exact
   dominance filter (:func:`non_dominated`) and the maximal covers (:func:`maximal_covers`),
   both in blocks of rows against the rows kept so far: :math:`C_a \subseteq C_b` iff
   :math:`|C_a \cap C_b| = |C_a|`, one matrix product per block — the work is the columns
   times the columns *kept*, not times all columns. What is kept is exactly the
   non-dominated set (of equal columns the first).
"""
from __future__ import annotations

import numpy as np

from .actions import Action, ActionSpace


class Found:
    """The columns kept so far (module docstring): per column its feature set and value
    indices, cover and per-type costs."""

    def __init__(self, aspace: ActionSpace, values: dict, single_costs: dict):
        self.a, self.values, self.single_costs = aspace, values, single_costs
        self.coverable = np.zeros(aspace.n_types, dtype=bool)
        self.parts: list = []           # (F, J, C, D) per chunk

    def costs(self, F: tuple, J: np.ndarray) -> np.ndarray:
        """Per-type costs ``(m × types)`` of the actions ``J`` on ``F`` (additive over features)."""
        D = np.zeros((len(J), self.a.n_types))
        for c, l in enumerate(F):
            D += self.single_costs[l][J[:, c]]
        return D

    def add(self, F: tuple, J: np.ndarray, C: np.ndarray) -> None:
        """Chunk ``J`` of the actions on ``F`` with covers ``C``: step 1 of the module docstring."""
        hit = np.flatnonzero(C.any(axis=1))
        if not len(hit):
            return
        J, C = J[hit], C[hit]
        self.coverable |= C.any(axis=0)
        D = self.costs(F, J)
        keep = leaders_filter(C, D)
        self.parts.append((F, J[keep], C[keep], D[keep]))

    def result(self) -> tuple[list, np.ndarray, np.ndarray, np.ndarray]:
        """``(actions, C, D, maximal)`` of the kept columns (step 2), in evaluation order."""
        n = self.a.n_types
        if not self.parts:
            return [], np.zeros((0, n), bool), np.zeros((0, n)), np.zeros(0, bool)
        C = np.concatenate([p[2] for p in self.parts])
        D = np.concatenate([p[3] for p in self.parts])
        owner = np.concatenate([np.full(len(p[1]), i) for i, p in enumerate(self.parts)])
        row = np.concatenate([np.arange(len(p[1])) for p in self.parts])
        keep = leaders_filter(C, D)
        C, D, owner, row = C[keep], D[keep], owner[keep], row[keep]
        keep = non_dominated(C, D)
        maximal = maximal_covers(C[keep])
        acts = []
        for o, r in zip(owner[keep], row[keep]):
            F, J = self.parts[o][0], self.parts[o][1]
            acts.append(Action(tuple((l, float(self.values[l][J[r, c]])) for c, l in enumerate(F))))
        return acts, C[keep], D[keep], maximal


def _groups(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``C``, the id of its equal-cover group, and per group its rows' count."""
    packed = np.ascontiguousarray(np.packbits(C, axis=1))
    view = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, inv, counts = np.unique(view, return_inverse=True, return_counts=True)
    return inv.ravel(), counts


def leaders_filter(C: np.ndarray, D: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """Indices (sorted) of the rows kept by step 1 (module docstring): a row is dropped when
    the leader of its equal-cover group dominates it (and is not itself)."""
    if not len(C):
        return np.zeros(0, dtype=np.int64)
    g, _ = _groups(C)
    total = np.where(C, D, 0.0).sum(axis=1)
    order = np.lexsort((np.arange(len(C)), total, g))        # per group: least total, then first
    lead = np.empty(g.max() + 1, dtype=np.int64)
    first = np.r_[True, g[order][1:] != g[order][:-1]]
    lead[g[order][first]] = order[first]
    L = lead[g]
    dominated = ~((D[L] > D + tol) & C).any(axis=1) & (np.arange(len(C)) != L)
    return np.flatnonzero(~dominated)


def maximal_covers(C: np.ndarray, block: int = 1024) -> np.ndarray:
    """Per row: no other row's cover strictly contains it, and no earlier row has the same
    cover (module docstring, step 2). Larger covers first: a row is maximal iff no maximal
    row before it, or row before it in its block, contains it (containment is transitive)."""
    m = len(C)
    out = np.zeros(m, dtype=bool)
    if not m:
        return out
    Cf = C.astype(np.float32)
    size = C.sum(axis=1)
    order = np.lexsort((np.arange(m), -size))
    found = np.zeros(0, dtype=np.int64)
    for s in range(0, m, block):
        B = order[s:s + block]
        inside = (Cf[B] @ Cf[np.concatenate([found, B])].T) >= size[B, None] - 0.5
        inside[:, len(found):] &= np.tri(len(B), k=-1, dtype=bool)
        new = B[~inside.any(axis=1)]
        out[new] = True
        found = np.concatenate([found, new])
    return out


def non_dominated(C: np.ndarray, D: np.ndarray, tol: float = 1e-12, block: int = 256) -> np.ndarray:
    """Indices (sorted) of the rows no other row dominates (of equal ones the first).

    Larger covers first, then cheaper: a row can only be dominated by a row before it in
    that order, and by a kept one or one before it in its block (transitivity). Per block,
    one matrix product finds the candidates covering a superset; a candidate whose largest
    cost is at most the row's least cost on its cover dominates it (exact when costs do not
    depend on the type: shifts); the rest are checked type by type."""
    if not len(C):
        return np.zeros(0, dtype=np.int64)
    size = C.sum(axis=1)
    total = np.where(C, D, 0.0).sum(axis=1)
    order = np.lexsort((np.arange(len(C)), total, -size))
    Cf = C.astype(np.float32)
    dmax = D.max(axis=1)
    dmin_on = np.where(C, D, np.inf).min(axis=1)
    kept = np.zeros(0, dtype=np.int64)
    for s in range(0, len(order), block):
        B = order[s:s + block]
        P = np.concatenate([kept, B])
        inside = (Cf[B] @ Cf[P].T) >= size[B, None] - 0.5             # C_a ⊆ C_b
        inside[:, len(kept):] &= np.tri(len(B), k=-1, dtype=bool)      # only rows before, in the block
        sure = inside & (dmax[P][None, :] <= dmin_on[B, None] + tol)
        dominated = sure.any(axis=1)
        for r in np.flatnonzero(~dominated & inside.any(axis=1)):
            a = B[r]
            cand = P[inside[r]]
            cov = C[a]
            dominated[r] = bool((D[cand][:, cov] <= D[a, cov][None, :] + tol).all(axis=1).any())
        kept = np.concatenate([kept, B[~dominated]])
    return np.sort(kept)
