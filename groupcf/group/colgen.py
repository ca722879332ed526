"""Column generation for one-for-many group counterfactuals (paper §4.2–4.3).

The loop, per iteration:

1. solve the restricted master LP (:class:`~groupcf.formulations.master.RestrictedMaster`)
   and read its duals ``w``;
2. re-price the **column pool** (columns seen before that did not improve) with the new
   duals — a matrix-vector product; improving ones enter without any MIP;
3. otherwise try the **known change sets** (:mod:`groupcf.group.heuristics`): every
   change set seen so far — or, when there are few, every maximal change set — its
   classes of types priced by a feasibility oracle (closed form for a logistic model);
   complete enumeration without increase-only features is exact pricing, so the loop
   can stop without any MIP;
4. otherwise solve the exact pricing: one small problem per seed type
   (:class:`~groupcf.formulations.seed.SeedPricing`: a combinatorial search over the
   covered types with a closed-form score test for a logistic model, or checked
   completions and no-good cuts for a network), or with ``pricing="mip"`` the joint
   **pricing MIP** of the paper asking for several solutions; every solution is turned into a
   column (full coverage recomputed exactly), extended by **auxiliary MIP 1** (best
   change set for that counterfactual), and for the pricing MIP's best one **auxiliary
   MIP 2** (another counterfactual covering the same types) is tried;
5. Farley's bound ``z_RMP / max(1, pricing dual bound)`` is a valid lower bound at every
   iteration; the loop stops when no column prices out (then ``ceil(z_LP)`` is the
   bound), when the bound meets the best integer solution, or at the time limit.

The integer master over all generated columns gives the answer; it is certified optimal
when it meets the bound. When it does not and the maximal change sets can be
enumerated, the set cover over every class of every maximal change set
(:mod:`groupcf.group.enumeration`) closes the gap: for a logistic model the classes are
the complete column set, for a network a relaxation whose chosen classes are verified
lazily. Otherwise (or if that leaves a gap) **branch-and-price**
(:mod:`groupcf.group.branching`, Ryan–Foster branching, seed pricing with the branching
rows) runs until the tree is exhausted or the time limit passes (then the gap is
reported).
"""
from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..exceptions import SolverError, SolverLicenseError, SolverTimeLimitError
from ..formulations.completion import CompletionChecker
from ..formulations.master import RestrictedMaster, solve_set_cover
from ..formulations.nearest import NearestCounterfactual
from ..formulations.pricing import BestChangeSet, PricingMIP
from ..formulations.seed import SeedPricing
from ..solvers import make_backend
from ..solvers.base import Status
from .branching import branch_and_price
from .enumeration import Classes, close_gap_by_enumeration, enumerate_classes
from .heuristics import maximal_change_sets, price_known_change_sets
from .oracle import FeasibilityOracle
from .problem import Column, GroupProblem

log = logging.getLogger(__name__)

#: a column enters when its dual value exceeds 1 by this much
EPS = 1e-6
#: seconds for each integer master solved during the loop (a primal heuristic)
IP_CAP = 0.5


@dataclass
class Stats:
    iterations: int = 0
    columns: int = 0
    pricing_calls: int = 0
    heuristic_hits: int = 0
    pool_hits: int = 0
    aux_calls: int = 0
    time_initial: float = 0.0
    time_master: float = 0.0
    time_pricing: float = 0.0
    time_heuristic: float = 0.0
    time_auxiliary: float = 0.0
    time_final_ip: float = 0.0
    lp_bound: float = 0.0
    converged: bool = False
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k != "extra"}
        d.update(self.extra)
        return d


@dataclass
class GroupSolution:
    """What an algorithm returns to :func:`groupcf.explain_group`."""

    columns: list[Column]          # chosen columns
    lower_bound: int
    status: Status
    stats: Stats
    unexplained_types: np.ndarray  # bool over types


class Deadline:
    def __init__(self, time_limit: float | None):
        self.t0 = time.perf_counter()
        self.limit = time_limit

    def left(self) -> float | None:
        if self.limit is None:
            return None
        return max(0.0, self.limit - (time.perf_counter() - self.t0))

    @property
    def passed(self) -> bool:
        return self.limit is not None and self.left() <= 0.0


