"""Solver backends: every installed backend must give the same answers.

"highs" and "pyomo" (appsi_highs) always run; gurobi, cbc and glpk are skipped, with the
install command, when missing.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from groupcf.exceptions import InvalidInputError, SolverLicenseError, SolverNotInstalledError
from groupcf.solvers import Backend, Capabilities, SolverOptions, Status, VarType, available_backends, make_backend
from groupcf.solvers.highs import HighsBackend
from groupcf.solvers.pyomo import PyomoBackend

INF = np.inf
ALL = ["highs", "gurobi", "pyomo", "pyomo:cbc", "pyomo:glpk"]
REQUIRED = {"highs", "pyomo"}
HINT = {"gurobi": 'gurobi not installed: pip install "groupcf[gurobi]"',
        "pyomo:cbc": "cbc not installed: apt-get install coinor-cbc",
        "pyomo:glpk": "glpk not installed: apt-get install glpk-utils"}
AVAILABLE = available_backends()
INSTALLED = [s for s in ALL if s in AVAILABLE]


@pytest.fixture(params=ALL)
def solver(request):
    name = request.param
    if name not in AVAILABLE:
        if name in REQUIRED:
            pytest.fail(f"backend {name!r} must always be available")
        pytest.skip(HINT[name])
    return name


def check_feasible(x, A, lo, hi, lb, ub, ints=(), tol=1e-6):
    x = np.asarray(x)
    assert np.all(x >= np.asarray(lb) - tol) and np.all(x <= np.asarray(ub) + tol)
    act = A @ x
    assert np.all(act >= np.asarray(lo) - tol) and np.all(act <= np.asarray(hi) + tol)
    ints = np.asarray(ints, dtype=int)
    assert np.allclose(x[ints], np.round(x[ints]))


# -- LPs ----------------------------------------------------------------------------------
A2 = sp.csr_matrix([[1.0, 2.0], [3.0, 1.0]])


def small_lp(solver, sense):
    """min x+y s.t. x+2y >= 4, 3x+y >= 6   |   max x+y s.t. x+2y <= 4, 3x+y <= 6.
    Both: x=1.6, y=1.2, objective 2.8, |duals| = (0.4, 0.2)."""
    m = make_backend(solver)
    m.add_vars(2)
    if sense == "min":
        m.add_rows(A2, [4, 6], [INF, INF])
    else:
        m.add_rows(A2, [-INF, -INF], [4, 6])
    m.set_objective([0, 1], [1, 1], sense)
    return m


@pytest.mark.parametrize("sense", ["min", "max"])
def test_lp_optimum_and_duals(solver, sense):
    m = small_lp(solver, sense)
    s = m.solve()
    assert s.status is Status.OPTIMAL and s.status.has_solution
    assert s.objective == pytest.approx(2.8)
    assert s.x == pytest.approx([1.6, 1.2])
    assert s.dual_bound is None and s.gap is None  # an LP
    assert s.solve_time >= 0
    if not m.capabilities.lp_duals:
        assert s.row_duals is None
        return
    # d objective / d bound, in the user's sense: min with binding >= rows -> duals >= 0;
    # max with binding <= rows -> duals >= 0 as well (raising the bound raises the max)
    assert s.row_duals == pytest.approx([0.4, 0.2], abs=1e-7)


def test_lp_duals_match_finite_differences(solver):
    """Mixed row types (>=, <=, ranged, equality, free); each dual equals the change of
    the optimum when the row is shifted (both bounds) by eps."""
    A = sp.csr_matrix(np.array([[1, 1, 1, 0], [1, -1, 0, 2], [0, 1, 3, 1],
                                [2, 0, 1, 1], [1, 1, 1, 1]], dtype=float))
    lo = np.array([3.0, -INF, 1.0, 5.0, -INF])
    hi = np.array([INF, 3.0, 2.0, 5.0, INF])
    c = np.array([1.0, -1.0, -2.0, 4.0])   # optimum non-degenerate: duals are unique

    def solve(shift):
        m = make_backend(solver)
        m.add_vars(4, lb=0, ub=[INF, 10, 10, INF])
        m.add_rows(A, lo + shift, hi + shift)
        m.set_objective(range(4), c, "min", offset=1.5)
        return m.solve()

    base = solve(np.zeros(5))
    assert base.status is Status.OPTIMAL
    ref = linprog(c, A_ub=np.vstack([-A[[0]].toarray(), A[[1, 2]].toarray(), -A[[2]].toarray()]),
                  b_ub=[-3, 3, 2, -1], A_eq=A[[3]].toarray(), b_eq=[5],
                  bounds=[(0, None), (0, 10), (0, 10), (0, None)])
    assert base.objective == pytest.approx(ref.fun + 1.5)
    if not make_backend(solver).capabilities.lp_duals:
        return
    assert base.row_duals == pytest.approx([0, 0, -1, 0.5, 0], abs=1e-6)
    eps = 1e-2   # cbc's solution file has ~8 digits
    for i in range(5):
        shift = np.zeros(5)
        shift[i] = eps
        fd = (solve(shift).objective - base.objective) / eps
        assert base.row_duals[i] == pytest.approx(fd, abs=1e-4), f"row {i}"


def test_add_column_resolve(solver):
    """Column generation step: LP, add a column into existing rows, re-solve."""
    m = make_backend(solver)
    a, b = m.add_vars(2, obj=[3.0, 2.0])
    m.add_rows(sp.csr_matrix([[1.0, 1.0], [0.0, 1.0]]), [4, -INF], [INF, 3])
    s = m.solve()
    assert s.objective == pytest.approx(9.0)          # b=3, a=1
    j = m.add_column(1.5, rows=[0], coefs=[1.0])       # cover row 0 at 1.5 per unit
    assert j == 2 and m.num_vars == 3
    s = m.solve()
    assert s.status is Status.OPTIMAL and s.objective == pytest.approx(6.0)
    assert s.x == pytest.approx([0, 0, 4])
    if m.capabilities.lp_duals:
        assert s.row_duals == pytest.approx([1.5, 0.0], abs=1e-7)
    m.add_column(1.0, rows=[0, 1], coefs=[2.0, 1.0], ub=1.0)   # 2 units of row 0 for 1
    s = m.solve()
    assert s.objective == pytest.approx(1.0 + 1.5 * 2)
    assert s.x.shape == (4,)


def test_modifications_and_resolve(solver):
    """objective, bounds, row bounds, new rows: each re-solve matches scipy's linprog."""
    m = small_lp(solver, "min")
    assert m.solve().objective == pytest.approx(2.8)
    rows = dict(A_ub=[[-1, -2], [-3, -1]], b_ub=[-4, -6], bounds=[(0, None), (0, None)])

    def check(c, sense="min"):
        s = m.solve()
        ref = linprog(c if sense == "min" else -np.asarray(c), **rows)
        assert s.status is Status.OPTIMAL
        assert s.objective == pytest.approx(ref.fun if sense == "min" else -ref.fun)
        return s

    m.set_objective([0, 1], [2, 1], "min")               # objective
    assert check([2, 1]).x == pytest.approx([1.6, 1.2])
    m.set_objective([0, 1], [4, 1], "min")
    assert check([4, 1]).x == pytest.approx([0, 6])
    m.set_bounds([1], 0, 3)                               # bounds: y <= 3
    rows["bounds"] = [(0, None), (0, 3)]
    assert check([4, 1]).x == pytest.approx([1, 3])
    m.set_row_bounds([1], 9, INF)                         # row bound: 3x + y >= 9
    rows["b_ub"] = [-4, -9]
    check([4, 1])
    m.set_row_bounds([1], 6, 7.5)                         # ranged row
    rows["A_ub"], rows["b_ub"] = [[-1, -2], [-3, -1], [3, 1]], [-4, -6, 7.5]
    check([4, 1])
    m.add_row([0], [1.0], lo=1.5)                         # new row: x >= 1.5
    rows["A_ub"].append([-1, 0])
    rows["b_ub"].append(-1.5)
    check([4, 1])
    assert m.num_rows == 3
    m.set_objective([0, 1], [1, 1], "max")                # and the other sense
    check([1, 1], "max")


