"""Columns and the column pool of the generic column-generation engine.

A :class:`Column` is a subset of the *elements* (the people, or instance types, a master
must cover) with an optional per-element cost (what each covered element pays when it is
assigned to this column) and an opaque ``payload`` (what the column *is* for the
algorithm: an action, a counterfactual point, ...). The engine only reads ``cover``,
``weight`` and ``element_costs``; ``key`` identifies equal columns.

The :class:`ColumnPool` keeps every column seen once, whether it is in the restricted
master or not: the pool level (:class:`~groupcf.colgen.levels.PoolLevel`) re-prices the
ones outside the master with each round's duals, a matrix-vector product.
"""
from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Column", "ColumnPool"]


@dataclass
class Column:
    """One column of a covering master.

    Attributes
    ----------
    key
        Hashable identity: two columns with the same key are the same column.
    cover
        Bool vector over the elements: which ones the column covers.
    payload
        What the column stands for (read by the algorithm, never by the engine).
    weight
        Objective coefficient in a set-cover master / budget use in a max-coverage master.
    element_costs
        Cost of each covered element when assigned to this column (``None``: zero), used
        to break ties between optimal integer solutions.
    source
        Which generator produced it (statistics).
    """

    key: Hashable
    cover: np.ndarray
    payload: Any = None
    weight: float = 1.0
    element_costs: np.ndarray | None = None
    source: str = ""

    def __post_init__(self):
        self.cover = np.asarray(self.cover, dtype=bool)

    def value(self, pi: np.ndarray) -> float:
        """``π · cover``: the column's dual value."""
        return float(pi[self.cover].sum())


@dataclass
class ColumnPool:
    """Every column seen, by key, with the set of those in the master."""

    n_elements: int
    columns: list[Column] = field(default_factory=list)
    index: dict = field(default_factory=dict)       # key -> position in columns
    in_master: list[bool] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.columns)

    def add(self, col: Column) -> int | None:
        """Add ``col`` unless its key is known; returns its position, or ``None`` if known."""
        if len(col.cover) != self.n_elements:
            raise ValueError(f"a column over {len(col.cover)} elements in a pool of {self.n_elements}")
        if col.key in self.index:
            return None
        self.index[col.key] = len(self.columns)
        self.columns.append(col)
        self.in_master.append(False)
        return len(self.columns) - 1

    def __contains__(self, key) -> bool:
        return key in self.index

    def outside(self) -> list[int]:
        """Positions of the columns not in the master."""
        return [j for j, m in enumerate(self.in_master) if not m]

    def matrix(self, positions=None) -> np.ndarray:
        """Bool matrix (columns × elements) of the given positions (default all)."""
        cols = self.columns if positions is None else [self.columns[j] for j in positions]
        return np.array([c.cover for c in cols], dtype=bool).reshape(len(cols), self.n_elements)

    def cost_matrix(self, positions=None) -> np.ndarray:
        """Element costs (columns × elements; 0 where a column has none)."""
        cols = self.columns if positions is None else [self.columns[j] for j in positions]
        out = np.zeros((len(cols), self.n_elements))
        for r, c in enumerate(cols):
            if c.element_costs is not None:
                out[r] = np.where(c.cover, c.element_costs, 0.0)
        return out
