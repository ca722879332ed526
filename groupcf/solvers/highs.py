"""HiGHS backend (the default), through highspy's low-level array API.

Only the array calls are used (``addVars``, ``addRows`` with CSR arrays, ``changeCols*``,
``changeRowsBounds``, ``addCol``): they build a 10k x 10k model in milliseconds, where
highspy's expression API is 15-60x slower.

* LP duals: ``getSolution().row_dual``; returned as the sensitivity of the objective, in
  the user's sense, to the row's binding bound (see :class:`HighsBackend`).
* Warm column addition: ``addCol`` keeps the simplex basis, the next ``run()`` is warm.
* Several MIP solutions: HiGHS has no solution pool, but its ``kCallbackMipSolution``
  callback reports every feasible solution the branch-and-bound meets (not only the
  improving ones). They are re-checked, made distinct on the integer variables and the
  best ``n_solutions - 1`` go to ``Solution.pool``. They are the best of what the search
  met, not a proof of the n best solutions (Gurobi's ``PoolSearchMode=2`` is that).
* MIP start: ``setSolution`` with a sparse (possibly partial) solution.
"""
from __future__ import annotations

import logging
import math
import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import SolverError, SolverNotInstalledError
from . import _common as C
from .base import INF, Backend, Capabilities, Solution, SolverOptions, Status, VarType

logger = logging.getLogger(__name__)

try:  # highspy is a core dependency; still fail with a clear message if it is broken
    import highspy
except ImportError:  # pragma: no cover - highspy is in the install requirements
    highspy = None  # type: ignore[assignment]  # tested before use: `highspy is None`

_I32 = np.int32  # HiGHS is built with 32-bit HighsInt
_banner_lock = threading.Lock()
_banner_done = False


def new_highs() -> highspy.Highs:
    """A silent ``highspy.Highs``.

    HiGHS's C++ constructor writes its copyright banner straight to file descriptor 1, once
    per process, before any option can be set; the first construction runs with fd 1
    pointed at ``/dev/null`` so the banner never reaches a user's stdout (pipes, CLI output,
    every joblib worker). ``verbose=True`` still shows the solver's log.
    """
    global _banner_done
    with _banner_lock:
        if _banner_done:
            h = highspy.Highs()  # type: ignore[no-untyped-call, unused-ignore]  # highspy's stub leaves __init__ unannotated
        else:
            sys.stdout.flush()
            saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, 1)
                h = highspy.Highs()  # type: ignore[no-untyped-call, unused-ignore]  # (as above)
            finally:
                os.dup2(saved, 1)
                os.close(saved)
                os.close(null)
            _banner_done = True
    h.setOptionValue("output_flag", False)
    return h


def _i32(a: Any) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=_I32)


def _f64(a: Any) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


