"""Gurobi backend, through gurobipy's matrix API (``addMVar``, ``addMConstr``).

gurobipy is imported lazily: groupcf imports without it and ``make_backend("gurobi")``
raises :class:`SolverNotInstalledError` naming the extra to install.

* One silent environment (``OutputFlag=0``) per process, created at first use.
* Ranged rows ``lo < a x < hi`` (both finite) are stored as ``a x - s = 0`` with a slack
  ``s`` in ``[lo, hi]``, so that each user row is one Gurobi row with one dual. Slacks
  are internal: they are not in ``Solution.x`` but do count towards licence limits.
* Several MIP solutions: a true solution pool (``PoolSearchMode=2``, ``PoolSolutions``,
  ``Xn``): the n best solutions within the MIP gap.
* The pip licence is size-limited (2000 variables, 2000 constraints); Gurobi refuses a
  larger model at ``optimize()`` with error 10010, turned into :class:`SolverLicenseError`.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import SolverError, SolverLicenseError, SolverNotInstalledError
from ..utils import BoolArray, FloatArray
from . import _common as C
from .base import INF, Backend, Capabilities, Solution, SolverOptions, Status, VarType

if TYPE_CHECKING:  # gurobipy is optional: imported at run time by _gp() only
    import gurobipy

logger = logging.getLogger(__name__)

_ENV: gurobipy.Env | None = None  # the process-wide silent gurobipy.Env, created lazily
_VTYPE = np.array(["C", "B", "I"])  # indexed by the internal type codes
_LICENCE_ERRNOS = {10009, 10010}  # GRB.Error.NO_LICENSE, GRB.Error.SIZE_LIMIT_EXCEEDED


def _gp() -> ModuleType:
    """Import gurobipy, or raise SolverNotInstalledError naming the extra."""
    try:
        import gurobipy
    except ImportError as e:
        raise SolverNotInstalledError(
            'solver="gurobi" needs the gurobipy package: pip install "groupcf[gurobi]" '
            '(or use the default solver="highs")') from e
    return gurobipy


def _licence_error(e: Exception, n_vars: int, n_rows: int) -> SolverLicenseError:
    if getattr(e, "errno", None) == 10010:
        return SolverLicenseError(
            f"Gurobi refused the model ({n_vars} variables, {n_rows} constraints): the "
            f"size-limited pip licence allows at most 2000 variables and 2000 constraints. "
            f'Use solver="highs" (the default), or install a full Gurobi licence. '
            f"[GurobiError 10010: {e}]")
    return SolverLicenseError(f"Gurobi licence problem: {e}. Use solver=\"highs\" or check "
                              f"the Gurobi licence (grbgetkey).")


def _env() -> gurobipy.Env:
    global _ENV
    if _ENV is None:
        gp = _gp()
        try:
            _ENV = gp.Env(params={"OutputFlag": 0})
        except gp.GurobiError as e:
            if e.errno in _LICENCE_ERRNOS:
                raise _licence_error(e, 0, 0) from e
            raise SolverError(f"could not start Gurobi: {e}") from e
    return _ENV


def _is_ranged(lo: FloatArray, hi: FloatArray) -> BoolArray:
    return np.isfinite(lo) & np.isfinite(hi) & (lo < hi)


def _sense_rhs(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row (sense, rhs) for rows that are not ranged; free rows are ``<= +inf``."""
    sense = np.where(lo == hi, "=", np.where(np.isfinite(lo), ">", "<"))
    rhs = np.where(sense == ">", lo, hi)
    return sense, np.where(np.isinf(rhs), np.sign(rhs) * 1e100, rhs)