def test_rows_with_fewer_columns_and_var_types(solver):
    m = make_backend(solver)
    idx = m.add_vars(3, lb=-5, ub=5, vtype=["B", "C", VarType.INTEGER])
    assert idx.dtype == np.int64 and list(idx) == [0, 1, 2]
    rows = m.add_rows(sp.coo_matrix([[1.0]]), [-INF], [INF])   # one column only
    assert rows.dtype == np.int64 and list(rows) == [0]
    m.add_rows(sp.csc_matrix([[0.0, 1.0, 1.0]]), [-INF], [7.5])
    m.set_objective(idx, [1, 1, 1], "max")
    s = m.solve()
    # binary -> [0,1] even with bounds [-5,5]; y + z <= 7.5, z integer <= 5
    assert s.objective == pytest.approx(1 + 7.5)
    assert s.x[0] == 1.0 and s.x[2] == np.round(s.x[2])
    m.set_objective(idx, [1, 0, 0], "min")
    assert m.solve().x[0] == 0.0


def test_empty_model(solver):
    m = make_backend(solver)
    m.set_objective([], [], offset=2.0)
    s = m.solve()
    assert s.status is Status.OPTIMAL and s.objective == pytest.approx(2.0) and s.x.shape == (0,)


# -- MIPs ---------------------------------------------------------------------------------
W8 = np.array([3, 3, 2, 2, 4, 1, 5, 3.0])
V8 = np.array([4, 4, 3, 3, 5, 1, 6, 4.0])


