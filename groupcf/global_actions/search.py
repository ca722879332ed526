r"""Column generation over actions (:mod:`groupcf.colgen` instantiated for global actions).

1. **Seeds**: each type's greedy completion (:class:`~groupcf.formulations.completion.Completions`,
   numpy only) read as an action; the *nearest action* (:meth:`ActionMIP.cheapest` for one
   type at :math:`\tau + \varepsilon`: the cheapest action covering it) of the
   ``max_seed_mips`` most frequent types and of every type no seed covers yet; every
   sub-action of those, and combinations of the most frequent single changes; each
   evaluated over all types at once with the numpy model path.
   **Coverability** (:class:`Coverability`): a type is *coverable* when a pool column
   covers it at :math:`\tau`; *proven uncoverable* when its score bound or the nearest-action
   MIP relaxed to :math:`\tau - \varepsilon` (:mod:`~groupcf.global_actions.pricing`) is
   infeasible — every real cover is feasible there, so none exists; *undecided* otherwise:
   nothing reaches :math:`\tau + \varepsilon`, something reaches :math:`\tau - \varepsilon`,
   and no column found covers it (its coverage cannot be decided at solver tolerance), or the
   time limit came first. Undecided types are left out of the masters and their people are
   added to every upper bound (``stats["undecided"]``, ``stats["coverability_unknown"]``,
   with a warning).
2. **Fewest actions** (``k=None``): the set-cover master over the coverable types, priced
   by the pool, the neighbours of the best actions
   (:class:`~groupcf.global_actions.neighbours.NeighbourLevel`), then the exact pricing
   MIP (:class:`~groupcf.global_actions.pricing.ExactLevel`), Farley's bound each
   round; the integer master over the pool, certified when it meets
   :math:`\lceil z_{LP} \rceil`.
3. **The curve** ``k' = 1, 2, …``: one max-coverage master whose budget grows, its columns
   kept; at each ``k'`` column generation to convergence (the Lagrangian bound
   :math:`z + k\max(0, \beta - \mu)` while it runs), then the integer master (coverage,
   then least total cost). At ``k' = 1`` the best single action is the pricing MIP with
   :math:`\pi = m` over every coverable type: exact. The upper bound on coverage at
   ``k'`` is :math:`\lfloor \min(\text{LP bound}, \text{coverable}) \rfloor` plus the
   undecided people; a point is certified when the coverage found meets it. Also valid:
   :math:`U(k) \le U(k-1) + U(1)` (subadditivity), used when the time limit stops the
   search; then the integer master gets a short grace period, else greedy plus local
   search answer. Each point's chosen actions then go through the cost descent
   (:mod:`~groupcf.global_actions.descent`, numpy): a cheaper action covering the same
   people replaces one when found, and joins the pool for the next ``k'`` — coverage
   pricing alone never prices cost once a column covers everyone assigned to it.

**Enumeration** (:mod:`~groupcf.global_actions.enumerate`, ``enumerate_work``): when every
action can be enumerated, its level prices exactly in place of the neighbour and MIP levels,
coverability is exact (no nearest-action MIP, nothing undecided), and with its columns in the
pool the integer master's bound at each ``k'`` is a bound over every action (``ip_bound``):
the point is certified when the master is solved.

**Boxes** (:mod:`~groupcf.global_actions.boxes`): where the enumeration declines but every
feature's representatives are finite, on a non-linear score (a linear one keeps the exact,
fast pricing MIP), exact pricing by branch and bound over boxes of actions prices before
the MIP level (:class:`~groupcf.global_actions.boxes.BoxLevel`; its bound is valid also when
its time cap stops it, and it declines for the rest of the call after such a stop), and the
best single action is that search with :math:`\pi = m`, run after the whole curve with the
time left (``BoxLevel.single_share``): its bound tightens :math:`U(1)` and, by
subadditivity, every :math:`U(k')`; a better action than the curve's at ``k' = 1`` replaces it.

**Why the bounds hold at the threshold.** Coverage is counted at :math:`\tau` with the
numpy model. Every MIP whose value is used as a bound — the exact pricing level and the
best single action (their dual bounds :math:`\beta`), the coverability proof — asks only
:math:`\mathrm{score} \ge \tau - \varepsilon`, so every action covering a type at
:math:`\tau` is feasible there and :math:`\beta \ge \max_a \sum_t \pi_t c_{ta}` over the
coverable types; the proven-uncoverable types cannot be covered and the undecided ones are
counted as covered. Its solutions may only cover inside the band :math:`[\tau - \varepsilon,
\tau)`: a column enters only on its real reduced cost, and when none does and nothing is
proven, the pricing MIP is solved again at :math:`\tau + \varepsilon` for columns
(:class:`ExactLevel`).
"""
from __future__ import annotations

