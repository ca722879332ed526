"""Pyomo ``SolverFactory`` backend: ``solver="pyomo:NAME"`` (cbc, glpk, any installed name).

The model is built by :class:`~groupcf.solvers.pyomo.PyomoBackend`; this module only passes
options, solves, and reads the status, values, LP duals and the MIP dual bound back.
"""
from __future__ import annotations

import logging
import math
import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from ..exceptions import GroupCFWarning, SolverError, SolverNotInstalledError
from . import _common as C
from .base import Capabilities, Status
from .pyomo import PyomoBackend, _bound, _factory, _quiet_pyomo

logger = logging.getLogger(__name__)

_TIME_LIMIT = {"cbc": "seconds", "glpk": "tmlim", "gurobi": "TimeLimit", "cplex": "timelimit",
               "scip": "limits/time", "xpress": "maxtime", "gurobi_direct": "TimeLimit",
               "cplex_direct": "timelimit", "gams": "reslim"}
_MIP_GAP = {"cbc": "ratioGap", "glpk": "mipgap", "gurobi": "MIPGap", "cplex": "mipgap",
            "scip": "limits/gap", "xpress": "miprelstop", "gurobi_direct": "MIPGap",
            "cplex_direct": "mipgap", "gams": "optcr"}
# absolute MIP gap; glpk has none (it stops at its relative gap, 0 by default: exact)
_MIP_ABS_GAP = {"cbc": "allowableGap", "gurobi": "MIPGapAbs", "gurobi_direct": "MIPGapAbs",
                "cplex": "mip_tolerances_absmipgap", "cplex_direct": "mip_tolerances_absmipgap",
                "scip": "limits/absgap", "xpress": "mipabsstop", "gams": "optca"}
_THREADS = {"cbc": "threads", "gurobi": "Threads", "cplex": "threads",
            "scip": "parallel/maxnthreads",
            "gurobi_direct": "Threads", "cplex_direct": "threads"}
# SolverFactory solvers that return LP duals through an import Suffix("dual")
_DUAL_SOLVERS = {"cbc", "glpk", "gurobi", "cplex", "xpress", "gurobi_direct", "cplex_direct"}
# ... and that report a MIP dual bound in results.problem
_BOUND_SOLVERS = {"cbc", "gurobi", "cplex", "gurobi_direct", "cplex_direct", "scip"}