def knapsack(solver, **options):
    m = make_backend(solver, **options)
    x = m.add_vars(8, vtype="B")
    m.add_row(x, W8, hi=10)
    m.set_objective(x, V8, "max")
    return m


def test_knapsack(solver):
    m = knapsack(solver)
    s = m.solve()
    assert s.status is Status.OPTIMAL and s.objective == pytest.approx(14.0)
    assert set(np.unique(s.x)) <= {0.0, 1.0} and W8 @ s.x <= 10
    assert V8 @ s.x == pytest.approx(14.0)
    assert s.row_duals is None
    if m.capabilities.dual_bound:
        assert s.dual_bound == pytest.approx(14.0, rel=1e-3) and s.dual_bound >= 14 - 1e-6
        assert s.gap is not None and s.gap <= 1e-3
    m.set_objective(range(8), -V8, "min", offset=100.0)   # same problem, other sense
    s = m.solve()
    assert s.objective == pytest.approx(86.0)
    m.set_row_bounds([0], -INF, 5)                         # tighter capacity
    s = m.solve()
    ref = milp(-V8, constraints=LinearConstraint(W8[None], -INF, 5), integrality=np.ones(8),
               bounds=Bounds(0, 1))
    assert s.objective == pytest.approx(100 + ref.fun)


def test_set_vtype_turns_lp_into_mip(solver):
    m = make_backend(solver)
    x = m.add_vars(2, lb=0, ub=1)
    m.add_row(x, [2, 2], hi=3)
    m.set_objective(x, [1, 1], "max")
    s = m.solve()
    assert s.objective == pytest.approx(1.5) and s.dual_bound is None
    m.set_vtype(x, "B")
    s = m.solve()
    assert s.status is Status.OPTIMAL and s.objective == pytest.approx(1.0)
    assert s.row_duals is None
    m.set_vtype(x, VarType.CONTINUOUS)
    assert m.solve().objective == pytest.approx(1.5)


def test_infeasible(solver):
    m = make_backend(solver)
    x = m.add_vars(2, ub=10)
    m.add_row(x, [1, 1], lo=5)
    m.add_row(x, [1, 1], hi=4)
    m.set_objective(x, [1, 1])
    s = m.solve()
    assert s.status is Status.INFEASIBLE and s.x is None and not s.status.has_solution
    m.set_vtype(x, "I")
    assert m.solve().status is Status.INFEASIBLE
    m.set_row_bounds([1], -INF, 6)                     # repair: feasible again
    s = m.solve()
    assert s.status is Status.OPTIMAL and s.objective == pytest.approx(5)


def test_unbounded(solver):
    m = make_backend(solver)
    x = m.add_vars(2, lb=0, ub=INF)
    m.add_row(x, [1, -1], lo=0)
    m.set_objective(x, [-1, 0])
    s = m.solve()
    assert s.status is Status.UNBOUNDED and s.x is None
    m.set_vtype(x, "I")
    assert m.solve().status is Status.UNBOUNDED


def test_infeasible_with_unbounded_ray(solver):
    """Presolvers may only say "infeasible or unbounded": the backend must decide."""
    for vtype in ("C", "I"):
        m = make_backend(solver)
        x = m.add_vars(3, vtype=vtype)
        m.add_row(x[:2], [1, 1], lo=5)
        m.add_row(x[:2], [1, 1], hi=4)
        m.set_objective(x, [0, 0, -1])                   # x2 -> inf improves forever
        assert m.solve().status is Status.INFEASIBLE, vtype


