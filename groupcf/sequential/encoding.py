"""x-space (one column per raw feature, category codes) -> model input (numeric columns
as they are, categorical features one-hot), vectorised; the certified bound reads its
layout to put the model's inputs into a MIP."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from groupcf.exceptions import InvalidInputError


@dataclass
class OneHotEncoding:
    """``features``: names in x-space order; ``categories``: ``{name: codes}`` for the
    categorical ones (their one-hot block follows the order of ``codes``)."""

    features: Sequence[str]
    categories: dict

    def __post_init__(self):
        self.features = list(self.features)
        self.categories = {f: np.asarray(c, dtype=float) for f, c in self.categories.items()}
        self.columns: list[np.ndarray] = []     # model-input columns of each feature
        k = 0
        for f in self.features:
            w = len(self.categories[f]) if f in self.categories else 1
            self.columns.append(np.arange(k, k + w))
            k += w
        self.n_inputs = k

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        Z = np.zeros((X.shape[0], self.n_inputs))
        for i, f in enumerate(self.features):
            cols = self.columns[i]
            if f in self.categories:
                hit = X[:, i, None] == self.categories[f][None, :]
                if not hit.any(1).all():
                    bad = X[~hit.any(1), i][0]
                    raise InvalidInputError(f"feature {f!r}: unknown category code {bad}")
                Z[:, cols] = hit
            else:
                Z[:, cols[0]] = X[:, i]
        return Z
