"""The one small interface every solver backend implements.

Formulations are written once against :class:`Backend`; they never test which solver
they run on. A backend declares what it can do in :class:`Capabilities` and formulations
adapt to the declaration (e.g. ask for several MIP solutions only when
``capabilities.multiple_solutions``).

The interface is array based, close to HiGHS' low-level API, because that is what is fast:
variables are integer indices ``0..num_vars-1`` and constraints are ranged rows
``lo <= A x <= hi`` given as sparse matrices.
"""
from __future__ import annotations

import abc
import dataclasses
import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

INF = math.inf


class VarType(str, enum.Enum):
    """Variable types: continuous, binary, integer."""

    CONTINUOUS = "C"
    BINARY = "B"
    INTEGER = "I"


class Status(str, enum.Enum):
    """Outcome of a solve, common to every backend."""

    OPTIMAL = "optimal"              # proven optimal (within the MIP gap for MIPs)
    FEASIBLE = "feasible"            # a solution, optimality not proven (time limit, ...)
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    TIME_LIMIT = "time_limit"        # time limit reached without any feasible solution
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        return self in (Status.OPTIMAL, Status.FEASIBLE)


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do; formulations read this instead of testing the solver's name."""

    lp_duals: bool = False               # row duals after an LP solve
    multiple_solutions: bool = False     # several feasible MIP solutions from one solve
    mip_start: bool = False              # accepts a starting MIP solution
    dual_bound: bool = False             # reports the MIP dual (best) bound


@dataclass
class SolverOptions:
    """Options common to every backend."""

    time_limit: float | None = None   # seconds
    mip_gap: float | None = None      # relative MIP gap
    mip_abs_gap: float | None = None  # absolute MIP gap (None: the solver's default)
    threads: int | None = None
    verbose: bool = False


@dataclass
class Solution:
    """Result of :meth:`Backend.solve`.

    ``x`` holds the values of all variables (``None`` without a solution); ``pool`` holds
    further distinct feasible solutions (best first, the incumbent excluded) when they were
    requested and the backend can provide them; ``row_duals`` are the LP duals (sign: for a
    minimisation, a binding ``>=`` row has a dual ``>= 0``).
    """

    status: Status
    objective: float | None = None
    x: np.ndarray | None = None
    dual_bound: float | None = None
    gap: float | None = None
    row_duals: np.ndarray | None = None
    solve_time: float = 0.0
    pool: list[np.ndarray] = field(default_factory=list)
    pool_objectives: list[float] = field(default_factory=list)

    @property
    def values(self) -> np.ndarray:
        """``x`` where a solution is known to exist (after checking ``status``): the
        variables' values; :class:`~groupcf.exceptions.SolverError` without a solution."""
        if self.x is None:
            from ..exceptions import SolverError

            raise SolverError(f"the solve has no solution (status {self.status.value})")
        return self.x

    def __repr__(self) -> str:  # short: x can be long
        return (f"Solution(status={self.status.value}, objective={self.objective}, "
                f"dual_bound={self.dual_bound}, pool={len(self.pool)}, time={self.solve_time:.3f}s)")


def _as_array(v: Any, n: int, dtype: Any = float) -> np.ndarray:
    a = np.asarray(v, dtype=dtype)
    if a.ndim == 0:
        a = np.full(n, a, dtype=dtype)
    if a.shape != (n,):
        raise ValueError(f"expected {n} values, got shape {a.shape}")
    return a


class Backend(abc.ABC):
    """Abstract solver backend.

    Subclasses set ``name`` and ``capabilities`` and implement the abstract methods. The
    model is minimised unless :meth:`set_objective` says ``sense="max"``.
    """

    #: class attributes, which a backend may refine per instance (pyomo:<solver>)
    name: str = "abstract"
    capabilities: Capabilities = Capabilities()

    def __init__(self, options: SolverOptions | None = None, **kwargs: Any) -> None:
        self.options = options or SolverOptions(**kwargs)

    # -- building -------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def num_vars(self) -> int: ...

    @property
    @abc.abstractmethod
    def num_rows(self) -> int: ...

    @abc.abstractmethod
    def add_vars(self, n: int, lb: Any = 0.0, ub: Any = INF,
                 vtype: VarType | str | Sequence[VarType | str] = VarType.CONTINUOUS, obj: Any = 0.0) -> np.ndarray:
        """Add ``n`` variables; returns their indices. Scalars broadcast."""

    @abc.abstractmethod
    def add_rows(self, A: Any, lo: Any, hi: Any) -> np.ndarray:
        """Add rows ``lo <= A x <= hi``; ``A`` is sparse with ``num_vars`` (or fewer) columns.
        Returns the new rows' indices."""

    def add_row(self, idx: Any, coefs: Any, lo: float = -INF, hi: float = INF) -> int:
        """Add one row ``lo <= sum coefs[j] * x[idx[j]] <= hi``."""
        idx = np.asarray(idx, dtype=np.int64).ravel()
        coefs = _as_array(coefs, len(idx))
        A = sp.csr_matrix((coefs, idx, [0, len(idx)]), shape=(1, self.num_vars))
        return int(self.add_rows(A, [lo], [hi])[0])

    def add_column(self, obj: float, rows: Any, coefs: Any, lb: float = 0.0, ub: float = INF,
                   vtype: VarType | str = VarType.CONTINUOUS) -> int:
        """Add one variable with its coefficients in existing rows (column generation)."""
        raise NotImplementedError(f"{self.name} does not support adding columns")

    @abc.abstractmethod
    def set_objective(self, idx: Any, coefs: Any, sense: str = "min", offset: float = 0.0) -> None:
        """Replace the objective: ``coefs`` on variables ``idx``, zero elsewhere."""

    @abc.abstractmethod
    def set_bounds(self, idx: Any, lb: Any, ub: Any) -> None: ...

    @abc.abstractmethod
    def set_vtype(self, idx: Any, vtype: VarType | str) -> None: ...

    @abc.abstractmethod
    def set_row_bounds(self, rows: Any, lo: Any, hi: Any) -> None: ...

    def set_mip_start(self, idx: Any, values: Any) -> None:  # noqa: B027 (optional: a no-op by default)
        """Offer a (possibly partial) starting solution; ignored without ``mip_start``."""

    def require(self, capability: str, purpose: str) -> None:
        """Raise :class:`~groupcf.exceptions.SolverCapabilityError` unless this backend has
        ``capability`` (a field of :class:`Capabilities`), which ``purpose`` needs."""
        from ..exceptions import SolverCapabilityError

        if not hasattr(self.capabilities, capability):
            raise ValueError(f"unknown capability {capability!r}")
        if not getattr(self.capabilities, capability):
            raise SolverCapabilityError(
                f"{purpose} needs {capability.replace('_', ' ')}, which the {self.name!r} backend "
                "does not provide; use solver='highs' (or 'gurobi', 'pyomo')")

    def spawn(self) -> Backend:
        """A new, empty model on the same solver with the same configuration (a copy of
        ``options``). Formulations use it for independent models, e.g. master and pricing."""
        return type(self)(options=dataclasses.replace(self.options))

    # -- solving ----------------------------------------------------------------------
    @abc.abstractmethod
    def solve(self, n_solutions: int = 1) -> Solution:
        """Solve. ``n_solutions > 1`` asks for that many distinct feasible solutions in
        ``Solution.pool`` when ``capabilities.multiple_solutions``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vars={self.num_vars}, rows={self.num_rows})"
