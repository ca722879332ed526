"""Column generation for one-for-many group counterfactuals (paper §4.2–4.3).

The loop is the generic engine's (:func:`groupcf.colgen.column_generation` over a
:class:`~groupcf.colgen.SetCoverMaster` of the types and a
:class:`~groupcf.colgen.ColumnPool`), instantiated with the group's columns
(:class:`~groupcf.group.problem.Column`) and pricing levels. Per iteration:

1. solve the restricted master LP (paper eqs. 15–18; the types without a counterfactual
   within ``Tmax`` are not covered) and read its duals ``w`` (a column improves when
   ``w(C) > 1 + EPS``: the set-cover master's reduced cost with weight 1);
2. re-price the **column pool** (columns seen before that did not improve) with the new
   duals — a matrix-vector product; improving ones enter without any MIP;
3. otherwise try the **known change sets** (:mod:`groupcf.group.heuristics`): every
   change set seen so far — or, when there are few, every maximal change set — its
   classes of types priced by the completion service (closed form for an additive model);
   complete enumeration without increase-only features is exact pricing, so the loop
   can stop without any MIP;
4. otherwise solve the exact pricing: one small problem per seed type
   (:class:`~groupcf.group.formulations.seed.SeedPricing`: a combinatorial search over the
   covered types with a closed-form score test for an additive model, or checked
   completions and no-good cuts for a network), or with ``pricing="mip"`` the joint
   **pricing MIP** of the paper asking for several solutions; every solution is turned into a
   column (full coverage recomputed exactly), extended by **auxiliary MIP 1** (best
   change set for that counterfactual), and for the pricing MIP's best one **auxiliary
   MIP 2** (another counterfactual covering the same types) is tried;
5. Farley's bound ``z_RMP / max(1, pricing dual bound)`` is a valid lower bound at every
   iteration; the loop stops when no column prices out (then ``ceil(z_LP)`` is the
   bound), when the bound meets the best integer solution, or at the time limit.

Steps 2–4 are pricing levels (:mod:`groupcf.group.levels`, subclasses of
:class:`groupcf.colgen.PricingLevel`), tried in order by the engine; each keeps its own
statistics. The group-specific parts are hooks of the engine: the trivial pricing bound
``max_i w(compatible(i))`` for Farley's bound each round (``dual_bound``), and after an
exact pricing round the incumbent check and the periodic integer master (``on_entered``).

The integer master over all generated columns gives the answer; it is certified optimal
when it meets the bound. When it does not and the maximal change sets can be
enumerated, the set cover over them closes the gap: for an additive model over the
complete column set (:mod:`groupcf.group.complete`: every class of every maximal change
set, increase-only features by their thresholds; one set cover per connected component),
for a network over every class (:mod:`groupcf.group.enumeration`), a relaxation whose
chosen classes are verified lazily (with increase-only features only a bound unless
every chosen class passes); with too many change sets to list, over the maximal classes
found from the types (:mod:`groupcf.group.closed_classes`). Otherwise (or if that leaves a gap) **branch-and-price**
(:mod:`groupcf.group.branching`, Ryan–Foster branching, seed pricing with the branching
rows) runs until the tree is exhausted or the time limit passes (then the gap is
reported).

Not shared with the generic engine, on purpose (sharing would change which optimal cover
is returned, so the counterfactuals): the integer master
(:func:`~groupcf.group.common.integer_master`, a plain set-cover MIP without
:func:`groupcf.colgen.solve_integer_master`'s local search and cost tie-break stage, which
need element costs the group columns do not have) and the per-component set covers of
:mod:`~groupcf.group.complete` / :mod:`~groupcf.group.enumeration`.
"""
from __future__ import annotations

import logging
import math
import time
import warnings
from dataclasses import dataclass
from typing import cast

import numpy as np

from ..colgen import CGRun, ColumnPool, PricingLevel, SetCoverMaster
from ..colgen import Column as PoolColumn
from ..colgen import column_generation as generic_column_generation
from ..exceptions import GroupCFWarning, InvalidInputError, SolverLicenseError
from ..options import Options
from ..progress import Phase
from ..solvers import make_backend
from ..solvers.base import Status
from ..utils import EPS, Deadline
from .branching import branch_and_price
from .closed_classes import close_gap_by_maximal_classes
from .common import GroupSolution, Stats, initial_columns, integer_master
from .complete import CompleteColumns, complete_columns
from .components import branch_and_price_by_component, split_by_components
from .enumeration import GapResult, close_gap_by_enumeration, enumerate_classes
from .formulations.pricing import PricingMIP
from .formulations.seed import SeedPricing
from .heuristics import maximal_change_sets
from .levels import CompleteColumnsLevel, ExactLevel, GroupData, KnownChangeSetsLevel, PoolLevel
from .problem import Column, GroupProblem

