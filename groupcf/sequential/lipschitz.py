r"""A gradient (Lipschitz) lower bound on the cost of a sequence, used with the MIP bound.

When every ``add`` action costs ``w_i |delta_i|`` and its consequences are linear, a sequence
moves the model input from the start :math:`x'` (the start with the chosen ``set`` actions
applied) along :math:`\sum_i \delta_i d_i`, with :math:`d_i` the action's direction (its feature
plus its consequence factors). Inside a convex box that contains every reachable final state,

.. math::

    s(x_T) - s(x') \le \sum_i G_i |\delta_i| \le \max_i \frac{G_i}{w_i} \sum_i w_i |\delta_i|,

with :math:`G_i` an upper bound of :math:`|\nabla s \cdot d_i|` over the box given by the
embedding (:meth:`~groupcf.embeddings.base.Embedding.gradient_bound`; for a ReLU network,
interval arithmetic through its Jacobian: a neuron whose pre-activation bounds straddle 0
contributes a derivative in :math:`[0, 1]`). Acceptance needs :math:`s(x_T) \ge 0`,
so the cost is at least :math:`\sum_{set} c + \max(0, -s(x')) / \max_i (G_i / w_i)`; the bound
is the minimum of this over the choices of ``set`` actions. Smaller boxes (a cost cap) give
smaller :math:`G_i`, hence a larger bound.
"""
from __future__ import annotations

import itertools

import numpy as np

from groupcf.exceptions import InvalidInputError
from groupcf.sequential.actions import AbsChange, Constant, CustomCost


def lipschitz_bound(problem, encoding, emb, domain) -> float | None:
    """The bound of the module docstring, or ``None`` when the costs are not of that form."""
    aset, x0 = problem.actions, problem.x0
    cols = {f: encoding.columns[i] for i, f in enumerate(aset.features)}
    adds, sets = [], []
    for a in aset:
        if a.kind == "add":
            if not isinstance(a.cost, AbsChange) or a.cost.weight <= 0:
                return None
            if any(callable(e) or isinstance(e, tuple) for e in a.consequences.values()):
                return None
            adds.append(a)
        else:
            if isinstance(a.cost, Constant):
                sets.append((a, a.cost.c))
            elif isinstance(a.cost, CustomCost):
                sets.append((a, a.cost.min_cost))
            else:
                return None
    ratio = 0.0
    for a in adds:
        d = np.zeros(emb.n_inputs)
        d[cols[a.feature][0]] += 1.0
        for g, k in a.consequences.items():
            d[cols[g][0]] += float(k)
        G = emb.gradient_bound(d, domain)   # Lipschitz constant of the score along d
        if G is None:
            return None
        ratio = max(ratio, G / a.cost.weight)
    best = np.inf
    idx = aset.index
    choices = [[(None, 0.0)] + [((a, v), c) for v in a.values] for a, c in sets]
    for combo in itertools.product(*choices):
        x = x0.astype(float).copy()
        const = 0.0
        for pick, c in combo:
            if pick is not None:
                a, v = pick
                x[idx[a.feature]] = v
                const += c
        try:
            s = float(emb.score(encoding(x[None, :]))[0])
        except InvalidInputError:     # a category the encoding does not know: unreachable
            continue
        need = max(0.0, -s)
        if need == 0.0:
            best = min(best, const)
        elif ratio > 0:
            best = min(best, const + need / ratio)
    return None if not np.isfinite(best) else best