class HighsBackend(C.TableBoundsMixin, Backend):
    """HiGHS through highspy.

    Row duals (LP only) are the sensitivity of the optimal objective *in the user's
    sense* to the binding bound of the row: ``d objective / d bound``. For a minimisation
    a binding ``>=`` row has a dual ``>= 0`` and a binding ``<=`` row a dual ``<= 0``; for
    a maximisation a binding ``<=`` row has a dual ``>= 0`` and a binding ``>=`` row a dual
    ``<= 0``. Every backend returns duals with this convention.

    Parameters
    ----------
    options : SolverOptions or None, default None
        The solver's options (``None``: built from ``kwargs``).
    **kwargs
        Fields of :class:`~groupcf.solvers.base.SolverOptions`.

    Raises
    ------
    SolverNotInstalledError
        highspy is not installed.

    Examples
    --------
    >>> from groupcf.solvers import make_backend
    >>> b = make_backend("highs", time_limit=10)
    >>> x = b.add_vars(2, ub=1, vtype="B", obj=[-1, -2])
    >>> b.add_row(x, [1, 1], hi=1)
    0
    >>> b.solve().objective
    -2.0
    """

    name = "highs"
    capabilities = Capabilities(lp_duals=True, multiple_solutions=True, mip_start=True, dual_bound=True)

    def __init__(self, options: SolverOptions | None = None, **kwargs: Any) -> None:
        if highspy is None:  # pragma: no cover
            raise SolverNotInstalledError("highspy is not importable: pip install highspy")
        super().__init__(options, **kwargs)
        self._h = new_highs()
        self._vars = C.VarTable()
        self._nrows = 0
        self._is_max = False
        self._offset = 0.0
        self._start: tuple[np.ndarray, np.ndarray] | None = None

    # -- building -------------------------------------------------------------------
    @property
    def num_vars(self) -> int:
        return len(self._vars)

    @property
    def num_rows(self) -> int:
        return self._nrows

    def _check(self, status: highspy.HighsStatus, what: str) -> None:
        if status == highspy.HighsStatus.kError:
            raise SolverError(f"HiGHS refused {what}")

    def _push_vtype(self, idx: np.ndarray, codes: np.ndarray) -> None:
        kinds = np.where(codes == C.CONT, highspy.HighsVarType.kContinuous,  # type: ignore[call-overload, unused-ignore]
                         highspy.HighsVarType.kInteger)  # (numpy's stubs refuse the pybind11 enum members)
        self._check(self._h.changeColsIntegrality(idx.size, _i32(idx), kinds),
                    "the variable types")

    def add_vars(self, n: int, lb: Any = 0.0, ub: Any = INF,
                 vtype: VarType | str | Sequence[VarType | str] = "C", obj: Any = 0.0) -> np.ndarray:
        lb, ub, codes, obj = C.prepare_vars(n, lb, ub, vtype, obj)
        first = self.num_vars
        idx = np.arange(first, first + n, dtype=np.int64)
        if n == 0:
            return idx
        self._check(self._h.addVars(n, _f64(lb), _f64(ub)), "the new variables")
        if np.any(obj != 0):
            self._check(self._h.changeColsCost(n, _i32(idx), _f64(obj)), "the costs")
        if np.any(codes != C.CONT):
            self._push_vtype(idx, codes)
        self._vars.add(lb, ub, codes, obj)
        return idx

    def add_rows(self, A: Any, lo: Any, hi: Any) -> np.ndarray:
        A, lo, hi = C.prepare_rows(A, lo, hi, self.num_vars)
        m = A.shape[0]
        first = self._nrows
        if m:
            self._check(self._h.addRows(m, lo, hi, A.nnz, _i32(A.indptr), _i32(A.indices),
                                        _f64(A.data)), "the new rows")
            self._nrows += m
        return np.arange(first, first + m, dtype=np.int64)

    def add_column(self, obj: float, rows: Any, coefs: Any, lb: float = 0.0, ub: float = INF,
                   vtype: VarType | str = "C") -> int:
        rows = C.index_array(rows, self._nrows, "row")
        coefs = C.float_array(coefs, rows.size, "column coefficients")
        lb_, ub_, codes, obj_ = C.prepare_vars(1, lb, ub, vtype, obj)
        j = self.num_vars
        self._check(self._h.addCol(float(obj_[0]), float(lb_[0]), float(ub_[0]), rows.size,
                                   _i32(rows), _f64(coefs)), "the new column")
        if codes[0] != C.CONT:
            self._push_vtype(np.array([j]), codes)
        self._vars.add(lb_, ub_, codes, obj_)
        return j

    def set_objective(self, idx: Any, coefs: Any, sense: str = "min", offset: float = 0.0) -> None:
        c, is_max = C.prepare_objective(idx, coefs, sense, self.num_vars)
        n = self.num_vars
        if n:
            self._check(self._h.changeColsCost(n, _i32(np.arange(n)), _f64(c)), "the objective")
        self._h.changeObjectiveSense(highspy.ObjSense.kMaximize if is_max
                                     else highspy.ObjSense.kMinimize)
        self._h.changeObjectiveOffset(float(offset))
        self._vars.cost.view[:] = c
        self._is_max, self._offset = is_max, float(offset)

    @property
    def _var_table(self) -> C.VarTable:
        return self._vars

    def _push_bounds(self, idx: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> None:
        if idx.size:
            self._check(self._h.changeColsBounds(idx.size, _i32(idx), _f64(lb), _f64(ub)),
                        "the bounds")
        self._vars.lb.view[idx] = lb
        self._vars.ub.view[idx] = ub

    def set_row_bounds(self, rows: Any, lo: Any, hi: Any) -> None:
        rows = C.index_array(rows, self._nrows, "row")
        lo = C.float_array(lo, rows.size, "row lower bounds", none=-INF)
        hi = C.float_array(hi, rows.size, "row upper bounds", none=INF)
        if rows.size:
            self._check(self._h.changeRowsBounds(  # type: ignore[attr-defined, unused-ignore]  # missing from highspy's stub
                rows.size, _i32(rows), lo, hi), "the row bounds")

    def set_mip_start(self, idx: Any, values: Any) -> None:
        idx = C.index_array(idx, self.num_vars)
        self._start = (idx, C.float_array(values, idx.size, "start values"))

    # -- solving ----------------------------------------------------------------------
    def _apply_options(self) -> None:
        o, h = self.options, self._h
        h.setOptionValue("output_flag", bool(o.verbose))
        h.setOptionValue("time_limit", float(o.time_limit) if o.time_limit is not None else INF)
        h.setOptionValue("mip_rel_gap", float(o.mip_gap) if o.mip_gap is not None else 1e-4)
        h.setOptionValue("mip_abs_gap", float(o.mip_abs_gap) if o.mip_abs_gap is not None else 1e-6)
        h.setOptionValue("threads", C.sync_scheduler(o.threads))

    def solve(self, n_solutions: int = 1) -> Solution:
        h = self._h
        is_mip = self._vars.is_mip
        self._apply_options()
        started = self._start is not None
        if self._start is not None:
            idx, val = self._start
            self._start = None
            if is_mip and idx.size and h.setSolution(idx.size, _i32(idx), _f64(val)) == highspy.HighsStatus.kError:
                logger.warning("HiGHS rejected the MIP start")
        found: list[np.ndarray] = []
        n = self.num_vars

        def on_solution(event: Any) -> None:
            x = np.array(event.data_out.mip_solution, dtype=np.float64)
            if x.shape == (n,):
                found.append(x)

        collect = is_mip and n_solutions > 1
        if collect:
            h.cbMipSolution.subscribe(on_solution)
        t0 = time.perf_counter()
        try:
            h.run()
        finally:
            if collect:
                h.cbMipSolution.unsubscribe(on_solution)
        elapsed = time.perf_counter() - t0

        ms = h.getModelStatus()
        info = h.getInfo()
        has_sol = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
        status = self._map_status(ms, has_sol)
        if status is Status.OPTIMAL and ms == highspy.HighsModelStatus.kModelEmpty:
            return Solution(status, objective=self._offset, x=np.zeros(0), solve_time=elapsed)
        if ms in (highspy.HighsModelStatus.kUnboundedOrInfeasible,
                  highspy.HighsModelStatus.kUnbounded):
            # UNBOUNDED is only reported for a model proven feasible
            status = self._decide_unbounded_or_infeasible()
        sol = Solution(status, solve_time=time.perf_counter() - t0)
        if is_mip and (status.has_solution or status is Status.TIME_LIMIT):
            bound = float(info.mip_dual_bound)
            sol.dual_bound = bound if math.isfinite(bound) else None
        if not status.has_solution:
            return sol

        is_int = self._vars.is_int
        hs = h.getSolution()
        sol.x = C.round_integers(np.array(hs.col_value, dtype=np.float64), is_int)
        sol.objective = float(self._vars.cost.view @ sol.x + self._offset)
        if is_mip and started and abs(sol.objective - float(info.objective_function_value)) > 1e-6 * max(1.0, abs(sol.objective)):
            # seen with highspy 1.16 when presolve solves the MIP: the solution read back
            # is the MIP start, not the optimum HiGHS reports; solve again without it
            logger.info("HiGHS returned the MIP start (objective %g) instead of its solution (%g); "
                        "solving again without the start", sol.objective, info.objective_function_value)
            h.clearSolver()
            return self.solve(n_solutions)
        if is_mip:
            sol.gap = C.relative_gap(sol.objective, sol.dual_bound)
            if collect:
                sol.pool, sol.pool_objectives = self._pool(found, sol.x, n_solutions - 1)
        elif status is Status.OPTIMAL and info.dual_solution_status == \
                highspy.SolutionStatus.kSolutionStatusFeasible:
            # HiGHS' row_dual is d objective / d bound in the user's sense, for min and max
            # alike (checked against finite differences with highspy 1.15)
            sol.row_duals = np.array(hs.row_dual, dtype=np.float64)
        return sol

    @staticmethod
    def _map_status(ms: highspy.HighsModelStatus, has_sol: bool) -> Status:
        S = highspy.HighsModelStatus
        if ms in (S.kOptimal, S.kModelEmpty):
            return Status.OPTIMAL
        if ms == S.kInfeasible:
            return Status.INFEASIBLE
        if ms == S.kUnbounded:
            return Status.UNBOUNDED
        if ms == S.kUnboundedOrInfeasible:
            return Status.ERROR  # decided by the caller
        if ms in (S.kTimeLimit, S.kIterationLimit, S.kSolutionLimit, S.kInterrupt,
                  S.kObjectiveBound, S.kObjectiveTarget, S.kMemoryLimit,
                  S.kHighsInterrupt):  # type: ignore[attr-defined, unused-ignore]  # missing from highspy's stub
            return C.limit_status(has_sol)
        if ms == S.kUnknown and has_sol:
            return Status.FEASIBLE
        logger.warning("HiGHS stopped with model status %s", ms)
        return Status.ERROR

    def _decide_unbounded_or_infeasible(self) -> Status:
        """HiGHS said "unbounded" (an improving ray, feasibility not proven) or only
        "unbounded or infeasible": solve the feasibility problem (zero objective);
        feasible means unbounded."""
        probe = new_highs()
        probe.passModel(self._h.getModel())
        n = self.num_vars
        probe.changeColsCost(n, _i32(np.arange(n)), np.zeros(n))
        if self.options.time_limit is not None:
            probe.setOptionValue("time_limit", float(self.options.time_limit))
        probe.run()
        ms = probe.getModelStatus()
        if ms in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kModelEmpty):
            return Status.UNBOUNDED
        if ms == highspy.HighsModelStatus.kInfeasible:
            return Status.INFEASIBLE
        logger.warning("HiGHS could not decide between infeasible and unbounded (%s)", ms)
        return Status.TIME_LIMIT

    def _pool(self, found: list[np.ndarray], incumbent: np.ndarray,
              n_keep: int) -> tuple[list[np.ndarray], list[float]]:
        if not found:
            return [], []
        lp = self._h.getLp()
        a = lp.a_matrix_
        shape = (lp.num_row_, lp.num_col_)
        if a.format_ == highspy.MatrixFormat.kRowwise:
            A = sp.csr_matrix((a.value_, a.index_, a.start_), shape=shape)
        else:
            A = sp.csc_matrix((a.value_, a.index_, a.start_), shape=shape)
        lo, hi = np.asarray(lp.row_lower_), np.asarray(lp.row_upper_)
        v = self._vars
        is_int = v.is_int
        ok: list[np.ndarray] = []
        for x in found:
            x = C.round_integers(x, is_int)
            if C.is_feasible(x, A, lo, hi, v.lb.view, v.ub.view, is_int):
                ok.append(x)
        cost = v.cost.view
        return C.select_pool(ok, incumbent, is_int, lambda x: cost @ x + self._offset,
                             self._is_max, n_keep)