log = logging.getLogger(__name__)

#: seconds for each integer master solved during the loop (a primal heuristic)
IP_CAP = 0.5


@dataclass(frozen=True)
class ColgenOptions(Options):
    """Options of ``gcf.explain_group(..., method="colgen")`` (the default method).

    Passed to :func:`~groupcf.explain_group` as keywords or as this object (``options=``);
    values are checked when the object is created.

    Parameters
    ----------
    n_solutions
        Improving columns taken per exact pricing round (solutions asked of the pricing
        MIP, which needs a backend with ``multiple_solutions``; otherwise it returns one).
    aux
        Run the auxiliary MIPs (best change set for each new point; another point for
        the pricing MIP's best column).
    ip_every
        Solve the integer master (heuristically, ``IP_CAP`` seconds) every this many
        exact pricing rounds.
    max_iterations
        Most master LP solves.
    max_change_sets
        With at most this many maximal change sets, every one is priced each iteration
        (complete enumeration; exact pricing without increase-only features).
    pricing
        The exact level: ``"seed"`` (one small problem per seed type; ``"auto"`` is the
        same) or ``"mip"`` (the paper's joint pricing MIP). Branch-and-price needs seed
        pricing; with ``"mip"`` a remaining gap is reported.
    max_enumerated_sets
        With at most this many maximal change sets every class of every maximal change set
        is enumerated: up front for an additive model (:mod:`~groupcf.group.complete`,
        increase-only features included: pricing is then a matrix product and the exact
        set cover over the complete columns closes any gap; Credit LR, |S| = 563,
        Tmax = 5: 26,334 change sets, 5,221 covers in 3.4 s), for a network only when a
        gap remains (:mod:`~groupcf.group.enumeration`;
        measured on German LR, |S| = 100: enumeration wins at 15,504 change sets and loses
        at 184,756: 14 s against 9 s). ``0`` disables it.
    seed_mode
        ``"linear"``, ``"lazy"`` or ``"embedded"``
        (:class:`~groupcf.group.formulations.seed.SeedPricing`; default: the first that
        applies).
    components
        Certify one component of the compatibility graph at a time
        (:mod:`~groupcf.group.components`): the bound becomes the sum of the components'
        rounded-up LP values and branch-and-price runs per component. ``False``: one
        branch-and-price over every type.

    Raises
    ------
    InvalidInputError
        An unknown ``pricing`` or ``seed_mode``, or a count that is not a positive integer.

    Examples
    --------
    >>> opts = gcf.ColgenOptions(pricing="mip", components=False)
    >>> opts.pricing, opts.n_solutions
    ('mip', 10)
    >>> gcf.ColgenOptions(pricing="lp")
    Traceback (most recent call last):
    ...
    groupcf.exceptions.InvalidInputError: pricing must be 'auto', 'seed' or 'mip', got 'lp'
    """

    n_solutions: int = 10
    aux: bool = True
    ip_every: int = 10
    max_iterations: int = 100000
    max_change_sets: int = 2000
    pricing: str = "auto"
    max_enumerated_sets: int = 30000
    seed_mode: str | None = None
    components: bool = True

    def __post_init__(self):
        super().__post_init__()
        if self.pricing not in ("auto", "seed", "mip"):
            raise InvalidInputError(f"pricing must be 'auto', 'seed' or 'mip', got {self.pricing!r}")
        if self.seed_mode not in (None, "linear", "lazy", "embedded"):
            raise InvalidInputError(
                f"seed_mode must be None, 'linear', 'lazy' or 'embedded', got {self.seed_mode!r}")
        for name in ("n_solutions", "ip_every", "max_iterations"):
            if int(getattr(self, name)) < 1:
                raise InvalidInputError(f"{name} must be a positive integer, got {getattr(self, name)!r}")