import itertools
import logging
import math
import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..colgen import (
    ColumnPool,
    MaxCoverageMaster,
    PoolLevel,
    SetCoverMaster,
    column_generation,
    solve_integer_master,
    sync_master,
)
from ..colgen.local_search import greedy, improve, selection_value
from ..exceptions import GroupCFWarning
from ..formulations.completion import Completions
from ..progress import Phase
from ..solvers.base import Status
from ..utils import EPS, Deadline
from .actions import Action, ActionSpace
from .boxes import ActionBoxes, BoxLevel
from .descent import descend_selection
from .enumerate import Enumeration, enumeration_for
from .mip_parts import best_cover
from .neighbours import NeighbourLevel, climb
from .pricing import ActionMIP, ExactLevel, PricingResult, _cap

log = logging.getLogger(__name__)


def _seed_time_over(deadline: Deadline, share: float = 0.3) -> bool:
    """Nearest-action MIPs for types already covered (quality seeds) stop after this share
    of ``time_limit``."""
    return deadline.limit is not None and deadline.elapsed() > share * deadline.limit


@dataclass
class CurvePoint:
    """One point of the coverage–cost–k curve: the chosen actions, coverage, cost and bound."""

    k: int
    chosen: list          # pool positions
    assign: np.ndarray    # per type: pool position or -1
    covered: float        # people covered
    cost: float           # their total cost
    upper: float          # certified upper bound on people covered with k actions
    status: Status
    ip_bound: float | None = None   # the integer master's bound over the pool


@dataclass
class Coverability:
    """Per type, after seeding: ``coverable`` (a pool column covers it at τ), ``band``
    (undecided at solver tolerance: no action reaches τ + ε, one reaches τ − ε, no
    column covers it at τ) and ``unknown`` (not decided before the time limit); the
    other types are proven uncoverable."""

    coverable: np.ndarray
    band: np.ndarray
    unknown: np.ndarray

    @property
    def undecided(self) -> np.ndarray:
        return self.band | self.unknown


@dataclass
class SearchResult:
    """Everything the search returns: the pool, who is coverable, the curve and its bounds
    (``undecided``: the types counted in every upper bound without being searched)."""

    pool: ColumnPool
    coverable: np.ndarray
    undecided: np.ndarray | None = None
    curve: list = field(default_factory=list)
    min_k: int | None = None           # fewest actions covering every coverable type (found)
    min_k_bound: int | None = None     # its certified lower bound
    stats: dict = field(default_factory=dict)
    mip: ActionMIP | None = None       # the pricing MIP builder (its per-type embeddings cached)
    enum: Enumeration | None = None    # every action, when the enumeration ran