def initial_columns(problem: GroupProblem, solver, deadline: Deadline, progress=None,
                    checker=None) -> tuple[list[Column], np.ndarray]:
    """One counterfactual (≤ Tmax changes) per type not yet covered, its change set
    extended (auxiliary MIP 1) to cover as many further uncovered types as possible
    while still covering its own; identical columns merged. Returns the columns and the
    bool mask of types that have no counterfactual within ``Tmax``.

    The counterfactual comes from ``checker`` (a
    :class:`~groupcf.formulations.completion.CompletionChecker`: greedy search, then a
    feasibility MIP) when given, else from the nearest-counterfactual MIP (l0)."""
    space, emb = problem.space, problem.tm.embedding
    best_F = BestChangeSet(problem, solver)
    cols: dict[bytes, Column] = {}
    no_cf = np.zeros(problem.n_types, dtype=bool)
    covered = np.zeros(problem.n_types, dtype=bool)
    for i in range(problem.n_types):
        if progress is not None:
            progress.update(1)
        if covered[i]:
            continue  # an earlier column covers it already
        if checker is not None:
            ok, v, _ = checker.check(problem.Z[i], (), problem.Tmax, time_limit=deadline.left())
            if ok is False:
                no_cf[i] = True
                continue
            if ok:
                covered |= _add_initial(problem, best_F, cols, covered, i, v)
                continue
        be = make_backend(solver, time_limit=deadline.left())
        mip = NearestCounterfactual(space, emb, problem.Z[i], be, score_lo=problem.score_lo, Tmax=problem.Tmax).build()
        sol = be.solve()
        if sol.status == Status.INFEASIBLE:
            no_cf[i] = True
            continue
        if not sol.status.has_solution:
            if deadline.passed or sol.status == Status.TIME_LIMIT:
                raise SolverTimeLimitError(
                    "the time limit passed while computing the initial counterfactuals, before any "
                    "group solution existed; raise time_limit")
            raise SolverError(f"initial counterfactual MIP ended with status {sol.status.value}")
        covered |= _add_initial(problem, best_F, cols, covered, i, sol.x[mip.v])
    return list(cols.values()), no_cf


def _add_initial(problem, best_F, cols, covered, i, v) -> np.ndarray:
    weights = 1e-3 + (~covered)          # prefer types not yet covered ...
    weights[i] = problem.n_types + 1.0   # ... but always this one
    F, _ = best_F.best(v, weights)
    col = problem.make_column(v, F, "initial")
    if not col.cover[i]:   # cannot happen: type i's own changes fit in Tmax
        raise SolverError(f"internal error: the initial column of type {i} does not cover it")
    cols.setdefault(col.key(), col)
    return col.cover