def column_generation(problem: GroupProblem, solver="highs", time_limit: float | None = None,
                      progress: bool = True, options: ColgenOptions | None = None) -> GroupSolution:
    """Solve the group problem by column generation; see the module docstring."""
    opt = options or ColgenOptions()
    deadline = Deadline(time_limit)
    stats = Stats()
    t = time.perf_counter()
    completions = problem.completions(solver)
    seed = SeedPricing(problem, solver, mode=opt.seed_mode, completions=completions) \
        if opt.pricing != "mip" else None
    with Phase("initial columns", progress, problem.n_types, log, unit="types") as bar:
        # the completion service proves infeasibility only without increase-only features
        # (seed.checker is None otherwise); with them its greedy points are still valid
        proves = seed is not None and seed.checker is not None
        init, no_cf = initial_columns(problem, solver, deadline, bar, completions=completions, prove=proves)
        bar.set(columns=len(init), without_counterfactual=int(no_cf.sum()))
    stats.time_initial = time.perf_counter() - t
    if no_cf.all():   # nothing to explain; explain_group names the rows
        return GroupSolution([], 0, Status.OPTIMAL, stats, no_cf)
    active = ~no_cf   # types to explain

    master = SetCoverMaster(problem.n_types, solver, active=active)
    pool = ColumnPool(problem.n_types)
    data = GroupData(problem, active)
    for c in init:
        data.known_F.add(c.F)
        if pool.add(c) is not None:
            master.add(c)
            pool.in_master[-1] = True
    best_ip, best_cols = integer_master(_covers(master), _columns(master), solver, deadline, stats, active)
    levels, full = _levels(problem, solver, opt, completions, seed, deadline, stats)

    def on_round(it, z, bound):
        stats.lp_bound = z      # last restricted-master LP value

    def on_entered(it, res, bound) -> bool:
        nonlocal best_ip, best_cols
        if res.dual_bound is None:
            return False          # a cheap level answered: next iteration
        if _lower(bound) >= best_ip:
            return True           # the bound meets the incumbent: optimal already
        if it % opt.ip_every == 0:
            ip, cols = integer_master(_covers(master), _columns(master), solver, deadline, stats, active, cap=IP_CAP)
            if ip < best_ip:
                best_ip, best_cols = ip, cols
        return False

    # Farley's bound from the trivial pricing bound (every cover lies in one type's compatible set)
    trivial = None if seed is None else (lambda duals: float((seed.compat @ duals.pi).max()))
    run = generic_column_generation(master, pool, levels, deadline=deadline, max_iterations=opt.max_iterations,
                                    data=data, on_round=on_round, dual_bound=trivial, on_entered=on_entered,
                                    phase="column generation", progress=progress, incumbent=lambda: best_ip)
    stats.iterations, stats.time_master, stats.converged = run.lp_solves, run.time_master, run.converged
    lower, status = _lower(run.bound), _status(run, deadline)
    outside = [_column(pool.columns[j]) for j in pool.outside()]
    with Phase("integer master", progress, logger=log) as ph:
        if stats.converged or lower < best_ip:
            # with seed pricing, branch-and-price certifies whatever this finds: keep it short
            ip, cols = integer_master(_covers(master), _columns(master), solver, deadline, stats, active,
                                      cap=2 * IP_CAP if seed is not None else None)
            if ip < best_ip:
                best_ip, best_cols = ip, cols
        ph.set(explanations=best_ip, bound=lower)
    split = None
    if best_ip > lower and stats.converged and seed is not None and opt.components and run.x is not None:
        # the bound per component of the compatibility graph: sum of rounded-up LP values
        split = split_by_components(seed.compat, _covers(master), run.x, active, _columns(master) + outside)
        if split is not None:
            stats.extra.update(components=len(split[1]), components_bound=int(split[1].sum()))
            lower = max(lower, int(split[1].sum()))
    if best_ip > lower and not deadline.passed:
        # the integer master is above the bound: the set cover over every class of every
        # maximal change set (complete for an additive model, else a relaxation verified lazily)
        # or, with increase-only features, a bound unless every chosen class passes
        with Phase("set cover over every change set", progress, logger=log) as ph:
            gap = _close_gap(problem, full, completions, solver, deadline, stats, active, opt.max_enumerated_sets,
                             best_cols)
            if gap is None:
                ph.discard()       # neither the complete columns nor the enumeration applies
            else:
                lower = max(lower, gap.lower)
                if gap.columns is not None and len(gap.columns) < best_ip:
                    best_ip, best_cols = len(gap.columns), gap.columns
                ph.set(explanations=best_ip, bound=lower)
    if best_ip > lower and stats.converged and seed is not None and not deadline.passed:
        # the integer master is above the LP bound: branch-and-price certifies, one
        # component of the compatibility graph at a time (components) or on the whole
        t = time.perf_counter()
        cols = _columns(master) + outside
        with Phase("branch and price", progress, logger=log, unit="nodes") as ph:
            def on_node(nodes: int, best: int, bound: int) -> None:
                ph.update(incumbent=best, bound=bound, gap=f"{(best - bound) / max(best, 1):.1%}")

            if split is not None:
                comp_cols, comp_lower, nodes, searched, closed = branch_and_price_by_component(
                    problem, cols, seed, solver, deadline, best_cols, split[0], split[1], active, opt.n_solutions,
                    on_node=on_node)
                stats.extra.update(bp_nodes=nodes, components_searched=searched, components_closed=closed)
                if len(comp_cols) < best_ip:
                    best_ip, best_cols = len(comp_cols), comp_cols
                lower = max(lower, comp_lower)
            else:
                tree = branch_and_price(problem, cols, seed, solver, deadline, best_cols, lower, active,
                                        max_columns=opt.n_solutions, on_node=on_node)
                stats.extra["bp_nodes"] = tree.nodes
                if tree.best < best_ip:
                    best_ip, best_cols = tree.best, tree.columns
                lower = max(lower, tree.lower)
            ph.set(incumbent=best_ip, bound=min(lower, best_ip),
                   gap=f"{(best_ip - min(lower, best_ip)) / max(best_ip, 1):.1%}")
        stats.extra["time_branch_and_price"] = time.perf_counter() - t
    _finish_stats(stats, levels, master, len(outside), seed)
    if best_ip <= lower:
        status = Status.OPTIMAL
    elif status == Status.OPTIMAL:
        status = Status.FEASIBLE
    return GroupSolution(best_cols, int(lower), status, stats, no_cf)