def test_silent(solver, capfd):
    knapsack(solver).solve(n_solutions=3)
    small_lp(solver, "max").solve()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_highs_add_column_is_warm():
    """addCol keeps the basis: re-optimising after a column is far cheaper than cold."""
    rng = np.random.default_rng(0)
    A = sp.random(150, 800, density=0.05, random_state=1, format="csr")
    m = make_backend("highs")
    m.add_vars(800, obj=rng.random(800) + 0.5)
    m.add_rows(A, 1.0, INF)
    s = m.solve()
    cold = m._h.getInfo().simplex_iteration_count
    rows = np.argsort(-s.row_duals)[:3]
    m.add_column(0.95 * s.row_duals[rows].sum(), rows, np.ones(3))   # reduced cost < 0
    s2 = m.solve()
    assert s2.objective < s.objective and s2.x[-1] > 0
    assert m._h.getInfo().simplex_iteration_count < cold / 4


def several_optima(solver):
    """Multi-knapsack with 40 binaries: B&B meets many feasible solutions."""
    rng = np.random.default_rng(1)
    W = rng.integers(1, 20, (5, 40)).astype(float)
    v = rng.integers(1, 30, 40).astype(float)
    m = make_backend(solver)
    x = m.add_vars(40, vtype="B")
    m.add_rows(W, -INF, W.sum(1) / 3)
    m.set_objective(x, v, "max")
    return m, W, v


def test_several_solutions(solver):
    m, W, v = several_optima(solver)
    s = m.solve(n_solutions=5)
    assert s.status is Status.OPTIMAL and s.objective == pytest.approx(311.0)
    if not m.capabilities.multiple_solutions:
        assert s.pool == []
        return
    assert 1 <= len(s.pool) <= 4 and len(s.pool) == len(s.pool_objectives)
    keys = {tuple(s.x)} | {tuple(p) for p in s.pool}
    assert len(keys) == len(s.pool) + 1                       # distinct, incumbent excluded
    for p, f in zip(s.pool, s.pool_objectives):
        check_feasible(p, sp.csr_matrix(W), -INF, W.sum(1) / 3, 0, 1, ints=range(40))
        assert v @ p == pytest.approx(f) and f <= s.objective + 1e-6
    assert s.pool_objectives == sorted(s.pool_objectives, reverse=True)   # best first
    if solver == "gurobi":   # a true pool: the 5 best
        assert len(s.pool) == 4 and s.pool_objectives[0] >= 308 - 1e-6
    # an LP has no pool
    m.set_vtype(range(40), "C")
    assert m.solve(n_solutions=5).pool == []


def test_identical_optima_pool(solver):
    """choose 2 of 6 equal items: 15 optima; the pool holds distinct feasible ones."""
    m = make_backend(solver)
    x = m.add_vars(6, vtype="B")
    m.add_row(x, np.ones(6), hi=2)
    m.set_objective(x, np.ones(6), "max")
    s = m.solve(n_solutions=4)
    assert s.objective == pytest.approx(2)
    seen = {tuple(s.x)}
    for p in s.pool:
        assert tuple(p) not in seen and p.sum() <= 2 + 1e-9
        seen.add(tuple(p))
    if solver == "gurobi":
        assert len(s.pool) == 3 and s.pool_objectives == pytest.approx([2, 2, 2])


def test_mip_start(solver):
    m, W, v = several_optima(solver)
    start = np.zeros(40)
    m.set_mip_start(range(40), start)           # feasible (all zero)
    s = m.solve()
    assert s.status is Status.OPTIMAL and s.objective == pytest.approx(311.0)
    m.set_mip_start([0, 1], [1, 0])             # partial start: accepted or ignored
    assert m.solve().objective == pytest.approx(311.0)


def market_split(solver, seed=0, m=4, n=30, **options):
    """Cornuejols-Dawande market split, as min total deviation: LP bound 0, hard to close."""
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 100, (m, n)).astype(float)
    b = np.floor(A.sum(1) / 2)
    be = make_backend(solver, **options)
    x = be.add_vars(n, vtype="B")
    dev = be.add_vars(2 * m)
    be.add_rows(sp.hstack([sp.csr_matrix(A), sp.identity(m), -sp.identity(m)]), b, b)
    be.set_objective(dev, np.ones(2 * m))
    return be, x


def test_time_limit(solver):
    be, x = market_split(solver, time_limit=0.5)
    s = be.solve()
    assert s.status in (Status.FEASIBLE, Status.TIME_LIMIT)   # never assert the objective
    # the limit stops the search (HiGHS has not closed this market split after 20 s); the margin
    # absorbs subprocess start-up and a loaded CI machine, glpk rounds the limit up to 1 s
    assert s.solve_time < 0.5 + 20.0
    if s.status is Status.FEASIBLE:
        assert s.x is not None and s.objective is not None and s.objective >= -1e-9
        assert np.all(np.isin(s.x[x], [0.0, 1.0]))
    be.options.time_limit = None                               # options are read per solve
    assert be.options.time_limit is None


