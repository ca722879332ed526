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
    """Variable types: continuous, binary, integer.

    Attributes
    ----------
    CONTINUOUS, BINARY, INTEGER
        ``"C"``, ``"B"``, ``"I"``.

    Examples
    --------
    >>> from groupcf.solvers import VarType
    >>> VarType("B") is VarType.BINARY, VarType.BINARY == "B"
    (True, True)
    """

    CONTINUOUS = "C"
    BINARY = "B"
    INTEGER = "I"


class Status(str, enum.Enum):
    """Outcome of a solve, common to every backend; every result's ``status``.

    Attributes
    ----------
    OPTIMAL
        Proven optimal (within the MIP gap for MIPs).
    FEASIBLE
        A solution, optimality not proven (time limit, ...).
    INFEASIBLE, UNBOUNDED
        No solution / an unbounded objective.
    TIME_LIMIT
        The time limit passed without any feasible solution.
    ERROR
        The solver failed (or, for a set of results, one of them did).

    Examples
    --------
    >>> gcf.Status("optimal") is gcf.Status.OPTIMAL
    True
    >>> gcf.Status.FEASIBLE.has_solution, gcf.Status.TIME_LIMIT.has_solution
    (True, False)
    >>> gcf.Status.OPTIMAL == "optimal"        # a str enum: compares with its value
    True
    """

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
    """What a backend can do; formulations read this instead of testing the solver's name.

    Parameters
    ----------
    lp_duals : bool, default False
        Row duals after an LP solve.
    multiple_solutions : bool, default False
        Several feasible MIP solutions from one solve (``Solution.pool``).
    mip_start : bool, default False
        Accepts a starting MIP solution.
    dual_bound : bool, default False
        Reports the MIP dual (best) bound.

    Examples
    --------
    >>> from groupcf.solvers import make_backend
    >>> make_backend("highs").capabilities
    Capabilities(lp_duals=True, multiple_solutions=True, mip_start=True, dual_bound=True)
    """

    lp_duals: bool = False               # row duals after an LP solve
    multiple_solutions: bool = False     # several feasible MIP solutions from one solve
    mip_start: bool = False              # accepts a starting MIP solution
    dual_bound: bool = False             # reports the MIP dual (best) bound


@dataclass
class SolverOptions:
    """Options common to every backend.

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds per solve (``None``: no limit).
    mip_gap : float or None, default None
        Relative MIP gap (``None``: the solver's default).
    mip_abs_gap : float or None, default None
        Absolute MIP gap (``None``: the solver's default).
    threads : int or None, default None
        Solver threads (``None``: the solver's default).
    verbose : bool, default False
        Show the solver's log.

    Examples
    --------
    >>> from groupcf.solvers import SolverOptions, make_backend
    >>> make_backend("highs", options=SolverOptions(time_limit=5), threads=1).options
    SolverOptions(time_limit=5, mip_gap=None, mip_abs_gap=None, threads=1, verbose=False)
    """

    time_limit: float | None = None   # seconds
    mip_gap: float | None = None      # relative MIP gap
    mip_abs_gap: float | None = None  # absolute MIP gap (None: the solver's default)
    threads: int | None = None
    verbose: bool = False