def seed_pool(aspace: ActionSpace, mip: ActionMIP, pool: ColumnPool, deadline: Deadline,
              max_frequent: int = 12, max_seed_mips: int = 100, progress: bool = False,
              enum: Enumeration | None = None) -> Coverability:
    """Seed ``pool`` (module docstring, step 1) and decide each type's coverability.
    Types are taken by decreasing multiplicity; after ``max_seed_mips`` nearest-action
    MIPs, only types no seed covers yet get one (each type's coverability is still
    decided: covered by a seed, or its own MIPs)."""
    n = aspace.n_types
    covered = np.zeros(n, dtype=bool)
    proven = np.zeros(n, dtype=bool)
    band = np.zeros(n, dtype=bool)
    seeds = []
    comp = Completions(aspace.space, aspace.embedding, aspace.tau + aspace.margin, mip.solver, accept=aspace.tau)
    T = aspace.Tmax or len(aspace.mutable)
    greedy_acts: list[tuple[int, Action]] = []
    for t in range(n):                       # greedy completions: no MIP
        ok, v, _ = comp.check(aspace.Z[t], (), T, prove=False)
        if ok and v is not None:
            act = aspace.action_to(t, v)
            if len(act):
                greedy_acts.append((t, act))
    # many types share their greedy action: each distinct one is scored once, all in one batch
    # (scoring each type's action over every type was quadratic in the number of types)
    distinct = list({a.key: a for _, a in greedy_acts}.values())
    covers = dict(zip([a.key for a in distinct], aspace.cover_many(distinct))) if distinct else {}
    for t, act in greedy_acts:
        cover = covers[act.key]
        if cover[t]:
            seeds.append(act)
            if act.key not in pool:
                pool.add(aspace.column(act, "greedy", cover=cover))
            covered |= cover
    order = np.argsort(-aspace.m, kind="stable")
    if enum is not None and enum.in_pool:           # every cover is known: no nearest-action MIP
        proven = ~enum.coverable
    else:
        with Phase("nearest actions", progress, n, log, unit="types") as ph:
            _nearest(aspace, mip, pool, deadline, order, max_seed_mips, seeds, covered, proven, band, ph)
            ph.set(coverable=int(covered.sum()), columns=len(pool))
    cands = set()
    for act in seeds:
        for r in range(1, len(act)):
            for sub in itertools.combinations(act.features, r):
                cands.add(act.restrict(sub).key)
    freq = Counter(ch for act in seeds for ch in act.key)
    top = [ch for ch, _ in freq.most_common(max_frequent)]
    T = aspace.Tmax or len(aspace.mutable)
    for r in range(1, min(T, 3) + 1):
        for combo in itertools.combinations(top, r):
            if len({l for l, _ in combo}) == r:
                cands.add(tuple(sorted(combo)))
    for key in cands:
        if key in pool:
            continue
        col = aspace.column(Action(tuple(key)), "frequent")
        if col.cover.any():
            pool.add(col)
    coverable = np.asarray(pool.matrix().any(axis=0), dtype=bool)
    return Coverability(coverable, band & ~coverable, ~coverable & ~proven & ~band)


def _nearest(aspace, mip, pool, deadline, order, max_seed_mips, seeds, covered, proven, band, ph) -> None:
    r"""The nearest-action MIPs of :func:`seed_pool`, types by decreasing multiplicity
    (``seeds``, ``covered``, ``proven`` and ``band`` updated in place). A type no column
    covers is proven uncoverable by the relaxed MIP (score :math:`\ge \tau - \varepsilon`)
    being infeasible; when that one is feasible, ``band``."""
    for r, t in enumerate(order):
        ph.update(1)
        if deadline.passed:
            break
        if covered[t] and (r >= max_seed_mips or _seed_time_over(deadline)):
            continue
        if not mip.can_cover(t, relaxed=True):         # its score never reaches τ - ε: no action covers it
            proven[t] = True
            continue
        res = mip.cheapest([t], time_limit=deadline.left(), start=best_cover(pool, t) if covered[t] else None) \
            if mip.can_cover(t) else PricingResult(Status.INFEASIBLE)      # a start: 4x faster on Adult MLP
        if res.status.has_solution:
            _seed(aspace, pool, res.actions[0], "nearest", seeds, covered)
        if covered[t] or not (res.status.has_solution or res.status == Status.INFEASIBLE) or deadline.passed:
            continue
        # nothing reaches τ + ε (or its action misses τ by the solver's tolerance): the relaxed MIP decides
        rel = mip.cheapest([t], time_limit=deadline.left(), relaxed=True)
        if rel.status == Status.INFEASIBLE:
            proven[t] = True
        elif rel.status.has_solution:
            _seed(aspace, pool, rel.actions[0], "nearest-relaxed", seeds, covered)
            band[t] = not covered[t]


