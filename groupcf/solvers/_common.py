"""Helpers shared by the solver backends (private).

Every backend normalises its inputs with the same functions so that the details the
formulations depend on -- what ``"B"`` means, how a scalar broadcasts, which solutions
count as distinct, how a gap is computed -- are identical on every solver.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from .base import INF, Status, VarType

# integer codes used internally for variable types
CONT, BIN, INT = 0, 1, 2
_CODE = {VarType.CONTINUOUS: CONT, VarType.BINARY: BIN, VarType.INTEGER: INT}

FEAS_TOL = 1e-6  # absolute/relative tolerance when re-checking solutions


def vtype_code(v: Any) -> int:
    """``"C"``/``"B"``/``"I"`` or a :class:`VarType` -> internal integer code."""
    try:
        return _CODE[VarType(v)]
    except ValueError:
        raise ValueError(f"unknown variable type {v!r}; use 'C', 'B', 'I' or a VarType") from None


def vtype_codes(vtype: VarType | str | Sequence[VarType | str], n: int) -> np.ndarray:
    """A scalar or per-variable sequence of variable types -> ``int8`` codes of length n."""
    if isinstance(vtype, (str, VarType)):
        return np.full(n, vtype_code(vtype), dtype=np.int8)
    codes = np.fromiter((vtype_code(v) for v in vtype), dtype=np.int8)
    if codes.shape != (n,):
        raise ValueError(f"expected {n} variable types, got {codes.shape[0]}")
    return codes


def float_array(v: Any, n: int, what: str = "values", none: float | None = None) -> np.ndarray:
    """Broadcast a scalar or check a sequence of length n (a copy, float64). ``v=None``
    is allowed when ``none`` gives its meaning (e.g. ``-inf`` for a lower bound); NaN is
    rejected."""
    if v is None and none is not None:
        return np.full(n, none)
    a = np.asarray(v, dtype=np.float64)
    if a.ndim == 0:
        a = np.full(n, float(a))
    a = a.ravel()
    if a.shape != (n,):
        raise ValueError(f"expected {n} {what}, got {a.shape[0]}")
    if np.isnan(a).any():
        raise ValueError(f"NaN in {what}")
    return np.array(a, dtype=np.float64)


def index_array(idx: Any, n_max: int, what: str = "variable") -> np.ndarray:
    """Indices as ``int64``; raises IndexError when out of range."""
    a = np.asarray(idx, dtype=np.int64).ravel()
    if a.size and (a.min() < 0 or a.max() >= n_max):
        raise IndexError(f"{what} index out of range 0..{n_max - 1}")
    return a


def binary_bounds(lb: np.ndarray, ub: np.ndarray,
                  codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BINARY means integer in [0, 1]: intersect the given bounds with [0, 1]."""
    is_bin = codes == BIN
    if is_bin.any():
        lb = lb.copy()
        ub = ub.copy()
        lb[is_bin] = np.maximum(lb[is_bin], 0.0)
        ub[is_bin] = np.minimum(ub[is_bin], 1.0)
    return lb, ub


def as_csr(A: Any, num_vars: int) -> sp.csr_matrix:
    """Any scipy sparse matrix (or dense array) with at most ``num_vars`` columns -> CSR
    with exactly ``num_vars`` columns, canonical (sorted, summed duplicates), float64."""
    if not sp.issparse(A):
        A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    A = sp.csr_matrix(A, dtype=np.float64)
    if A.shape[1] > num_vars:
        raise ValueError(f"the row matrix has {A.shape[1]} columns but the model has only "
                         f"{num_vars} variables")
    if A.shape[1] < num_vars:
        A = sp.csr_matrix((A.data, A.indices, A.indptr), shape=(A.shape[0], num_vars))
    A.sum_duplicates()
    A.eliminate_zeros()
    return A