@dataclass
class Solution:
    """Result of :meth:`Backend.solve`.

    Parameters
    ----------
    status : Status
        The outcome (see the conventions in :mod:`groupcf.solvers`).
    objective : float or None, default None
        ``c @ x + offset`` in the user's sense (``None`` without a solution).
    x : numpy.ndarray or None, default None
        The values of all variables (``None`` without a solution); integer variables are
        rounded to exact integers.
    dual_bound : float or None, default None
        The MIP dual (best) bound, when the backend reports it.
    gap : float or None, default None
        The relative MIP gap reached.
    row_duals : numpy.ndarray or None, default None
        The LP duals (sign: for a minimisation, a binding ``>=`` row has a dual ``>= 0``).
    solve_time : float, default 0.0
        Seconds.
    pool : list of numpy.ndarray
        Further distinct feasible solutions (best first, the incumbent excluded) when they
        were requested and the backend can provide them.
    pool_objectives : list of float
        Their objective values.

    Examples
    --------
    >>> from groupcf.solvers import make_backend
    >>> b = make_backend("highs")
    >>> x = b.add_vars(2, ub=1, vtype="B", obj=[-1, -2])    # min -x0 - 2 x1
    >>> b.add_row(x, [1, 1], hi=1)                          # x0 + x1 <= 1
    0
    >>> sol = b.solve()
    >>> sol.status, sol.objective, sol.x
    (<Status.OPTIMAL: 'optimal'>, -2.0, array([0., 1.]))
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
    model is minimised unless :meth:`set_objective` says ``sense="max"``. Build one with
    :func:`~groupcf.solvers.make_backend`.

    Parameters
    ----------
    options : SolverOptions or None, default None
        The solver's options (``None``: built from ``kwargs``).
    **kwargs
        Fields of :class:`SolverOptions` (``time_limit``, ``mip_gap``, ...), when
        ``options`` is not given.

    Examples
    --------
    >>> from groupcf.solvers import make_backend
    >>> b = make_backend("highs")
    >>> x = b.add_vars(2, ub=1, vtype="B", obj=[-1, -2])    # min -x0 - 2 x1
    >>> b.add_row(x, [1, 1], hi=1)                          # x0 + x1 <= 1
    0
    >>> sol = b.solve()
    >>> sol.status, sol.objective, sol.x
    (<Status.OPTIMAL: 'optimal'>, -2.0, array([0., 1.]))
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
        """Add ``n`` variables (scalars broadcast).

        Parameters
        ----------
        n : int
            How many.
        lb, ub : float or array-like, default 0.0, INF
            Their bounds.
        vtype : VarType, str or sequence, default VarType.CONTINUOUS
            Their type(s): ``"C"``, ``"B"``, ``"I"``.
        obj : float or array-like, default 0.0
            Their objective coefficients.

        Returns
        -------
        numpy.ndarray
            Their indices.
        """

    @abc.abstractmethod
    def add_rows(self, A: Any, lo: Any, hi: Any) -> np.ndarray:
        """Add rows ``lo <= A x <= hi``.

        Parameters
        ----------
        A : scipy.sparse matrix or array-like
            With ``num_vars`` (or fewer) columns.
        lo, hi : float or array-like
            The rows' bounds (``-INF`` / ``INF``: none).

        Returns
        -------
        numpy.ndarray
            The new rows' indices.
        """

    def add_row(self, idx: Any, coefs: Any, lo: float = -INF, hi: float = INF) -> int:
        """Add one row ``lo <= sum coefs[j] * x[idx[j]] <= hi``.

        Parameters
        ----------
        idx : array-like of int
            Variable indices.
        coefs : float or array-like
            Their coefficients.
        lo, hi : float, default -INF, INF
            The row's bounds.

        Returns
        -------
        int
            The row's index.
        """
        idx = np.asarray(idx, dtype=np.int64).ravel()
        coefs = _as_array(coefs, len(idx))
        A = sp.csr_matrix((coefs, idx, [0, len(idx)]), shape=(1, self.num_vars))
        return int(self.add_rows(A, [lo], [hi])[0])

    def add_column(self, obj: float, rows: Any, coefs: Any, lb: float = 0.0, ub: float = INF,
                   vtype: VarType | str = VarType.CONTINUOUS) -> int:
        """Add one variable with its coefficients in existing rows (column generation).

        Parameters
        ----------
        obj : float
            Its objective coefficient.
        rows : array-like of int
            The rows it appears in.
        coefs : array-like
            Its coefficients there.
        lb, ub : float, default 0.0, INF
            Its bounds.
        vtype : VarType or str, default VarType.CONTINUOUS
            Its type.

        Returns
        -------
        int
            Its index.

        Raises
        ------
        NotImplementedError
            The backend cannot add columns.
        """
        raise NotImplementedError(f"{self.name} does not support adding columns")

    @abc.abstractmethod
    def set_objective(self, idx: Any, coefs: Any, sense: str = "min", offset: float = 0.0) -> None:
        """Replace the objective: ``coefs`` on variables ``idx``, zero elsewhere.

        Parameters
        ----------
        idx : array-like of int
            Variable indices.
        coefs : float or array-like
            Their coefficients.
        sense : {"min", "max"}, default "min"
            Minimise or maximise.
        offset : float, default 0.0
            A constant added to the objective.
        """

    @abc.abstractmethod
    def set_bounds(self, idx: Any, lb: Any, ub: Any) -> None:
        """Set the bounds of variables ``idx`` (scalars broadcast).

        Parameters
        ----------
        idx : array-like of int
            Variable indices.
        lb, ub : float or array-like
            The new bounds.
        """


    @abc.abstractmethod
    def set_vtype(self, idx: Any, vtype: VarType | str) -> None:
        """Set the type of variables ``idx``.

        Parameters
        ----------
        idx : array-like of int
            Variable indices.
        vtype : VarType or str
            ``"C"``, ``"B"`` or ``"I"``.
        """


    @abc.abstractmethod
    def set_row_bounds(self, rows: Any, lo: Any, hi: Any) -> None:
        """Set the bounds ``lo <= A x <= hi`` of existing rows (scalars broadcast).

        Parameters
        ----------
        rows : array-like of int
            Row indices.
        lo, hi : float or array-like
            The new bounds (``-INF`` / ``INF``: none).
        """


    def set_mip_start(self, idx: Any, values: Any) -> None:  # noqa: B027 (optional: a no-op by default)
        """Offer a (possibly partial) starting solution; ignored without ``mip_start``.

        It applies to the next solve only.

        Parameters
        ----------
        idx : array-like of int
            Variable indices.
        values : array-like
            Their starting values.
        """

    def require(self, capability: str, purpose: str) -> None:
        """Raise unless this backend has ``capability``, which ``purpose`` needs.

        Parameters
        ----------
        capability : str
            A field of :class:`Capabilities`.
        purpose : str
            What needs it, for the message.

        Raises
        ------
        SolverCapabilityError
            The backend lacks the capability.
        ValueError
            An unknown capability.
        """
        from ..exceptions import SolverCapabilityError

        if not hasattr(self.capabilities, capability):
            raise ValueError(f"unknown capability {capability!r}")
        if not getattr(self.capabilities, capability):
            raise SolverCapabilityError(
                f"{purpose} needs {capability.replace('_', ' ')}, which the {self.name!r} backend "
                "does not provide; use solver='highs' (or 'gurobi', 'pyomo')")

    def spawn(self) -> Backend:
        """A new, empty model on the same solver with the same configuration.

        Formulations use it for independent models, e.g. master and pricing.

        Returns
        -------
        Backend
            Of the same type, with a copy of ``options``.
        """
        return type(self)(options=dataclasses.replace(self.options))

    # -- solving ----------------------------------------------------------------------
    @abc.abstractmethod
    def solve(self, n_solutions: int = 1) -> Solution:
        """Solve.

        Parameters
        ----------
        n_solutions : int, default 1
            Ask for that many distinct feasible solutions in ``Solution.pool`` (when
            ``capabilities.multiple_solutions``).

        Returns
        -------
        Solution
            Status, objective, values, bounds and duals.
        """

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vars={self.num_vars}, rows={self.num_rows})"
