"""Partial evaluation of an embedding around one input ``z0`` (Δ-evaluation).

Search methods that perturb one instance (GeCo's genetic search) score many rows that
equal ``z0`` except on a few columns ``C``. :class:`DeltaEvaluator` scores such rows from
the changed columns only: ``score(C, Zc)`` is ``emb.score(Z)`` where ``Z`` repeats ``z0``
with the columns ``C`` replaced by the rows of ``Zc``.

* Generic embeddings: ``emb.partial(F, z0_F)`` (``F`` the unchanged columns) is built once
  per column set and cached (key :func:`groupcf.utils.value_key` of ``C``).
* :class:`~groupcf.embeddings.network.ReLUNetwork`: the fixed inputs fold into the first
  layer, :math:`W_1 z + b_1 = W_{1,C} z_C + (b_1 + W_1 z_0 - W_{1,C} z_{0,C})`, so a column
  set costs one ``(m, |C|) x (|C|, h_1)`` product; :meth:`DeltaEvaluator.score_groups`
  then runs the hidden layers once for all groups stacked (the partial evaluation of
  GeCo, Schleich et al., "GeCo: Quality Counterfactual Explanations in Real Time",
  PVLDB 14(9), 2021, Sec. 5).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..utils import value_key

__all__ = ["DeltaEvaluator"]


class DeltaEvaluator:
    """Scores of rows equal to ``z0`` except on given columns (see the module docstring)."""

    def __init__(self, embedding, z0: np.ndarray):
        from .network import ReLUNetwork

        self.embedding = embedding
        self.z0 = np.asarray(z0, dtype=float)
        self._cache: dict = {}
        self._layers = embedding.layers if isinstance(embedding, ReLUNetwork) else None
        if self._layers is not None:
            W1, b1 = self._layers[0]
            self._base = b1 + W1 @ self.z0
        #: number of distinct column sets partially evaluated so far
        self.n_sets = 0

    def _fold(self, cols: np.ndarray):
        key = value_key(cols)
        hit = self._cache.get(key)
        if hit is None:
            if self._layers is not None:
                Wc = np.ascontiguousarray(self._layers[0][0][:, cols])
                hit = (Wc.T.copy(), self._base - Wc @ self.z0[cols])
            else:
                keep = np.ones(len(self.z0), dtype=bool)
                keep[cols] = False
                fixed = np.flatnonzero(keep)
                hit = self.embedding.partial(fixed, self.z0[fixed])
            self._cache[key] = hit
            self.n_sets += 1
        return hit

    def score(self, cols: Sequence[int], Zc: np.ndarray) -> np.ndarray:
        """Scores ``(m,)`` of ``z0`` with columns ``cols`` replaced by the rows of ``Zc``."""
        return self.score_groups([(cols, Zc)])[0]

    def score_groups(self, groups) -> list[np.ndarray]:
        """:meth:`score` of each ``(cols, Zc)`` in ``groups``, in one batch."""
        groups = [(np.asarray(c, dtype=np.int64), np.asarray(Z, dtype=float).reshape(len(Z), -1))
                  for c, Z in groups]
        if self._layers is None:
            return [self._fold(c).score(Z) if len(c) else
                    np.full(len(Z), float(self.embedding.score(self.z0[None, :])[0]))
                    for c, Z in groups]
        parts = []
        for c, Z in groups:
            WcT, bc = self._fold(c)
            parts.append(Z @ WcT + bc)
        if not parts:
            return []
        H = np.concatenate(parts) if len(parts) > 1 else parts[0]
        for W, b in self._layers[1:]:
            H = np.maximum(H, 0.0) @ W.T + b
        out = H[:, 0]
        ends = np.cumsum([len(p) for p in parts])[:-1]
        return np.split(out, ends)
