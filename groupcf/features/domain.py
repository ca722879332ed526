"""The input domain of a model in the expanded (encoded) space.

A :class:`InputDomain` is what an embedding needs to know about its inputs to compute
valid big-M constants: per expanded column a lower and upper bound, whether the column is
integral (0/1), and which groups of columns are one-hot (exactly one of them is 1).
It is produced by :meth:`groupcf.FeatureSpace.domain` and can be restricted (columns
fixed, categories forbidden) with :meth:`InputDomain.restrict`.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from ..utils import BoolArray, FloatArray, IntArray


@dataclass(frozen=True)
class InputDomain:
    """The valid region of the expanded input space: bounds, integrality and one-hot groups.

    Produced by :meth:`groupcf.FeatureSpace.domain`; embeddings read it to compute valid
    big-M constants.

    Parameters
    ----------
    lb, ub : numpy.ndarray
        ``(n,)`` lower and upper bound per expanded column.
    integer : numpy.ndarray
        ``(n,)`` bool: the column takes integer (0/1) values.
    onehot : tuple of numpy.ndarray, default ()
        Groups of columns of which exactly one is 1.
    grids : dict, default {}
        Continuous columns of integer-valued features: column -> ``(low, high)``, the
        column being ``(raw - low) / (high - low)`` with integer raw values (tree
        embeddings snap their thresholds to midpoints of this grid).

    Raises
    ------
    ValueError
        ``lb``, ``ub`` and ``integer`` of different lengths, or some ``lb > ub``.

    Examples
    --------
    >>> dom = gcf.InputDomain.box(3, onehot=[[0, 1]])
    >>> dom.n, dom.lb, dom.ub
    (3, array([0., 0., 0.]), array([1., 1., 1.]))
    >>> dom.interval_bounds(np.array([[1.0, 2.0, -1.0]]))     # x0 + 2 x1 - x2, x0 + x1 = 1
    (array([0.]), array([2.]))
    >>> dom.restrict(lb=np.array([0.0, 1.0, 0.0])).interval_bounds(np.array([[1.0, 2.0, -1.0]]))
    (array([1.]), array([2.]))
    """

    lb: FloatArray                       # (n,) lower bound per expanded column
    ub: FloatArray                       # (n,) upper bound per expanded column
    integer: BoolArray                   # (n,) bool, column takes integer (0/1) values
    onehot: tuple[IntArray, ...] = field(default_factory=tuple)  # groups with sum == 1
    # continuous columns of integer-valued features: column -> (low, high), the column
    # being (raw - low) / (high - low) with integer raw values (tree embeddings snap
    # their thresholds to midpoints of this grid)
    grids: dict[int, tuple[float, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.lb)
        if self.ub.shape != (n,) or self.integer.shape != (n,):
            raise ValueError("lb, ub and integer must have the same length")
        if np.any(self.lb > self.ub + 1e-12):
            raise ValueError("empty domain: some lb > ub")

    @property
    def n(self) -> int:
        return len(self.lb)

    @classmethod
    def box(cls, n: int, lb: float = 0.0, ub: float = 1.0, integer: bool = True,
            onehot: Iterable[npt.ArrayLike] = ()) -> InputDomain:
        """``n`` columns in ``[lb, ub]``; by default binary.

        Parameters
        ----------
        n : int
            Number of columns.
        lb, ub : float, default 0.0, 1.0
            The bounds of every column.
        integer : bool, default True
            Every column integral.
        onehot : sequence of sequence of int, default ()
            Groups of columns of which exactly one is 1.

        Returns
        -------
        InputDomain
            The box.
        """
        return cls(np.full(n, float(lb)), np.full(n, float(ub)), np.full(n, bool(integer)),
                   tuple(np.asarray(g, dtype=np.int64) for g in onehot))

    def restrict(self, lb: npt.ArrayLike | None = None, ub: npt.ArrayLike | None = None) -> InputDomain:
        """A sub-domain with tighter bounds (e.g. fixed or forbidden columns).

        Parameters
        ----------
        lb, ub : array-like or None, default None
            New bounds, intersected with the current ones (``None``: unchanged).

        Returns
        -------
        InputDomain
            The sub-domain.

        Raises
        ------
        ValueError
            Bounds that leave a column empty (some ``lb > ub``).
        """
        new_lb = self.lb if lb is None else np.maximum(self.lb, lb)
        new_ub = self.ub if ub is None else np.minimum(self.ub, ub)
        return replace(self, lb=np.asarray(new_lb, float), ub=np.asarray(new_ub, float))

    def interval_bounds(self, W: npt.ArrayLike, b: npt.ArrayLike | None = None) -> tuple[FloatArray, FloatArray]:
        """Exact bounds of ``W @ x + b`` over the domain's box with its one-hot groups.

        For a free column ``h`` the contribution is ``min/max(W[:, h] * lb_h, W[:, h] * ub_h)``.
        For a one-hot group exactly one column is 1, so the group contributes the min / max
        weight over its *allowed* columns (``ub > 0``), not a sum. These bounds are tight for
        each row separately (the box is a product of simplices and intervals).

        Parameters
        ----------
        W : numpy.ndarray
            ``(m, n)`` weights (a 1-D ``W`` is one row).
        b : numpy.ndarray or None, default None
            ``(m,)`` offsets (``None``: zeros).

        Returns
        -------
        tuple of numpy.ndarray
            ``(lo, hi)``, each of shape ``(m,)``.

        Raises
        ------
        ValueError
            ``W`` does not have ``n`` columns, or a one-hot group has no allowed column.
        """
        Wm = np.atleast_2d(np.asarray(W, dtype=np.float64))
        m, n = Wm.shape
        if n != self.n:
            raise ValueError(f"W has {n} columns, the domain {self.n}")
        lo = np.zeros(m) if b is None else np.array(b, dtype=float).reshape(m)
        hi = lo.copy()
        in_group = np.zeros(n, dtype=bool)
        for g in self.onehot:
            in_group[g] = True
            forced = g[self.lb[g] >= 0.5]
            allowed = forced if len(forced) else g[self.ub[g] >= 0.5]
            if len(allowed) == 0:
                raise ValueError(f"one-hot group {g.tolist()} has no allowed column")
            Wg = Wm[:, allowed]
            lo += Wg.min(axis=1)
            hi += Wg.max(axis=1)
        free = ~in_group
        if free.any():
            a = Wm[:, free] * self.lb[free]
            c = Wm[:, free] * self.ub[free]
            lo += np.minimum(a, c).sum(axis=1)
            hi += np.maximum(a, c).sum(axis=1)
        return lo, hi

    def sample(self, size: int, rng: int | np.random.Generator | None = None) -> FloatArray:
        """Random valid points.

        One column per one-hot group, free integer columns 0/1 within bounds, continuous
        columns uniform in ``[lb, ub]``.

        Parameters
        ----------
        size : int
            Number of points.
        rng : int, numpy.random.Generator or None, default None
            The randomness.

        Returns
        -------
        numpy.ndarray
            ``(size, n)`` points of the domain.
        """
        gen = np.random.default_rng(rng)
        X = gen.uniform(self.lb, self.ub, size=(size, self.n))
        ints = self.integer
        X[:, ints] = np.round(X[:, ints])
        X = np.clip(X, self.lb, self.ub)
        for g in self.onehot:
            forced = g[self.lb[g] >= 0.5]
            allowed = forced if len(forced) else g[self.ub[g] >= 0.5]
            X[:, g] = 0.0
            X[np.arange(size), gen.choice(allowed, size=size)] = 1.0
        return X
