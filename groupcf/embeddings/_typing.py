"""Array aliases used in the embedding layer's annotations (numpy arrays by dtype)."""
from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = ["ArrayLike", "BoolArray", "FloatArray", "IntArray", "TreeArrays"]

#: anything :func:`numpy.asarray` accepts (lists, arrays, scalars)
ArrayLike: TypeAlias = npt.ArrayLike
#: a float64 array (scores, bounds, points)
FloatArray: TypeAlias = npt.NDArray[np.float64]
#: an int64 array (column and backend variable indices)
IntArray: TypeAlias = npt.NDArray[np.int64]
#: a boolean array (masks)
BoolArray: TypeAlias = npt.NDArray[np.bool_]
#: one tree as parallel node arrays ``(feature, threshold, left, right, value)``, local
#: node indices, ``-1`` features and children at leaves (the tree converters' exchange
#: format; values may still be float32 as the framework stores them)
TreeArrays: TypeAlias = tuple[IntArray, FloatArray, IntArray, IntArray, npt.NDArray[np.floating[Any]]]
