r"""Maximum coverage by a change set: the combinatorial core of pricing.

A type :math:`k` with difference set :math:`D_k` (the features where it differs from a
fixed point or seed) is covered by a change set :math:`F` iff :math:`D_k \subseteq F`.
Choosing :math:`|F| \le T` to cover the most weight is

.. math::

    \max \sum_k w_k z_k \quad\text{s.t.}\quad z_k \le f_l \ (l \in D_k),\quad
    \sum_l f_l \le T,\quad z_j + z_k \le 1 \ (|D_j \cup D_k| > T),\quad z, f \text{ binary}.

The conflict rows are implied once :math:`f` is integral but not by the LP relaxation,
whose value with fractional :math:`f` is typically half the total weight; with binary
:math:`z` the solver merges them into clique cuts. Used by the auxiliary MIP 1
(:class:`~groupcf.group.formulations.pricing.BestChangeSet`) and the seed pricing
(:class:`~groupcf.group.formulations.seed.SeedPricing`).
"""
from __future__ import annotations

import numpy as np

from ...formulations.rows import RowBuffer
from ...solvers.base import INF, VarType


def add_inclusion_coverage(backend, D: np.ndarray, T: int, f=None, types=None, rows: RowBuffer | None = None):
    """Add the rows above for the bool matrix ``D`` (types × features).

    ``f``: existing backend indices of the feature variables (else new binaries with
    ``Σ f ≤ T``); ``types``: backend indices of the coverage variables (else new
    binaries). Rows go to ``rows`` when given (the caller flushes), else straight to the
    backend. Returns ``(f, z)``.
    """
    own = rows is None
    if rows is None:
        rows = RowBuffer()
    if f is None:
        f = backend.add_vars(D.shape[1], 0.0, 1.0, VarType.BINARY)
        rows.add(f, 1.0, -INF, float(T))
    z = backend.add_vars(D.shape[0], 0.0, 1.0, VarType.BINARY) if types is None else types
    for k, l in zip(*np.nonzero(D)):
        rows.add([z[k], f[l]], [1.0, -1.0], -INF, 0.0)                  # z_k <= f_l
    clash = (D[:, None, :] | D[None, :, :]).sum(axis=2) > T
    for a, b in zip(*np.nonzero(np.triu(clash, 1))):
        rows.add([z[a], z[b]], [1.0, 1.0], -INF, 1.0)                   # conflict
    if own:
        rows.flush(backend)
    return f, z
