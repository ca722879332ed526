"""Pyomo backends: the gateway to solvers groupcf has no direct backend for.

This module builds the pyomo model (shared); two subclasses solve it:

* ``"pyomo"`` (or ``"pyomo:appsi_highs"``): :class:`~groupcf.solvers.pyomo_appsi.PyomoAppsiBackend`,
  pyomo's persistent APPSI HiGHS interface.
  Every change is passed to it explicitly (automatic change detection is switched off),
  so a re-solve after a change only sends the change.
* ``"pyomo:NAME"``: :class:`~groupcf.solvers.pyomo_factory.PyomoFactoryBackend`,
  ``SolverFactory(NAME)`` (e.g. ``cbc``, ``glpk``): the model is
  written out and solved from scratch each time.

The pyomo model is built incrementally from the same array calls as the other backends
(a ``VarList``, a ``ConstraintList`` of ``LinearExpression`` rows). Building is ~25x
slower than raw highspy arrays: use this backend for its solvers, not for speed.

pyomo is imported lazily; without it ``make_backend("pyomo")`` raises
:class:`SolverNotInstalledError` naming the extra to install.
"""
from __future__ import annotations

import contextlib
import io
import logging
import math
import time
from collections.abc import Iterable, Iterator, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from ..exceptions import SolverNotInstalledError
from . import _common as C
from .base import INF, Backend, Capabilities, Solution, SolverOptions, Status, VarType

logger = logging.getLogger(__name__)

_APPSI_NAMES = ("appsi_highs", "highs")


def _pyo() -> ModuleType:
    try:
        import pyomo.environ as pyo
    except ImportError as e:
        raise SolverNotInstalledError(
            'solver="pyomo" needs the pyomo package: pip install "groupcf[pyomo]" '
            '(or use the default solver="highs")') from e
    module: ModuleType = pyo  # pyomo has no type stubs: the import is Any
    return module


@contextlib.contextmanager
def _quiet_pyomo() -> Iterator[None]:
    """SolverFactory logs a warning for unknown solver names; we raise our own error."""
    from pyomo.common.log import LoggingIntercept
    with LoggingIntercept(io.StringIO(), "pyomo"):
        yield


def _factory(name: str) -> Any:
    pyo = _pyo()
    with _quiet_pyomo():
        return pyo.SolverFactory(name)


def solver_available(name: str) -> bool:
    """Is pyomo installed and can it run solver ``name``?"""
    try:
        _pyo()
    except SolverNotInstalledError:
        return False
    if name in _APPSI_NAMES:
        from pyomo.contrib.appsi.solvers import Highs
        return bool(Highs().available())
    with _quiet_pyomo():
        try:
            return bool(_factory(name).available(exception_flag=False))
        except Exception:  # unknown plugins raise various errors
            return False


def _bound(v: float) -> float | None:
    return None if math.isinf(v) else v


