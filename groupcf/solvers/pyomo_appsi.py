"""Pyomo persistent APPSI HiGHS backend: ``solver="pyomo"`` (or ``"pyomo:appsi_highs"``).

The model is built by :class:`~groupcf.solvers.pyomo.PyomoBackend`; changes are passed to
the persistent solver explicitly, and this module solves and reads the result back.
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np

from ..exceptions import SolverNotInstalledError
from . import _common as C
from .base import INF, Status
from .pyomo import PyomoBackend, _bound

logger = logging.getLogger(__name__)


class PyomoAppsiBackend(PyomoBackend):
    """A pyomo model solved by APPSI HiGHS, persistent: LP duals, a MIP start and the MIP
    dual bound; no solution pool."""

    def _setup_solver(self, solver: str) -> None:
        from pyomo.contrib.appsi.solvers import Highs
        self._opt = Highs(only_child_vars=True)
        if not self._opt.available():
            raise SolverNotInstalledError(
                "pyomo's appsi_highs needs highspy: pip install highspy")
        uc = self._opt.update_config
        for flag in ("check_for_new_or_removed_constraints", "check_for_new_or_removed_vars",
                     "check_for_new_or_removed_params", "check_for_new_objective",
                     "update_constraints", "update_vars", "update_params",
                     "update_named_expressions", "update_objective"):
            setattr(uc, flag, False)  # changes are passed explicitly
        self._opt.config.load_solution = False

    def _solve_native(self, is_mip: bool) -> Any:
        from pyomo.contrib.appsi.base import TerminationCondition as T
        opt, o = self._opt, self.options
        opt.config.stream_solver = bool(o.verbose)
        opt.config.log_level = logging.INFO if o.verbose else logging.DEBUG  # HiGHS banner
        opt.highs_options = {
            "output_flag": bool(o.verbose),
            "time_limit": float(o.time_limit) if o.time_limit is not None else INF,
            "mip_rel_gap": float(o.mip_gap) if o.mip_gap is not None else 1e-4,
            "mip_abs_gap": float(o.mip_abs_gap) if o.mip_abs_gap is not None else 1e-6,
            "threads": C.sync_scheduler(o.threads),
        }
        opt.config.warmstart = False
        if self._start is not None:
            idx, val = self._start
            self._start = None
            if is_mip:
                for x in self._x:
                    x.set_value(None, skip_validation=True)
                for j, a in zip(idx.tolist(), val.tolist()):
                    self._x[j].set_value(a, skip_validation=True)
                opt.config.warmstart = True
        res = opt.solve(self._m)
        self._live = True
        tc = res.termination_condition
        has_sol = res.best_feasible_objective is not None
        if tc == T.optimal:
            status = Status.OPTIMAL
        elif tc == T.infeasible:
            status = Status.INFEASIBLE
        elif tc in (T.unbounded, T.infeasibleOrUnbounded):
            # a ray proves nothing about feasibility: UNBOUNDED only for a feasible model
            status = self._decide_unbounded_or_infeasible()
            has_sol = False
        elif tc in (T.maxTimeLimit, T.maxIterations, T.objectiveLimit, T.interrupted):
            status = C.limit_status(has_sol)
        else:
            logger.warning("appsi_highs stopped with %s", tc)
            status = Status.FEASIBLE if has_sol else Status.ERROR
        x = bound = duals = None
        if status.has_solution:
            prim = res.solution_loader.get_primals(vars_to_load=self._x)
            x = np.array([prim[v] for v in self._x], dtype=np.float64)
            if not is_mip and status is Status.OPTIMAL:
                d = res.solution_loader.get_duals()  # HiGHS' row duals, passed through
                duals = np.array([d.get(c, 0.0) for c in self._cons], dtype=np.float64)
        if is_mip and res.best_objective_bound is not None:
            bound = _bound(float(res.best_objective_bound))
        return status, x, bound, duals


    def _feasibility_condition(self) -> str:
        self._opt.set_objective(self._m.obj)
        return str(self._opt.solve(self._m).termination_condition.name)

    def _restore_objective(self) -> None:
        self._opt.set_objective(self._m.obj)