def _seed(aspace, pool, act, source, seeds, covered) -> None:
    """``act`` joins the seeds and the pool when it covers some type at τ."""
    col = aspace.column(act, source)
    if col.cover.any():
        seeds.append(act)
        pool.add(col)
        covered |= col.cover


def search(aspace: ActionSpace, k: int | None, solver, deadline: Deadline, *, min_coverage: float | None = None,
           n_solutions: int = 5, progress: bool = False, tie_break_time: float | None = 2.0,
           max_seed_mips: int = 100, pricing_time: float | None = None, fair=None,
           enumerate_work: int = 0) -> SearchResult:
    """Seeds, the fewest actions (``k=None``) and the curve ``1 … k`` (module docstring);
    with ``fair`` (:class:`~groupcf.global_actions.fairness.Fairness`) every curve point's
    integer master also bounds the coverage gap between groups."""
    mip = ActionMIP(aspace, solver)
    pool = ColumnPool(aspace.n_types)
    enum_level = enumeration_for(aspace, enumerate_work, deadline, pool)
    enum = None if enum_level is None else enum_level.enum
    cov = seed_pool(aspace, mip, pool, deadline, max_seed_mips=max_seed_mips, progress=progress, enum=enum)
    coverable = cov.coverable
    m = aspace.m
    out = SearchResult(pool, coverable, cov.undecided, mip=mip, enum=enum)
    extra = _undecided(aspace, cov, out.stats)      # people every upper bound counts as covered
    out.stats["seed_columns"] = len(pool)
    out.stats["enumeration"] = "declined" if enum is None else dict(
        candidates=enum.candidates, columns=len(enum.actions), in_pool=enum.in_pool, seconds=round(enum.seconds, 3))
    exact = ExactLevel(mip, n_solutions, pricing_time)
    # exact pricing where enumeration declines (a linear score: the pricing MIP is exact and fast)
    boxes = ActionBoxes.of(aspace) if enum_level is None and aspace.embedding.additive() is None else None
    box = None if boxes is None else BoxLevel(boxes)
    levels = [PoolLevel(), NeighbourLevel(aspace), *([box] if box else []), exact] if enum_level is None else \
        [PoolLevel(), enum_level]
    complete = enum is not None and enum.in_pool     # the integer master over the pool is over every action
    n_cov = float(m[coverable].sum())
    if not coverable.any():
        return out
    K = k if k is not None else _fewest(aspace, pool, levels, coverable, solver, deadline, out, progress, complete)
    master = MaxCoverageMaster(aspace.n_types, solver, 1, active=coverable, weights=m)
    sync_master(master, pool)
    prev, single, prev_upper = None, n_cov, n_cov
    curve = Phase("coverage curve", progress, K, log, unit="k")
    for kk in range(1, K + 1):
        master.set_budget(kk)
        left = deadline.left()
        if left is not None:                 # each k left gets its share of the time left
            share = left / (K - kk + 1)
            exact.time_cap = share if pricing_time is None else min(pricing_time, share)
            if box is not None:
                box.time_cap = exact.time_cap
        upper = n_cov if prev is None else min(n_cov, prev_upper + single)    # subadditive
        cg = None
        # k - 1 actions already cover everyone coverable: the bound is met, nothing to price
        full = prev is not None and prev.covered >= n_cov - 1e-9
        if kk == 1 and len(pool):          # or one pool column already does (e.g. a seed): no k=1 MIP
            full = _widest(pool, coverable, m) >= n_cov - 1e-9
        # the best single action by exact MIPs (a linear row per type; few types otherwise):
        # first whether one action covers everyone (small, lazy), else the max-coverage MIP
        single_mip = kk == 1 and enum is None and (aspace.embedding.additive() is not None or aspace.n_types <= 50)
        if kk == 1 and box and box.single_share and not full and not deadline.passed:   # best single action
            found = box.search(np.where(coverable, m, 0.0), _widest(pool, coverable, m), deadline.left(), single=True)
            _enter(aspace, pool, master, found.actions, "boxes")
            upper, single_mip = min(upper, found.bound), single_mip and not found.finished
        if single_mip and not full and not deadline.passed:     # the cheapest action covering all
            _enter(aspace, pool, master, mip.cheapest(np.flatnonzero(coverable), _cap(deadline, exact.time_cap)).actions,
                   "one-for-all")
            full = _widest(pool, coverable, m) >= n_cov - 1e-9
        if single_mip and not full and not deadline.passed:
            # relaxed to τ - ε: its bound holds at τ
            res = mip.best(np.where(coverable, m, 0.0), time_limit=_cap(deadline, exact.time_cap),   # k's share
                           n_solutions=n_solutions, relaxed=True)
            _enter(aspace, pool, master, res.actions, "best-single")
            if res.bound is not None:
                upper = min(upper, res.bound)
        if not deadline.passed and not full:
            cg = column_generation(master, pool, levels, deadline=deadline, phase=f"column generation (k={kk})",
                                   progress=progress)
            upper = min(upper, cg.bound)
        if kk == 1:
            single = upper
        if prev is not None:
            upper = max(upper, prev.covered)      # never below what k-1 actions already cover
        if k is None and kk == K and out.min_k_bound == K:
            upper = n_cov
        point = _integer(pool, aspace, coverable, kk, k, K, min_coverage, prev, solver, deadline, tie_break_time,
                         fair, math.floor(upper + EPS))
        if point.covered < math.floor(upper + EPS) - 1e-9 and min_coverage is None:
            # not certified: climb from the chosen actions, their better neighbours join the pool
            acts = climb(aspace, [pool.columns[j].payload for j in point.chosen], coverable, kk)
            if _enter(aspace, pool, master, acts, "climb"):
                point = _integer(pool, aspace, coverable, kk, k, K, min_coverage, prev, solver, deadline,
                                 tie_break_time, fair)
        if complete and point.ip_bound is not None:      # over every action: a bound on the optimum
            upper = min(upper, point.ip_bound)
        if fair is None and point.chosen and not deadline.passed:
            point = _descend(aspace, pool, master, coverable, point, deadline)
        prev_upper = float(math.floor(upper + EPS))       # on the coverable types
        point.upper = prev_upper + extra
        if point.covered >= point.upper - 1e-9:
            point.status = Status.OPTIMAL
        out.curve.append(point)
        out.stats.setdefault("curve_iterations", []).append(0 if cg is None else cg.iterations)
        prev = point
        curve.update(1, covered=point.covered, upper=point.upper, cost=point.cost)
    curve.close()
    if box is not None and fair is None and min_coverage is None and not deadline.passed:
        late = box.late(out.curve, np.where(coverable, m, 0.0), extra, deadline.left())
        if late is not None and late.value > out.curve[0].covered + EPS and _enter(aspace, pool, master, late.actions,
                                                                                   "boxes"):
            for i, p in enumerate(list(out.curve)):     # a better single action: k = 1 again, and each k' it beats
                if i == 0 or p.covered < out.curve[0].covered - 1e-9:
                    q = out.curve[i] = _integer(pool, aspace, coverable, p.k, k, K, min_coverage, None, solver,
                                                deadline, tie_break_time, fair)
                    q.upper, q.status = p.upper, Status.OPTIMAL if q.covered >= p.upper - 1e-9 else q.status
    out.stats["pool_columns"] = len(pool)
    out.stats["pricing_mips"] = mip.calls
    out.stats["pricing_resolves"] = exact.resolves
    out.stats["box_nodes"] = None if box is None else box.nodes
    out.stats["levels"] = {lv.name: dict(calls=lv.stats.calls, hits=lv.stats.hits, time=round(lv.stats.time, 3))
                           for lv in levels}
    return out