class GrowArray:
    """A 1-d numpy array with amortised O(1) append (column generation adds many columns)."""

    def __init__(self, dtype: Any = np.float64) -> None:
        self._a = np.empty(16, dtype=dtype)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def extend(self, values: Any) -> None:
        values = np.asarray(values, dtype=self._a.dtype).ravel()
        need = self._n + values.size
        if need > self._a.size:
            new = np.empty(max(need, 2 * self._a.size), dtype=self._a.dtype)
            new[:self._n] = self._a[:self._n]
            self._a = new
        self._a[self._n:need] = values
        self._n = need

    @property
    def view(self) -> np.ndarray:
        """The live contents (a view: write through it to modify entries)."""
        return self._a[:self._n]


class VarTable:
    """The backend's own record of variable bounds, types and objective coefficients."""

    def __init__(self) -> None:
        self.lb = GrowArray()
        self.ub = GrowArray()
        self.kind = GrowArray(np.int8)
        self.cost = GrowArray()

    def __len__(self) -> int:
        return len(self.lb)

    def add(self, lb: Any, ub: Any, kind: Any, cost: Any) -> None:
        self.lb.extend(lb)
        self.ub.extend(ub)
        self.kind.extend(kind)
        self.cost.extend(cost)

    @property
    def is_int(self) -> np.ndarray:
        return np.asarray(self.kind.view != CONT)

    @property
    def is_mip(self) -> bool:
        return bool(np.any(self.kind.view != CONT))