def column_generation(problem: GroupProblem, solver="highs", time_limit: float | None = None,
                      progress: bool = True, n_solutions: int = 10, aux: bool = True,
                      ip_every: int = 10, max_iterations: int = 100000,
                      max_change_sets: int = 2000, pricing: str = "auto",
                      max_enumerated_sets: int = 20000, seed_mode: str | None = None) -> GroupSolution:
    """Solve the group problem by column generation; see the module docstring.

    ``max_change_sets``: when there are at most this many maximal change sets, every one
    of them is priced at each iteration (complete enumeration); without increase-only
    features this is exact pricing and the pricing MIP is never needed.
    ``pricing``: the exact level — ``"seed"`` (one small problem per seed type, the
    default; ``"auto"`` is the same) or ``"mip"`` (the paper's joint pricing MIP). Branch-and-price
    needs seed pricing; with ``"mip"`` a remaining gap is reported.
    ``max_enumerated_sets``: with at most this many maximal change sets (and no
    increase-only feature) every class of every maximal change set is enumerated
    (:mod:`~groupcf.group.enumeration`). For a logistic model this happens up front —
    pricing is then a matrix product and the exact set cover over the classes closes any
    gap; for a network only when a gap remains after the loop (the model-free relaxation
    with lazily verified classes). Above the limit, seed pricing and branch-and-price do
    it (measured on German LR, |S| = 100: enumeration wins at 15,504 change sets,
    Tmax = 5 or 15, and loses at 184,756, Tmax = 10: 14 s against 9 s). ``0`` disables it.
    ``seed_mode``: ``"linear"``, ``"lazy"`` or ``"embedded"``
    (:class:`~groupcf.formulations.seed.SeedPricing`; default: the first that applies).
    """
    from tqdm.auto import tqdm

    if pricing not in ("auto", "seed", "mip"):
        raise ValueError(f"pricing must be 'auto', 'seed' or 'mip', got {pricing!r}")
    deadline = Deadline(time_limit)
    stats = Stats()
    t = time.perf_counter()
    exact = SeedPricing(problem, solver, mode=seed_mode) if pricing != "mip" else None
    checker = exact.checker if exact is not None else None
    with tqdm(total=problem.n_types, desc="initial columns", disable=not progress, leave=False) as bar:
        init, no_cf = initial_columns(problem, solver, deadline, bar, checker=checker)
    stats.time_initial = time.perf_counter() - t
    if no_cf.all():   # nothing to explain; explain_group names the rows
        return GroupSolution([], 0, Status.OPTIMAL, stats, no_cf)
    active = ~no_cf   # types to explain

    master = RestrictedMaster(problem.n_types, solver)
    if no_cf.any():   # unexplainable types: relax their covering rows
        master.backend.set_row_bounds(master.rows[no_cf], 0.0, np.inf)
    in_master: list[Column] = []
    master_keys: set[bytes] = set()
    known_F: set[frozenset] = set()

    def add(col: Column) -> bool:
        known_F.add(col.F)
        k = col.key()
        if k in master_keys:
            return False
        master_keys.add(k)
        in_master.append(col)
        master.add(col.cover & active)
        return True

    for c in init:
        add(c)
    best_ip, best_cols = _integer(master, in_master, solver, deadline, stats, active)
    lower = 1
    oracle = FeasibilityOracle(problem, solver)
    all_F, exact_enumeration = maximal_change_sets(problem, max_change_sets)
    stats.extra["enumerated_change_sets"] = len(all_F)
    mip = None if exact is not None else PricingMIP(problem, solver, n_solutions=n_solutions, oracle=oracle)
    stats.extra["exact_pricing"] = f"seed-{exact.mode}" if exact is not None else "mip"
    full = _complete_columns(problem, exact, deadline, stats, max_enumerated_sets)
    best_F = BestChangeSet(problem, solver)
    pool_cols: dict[bytes, Column] = {}

    bar = tqdm(desc="column generation", disable=not progress, leave=False)
    status = Status.OPTIMAL
    try:
        while stats.iterations < max_iterations:
            if deadline.passed:
                status = Status.TIME_LIMIT
                break
            stats.iterations += 1
            t = time.perf_counter()
            lp = master.solve_lp(time_limit=deadline.left())
            stats.time_master += time.perf_counter() - t
            if lp.status != Status.OPTIMAL:
                status = Status.TIME_LIMIT if deadline.passed else Status.ERROR
                break
            z = float(lp.objective)
            stats.lp_bound = z      # last restricted-master LP value
            w = np.maximum(lp.row_duals[master.rows], 0.0) * active
            bar.set_postfix(lp=f"{z:.3f}", lb=lower, ub=best_ip, cols=master.n_columns)
            bar.update(1)
            # (2) re-price the pool
            if pool_cols:
                keys = list(pool_cols)
                C = np.array([pool_cols[k].cover for k in keys])
                vals = C @ w
                hit = [keys[j] for j in np.flatnonzero(vals > 1 + EPS)]
                if hit:
                    stats.pool_hits += len(hit)
                    for k in hit:
                        add(pool_cols.pop(k))
                    continue
            if full is not None:
                # (3a) complete column set (linear model): pricing is a matrix product
                vals = full.covers @ w
                hits = [j for j in np.argsort(-vals)[:n_solutions] if vals[j] > 1 + EPS]
                if not hits:
                    stats.converged = True
                    lower = max(lower, math.ceil(z - 1e-6))
                    break
                stats.heuristic_hits += 1
                for j in hits:
                    add(full.column(j))
                continue
            # (3) heuristic level: change sets seen before, classes priced by the oracle;
            # with few change sets, all of them: then the level is exact pricing. Skipped
            # when the oracle would need a MIP per class and seed pricing is available
            # (seed pricing is cheaper than those MIPs)
            cheap, decided = [], False
            if all_F or oracle.linear or exact is None:
                t = time.perf_counter()
                cheap, decided = price_known_change_sets(problem, oracle, all_F if all_F else known_F, w)
                stats.time_heuristic += time.perf_counter() - t
            if cheap:
                stats.heuristic_hits += 1
                for c in cheap:
                    add(c)
                continue
            if all_F and exact_enumeration and decided:
                stats.converged = True          # no class of any change set prices out
                lower = max(lower, math.ceil(z - 1e-6))
                break
            # (4) exact pricing: seed pricing, or the joint pricing MIP (pricing="mip")
            stats.pricing_calls += 1
            res = (exact.solve(w, max_columns=n_solutions, deadline=deadline) if exact is not None
                   else mip.solve(w, time_limit=deadline.left()))
            stats.time_pricing += res.time
            if not res.solution.status.has_solution and res.solution.status != Status.INFEASIBLE:
                status = Status.TIME_LIMIT
                break
            farley = z / max(1.0, res.dual_bound)
            lower = max(lower, math.ceil(farley - 1e-6))
            new = 0
            t = time.perf_counter()
            for j, col in enumerate(res.columns):
                cand = [col]
                if aux:
                    F, val = best_F.best(col.v, w)
                    if val > float(col.cover @ w) + EPS:
                        cand.append(problem.make_column(col.v, F, "aux-assignment"))
                    stats.aux_calls += 1
                for c in cand:
                    if float(c.cover @ w) > 1 + EPS:
                        new += add(c)
                    else:
                        pool_cols.setdefault(c.key(), c)
            if (aux and mip is not None and res.columns and float(res.columns[0].cover @ w) > 1 + EPS
                    and not deadline.passed):
                more = mip.solve(w, time_limit=deadline.left(), fix_cover=res.columns[0].cover & active)
                stats.aux_calls += 1
                for c in more.columns:
                    if float(c.cover @ w) > 1 + EPS:
                        new += add(c)
            stats.time_auxiliary += time.perf_counter() - t
            if new == 0:
                if res.optimal or res.dual_bound <= 1 + EPS:
                    stats.converged = True
                    lower = max(lower, math.ceil(z - 1e-6))
                    break
                status = Status.TIME_LIMIT if deadline.passed else Status.FEASIBLE
                break
            if lower >= best_ip:
                break          # the bound meets the incumbent: optimal already
            if stats.iterations % ip_every == 0:
                ip, cols = _integer(master, in_master, solver, deadline, stats, active, cap=IP_CAP)
                if ip < best_ip:
                    best_ip, best_cols = ip, cols
    finally:
        bar.close()
    if stats.converged or lower < best_ip:
        # with seed pricing, branch-and-price certifies whatever this finds: keep it short
        ip, cols = _integer(master, in_master, solver, deadline, stats, active,
                            cap=2 * IP_CAP if exact is not None else None)
        if ip < best_ip:
            best_ip, best_cols = ip, cols
    if best_ip > lower and not deadline.passed:
        # the integer master is above the bound: the set cover over every class of every
        # maximal change set (complete for a linear model, else a relaxation verified lazily)
        gap = _close_gap(problem, full, checker, solver, deadline, stats, active, max_enumerated_sets)
        if gap is not None:
            lower = max(lower, gap.lower)
            if gap.columns is not None and len(gap.columns) < best_ip:
                best_ip, best_cols = len(gap.columns), gap.columns
    if best_ip > lower and stats.converged and exact is not None and not deadline.passed:
        # the integer master is above the LP bound: branch-and-price certifies
        t = time.perf_counter()
        tree = branch_and_price(problem, in_master + list(pool_cols.values()), exact, solver, deadline,
                                best_cols, lower, active, max_columns=n_solutions)
        stats.extra["bp_nodes"] = tree.nodes
        stats.extra["time_branch_and_price"] = time.perf_counter() - t
        if tree.best < best_ip:
            best_ip, best_cols = tree.best, tree.columns
        lower = max(lower, tree.lower)
    stats.columns = master.n_columns
    stats.extra["pool_size"] = len(pool_cols)
    if exact is not None:
        stats.extra["seed_solves"] = exact.seed_solves
        if exact.mode == "lazy":
            stats.extra["nogood_cuts"] = exact.cuts
            stats.extra["completion_checks"] = dict(exact.checker.calls)
    if best_ip <= lower:
        status = Status.OPTIMAL
    elif status == Status.OPTIMAL:
        status = Status.FEASIBLE
    return GroupSolution(best_cols, int(lower), status, stats, no_cf)