class PyomoFactoryBackend(PyomoBackend):
    """A pyomo model solved by ``SolverFactory(solver)``. Capabilities depend on the solver:
    LP duals when it supports an import ``Suffix("dual")`` (cbc, glpk, ...), a MIP start when
    ``warm_start_capable()`` (cbc), the dual bound when it reports one (cbc); no pool."""

    def _setup_solver(self, solver: str) -> None:
        self.name = f"pyomo:{solver}"
        try:
            opt = _factory(solver)
            ok = bool(opt.available(exception_flag=False))
        except Exception:
            ok = False
        if not ok:
            raise SolverNotInstalledError(
                f"pyomo cannot run solver {solver!r}: its executable is not installed or "
                f"not on PATH. Install it (Debian/Ubuntu: apt-get install coinor-cbc "
                f"glpk-utils for cbc and glpk) or use solver=\"highs\".")
        self._opt = opt
        self.capabilities = Capabilities(
            lp_duals=solver in _DUAL_SOLVERS,
            mip_start=bool(getattr(opt, "warm_start_capable", lambda: False)()),
            dual_bound=solver in _BOUND_SOLVERS)

    def _solver_options(self) -> dict[str, Any]:
        o, name = self.options, self.solver
        opts: dict[str, Any] = {}
        for value, table, what in ((o.time_limit, _TIME_LIMIT, "time_limit"),
                                   (o.mip_gap, _MIP_GAP, "mip_gap"),
                                   (None if name == "glpk" else o.mip_abs_gap, _MIP_ABS_GAP, "mip_abs_gap"),
                                   (o.threads or None, _THREADS, "threads")):
            if value is None:
                continue
            if name in table:
                if name == "glpk" and what == "time_limit":
                    value = max(1, int(math.ceil(value)))  # glpsol --tmlim takes seconds
                opts[table[name]] = value
            elif what not in self._warned:
                self._warned.add(what)
                warnings.warn(f"pyomo:{name}: option {what} is not passed (its name for this solver "
                              "is unknown)", GroupCFWarning, stacklevel=4)
        return opts

    def _solve_native(self, is_mip: bool) -> Any:
        from pyomo.opt import SolutionStatus as SS
        from pyomo.opt import TerminationCondition as T
        pyo, m = self._pyo, self._m
        want_duals = not is_mip and self.capabilities.lp_duals
        if want_duals and not hasattr(m, "dual"):
            m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        elif not want_duals and hasattr(m, "dual"):
            m.del_component("dual")
        for v in self._x:
            v.set_value(None, skip_validation=True)
        options = self._solver_options()
        kwargs: dict[str, Any] = dict(load_solutions=False, tee=bool(self.options.verbose), options=options)
        if self._start is not None:
            idx, val = self._start
            self._start = None
            if is_mip and self.capabilities.mip_start:
                for j, a in zip(idx.tolist(), val.tolist()):
                    self._x[j].set_value(a, skip_validation=True)
                kwargs["warmstart"] = True
                if self.solver == "cbc":
                    # CBC 2.10's default preprocessing ("sos") with a MIP start can abort
                    # (coin-or/Cbc#413, #627; seen on the global-actions master): no SOS search
                    options["preprocess"] = "on"
        try:
            res = self._opt.solve(m, **kwargs)
        except Exception as e:  # a solver crash, an unreadable solution file, ...
            if not kwargs.get("warmstart"):
                raise SolverError(f"pyomo:{self.solver} failed: {e}") from e
            # a solver that aborts when given a MIP start (CBC 2.10: "Illegal index ... in
            # ClpModel::getColumnName" after its preprocessing found an SOS): the start is only
            # a hint, so solve again without it (and give no start from now on)
            logger.warning("pyomo:%s failed with a MIP start (%s); solving again without it",
                           self.solver, str(e).splitlines()[0][:200])
            self.capabilities = replace(self.capabilities, mip_start=False)
            for v in self._x:
                v.set_value(None, skip_validation=True)
            del kwargs["warmstart"]
            try:
                res = self._opt.solve(m, **kwargs)
            except Exception as e2:
                raise SolverError(f"pyomo:{self.solver} failed: {e2}") from e2
        tc = res.solver.termination_condition
        has_sol = len(res.solution) > 0 and res.solution(0).status in (
            SS.optimal, SS.feasible, SS.bestSoFar, SS.locallyOptimal, SS.globallyOptimal,
            SS.stoppedByLimit)
        if tc in (T.optimal, T.globallyOptimal, T.locallyOptimal):
            status = Status.OPTIMAL
        elif tc == T.feasible:
            status = Status.FEASIBLE
        elif tc == T.infeasible:
            status = Status.INFEASIBLE
        elif tc in (T.unbounded, T.infeasibleOrUnbounded) or (
                tc == T.other and self.solver == "glpk" and not has_sol):
            # a ray proves nothing about feasibility: UNBOUNDED only for a feasible model.
            # glpsol's MIP presolver stops with "other" when it finds the problem has no
            # primal (infeasible) or no dual (unbounded or infeasible) feasible solution
            status = self._decide_unbounded_or_infeasible()
            has_sol = False
        elif tc in (T.maxTimeLimit, T.maxIterations, T.maxEvaluations, T.userInterrupt,
                    T.resourceInterrupt, T.intermediateNonInteger, T.minFunctionValue,
                    T.minStepLength):
            status = C.limit_status(has_sol)
        else:
            logger.warning("pyomo:%s stopped with %s", self.solver, tc)
            status = Status.FEASIBLE if has_sol else Status.ERROR
        if status.has_solution and not has_sol:
            status = Status.ERROR
        x = bound = duals = None
        if status.has_solution:
            with _quiet_pyomo():  # "loading a solution with an 'aborted' status": expected
                m.solutions.load_from(res)
            x = self._values()
            if want_duals and status is Status.OPTIMAL:
                # LP-file solvers report duals as d objective / d rhs in the user's sense
                duals = np.array([m.dual.get(c) or 0.0 for c in self._cons], dtype=np.float64)
        if is_mip:
            b = res.problem.upper_bound if self._is_max else res.problem.lower_bound
            try:
                bound = _bound(float(b)) if b is not None else None
            except (TypeError, ValueError):
                bound = None
        return status, x, bound, duals

    def _values(self) -> np.ndarray:
        """Variable values; a variable the writer left out (in no row, not in the
        objective) gets the value nearest 0 within its bounds."""
        v = self._vars
        x = np.array([np.nan if xv.value is None else xv.value for xv in self._x],
                     dtype=np.float64)
        miss = np.isnan(x)
        if miss.any():
            fill = np.clip(0.0, v.lb.view[miss], v.ub.view[miss])
            ints = v.is_int[miss]
            fill[ints] = np.clip(np.round(fill[ints]), np.ceil(v.lb.view[miss][ints]),
                                 np.floor(v.ub.view[miss][ints]))
            x[miss] = fill
        return x


    def _feasibility_condition(self) -> str:
        m = self._m
        if hasattr(m, "dual"):
            m.del_component("dual")
        res = self._opt.solve(m, load_solutions=False, options=self._solver_options())
        return str(res.solver.termination_condition)
