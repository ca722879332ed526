"""Rows of the ReLU network formulation (:mod:`groupcf.embeddings.network`): one hidden
layer's variables and big-M rows, assembled as one sparse block."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from groupcf.embeddings._typing import FloatArray, IntArray

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.solvers.base import Backend

INF = math.inf


def affine_block(negW: FloatArray, in_idx: IntArray, h_idx: IntArray,
                  s_idx: IntArray | None, s_coef: FloatArray | None, n_cols: int) -> sp.csr_matrix:
    """Rows ``h_r + sum_j negW[r, j] x[in_idx[j]] (+ s_coef[r] s_r)`` as a CSR matrix over
    ``n_cols`` backend variables."""
    m = negW.shape[0]
    r, c = np.nonzero(negW)
    data = [negW[r, c], np.ones(m)]
    ri = [r, np.arange(m)]
    ci = [in_idx[c], h_idx]
    if s_idx is not None and s_coef is not None:
        data.append(s_coef)
        ri.append(np.arange(m))
        ci.append(s_idx)
    return sp.csr_matrix((np.concatenate(data), (np.concatenate(ri), np.concatenate(ci))),
                         shape=(m, n_cols))


def add_relu_layer(backend: Backend, W: FloatArray, b: FloatArray, L: FloatArray,
                    U: FloatArray, prev: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """Add one hidden layer; returns ``(h_idx, s_idx, rows)`` (``-1`` where no variable)."""
    from groupcf.solvers.base import VarType

    n = W.shape[0]
    inactive = U <= 0.0
    active = ~inactive & (L >= 0.0)
    unstable = ~inactive & ~active
    h_idx = np.full(n, -1, dtype=np.int64)
    s_idx = np.full(n, -1, dtype=np.int64)

    alive = ~inactive
    if alive.any():
        h_lb = np.where(active, L, 0.0)[alive]
        h_idx[alive] = backend.add_vars(int(alive.sum()), lb=h_lb, ub=U[alive])
    if unstable.any():
        s_idx[unstable] = backend.add_vars(int(unstable.sum()), lb=0.0, ub=1.0,
                                           vtype=VarType.BINARY)

    ncols = backend.num_vars
    blocks, los, his = [], [], []
    if active.any():                                   # h - W y = b
        blocks.append(affine_block(-W[active], prev, h_idx[active], None, None, ncols))
        los.append(b[active])
        his.append(b[active])
    if unstable.any():
        Wu, bu, Lu, Uu = -W[unstable], b[unstable], L[unstable], U[unstable]
        hu, su = h_idx[unstable], s_idx[unstable]
        k = len(hu)
        blocks.append(affine_block(Wu, prev, hu, None, None, ncols))        # h - Wy >= b
        los.append(bu)
        his.append(np.full(k, INF))
        blocks.append(affine_block(Wu, prev, hu, su, -Lu, ncols))           # h - Wy - L s <= b - L
        los.append(np.full(k, -INF))
        his.append(bu - Lu)
        blocks.append(affine_block(np.zeros((k, 0)), prev[:0], hu, su, -Uu, ncols))  # h - U s <= 0
        los.append(np.full(k, -INF))
        his.append(np.zeros(k))
    if not blocks:
        return h_idx, s_idx, np.zeros(0, dtype=np.int64)
    A = sp.vstack(blocks, format="csr")
    new_rows = backend.add_rows(A, np.concatenate(los), np.concatenate(his))
    return h_idx, s_idx, np.asarray(new_rows, dtype=np.int64)