def _widest(pool, coverable, m) -> float:
    """The most coverable people one pool column covers."""
    return float((pool.matrix()[:, coverable] @ m[coverable]).max()) if len(pool) else 0.0


def _enter(aspace, pool, master, acts, source: str) -> int:
    """The actions' columns into the pool and the master (those not there yet); how many."""
    added = 0
    for act in acts:
        pos = pool.add(aspace.column(act, source))
        if pos is not None:
            master.add(pool.columns[pos])
            pool.in_master[pos] = True
            added += 1
    return added


def _descend(aspace, pool, master, coverable, point, deadline) -> CurvePoint:
    """The point with each chosen action replaced by a cheaper one covering its people
    (:mod:`~groupcf.global_actions.descent`), when that lowers the total cost."""
    chosen, added = descend_selection(aspace, pool, point.chosen, point.assign, deadline)
    for pos in added:
        master.add(pool.columns[pos])
        pool.in_master[pos] = True
    if chosen == list(point.chosen):
        return point
    new = _point(point.k, list(dict.fromkeys(chosen)), pool.matrix() & coverable[None, :], pool.cost_matrix(),
                 aspace.m, point.status)
    return new if new.covered >= point.covered - 1e-9 and new.cost < point.cost - 1e-9 else point


def _undecided(aspace: ActionSpace, cov: Coverability, stats: dict) -> float:
    """People of the undecided types (:class:`Coverability`): counted in ``stats`` and
    warned about; every upper bound adds them."""
    m = aspace.m
    band, unknown = int(m[cov.band].sum()), int(m[cov.unknown].sum())
    stats.update(undecided=band, undecided_types=int(cov.band.sum()), coverability_unknown=unknown)
    if band:
        warnings.warn(f"global actions: {band} person(s) can reach the threshold only within the margin "
                      f"{aspace.margin:g} of the solvers' tolerance (no action clears threshold + margin, one "
                      "reaches threshold - margin, none found covers them); their coverage cannot be decided: "
                      "left out of the search, counted in every upper bound (stats['undecided'])",
                      GroupCFWarning, stacklevel=4)
    if unknown:
        warnings.warn(f"global actions: the time limit stopped before deciding whether {unknown} person(s) can be "
                      "covered; left out of the search, counted in every upper bound "
                      "(stats['coverability_unknown'])", GroupCFWarning, stacklevel=4)
    return float(band + unknown)


