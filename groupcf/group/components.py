r"""Decomposition of the group problem into independent components (issue 14).

Two types :math:`i, j` can share a counterfactual only if they are *compatible*: they
differ in at most :math:`T_{\max}` features and in no immutable one (a column
:math:`(v, F)` covers types equal to :math:`v` outside :math:`F`, so any two of them
differ only inside :math:`F`). Every cover is therefore a clique of the compatibility
graph and lies inside one of its connected components :math:`S_1, \dots, S_m`. The set
cover separates:

.. math::

    \mathrm{OPT} = \sum_{c=1}^{m} \mathrm{OPT}_c, \qquad
    z_{LP} = \sum_{c=1}^{m} z_{LP,c},

where :math:`\mathrm{OPT}_c` (:math:`z_{LP,c}`) is the integer (LP) optimum over the
columns inside :math:`S_c`. When column generation has converged, the restricted
master's optimal solution :math:`\lambda` restricted to :math:`S_c` is optimal for
component :math:`c` (it is feasible there, and a better one would improve the total),
so :math:`z_{LP,c} = \sum_{C \subseteq S_c} \lambda_C` and

.. math::

    \mathrm{OPT} \;\ge\; \sum_{c} \lceil z_{LP,c} \rceil \;\ge\; \lceil z_{LP} \rceil ,

often strictly (many components of one or two types have an integral LP). The gap is
then closed one component at a time: branch-and-price
(:mod:`groupcf.group.branching`) on the types of :math:`S_c` only, whose trees and
pricing rounds (seeds of :math:`S_c` only) are far smaller than on all of :math:`S`.
"""
from __future__ import annotations

import logging

import numpy as np

from ..utils import EPS, Deadline
from .branching import branch_and_price
from .problem import Column

log = logging.getLogger(__name__)


def component_labels(compat: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Connected component of every active type in the compatibility graph ``compat``
    (bool, types × types); ``-1`` for inactive types."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    idx = np.flatnonzero(active)
    labels = np.full(len(active), -1, dtype=int)
    if len(idx):
        _, lab = connected_components(sp.csr_matrix(compat[np.ix_(idx, idx)]), directed=False)
        labels[idx] = lab
    return labels


def column_component(cover: np.ndarray, labels: np.ndarray) -> int:
    """The component of a column (``-1`` when it covers no active type)."""
    lab = labels[cover]
    lab = lab[lab >= 0]
    return int(lab[0]) if len(lab) else -1


def component_bounds(labels: np.ndarray, covers: np.ndarray, lam: np.ndarray) -> np.ndarray:
    r"""Per component :math:`\lceil z_{LP,c} \rceil` from a *converged* master LP solution
    ``lam`` over the columns ``covers`` (bool, columns × types); module doc."""
    m = int(labels.max()) + 1
    z = np.zeros(m)
    for cover, x in zip(covers, lam):
        c = column_component(cover, labels)
        if c >= 0 and x > 0:
            z[c] += x
    # every component has a type to cover: its LP value is at least 1
    return np.maximum(1, np.ceil(z - EPS)).astype(int)


def count_by_component(columns: list[Column], labels: np.ndarray) -> np.ndarray:
    """How many of ``columns`` lie in each component."""
    m = int(labels.max()) + 1
    out = np.zeros(m, dtype=int)
    for col in columns:
        c = column_component(col.cover, labels)
        if c >= 0:
            out[c] += 1
    return out


def branch_and_price_by_component(problem, columns: list[Column], pricing, solver, deadline: Deadline,
                                  incumbent: list[Column], labels: np.ndarray, lower: np.ndarray,
                                  active: np.ndarray, max_columns: int = 10, on_node=None):
    """Branch-and-price on every component whose incumbent is above its bound, smallest
    first, each with an equal share of the time left. Returns ``(columns, lower bound,
    nodes, components searched, components closed)``; the bound is the sum of the
    components' bounds (module doc). ``on_node(nodes, incumbent, bound)``, totals over
    every component, is called as each node opens (progress)."""
    lower = lower.copy()
    comp_of = {id(c): column_component(c.cover, labels) for c in incumbent}
    best = {c: [col for col in incumbent if comp_of[id(col)] == c] for c in range(len(lower))}
    gaps = [c for c in range(len(lower)) if len(best[c]) > lower[c]]
    gaps.sort(key=lambda c: ((labels == c).sum(), c))
    by_comp: dict[int, list[Column]] = {}
    for col in columns:
        by_comp.setdefault(column_component(col.cover, labels), []).append(col)
    nodes = closed = searched = 0
    for k, c in enumerate(gaps):
        left = deadline.left()
        if left is not None and left <= 0:
            break
        share = None if left is None else left / (len(gaps) - k)
        mask = active & (labels == c)
        def node(n: int, b: int, lb: int, c=c, done=nodes) -> None:
            if on_node is not None:   # this component's numbers, the others' as they stand
                others = sum(len(best[o]) for o in best if o != c)
                on_node(done + n, others + b, int(lower.sum() - lower[c]) + lb)

        tree = branch_and_price(problem, by_comp.get(c, []), pricing, solver, Deadline(share), best[c],
                                int(lower[c]), mask, max_columns=max_columns, on_node=node)
        searched += 1
        nodes += tree.nodes
        if tree.best < len(best[c]):
            best[c] = tree.columns
        lower[c] = max(lower[c], min(tree.lower, len(best[c])))
        closed += len(best[c]) <= lower[c]
        log.debug("component %d (%d types): %d columns, bound %d, %d B&P nodes%s", c, int(mask.sum()),
                 len(best[c]), lower[c], tree.nodes, "" if tree.exhausted else " (not exhausted)")
    cols = [col for c in range(len(lower)) for col in best[c]]
    return cols, int(lower.sum()), nodes, searched, closed


def split_by_components(compat: np.ndarray, covers: np.ndarray, lam: np.ndarray, active: np.ndarray,
                        columns: list[Column]):
    """After converged column generation (``covers``/``lam``: the master's columns and LP
    solution): ``(labels, per-component bounds)``, or ``None`` when some column spans two
    components (cannot happen for exact coverage; then the caller branches on the whole)."""
    labels = component_labels(compat, active)
    for C in (covers, np.array([c.cover for c in columns]).reshape(-1, len(labels))):
        lab = np.where(C & (labels >= 0)[None, :], labels[None, :], -1)
        if ((lab.max(axis=1)[:, None] != lab) & (lab >= 0)).any():
            return None
    return labels, component_bounds(labels, covers, lam)


__all__ = ["branch_and_price_by_component", "split_by_components", "component_bounds", "component_labels", "count_by_component"]
