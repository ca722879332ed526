"""Sparse row assembly shared by formulations."""
from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ..solvers.base import Backend


class RowBuffer:
    """Collects sparse rows and adds them to a backend in one call."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.indptr: list[int] = [0]
        self.indices: list[int] = []
        self.data: list[float] = []
        self.lo: list[float] = []
        self.hi: list[float] = []

    def add(self, idx: npt.ArrayLike, coefs: npt.ArrayLike, lo: float, hi: float) -> None:
        idx = np.asarray(idx, dtype=np.int64).ravel()
        self.indices.extend(idx.tolist())
        self.data.extend(np.broadcast_to(np.asarray(coefs, dtype=float), idx.shape).tolist())
        self.indptr.append(len(self.indices))
        self.lo.append(lo)
        self.hi.append(hi)

    def flush(self, backend: Backend) -> np.ndarray:
        if not self.lo:
            return np.zeros(0, dtype=np.int64)
        A = sp.csr_matrix((self.data, self.indices, self.indptr), shape=(len(self.lo), backend.num_vars))
        out = backend.add_rows(A, np.array(self.lo), np.array(self.hi))
        self._reset()
        return out
