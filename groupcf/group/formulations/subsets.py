r"""Change sets as 64-bit masks, and the combinatorial search behind pricing.

A change set :math:`F` and a type's difference set :math:`D` (the features where it
differs from a seed or a point) are bitmasks over original feature indices (at most 62
features); the type is covered iff ``D & ~F == 0``. Choosing the change set of largest
covered weight is choosing the heaviest set of types whose difference sets have a union
of at most :math:`T_{\max}` features (:func:`max_weight_union`). A depth-first
branch-and-bound over the types, heaviest first, with the bound "weight so far plus every
type still compatible with the union", solves the instances of the paper in tens to
thousands of nodes — measured on Students (|S| = 100, Tmax = 20, 40 seeds): 0.08 s in
total against 27 s for the MIP of :mod:`~groupcf.group.formulations.coverage`, the same
optima.
"""
from __future__ import annotations

import numpy as np


def masks_of(D: np.ndarray) -> np.ndarray:
    """Bool ``(..., features)`` -> int64 bitmasks ``(...)``."""
    return (D.astype(np.int64) << np.arange(D.shape[-1], dtype=np.int64)).sum(axis=-1)


def bits(mask: int) -> list[int]:
    """Feature indices set in ``mask``."""
    return [l for l in range(63) if mask >> l & 1]


def max_weight_union(masks: np.ndarray, weights: np.ndarray, T: int, floor: float, *, must: int | None = None,
                     conflicts=(), forbidden=(), feasible=None, feasible_items=None, node_limit: int = 200_000):
    """The heaviest set of items (bitmasks ``masks``, weights ``weights`` ≥ 0) whose union
    has at most ``T`` bits, if heavier than ``floor`` — depth-first branch-and-bound.

    Items are tried heaviest first; a branch stops when its weight plus every remaining
    compatible item cannot beat the best so far (initially ``floor``). ``must``: an item
    that is always taken; ``conflicts``: pairs never taken together; ``forbidden``:
    masks the union may not contain (known infeasible); ``feasible(union)``: a monotone
    test (a union that fails it has no feasible superset either); ``feasible_items(union,
    items)``: the same, monotone in the chosen items.

    Returns ``(value, chosen, complete)``: ``chosen`` (item indices) is ``None`` when
    nothing beats ``floor``; ``complete`` is ``False`` when ``node_limit`` stopped the
    search (then nothing is proven).
    """
    n = len(weights)
    nbrs: list[set[int]] = [set() for _ in range(n)]
    for a, b in conflicts:
        nbrs[a].add(b)
        nbrs[b].add(a)
    best_val, best_set = float(floor), None
    nodes = 0

    def ok(U) -> bool:
        if any((U & c) == c for c in forbidden):
            return False
        return feasible is None or feasible(U)

    def dfs(U, W, cand, chosen):
        nonlocal best_val, best_set, nodes
        nodes += 1
        if nodes > node_limit:
            raise _NodeLimit
        if best_val < W:
            best_val, best_set = W, list(chosen)
        if not len(cand):
            return
        suffix = np.cumsum(weights[cand][::-1])[::-1]
        for i, k in enumerate(cand):
            if W + suffix[i] <= best_val:
                return
            U2 = U | masks[k]
            if not ok(U2) or (feasible_items is not None and not feasible_items(U2, chosen + [int(k)])):
                continue
            rest = cand[i + 1:]
            if len(rest):
                rest = rest[np.bitwise_count(U2 | masks[rest]) <= T]
                if nbrs[k]:
                    rest = rest[~np.isin(rest, list(nbrs[k]))]
            chosen.append(int(k))
            dfs(U2, W + float(weights[k]), rest, chosen)
            chosen.pop()

    order = np.argsort(-weights, kind="stable")
    try:
        if must is None:
            dfs(np.int64(0), 0.0, order[np.bitwise_count(masks[order]) <= T], [])
        else:
            U0 = masks[must]
            if bin(int(U0)).count("1") <= T and ok(U0) and (feasible_items is None or feasible_items(U0, [int(must)])):
                cand = order[(order != must) & (np.bitwise_count(U0 | masks[order]) <= T)]
                cand = cand[~np.isin(cand, list(nbrs[must]))]
                dfs(U0, float(weights[must]), cand, [int(must)])
    except _NodeLimit:
        return best_val, best_set, False
    return best_val, best_set, True


class _NodeLimit(Exception):
    pass


def decisions(n: int, branching):
    """Union-find labels of the "same" groups and the list of "differ" pairs."""
    label = np.arange(n)

    def find(a):
        while label[a] != a:
            label[a] = label[label[a]]
            a = label[a]
        return a

    differ = []
    for i, j, is_same in branching:
        if is_same:
            label[find(i)] = find(j)
        else:
            differ.append((i, j))
    return np.array([find(a) for a in range(n)]), differ