def _close_gap(problem, full, checker, solver, deadline, stats, active, limit):
    """:func:`~groupcf.group.enumeration.close_gap_by_enumeration` over the complete
    columns of a linear model, or over every class when the maximal change sets number
    at most ``limit`` (no increase-only feature); ``None`` when neither applies."""
    t = time.perf_counter()
    if full is not None:
        classes = full.classes
    else:
        sets, complete = maximal_change_sets(problem, limit)
        if not sets or not complete:
            return None
        classes = enumerate_classes(problem, sets, deadline=deadline)
        stats.extra["time_enumeration"] = time.perf_counter() - t
        if classes is None:
            return None
    if checker is None:
        checker = CompletionChecker(problem, solver)
    try:
        gap = close_gap_by_enumeration(problem, classes, checker, active, solver, deadline)
    except SolverLicenseError as err:      # e.g. a size-limited Gurobi licence
        log.warning("the set cover over %d classes could not be solved (%s); "
                    "branch-and-price continues", len(classes), err)
        return None
    stats.extra.update(gap_closed_by_enumeration=gap.columns is not None, enumeration_classes=len(classes),
                       enumeration_rounds=gap.rounds, enumeration_removed=gap.removed,
                       enumeration_unknown=gap.unknown, time_gap_enumeration=time.perf_counter() - t)
    return gap


