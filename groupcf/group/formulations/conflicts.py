"""Conflicts between instance types: pairs that no counterfactual can cover together.

Used as clique inequalities by the compact MIP (``Σ_{i∈Q} a_i^k ≤ y^k``) and by the
pricing MIP (``Σ_{i∈Q} z_i ≤ 1``); both are valid because a covered pair needs every
feature where the two differ in the shared change set.
"""
from __future__ import annotations

import itertools
import math

import numpy as np


def conflict_cliques(problem, active: np.ndarray, completions=None, max_checks: int = 64) -> list[np.ndarray]:
    """Cliques of pairwise incompatible types covering every conflict edge.

    Types ``i`` and ``j`` can never share a counterfactual when they differ in more than
    ``Tmax`` features or in an immutable one (both would have to change all of them), or
    — checked with ``completions`` (:class:`~groupcf.formulations.completion.Completions`)
    — when no change set ``F ⊇ D_ij`` of size ``Tmax`` admits an accepted completion (at
    most ``max_checks`` change sets per pair, and only questions it answers without a
    MIP; otherwise the pair is conservatively kept compatible). For a clique ``Q`` of such
    types ``Σ_{i∈Q} a_i^k ≤ y^k`` is valid and much tighter than pairwise rows; its LP
    bound is at least the size of the largest clique.
    """
    codes = problem.codes
    immutable = np.array([f.immutable for f in problem.space])
    mutable = np.flatnonzero(~immutable)
    inc = np.array([f.increase_only for f in problem.space])
    idx = np.flatnonzero(active)
    D = np.abs(codes[idx][:, None, :] - codes[idx][None, :, :]) > 1e-9        # n x n x L
    conflict = (D.sum(axis=2) > problem.Tmax) | D[:, :, immutable].any(axis=2)
    np.fill_diagonal(conflict, False)
    if completions is not None:
        size = min(problem.Tmax, len(mutable))
        for a, b in zip(*np.nonzero(np.triu(~conflict, 1))):
            diff = np.flatnonzero(D[a, b])
            rest = np.setdiff1d(mutable, diff)
            r = size - len(diff)
            if math.comb(len(rest), r) > max_checks:
                continue
            low = np.where(inc, np.maximum(codes[idx[a]], codes[idx[b]]), 0.0)
            z = problem.Z[idx[a]]
            if not any(completions.feasible(z, np.concatenate([diff, extra]).astype(int), low, allow_mip=False)
                       for extra in itertools.combinations(rest, r)):
                conflict[a, b] = conflict[b, a] = True
    uncovered = np.triu(conflict)
    cliques = []
    degree = conflict.sum(axis=1)
    while uncovered.any():
        i, j = np.argwhere(uncovered)[0]
        members = [i, j]
        cand = np.flatnonzero(conflict[i] & conflict[j])
        for c in cand[np.argsort(-degree[cand])]:      # greedy: high degree first
            if conflict[c, members].all():
                members.append(c)
        Q = np.array(sorted(members))
        uncovered[np.ix_(Q, Q)] = False
        cliques.append(idx[Q])
    return cliques