def _fewest(aspace, pool, levels, coverable, solver, deadline, out, progress=False, complete=False) -> int:
    """The set-cover phase (module docstring, step 2); returns the number of actions found."""
    m = aspace.m
    master = SetCoverMaster(aspace.n_types, solver, active=coverable, weights=m)
    sync_master(master, pool)
    lower = 1
    if not deadline.passed:
        cg = column_generation(master, pool, levels, deadline=deadline, phase="column generation (fewest actions)",
                               progress=progress)
        lower = max(1, math.ceil(cg.bound - EPS))
        out.stats.update(set_cover_iterations=cg.iterations, set_cover_lp=cg.lp_value)
    with Phase("integer master (fewest actions)", progress, logger=log) as ph:
        ip = solve_integer_master(pool.matrix(), pool.cost_matrix(), "set_cover", solver, m=m, active=coverable,
                                  time_limit=_grace(deadline), tie_break=False)
        # no time left for the integer master: greedy until everyone coverable is covered
        found = (int(ip.objective) if ip.status.has_solution and ip.objective is not None
                 else len(greedy(pool.matrix() & coverable[None, :], m, len(pool))))
        ph.set(actions=found, bound=min(lower, found))
    out.min_k, out.min_k_bound = found, min(lower, found)
    if complete and ip.status == Status.OPTIMAL:          # the set cover over every action, solved
        out.min_k_bound = found
    return found