def _integer(master: RestrictedMaster, cols: list[Column], solver, deadline: Deadline, stats: Stats,
             active: np.ndarray, cap: float | None = None) -> tuple[int, list[Column]]:
    """The integer master over the columns (at most ``cap`` seconds: a heuristic during
    the loop); when the MIP has no solution, the greedy set cover (the columns always
    cover every active type)."""
    t = time.perf_counter()
    C = master.cover_matrix()[:, active]
    left = deadline.left()
    limit = cap if left is None else (left if cap is None else min(cap, left))
    sol = solve_set_cover(C, solver, time_limit=limit)
    stats.time_final_ip += time.perf_counter() - t
    if sol.status.has_solution:
        chosen = [cols[j] for j in np.flatnonzero(sol.x[: len(cols)] > 0.5)]
    else:
        chosen = [cols[j] for j in greedy_cover(C)]
    return len(chosen), chosen


def greedy_cover(C: np.ndarray) -> list[int]:
    """Indices of columns (rows of ``C``) covering every type, greedily (largest new
    coverage first)."""
    left = C.any(axis=0).copy()
    out = []
    while left.any():
        j = int(np.argmax((C & left).sum(axis=1)))
        out.append(j)
        left &= ~C[j]
    return out


class CompleteColumns:
    """Every maximal column of a linear model (its classes, filtered in closed form);
    Column objects on demand."""

    def __init__(self, problem, exact, classes: Classes):
        self.problem, self.exact, self.classes = problem, exact, classes
        self.covers = classes.covers

    def column(self, j: int) -> Column:
        F, seed = self.classes.representative(j)
        v = self.exact.completion(seed, F)
        return self.problem.make_column(v, F, "enumeration")


def _complete_columns(problem, exact, deadline, stats, limit):
    """For a linear model without increase-only features and at most ``limit`` maximal
    change sets: every maximal column (closed-form feasibility for all types at once).
    Pricing over it is exact, and the set cover over it is the exact optimum."""
    if exact is None or not exact.linear:
        return None
    sets, complete = maximal_change_sets(problem, limit)
    if not sets or not complete:
        return None
    t = time.perf_counter()
    s, G = exact.s, exact.G
    classes = enumerate_classes(problem, sets, lambda Fl, first: (s + G[:, Fl].sum(axis=1) >= problem.score_lo)[first],
                                deadline)
    stats.extra["complete_columns"] = None if classes is None else len(classes)
    stats.extra["time_enumeration"] = time.perf_counter() - t
    return CompleteColumns(problem, exact, classes) if classes is not None and len(classes) else None