class GurobiBackend(C.TableBoundsMixin, Backend):
    """Gurobi through gurobipy's matrix API.

    Row duals are Gurobi's ``Pi``: ``d objective / d bound`` in the user's sense (the
    same convention as :class:`~groupcf.solvers.highs.HighsBackend`). ``pip install
    "groupcf[gurobi]"``; without a full licence, models beyond the size-limited licence
    raise :class:`~groupcf.exceptions.SolverLicenseError` when solved.

    Parameters
    ----------
    options : SolverOptions or None, default None
        The solver's options (``None``: built from ``kwargs``).
    **kwargs
        Fields of :class:`~groupcf.solvers.base.SolverOptions`.

    Raises
    ------
    SolverNotInstalledError
        gurobipy is not installed.

    Examples
    --------
    >>> from groupcf.solvers import make_backend
    >>> b = make_backend("gurobi", time_limit=10)       # doctest: +SKIP
    >>> x = b.add_vars(2, ub=1, vtype="B", obj=[-1, -2])       # doctest: +SKIP
    >>> b.add_row(x, [1, 1], hi=1)       # doctest: +SKIP
    0
    >>> b.solve().objective       # doctest: +SKIP
    -2.0
    """

    name = "gurobi"
    capabilities = Capabilities(lp_duals=True, multiple_solutions=True, mip_start=True, dual_bound=True)

    def __init__(self, options: SolverOptions | None = None, **kwargs: Any) -> None:
        gp = _gp()
        super().__init__(options, **kwargs)
        self._gp = gp
        self._m: gurobipy.Model = gp.Model(env=_env())
        self._vars: list[gurobipy.Var] = []       # user variables, in index order
        self._constrs: list[gurobipy.Constr] = []  # one Gurobi row per user row
        self._slack: dict[int, gurobipy.Var] = {}  # user row -> slack var (ranged rows)
        self._table = C.VarTable()
        self._is_max = False
        self._offset = 0.0
        self._start: np.ndarray | None = None  # indices with a Start value set

    # -- building -------------------------------------------------------------------
    @property
    def num_vars(self) -> int:
        return len(self._vars)

    @property
    def num_rows(self) -> int:
        return len(self._constrs)

    def add_vars(self, n: int, lb: Any = 0.0, ub: Any = INF,
                 vtype: VarType | str | Sequence[VarType | str] = "C", obj: Any = 0.0) -> np.ndarray:
        lb, ub, codes, obj = C.prepare_vars(n, lb, ub, vtype, obj)
        first = self.num_vars
        if n:
            mv = self._m.addMVar(n, lb=lb, ub=ub, obj=obj, vtype=_VTYPE[codes])
            self._vars.extend(mv.tolist())
            self._table.add(lb, ub, codes, obj)
        return np.arange(first, first + n, dtype=np.int64)

    def add_rows(self, A: Any, lo: Any, hi: Any) -> np.ndarray:
        A, lo, hi = C.prepare_rows(A, lo, hi, self.num_vars)
        m = A.shape[0]
        first = self.num_rows
        if m == 0:
            return np.arange(first, first, dtype=np.int64)
        self._m.update()
        x = self._gp.MVar.fromlist(self._vars)
        ranged = _is_ranged(lo, hi)
        new: dict[int, gurobipy.Constr] = {}   # user row (0..m-1) -> its Gurobi row
        plain = np.flatnonzero(~ranged)
        if plain.size:
            sense, rhs = _sense_rhs(lo[plain], hi[plain])
            mc = self._m.addMConstr(A[plain], x, sense, rhs)
            for i, c in zip(plain.tolist(), mc.tolist()):
                new[i] = c
        rng = np.flatnonzero(ranged)
        if rng.size:
            s = self._m.addMVar(rng.size, lb=lo[rng], ub=hi[rng])
            xs = self._gp.MVar.fromlist(self._vars + s.tolist())
            As = sp.hstack([A[rng], -sp.identity(rng.size, format="csr")], format="csr")
            mc = self._m.addMConstr(As, xs, "=", np.zeros(rng.size))
            for i, c, sv in zip(rng.tolist(), mc.tolist(), s.tolist()):
                new[i] = c
                self._slack[first + int(i)] = sv
        self._constrs.extend(new[i] for i in range(m))
        return np.arange(first, first + m, dtype=np.int64)

    def add_column(self, obj: float, rows: Any, coefs: Any, lb: float = 0.0, ub: float = INF,
                   vtype: VarType | str = "C") -> int:
        rows = C.index_array(rows, self.num_rows, "row")
        coefs = C.float_array(coefs, rows.size, "column coefficients")
        lb_, ub_, codes, obj_ = C.prepare_vars(1, lb, ub, vtype, obj)
        col = self._gp.Column(coefs.tolist(), [self._constrs[r] for r in rows])
        v = self._m.addVar(lb=float(lb_[0]), ub=float(ub_[0]), obj=float(obj_[0]),
                           vtype=str(_VTYPE[codes[0]]), column=col)
        self._vars.append(v)
        self._table.add(lb_, ub_, codes, obj_)
        return self.num_vars - 1

    def set_objective(self, idx: Any, coefs: Any, sense: str = "min", offset: float = 0.0) -> None:
        c, is_max = C.prepare_objective(idx, coefs, sense, self.num_vars)
        if self._vars:
            self._m.setAttr("Obj", self._vars, c.tolist())
        self._m.ModelSense = -1 if is_max else 1
        self._m.ObjCon = float(offset)
        self._table.cost.view[:] = c
        self._is_max, self._offset = is_max, float(offset)

    def _vars_at(self, idx: np.ndarray) -> list[gurobipy.Var]:
        return [self._vars[i] for i in idx]

    @property
    def _var_table(self) -> C.VarTable:
        return self._table

    def _push_bounds(self, idx: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> None:
        if idx.size:
            vs = self._vars_at(idx)
            self._m.setAttr("LB", vs, lb.tolist())
            self._m.setAttr("UB", vs, ub.tolist())
        self._table.lb.view[idx] = lb
        self._table.ub.view[idx] = ub

    def _push_vtype(self, idx: np.ndarray, codes: np.ndarray) -> None:
        self._m.setAttr("VType", self._vars_at(idx), _VTYPE[codes].tolist())

    def set_row_bounds(self, rows: Any, lo: Any, hi: Any) -> None:
        rows = C.index_array(rows, self.num_rows, "row")
        lo = C.float_array(lo, rows.size, "row lower bounds", none=-INF)
        hi = C.float_array(hi, rows.size, "row upper bounds", none=INF)
        ranged = _is_ranged(lo, hi)
        sense, rhs = _sense_rhs(lo, hi)
        for k, r in enumerate(rows.tolist()):
            con = self._constrs[r]
            s = self._slack.get(r)
            if s is None and ranged[k]:  # becomes ranged: give the row a slack
                s = self._m.addVar(lb=lo[k], ub=hi[k])
                self._m.chgCoeff(con, s, -1.0)
                con.Sense, con.RHS = "=", 0.0
                self._slack[r] = s
            elif s is not None:          # a row with a slack: its bounds are the slack's
                s.LB, s.UB = lo[k], hi[k]
            else:
                con.Sense, con.RHS = str(sense[k]), float(rhs[k])

    def set_mip_start(self, idx: Any, values: Any) -> None:
        idx = C.index_array(idx, self.num_vars)
        values = C.float_array(values, idx.size, "start values")
        self._clear_start()
        if idx.size:
            self._m.setAttr("Start", self._vars_at(idx), values.tolist())
            self._start = idx

    def _clear_start(self) -> None:
        if self._start is not None:
            self._m.setAttr("Start", self._vars_at(self._start),
                            [self._gp.GRB.UNDEFINED] * self._start.size)
            self._start = None

    # -- solving ----------------------------------------------------------------------
    def _apply_options(self, n_solutions: int, is_mip: bool) -> None:
        o, p = self.options, self._m.Params
        p.OutputFlag = 1 if o.verbose else 0
        p.TimeLimit = float(o.time_limit) if o.time_limit is not None else self._gp.GRB.INFINITY
        p.MIPGap = float(o.mip_gap) if o.mip_gap is not None else 1e-4
        p.MIPGapAbs = float(o.mip_abs_gap) if o.mip_abs_gap is not None else 1e-10
        p.Threads = int(o.threads) if o.threads else 0
        if is_mip and n_solutions > 1:
            p.PoolSearchMode = 2
            p.PoolSolutions = int(n_solutions)
        else:
            p.PoolSearchMode = 0
            p.PoolSolutions = 10

    def _optimize(self) -> None:
        gp = self._gp
        try:
            self._m.optimize()
        except gp.GurobiError as e:
            if e.errno in _LICENCE_ERRNOS:
                self._m.update()
                raise _licence_error(e, self._m.NumVars, self._m.NumConstrs) from e
            raise SolverError(f"Gurobi failed: {e}") from e

    def solve(self, n_solutions: int = 1) -> Solution:
        GRB = self._gp.GRB
        m = self._m
        is_mip = self._table.is_mip
        self._apply_options(n_solutions, is_mip)
        t0 = time.perf_counter()
        try:
            self._optimize()
            code = m.Status
            if code == GRB.INF_OR_UNBD:  # decide with dual reductions off
                m.Params.DualReductions = 0
                try:
                    self._optimize()
                finally:
                    m.Params.DualReductions = 1
                code = m.Status
            if code == GRB.UNBOUNDED and not self._is_feasible():
                code = GRB.INFEASIBLE  # a ray, but no feasible point
        finally:
            self._clear_start()
        elapsed = time.perf_counter() - t0
        has_sol = m.SolCount > 0
        status = self._map_status(code, has_sol)
        sol = Solution(status, solve_time=elapsed)
        if is_mip and (status.has_solution or status is Status.TIME_LIMIT):
            try:
                bound = float(m.ObjBound)
                sol.dual_bound = bound if math.isfinite(bound) and abs(bound) < 1e100 else None
            except (self._gp.GurobiError, AttributeError):
                pass
        if not status.has_solution:
            return sol
        is_int = self._table.is_int
        sol.x = C.round_integers(np.array(m.getAttr("X", self._vars)), is_int)
        sol.objective = float(self._table.cost.view @ sol.x + self._offset)
        if is_mip:
            sol.gap = C.relative_gap(sol.objective, sol.dual_bound)
            if n_solutions > 1 and m.SolCount > 1:
                found = []
                for k in range(1, m.SolCount):
                    m.Params.SolutionNumber = k
                    found.append(C.round_integers(np.array(m.getAttr("Xn", self._vars)), is_int))
                m.Params.SolutionNumber = 0
                cost = self._table.cost.view
                sol.pool, sol.pool_objectives = C.select_pool(
                    found, sol.x, is_int, lambda x: cost @ x + self._offset, self._is_max,
                    n_solutions - 1)
        elif status is Status.OPTIMAL:
            sol.row_duals = np.array(m.getAttr("Pi", self._constrs) if self._constrs else [],
                                     dtype=np.float64)
        return sol

    def _is_feasible(self) -> bool:
        """Gurobi's UNBOUNDED proves an improving ray, not feasibility: check feasibility
        on a copy with a zero objective."""
        probe = self._m.copy()
        try:
            probe.setObjective(self._gp.LinExpr(0.0))
            probe.optimize()
            return probe.SolCount > 0
        finally:
            probe.dispose()

    def _map_status(self, code: int, has_sol: bool) -> Status:
        GRB = self._gp.GRB
        if code == GRB.OPTIMAL:
            return Status.OPTIMAL
        if code == GRB.INFEASIBLE:
            return Status.INFEASIBLE
        if code == GRB.UNBOUNDED:
            return Status.UNBOUNDED
        if code in (GRB.TIME_LIMIT, GRB.ITERATION_LIMIT, GRB.NODE_LIMIT, GRB.SOLUTION_LIMIT,
                    GRB.INTERRUPTED, GRB.SUBOPTIMAL, GRB.USER_OBJ_LIMIT, GRB.WORK_LIMIT,
                    GRB.MEM_LIMIT, GRB.CUTOFF):
            return C.limit_status(has_sol)
        if has_sol:  # NUMERIC with a solution, ...
            return Status.FEASIBLE
        logger.warning("Gurobi stopped with status code %s", code)
        return Status.ERROR