# -- errors -------------------------------------------------------------------------------
def test_gurobi_size_limit():
    if "gurobi" not in AVAILABLE:
        pytest.skip(HINT["gurobi"])
    m = make_backend("gurobi")
    x = m.add_vars(2500, ub=1.0, obj=-1.0)
    m.add_row(x, np.ones(2500), hi=10)
    try:
        m.solve()
    except SolverLicenseError as e:
        msg = str(e)
        assert "highs" in msg and "2000" in msg
    else:
        pytest.skip("the Gurobi licence here is not size-limited")


def test_not_installed(monkeypatch):
    with pytest.raises(SolverNotInstalledError, match="nonexistent_solver_xyz"):
        make_backend("pyomo:nonexistent_solver_xyz")
    monkeypatch.setitem(sys.modules, "gurobipy", None)       # import gurobipy -> ImportError
    with pytest.raises(SolverNotInstalledError, match=r"groupcf\[gurobi\]"):
        make_backend("gurobi")
    monkeypatch.setitem(sys.modules, "pyomo.environ", None)
    with pytest.raises(SolverNotInstalledError, match=r"groupcf\[pyomo\]"):
        make_backend("pyomo")
    with pytest.raises(ImportError):                            # also an ImportError
        make_backend("gurobi")


# -- factory ------------------------------------------------------------------------------
def test_make_backend_forms():
    assert isinstance(make_backend(), HighsBackend)
    m = make_backend("highs", time_limit=3.0, mip_gap=0.01)
    assert m.options == SolverOptions(time_limit=3.0, mip_gap=0.01)
    assert isinstance(make_backend(HighsBackend), HighsBackend)
    assert isinstance(make_backend(" HiGHS "), HighsBackend)
    # an instance: a fresh, empty model of the same type and options
    m.add_vars(3)
    m.add_row([0, 1], [1, 1], lo=1)
    fresh = make_backend(m)
    assert type(fresh) is HighsBackend and fresh is not m
    assert fresh.num_vars == 0 and fresh.num_rows == 0 and m.num_vars == 3
    assert fresh.options == m.options and fresh.options is not m.options
    assert make_backend(m, threads=2).options.threads == 2
    p = make_backend("pyomo:glpk") if "pyomo:glpk" in AVAILABLE else make_backend("pyomo")
    q = p.spawn()
    assert isinstance(q, PyomoBackend) and q.name == p.name and q.num_vars == 0
    assert q.capabilities == p.capabilities
    with pytest.raises(InvalidInputError, match="highs.*gurobi.*pyomo"):
        make_backend("cplexx")
    with pytest.raises(InvalidInputError):
        make_backend(42)


def test_capabilities_declared():
    for name in INSTALLED:
        m = make_backend(name)
        assert isinstance(m, Backend) and isinstance(m.capabilities, Capabilities)
        assert m.name == name
    assert make_backend("highs").capabilities == Capabilities(
        lp_duals=True, multiple_solutions=True, mip_start=True, dual_bound=True)
    caps = make_backend("pyomo").capabilities
    assert caps.lp_duals and caps.mip_start and not caps.multiple_solutions
    assert "highs" in AVAILABLE and "pyomo" in AVAILABLE


# -- agreement ----------------------------------------------------------------------------
def random_mip(seed):
    rng = np.random.default_rng(seed)
    n_bin = int(rng.integers(6, 11))
    n = n_bin + 2                                   # plus two continuous in [0, 3]
    m = int(rng.integers(2, 5))
    A = rng.integers(-5, 10, (m, n)).astype(float)
    A[rng.random((m, n)) < 0.3] = 0.0
    mid = A @ (rng.random(n) * np.r_[np.ones(n_bin), 3 * np.ones(2)])
    lo = np.where(rng.random(m) < 0.5, mid - rng.integers(0, 6, m), -INF)
    hi = np.where(rng.random(m) < 0.7, mid + rng.integers(0, 6, m), INF)
    c = rng.integers(-10, 10, n).astype(float)
    sense = "max" if seed % 2 else "min"
    return n_bin, A, lo, hi, c, sense