def prepare_vars(n: int, lb: Any, ub: Any, vtype: Any,
                 obj: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Normalise the arguments of ``add_vars``: arrays of length n, BINARY clipped to [0,1]."""
    if n < 0:
        raise ValueError("n must be >= 0")
    lb = float_array(lb, n, "lower bounds", none=-INF)
    ub = float_array(ub, n, "upper bounds", none=INF)
    codes = vtype_codes(vtype, n)
    obj = float_array(obj, n, "objective coefficients")
    lb, ub = binary_bounds(lb, ub, codes)
    return lb, ub, codes, obj


def prepare_rows(A: Any, lo: Any, hi: Any, num_vars: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    A = as_csr(A, num_vars)
    m = A.shape[0]
    return (A, float_array(lo, m, "row lower bounds", none=-INF),
            float_array(hi, m, "row upper bounds", none=INF))


def prepare_objective(idx: Any, coefs: Any, sense: str, num_vars: int) -> tuple[np.ndarray, bool]:
    """-> (dense cost vector in the user's sense, is_max)."""
    if sense not in ("min", "max"):
        raise ValueError(f"sense must be 'min' or 'max', got {sense!r}")
    idx = index_array(idx, num_vars)
    coefs = float_array(coefs, idx.size, "objective coefficients")
    c = np.zeros(num_vars)
    np.add.at(c, idx, coefs)  # repeated indices add up, as in a linear expression
    return c, sense == "max"


def relative_gap(primal: float | None, bound: float | None) -> float | None:
    """``|primal - bound| / |primal|`` (HiGHS' and Gurobi's definition); 0 when equal."""
    if primal is None or bound is None or not (math.isfinite(primal) and math.isfinite(bound)):
        return None
    diff = abs(primal - bound)
    if diff <= 1e-12:
        return 0.0
    return diff / abs(primal) if primal != 0 else INF


def round_integers(x: np.ndarray, is_int: np.ndarray) -> np.ndarray:
    """Integer variables are returned exactly integral (solvers return 0.9999999, -0.0)."""
    x = np.asarray(x, dtype=np.float64).copy()
    if is_int.any():
        x[is_int] = np.round(x[is_int]) + 0.0
    return x


def is_feasible(x: np.ndarray, A: sp.spmatrix, lo: np.ndarray, hi: np.ndarray, lb: np.ndarray, ub: np.ndarray,
                is_int: np.ndarray, tol: float = FEAS_TOL) -> bool:
    """Re-check a solution against rows, bounds and integrality (scaled tolerance)."""
    if np.any(x < lb - tol * np.maximum(1.0, np.abs(lb))) or \
            np.any(x > ub + tol * np.maximum(1.0, np.abs(ub))):
        return False
    if is_int.any() and np.any(np.abs(x[is_int] - np.round(x[is_int])) > 1e-5):
        return False
    if A.shape[0]:
        act = A @ x
        if np.any(act < lo - tol * np.maximum(1.0, np.abs(lo))) or \
                np.any(act > hi + tol * np.maximum(1.0, np.abs(hi))):
            return False
    return True


def select_pool(candidates: Iterable[np.ndarray], incumbent: np.ndarray, is_int: np.ndarray,
                objective: Callable[[np.ndarray], float], is_max: bool,
                n_keep: int) -> tuple[list[np.ndarray], list[float]]:
    """Distinct solutions for :attr:`Solution.pool`.

    Two solutions are the same when their integer variables agree (after rounding); of
    the solutions sharing an integer assignment the best is kept. The incumbent's
    assignment is excluded. Returns ``(pool, pool_objectives)``, best first, at most
    ``n_keep`` long. ``objective(x)`` gives a solution's objective in the user's sense.
    """
    if n_keep <= 0:
        return [], []

    def key(x: np.ndarray) -> bytes:
        return bytes(np.round(x[is_int]).astype(np.int64).tobytes())

    best: dict[bytes, tuple[float, np.ndarray]] = {}
    inc_key = key(incumbent)
    for x in candidates:
        k = key(x)
        if k == inc_key:
            continue
        f = float(objective(x))
        if k not in best or (f > best[k][0] if is_max else f < best[k][0]):
            best[k] = (f, x)
    ranked = sorted(best.values(), key=lambda t: -t[0] if is_max else t[0])[:n_keep]
    return [x for _, x in ranked], [f for f, _ in ranked]


def limit_status(has_solution: bool) -> Status:
    """A solve stopped by a limit: FEASIBLE with a solution, TIME_LIMIT without."""
    return Status.FEASIBLE if has_solution else Status.TIME_LIMIT


_scheduler_threads = 0  # the "threads" value HiGHS' process-wide scheduler was started with


def sync_scheduler(threads: int | None) -> int:
    """The value for HiGHS' ``threads`` option (0 = automatic). HiGHS runs one task
    scheduler per process, fixed at its first use: a run with another thread count fails
    (model status kNotset) unless the scheduler is reset first, which this does when the
    count changes (so do not change it while a HiGHS solve runs in another thread)."""
    global _scheduler_threads
    import highspy

    n = int(threads) if threads else 0
    if n != _scheduler_threads:
        highspy.Highs.resetGlobalScheduler(True)
        _scheduler_threads = n
    return n


class TableBoundsMixin:
    """``set_bounds`` and ``set_vtype`` written once over the backend's own
    :class:`VarTable` (``_var_table``): arguments normalised, binaries clipped to [0, 1],
    then handed to the backend's ``_push_bounds(idx, lb, ub)`` (send to the solver and
    record) and ``_push_vtype(idx, codes)`` (send the types; the table already has them)."""

    if TYPE_CHECKING:  # provided by the backend class (declared for the type checker only)
        @property
        def _var_table(self) -> VarTable: ...

        @property
        def num_vars(self) -> int: ...

        def _push_bounds(self, idx: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> None: ...

        def _push_vtype(self, idx: np.ndarray, codes: np.ndarray) -> None: ...

    def set_bounds(self, idx: Any, lb: Any, ub: Any) -> None:
        idx = index_array(idx, self.num_vars)
        lb = float_array(lb, idx.size, "lower bounds", none=-INF)
        ub = float_array(ub, idx.size, "upper bounds", none=INF)
        lb, ub = binary_bounds(lb, ub, self._var_table.kind.view[idx])
        self._push_bounds(idx, lb, ub)

    def set_vtype(self, idx: Any, vtype: VarType | str) -> None:
        idx = index_array(idx, self.num_vars)
        codes = vtype_codes(vtype, idx.size)
        t = self._var_table
        t.kind.view[idx] = codes
        if np.any(codes == BIN):
            lb, ub = binary_bounds(t.lb.view[idx], t.ub.view[idx], codes)
            self._push_bounds(idx, lb, ub)
        if idx.size:
            self._push_vtype(idx, codes)