def _levels(problem, solver, opt: ColgenOptions, completions, seed, deadline, stats
            ) -> tuple[list[PricingLevel], CompleteColumns | None]:
    """The pricing levels in order: pool, then the complete column set (additive model)
    or the known change sets, then the exact level (seed pricing or the pricing MIP)."""
    all_F, exact_enumeration = maximal_change_sets(problem, opt.max_change_sets)
    stats.extra["enumerated_change_sets"] = len(all_F)
    mip = None
    if seed is None:
        n = opt.n_solutions
        if n > 1 and not make_backend(solver).capabilities.multiple_solutions:
            msg = (f"the {getattr(solver, 'name', solver)!r} backend returns one solution per MIP: the "
                   f"pricing MIP yields one column per round (n_solutions={n} not used)")
            if n != ColgenOptions.n_solutions:      # the user asked for it: say so
                warnings.warn(msg, stacklevel=4)
            else:
                log.info(msg)
        mip = PricingMIP(problem, solver, n_solutions=n, completions=completions)
    levels: list[PricingLevel] = [PoolLevel()]
    full = _complete_columns(problem, completions, seed, deadline, stats, opt.max_enumerated_sets)
    if full is not None:
        levels.append(CompleteColumnsLevel(full, opt.n_solutions))
    elif all_F or completions.additive or seed is None:
        # skipped when each class would need a MIP and seed pricing is available (cheaper)
        levels.append(KnownChangeSetsLevel(completions, all_F, exact_enumeration, allow_mip=seed is None))
    levels.append(ExactLevel(problem, solver, seed, mip, opt.n_solutions, opt.aux))
    stats.extra["exact_pricing"] = levels[-1].name
    return levels, full


def _lower(bound: float) -> int:
    """The integer lower bound from the engine's (Farley / LP) bound: its ceiling."""
    return max(1, math.ceil(bound - EPS))


def _column(c: PoolColumn) -> Column:
    """A column of the generic engine, which in this engine is a group :class:`Column`."""
    return cast(Column, c)


def _columns(master: SetCoverMaster) -> list[Column]:
    """The master's columns (group :class:`Column` objects)."""
    return [_column(c) for c in master.columns]


def _covers(master: SetCoverMaster) -> np.ndarray:
    """The master's columns as a bool matrix (columns × types), restricted to the active types."""
    return np.array([c.cover & master.active for c in master.columns], dtype=bool).reshape(-1, master.n)


def _status(run: CGRun, deadline: Deadline) -> Status:
    """The loop's status in the group convention: ``TIME_LIMIT`` when the deadline stopped
    it, ``ERROR`` when a master LP failed otherwise, else ``OPTIMAL`` (mapped to
    ``FEASIBLE`` by the caller while a gap remains)."""
    if run.stopped == "level":
        return run.status
    if run.stopped == "lp":
        return Status.TIME_LIMIT if run.status == Status.TIME_LIMIT else Status.ERROR
    if run.stopped == "deadline" or (run.stopped == "no_improvement" and deadline.passed):
        return Status.TIME_LIMIT
    return Status.FEASIBLE if run.stopped == "no_improvement" else Status.OPTIMAL