def test_random_mips_agree():
    """30 random small MIPs: same status and optimum on every installed backend (and
    scipy.optimize.milp)."""
    for seed in range(30):
        n_bin, A, lo, hi, c, sense = random_mip(seed)
        n = A.shape[1]
        ub = np.r_[np.ones(n_bin), 3.0, 3.0]
        ints = np.r_[np.ones(n_bin), 0, 0]
        ref = milp(c if sense == "min" else -c, integrality=ints, bounds=Bounds(0, ub),
                   constraints=LinearConstraint(A, lo, hi))
        results = {}
        for name in INSTALLED:
            be = make_backend(name)
            x = be.add_vars(n, ub=ub, vtype=["B"] * n_bin + ["C", "C"])
            be.add_rows(sp.csr_matrix(A), lo, hi)
            be.set_objective(x, c, sense)
            s = be.solve()
            results[name] = s
            if ref.status == 2:
                assert s.status is Status.INFEASIBLE, (seed, name)
                continue
            assert s.status is Status.OPTIMAL, (seed, name, s)
            expected = ref.fun if sense == "min" else -ref.fun
            assert s.objective == pytest.approx(expected, abs=1e-6), (seed, name)
            check_feasible(s.x, A, lo, hi, 0, ub, ints=range(n_bin))
        statuses = {s.status for s in results.values()}
        assert len(statuses) == 1, (seed, results)


class _NoDualsHighs(HighsBackend):
    """A backend declaring neither LP duals nor several MIP solutions."""

    name = "no-duals"
    capabilities = Capabilities(lp_duals=False, multiple_solutions=False)


@pytest.mark.parametrize("capability", ["lp_duals", "multiple_solutions"])
def test_require_missing_capability_names_it(capability):
    from groupcf.exceptions import SolverCapabilityError

    m = _NoDualsHighs()
    with pytest.raises(SolverCapabilityError, match=capability.replace("_", " ")) as err:
        m.require(capability, "column generation")
    assert "column generation" in str(err.value) and "no-duals" in str(err.value)


@pytest.mark.parametrize("capability", ["lp_duals", "multiple_solutions"])
def test_require_present_capability_passes(capability):
    HighsBackend().require(capability, "column generation")  # declared: no error


def test_require_unknown_capability_rejected():
    with pytest.raises(ValueError, match="unknown capability"):
        HighsBackend().require("warm_column_addition", "anything")  # removed: dead


def test_capabilities_truthful(solver):
    """What a backend declares, it delivers: LP duals, several solutions, a dual bound."""
    m = make_backend(solver)
    caps = m.capabilities
    x = m.add_vars(2, lb=0.0, ub=1.0)
    m.add_rows(sp.csr_matrix(np.array([[1.0, 1.0]])), [1.0], [INF])
    m.set_objective(x, [1.0, 2.0])
    sol = m.solve()
    assert sol.status == Status.OPTIMAL and sol.objective == pytest.approx(1.0)
    if caps.lp_duals:
        assert sol.row_duals is not None and sol.row_duals[0] == pytest.approx(1.0)


def test_pyomo_split_picks_backend_class():
    from groupcf.solvers.pyomo_appsi import PyomoAppsiBackend
    from groupcf.solvers.pyomo_factory import PyomoFactoryBackend

    assert type(make_backend("pyomo")) is PyomoAppsiBackend
    assert type(PyomoBackend("appsi_highs")) is PyomoAppsiBackend
    assert type(make_backend("pyomo").spawn()) is PyomoAppsiBackend
    with pytest.raises(SolverNotInstalledError, match="no_such_solver"):
        PyomoBackend("no_such_solver")
    for name in INSTALLED:
        if name.startswith("pyomo:"):
            assert type(make_backend(name)) is PyomoFactoryBackend


@pytest.mark.skipif("pyomo:cbc" not in AVAILABLE or "pyomo:glpk" not in AVAILABLE, reason="cbc and glpk needed")
def test_pyomo_factory_passes_the_absolute_gap():
    """``mip_abs_gap`` (MACE's exactness on tiny objectives) reaches cbc under its own name;
    glpk has no such option and stops at its relative gap (0 by default), so nothing is
    passed and nothing is warned."""
    import warnings as w

    assert make_backend("pyomo:cbc", mip_abs_gap=1e-10)._solver_options()["allowableGap"] == 1e-10
    with w.catch_warnings():
        w.simplefilter("error")
        opts = make_backend("pyomo:glpk", mip_abs_gap=1e-10)._solver_options()
    assert not any("gap" in k.lower() for k in opts)