class PyomoBackend(C.TableBoundsMixin, Backend):
    """Pyomo model, built incrementally; ``PyomoBackend(solver)`` returns the subclass that
    solves it: APPSI HiGHS (``solver="appsi_highs"``, persistent) or any ``SolverFactory``
    solver (``solver="cbc"``, ``"glpk"``, ...). Subclasses implement the hooks
    ``_setup_solver``, ``_solve_native`` and ``_feasibility_condition``.

    Capabilities depend on the solver and are set per instance: APPSI HiGHS gives LP
    duals, a MIP start and the MIP dual bound; ``SolverFactory`` solvers give LP duals
    when they support an import ``Suffix("dual")`` (cbc, glpk, ...), a MIP start when
    ``warm_start_capable()`` (cbc) and the dual bound when they report it (cbc). No
    backend through pyomo has a solution pool.

    Row duals follow the convention of every backend: ``d objective / d bound`` in the
    user's sense.

    Parameters
    ----------
    solver : str, default "appsi_highs"
        The pyomo solver: ``"appsi_highs"`` (persistent) or a ``SolverFactory`` name
        (``"cbc"``, ``"glpk"``, ...).
    options : SolverOptions or None, default None
        The solver's options (``None``: built from ``kwargs``).
    **kwargs
        Fields of :class:`~groupcf.solvers.base.SolverOptions`.

    Raises
    ------
    SolverNotInstalledError
        pyomo, or the solver's executable, is not installed.

    Examples
    --------
    >>> from groupcf.solvers import make_backend
    >>> b = make_backend("pyomo:cbc")          # the same as PyomoBackend("cbc")   # doctest: +SKIP
    >>> x = b.add_vars(2, ub=1, vtype="B", obj=[-1, -2])                         # doctest: +SKIP
    >>> b.add_row(x, [1, 1], hi=1)                                               # doctest: +SKIP
    0
    >>> b.solve().objective                                                      # doctest: +SKIP
    -2.0
    """

    name = "pyomo"
    capabilities = Capabilities(lp_duals=True, mip_start=True, dual_bound=True)
    _opt: Any  # the pyomo solver object, made by _setup_solver (pyomo has no type stubs)

    def __new__(cls, solver: str = "appsi_highs", options: SolverOptions | None = None,
                **kwargs: Any) -> PyomoBackend:
        if cls is PyomoBackend:  # pick the concrete backend from the solver's name
            if (solver or "appsi_highs").strip().lower() in _APPSI_NAMES:
                from .pyomo_appsi import PyomoAppsiBackend as cls
            else:
                from .pyomo_factory import PyomoFactoryBackend as cls
        return super().__new__(cls)

    def __init__(self, solver: str = "appsi_highs", options: SolverOptions | None = None,
                 **kwargs: Any) -> None:
        pyo = _pyo()
        super().__init__(options, **kwargs)
        self._pyo = pyo
        solver = (solver or "appsi_highs").strip().lower()
        self.solver = solver
        self._setup_solver(solver)
        m = pyo.ConcreteModel()
        m.x = pyo.VarList()
        m.c = pyo.ConstraintList()
        m.obj = pyo.Objective(expr=self._linear([], []), sense=pyo.minimize)
        self._m = m
        self._x: list[Any] = []     # pyomo variables, in index order
        self._cons: list[Any] = []  # pyomo constraints, in row order
        self._vars = C.VarTable()
        self._is_max = False
        self._offset = 0.0
        self._start: tuple[np.ndarray, np.ndarray] | None = None
        self._live = False  # has the persistent solver seen the model?
        self._warned: set[str] = set()  # options already reported as not passed

    def spawn(self) -> PyomoBackend:
        import dataclasses
        return type(self)(solver=self.solver, options=dataclasses.replace(self.options))

    # -- helpers ------------------------------------------------------------------------
    @staticmethod
    def _linear(coefs: Iterable[float], variables: Iterable[Any], constant: float = 0.0) -> Any:
        from pyomo.core.expr.numeric_expr import LinearExpression
        return LinearExpression(constant=constant, linear_coefs=list(coefs),
                                linear_vars=list(variables))

    def _set_var(self, v: Any, lb: float, ub: float, code: int) -> None:
        v.domain = self._pyo.Reals if code == C.CONT else self._pyo.Integers
        v.setlb(None if math.isinf(lb) else float(lb))
        v.setub(None if math.isinf(ub) else float(ub))

    def _notify(self, method: str, items: Sequence[Any]) -> None:
        if self._live and items:
            getattr(self._opt, method)(list(items))

    # -- building -------------------------------------------------------------------
    @property
    def num_vars(self) -> int:
        return len(self._x)

    @property
    def num_rows(self) -> int:
        return len(self._cons)

    def add_vars(self, n: int, lb: Any = 0.0, ub: Any = INF,
                 vtype: VarType | str | Sequence[VarType | str] = "C", obj: Any = 0.0) -> np.ndarray:
        lb, ub, codes, obj = C.prepare_vars(n, lb, ub, vtype, obj)
        first = self.num_vars
        new: list[Any] = []
        for k in range(n):
            v = self._m.x.add()
            self._set_var(v, lb[k], ub[k], codes[k])
            new.append(v)
        self._x.extend(new)
        self._vars.add(lb, ub, codes, obj)
        self._notify("add_variables", new)
        if np.any(obj != 0):
            self._rebuild_objective()
        return np.arange(first, first + n, dtype=np.int64)

    def add_rows(self, A: Any, lo: Any, hi: Any) -> np.ndarray:
        A, lo, hi = C.prepare_rows(A, lo, hi, self.num_vars)
        first = self.num_rows
        x = self._x
        ip, ind, val = A.indptr, A.indices, A.data
        new: list[Any] = []
        for i in range(A.shape[0]):
            s, e = ip[i], ip[i + 1]
            body = self._linear(val[s:e].tolist(), [x[j] for j in ind[s:e]])
            new.append(self._m.c.add((float(lo[i]), body, float(hi[i]))))  # +-inf allowed
        self._cons.extend(new)
        self._notify("add_constraints", new)
        return np.arange(first, first + len(new), dtype=np.int64)

    def add_column(self, obj: float, rows: Any, coefs: Any, lb: float = 0.0, ub: float = INF,
                   vtype: VarType | str = "C") -> int:
        from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression
        rows = C.index_array(rows, self.num_rows, "row")
        coefs = C.float_array(coefs, rows.size, "column coefficients")
        j = int(self.add_vars(1, lb, ub, vtype, obj)[0])
        v = self._x[j]
        touched = [self._cons[r] for r in rows]
        self._notify("remove_constraints", touched)
        for con, a in zip(touched, coefs.tolist()):
            body = con.body
            args = list(body.args) if isinstance(body, LinearExpression) else [body]
            args.append(MonomialTermExpression((a, v)))
            lo = -INF if con.lower is None else con.lower
            hi = INF if con.upper is None else con.upper
            con.set_value((lo, LinearExpression(args), hi))
        self._notify("add_constraints", touched)
        return j

    def _rebuild_objective(self) -> None:
        pyo, m = self._pyo, self._m
        c = self._vars.cost.view
        nz = np.flatnonzero(c)
        m.obj.expr = self._linear(c[nz].tolist(), [self._x[j] for j in nz], self._offset)
        m.obj.sense = pyo.maximize if self._is_max else pyo.minimize
        if self._live:
            self._opt.set_objective(m.obj)

    def set_objective(self, idx: Any, coefs: Any, sense: str = "min", offset: float = 0.0) -> None:
        c, is_max = C.prepare_objective(idx, coefs, sense, self.num_vars)
        self._vars.cost.view[:] = c
        self._is_max, self._offset = is_max, float(offset)
        self._rebuild_objective()

    @property
    def _var_table(self) -> C.VarTable:
        return self._vars

    def _push_bounds(self, idx: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> None:
        self._vars.lb.view[idx] = lb
        self._vars.ub.view[idx] = ub
        self._refresh_vars(idx)

    def _push_vtype(self, idx: np.ndarray, codes: np.ndarray) -> None:
        self._refresh_vars(idx)

    def _refresh_vars(self, idx: np.ndarray) -> None:
        v = self._vars
        changed: list[Any] = []
        for j in idx.tolist():
            self._set_var(self._x[j], v.lb.view[j], v.ub.view[j], v.kind.view[j])
            changed.append(self._x[j])
        self._notify("update_variables", changed)

    def set_row_bounds(self, rows: Any, lo: Any, hi: Any) -> None:
        rows = C.index_array(rows, self.num_rows, "row")
        lo = C.float_array(lo, rows.size, "row lower bounds", none=-INF)
        hi = C.float_array(hi, rows.size, "row upper bounds", none=INF)
        cons = [self._cons[r] for r in rows]
        self._notify("remove_constraints", cons)
        for con, l, h in zip(cons, lo.tolist(), hi.tolist()):
            con.set_value((l, con.body, h))
        self._notify("add_constraints", cons)

    def set_mip_start(self, idx: Any, values: Any) -> None:
        idx = C.index_array(idx, self.num_vars)
        self._start = (idx, C.float_array(values, idx.size, "start values"))

    # -- solving ----------------------------------------------------------------------
    def _empty_solution(self) -> Solution:
        """No variables: feasible iff every (empty) row admits 0."""
        ok = all((con.lower is None or self._pyo.value(con.lower) <= 1e-9) and
                 (con.upper is None or self._pyo.value(con.upper) >= -1e-9)
                 for con in self._cons)
        return Solution(Status.OPTIMAL, objective=self._offset, x=np.zeros(0)) if ok \
            else Solution(Status.INFEASIBLE)

    def solve(self, n_solutions: int = 1) -> Solution:
        if self.num_vars == 0:
            return self._empty_solution()
        if n_solutions > 1:
            logger.debug("%s has no solution pool; returning one solution", self.name)
        is_mip = self._vars.is_mip
        t0 = time.perf_counter()
        status, x, bound, duals = self._solve_native(is_mip)
        sol = Solution(status, solve_time=time.perf_counter() - t0)
        if is_mip and self.capabilities.dual_bound and (status.has_solution
                                                        or status is Status.TIME_LIMIT):
            sol.dual_bound = bound
        if status.has_solution and x is not None:   # the hooks give x with every solution
            v = self._vars
            x = C.round_integers(x, v.is_int)
            sol.x = x
            sol.objective = float(v.cost.view @ x + self._offset)
            if is_mip:
                sol.gap = C.relative_gap(sol.objective, sol.dual_bound)
            elif status is Status.OPTIMAL and duals is not None:
                sol.row_duals = duals
        return sol

    # -- solver-specific hooks -----------------------------------------------------------
    def _setup_solver(self, solver: str) -> None:
        """Create ``self._opt`` (raise SolverNotInstalledError) and set ``capabilities``."""
        raise NotImplementedError

    def _solve_native(self, is_mip: bool) -> tuple[Status, np.ndarray | None, float | None, np.ndarray | None]:
        """Solve; return ``(status, x or None, MIP dual bound or None, row duals or None)``."""
        raise NotImplementedError

    def _feasibility_condition(self) -> str:
        """Solve the model as it stands (zero objective); the termination condition's name."""
        raise NotImplementedError

    def _restore_objective(self) -> None:
        """Tell the solver the objective changed back (persistent solvers only)."""

    def _decide_unbounded_or_infeasible(self) -> Status:
        """The solver said "unbounded" (a ray; some solvers say so for infeasible models)
        or only "infeasible or unbounded": solve the feasibility problem (zero
        objective); feasible means unbounded."""
        m = self._m
        saved_expr, saved_sense = m.obj.expr, m.obj.sense
        m.obj.expr = self._linear([], [])
        m.obj.sense = self._pyo.minimize
        try:
            tc = self._feasibility_condition()
        finally:
            m.obj.expr, m.obj.sense = saved_expr, saved_sense
            self._restore_objective()
        if tc == "optimal":
            return Status.UNBOUNDED
        if tc == "infeasible" or (tc == "other" and self.solver == "glpk"):
            return Status.INFEASIBLE  # (glpsol's presolver: no primal feasible solution)
        logger.warning("%s could not decide between infeasible and unbounded (%s)", self.name, tc)
        return Status.TIME_LIMIT