def _grace(deadline: Deadline, grace: float = 2.0) -> float | None:
    """Time for a last integer master: what is left, at least ``grace`` seconds (the answer
    over the pool is worth a little overshoot of ``time_limit``)."""
    left = deadline.left()
    return None if left is None else max(left, grace)


def _integer(pool, aspace, coverable, kk, k, K, min_coverage, prev, solver, deadline, tie_break_time, fair=None,
             upper=None) -> CurvePoint:
    """The integer master at budget ``kk`` (coverage, then least cost; with ``min_coverage``
    at the last ``k`` the cheapest reaching it), greedy plus local search when it fails;
    with ``fair``, the most coverage meeting the gap between groups (nothing else).
    ``upper``: the certified bound on coverage (the previous answer reaching it skips the
    coverage MIP)."""
    m = aspace.m
    C, D = pool.matrix(), pool.cost_matrix()
    if fair is not None:
        from .fairness import fair_max_coverage

        chosen, status, _ = fair_max_coverage(C, m, coverable, kk, aspace.type_group, fair, solver,
                                              time_limit=_grace(deadline))
        if not status.has_solution:       # nothing in time: no action is always within the gap
            chosen, status = [], Status.TIME_LIMIT
        elif status == Status.OPTIMAL and deadline.passed:
            status = Status.TIME_LIMIT
        return _point(kk, chosen, C & coverable[None, :], D, m,
                      Status.FEASIBLE if status == Status.OPTIMAL else Status.TIME_LIMIT)
    starts = [] if prev is None else [prev.chosen]
    kw = dict(m=m, active=coverable, k=kk, time_limit=_grace(deadline), tie_break_time=tie_break_time, starts=starts,
              upper=upper)
    ip = None
    if min_coverage is not None and kk == K and k is not None:
        ip = solve_integer_master(C, D, "max_coverage", solver, min_cover=math.ceil(min_coverage * len(aspace.S) - 1e-9),
                                  **kw)
    if ip is None or not ip.status.has_solution:
        ip = solve_integer_master(C, D, "max_coverage", solver, **kw)
    if ip.status.has_solution:
        assert ip.assign is not None and ip.objective is not None   # a solution has both
        return CurvePoint(kk, ip.chosen, ip.assign, float(ip.objective), float(ip.cost), 0.0,
                          Status.TIME_LIMIT if deadline.passed else Status.FEASIBLE, ip.bound)
    Ca = C & coverable[None, :]
    chosen = greedy(Ca, m, kk)
    cands = [chosen] + starts
    best = max(cands, key=lambda c: (selection_value(Ca, D, m, c)[0], -selection_value(Ca, D, m, c)[1]))
    chosen = improve(Ca, D, m, best, selection_value(Ca, D, m, best)[0], kk)
    return _point(kk, chosen, Ca, D, m, Status.TIME_LIMIT)


def _point(kk, chosen, Ca, D, m, status) -> CurvePoint:
    """The curve point of a selection: each type to its cheapest covering chosen column."""
    cov, cost = selection_value(Ca, D, m, chosen)
    assign = np.full(Ca.shape[1], -1)
    if chosen:
        Dc = np.where(Ca[chosen], D[chosen], np.inf)
        ok = np.isfinite(Dc.min(axis=0))
        assign[ok] = np.asarray(chosen)[Dc.argmin(axis=0)[ok]]
    return CurvePoint(kk, list(chosen), assign, cov, cost, 0.0, status)