def _finish_stats(stats: Stats, levels, master, pool_size: int, seed) -> None:
    by_name = {type(lv).__name__: lv for lv in levels}
    stats.columns = master.n_columns
    stats.extra["pool_size"] = pool_size
    pool = by_name.get("PoolLevel")
    stats.pool_hits = pool.stats.columns if pool is not None else 0
    for name in ("CompleteColumnsLevel", "KnownChangeSetsLevel"):
        lv = by_name.get(name)
        if lv is not None:
            stats.heuristic_hits += lv.stats.hits
            stats.time_heuristic += lv.stats.time
    exact = levels[-1]
    stats.pricing_calls = exact.stats.calls
    stats.time_pricing, stats.time_auxiliary, stats.aux_calls = exact.time_solve, exact.time_aux, exact.aux_calls
    stats.extra["levels"] = {lv.name: dict(calls=lv.stats.calls, hits=lv.stats.hits, time=round(lv.stats.time, 4))
                             for lv in levels}
    if seed is not None:
        stats.extra["seed_solves"] = seed.seed_solves
        if seed.mode == "lazy":
            stats.extra["nogood_cuts"] = seed.cuts
            stats.extra["completion_checks"] = dict(seed.completions.calls)


def _close_gap(problem, full, completions, solver, deadline, stats, active, limit, incumbent=()):
    """The exact set cover over the complete columns of an additive model
    (:mod:`~groupcf.group.complete`), or
    :func:`~groupcf.group.enumeration.close_gap_by_enumeration` over every class when the
    maximal change sets number at most ``limit`` (with increase-only features a bound,
    and the optimum only when the chosen classes pass); with more change sets, the set
    cover over the maximal classes found from the types
    (:mod:`~groupcf.group.closed_classes`, a bound, the optimum when its classes pass a
    greedy check); ``None`` when none applies."""
    t = time.perf_counter()
    if full is not None:
        try:
            lower, cols = full.solve(active, solver, deadline, incumbent)
        except SolverLicenseError as err:
            warnings.warn(f"the set cover over {len(full)} complete columns could not be solved ({err}); "
                          "branch-and-price continues", GroupCFWarning, stacklevel=2)
            return None
        stats.extra.update(gap_closed_by_enumeration=cols is not None, enumeration_classes=len(full),
                           time_gap_enumeration=time.perf_counter() - t)
        return GapResult(lower, cols, 1, 0, 0)
    sets, _ = maximal_change_sets(problem, limit)
    if not sets:
        if not limit:
            return None
        # too many change sets to list: the maximal classes found from the types instead
        return close_gap_by_maximal_classes(problem, completions, active, solver, deadline, incumbent, stats.extra)
    classes = enumerate_classes(problem, sets, deadline=deadline)
    stats.extra["time_enumeration"] = time.perf_counter() - t
    if classes is None:
        return None
    try:
        gap = close_gap_by_enumeration(problem, classes, completions, active, solver, deadline, incumbent)
    except SolverLicenseError as err:      # e.g. a size-limited Gurobi licence
        warnings.warn(f"the set cover over {len(classes)} classes could not be solved ({err}); "
                      "branch-and-price continues", GroupCFWarning, stacklevel=2)
        return None
    stats.extra.update(gap_closed_by_enumeration=gap.columns is not None, enumeration_classes=len(classes),
                       enumeration_rounds=gap.rounds, enumeration_removed=gap.removed,
                       enumeration_unknown=gap.unknown, time_gap_enumeration=time.perf_counter() - t)
    return gap


def _complete_columns(problem, completions, seed, deadline, stats, limit):
    """For an additive model and at most ``limit`` maximal change sets: every maximal column
    (:mod:`~groupcf.group.complete`; closed-form feasibility, increase-only features by
    their staircases). Pricing over it is exact, and the set cover over it is the exact
    optimum."""
    if seed is None or not completions.additive:
        return None
    sets, _ = maximal_change_sets(problem, limit)
    if not sets:
        return None
    t = time.perf_counter()
    full = complete_columns(problem, completions, sets, deadline)
    stats.extra["complete_columns"] = None if full is None else len(full)
    stats.extra["time_enumeration"] = time.perf_counter() - t
    return full if full is not None and len(full) else None
