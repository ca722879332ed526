r"""Upper bounds of a score over many input boxes at once (:meth:`Embedding.box_upper
<groupcf.embeddings.base.Embedding.box_upper>`), the default of the protocol.

With a linear relaxation :math:`\mathrm{score}(y) \le a_k^\top y + d_k` valid on box
:math:`k` (:func:`~groupcf.embeddings.crown.linear_upper` over the columns some box lets
vary, the others folded into the offset: exact for an additive score, CROWN for a ReLU
network), its maximum over the box, :math:`d_k + \sum_j \max(a_{kj} \ell_{kj}, a_{kj}
u_{kj})`, bounds the score there. Without one, :meth:`score_bounds
<groupcf.embeddings.base.Embedding.score_bounds>` box by box; a model with neither gets
:math:`+\infty` (no box is ever excluded). Tree ensembles override it
(:func:`groupcf.embeddings.tree_splits.box_upper`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from groupcf.embeddings._typing import ArrayLike, FloatArray

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.base import Embedding


def box_upper(emb: Embedding, lb: ArrayLike, ub: ArrayLike, chunk: int = 4096) -> FloatArray:
    """``(K,)`` upper bounds of ``emb``'s score over the boxes ``[lb[k], ub[k]]`` (module docstring)."""
    low = np.atleast_2d(np.asarray(lb, dtype=np.float64))
    up = np.atleast_2d(np.asarray(ub, dtype=np.float64))
    K, n = low.shape
    out = np.empty(K)
    free = np.flatnonzero((up > low).any(axis=0))        # the relaxation is over these columns only
    A = np.eye(n)[:, free]
    for s in range(0, K, chunk):
        lo_k, up_k = low[s:s + chunk], up[s:s + chunk]
        c = lo_k.copy()
        c[:, free] = 0.0
        rel = emb.linear_upper(A, c, lo_k[:, free], up_k[:, free])
        if rel is None:
            try:
                out[s:s + chunk] = [emb.score_bounds(a, b)[1] for a, b in zip(lo_k, up_k)]
            except NotImplementedError:
                out[s:s + chunk] = np.inf
            continue
        a, d = rel
        out[s:s + chunk] = d + np.maximum(a * lo_k[:, free], a * up_k[:, free]).sum(axis=1)
    return out
