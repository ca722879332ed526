"""Array aliases used in the embedding layer's annotations: the package's ``FloatArray``,
``IntArray``, ``BoolArray`` (:mod:`groupcf.utils`), ``ArrayLike`` for inputs, and one tree's
node arrays."""
from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from groupcf.utils import BoolArray, FloatArray, IntArray

__all__ = ["ArrayLike", "BoolArray", "FloatArray", "IntArray", "TreeArrays"]

#: anything :func:`numpy.asarray` accepts (lists, arrays, scalars)
ArrayLike: TypeAlias = npt.ArrayLike
#: one tree as parallel node arrays ``(feature, threshold, left, right, value)``, local
#: node indices, ``-1`` features and children at leaves (the tree converters' exchange
#: format; values may still be float32 as the framework stores them)
TreeArrays: TypeAlias = tuple[IntArray, FloatArray, IntArray, IntArray, npt.NDArray[np.floating[Any]]]
