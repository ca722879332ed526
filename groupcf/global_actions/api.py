"""``gcf.explain_global``: the entry point, the final polish and the real-model re-check."""
from __future__ import annotations

import logging
import math
import numbers
import time
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from ..exceptions import GroupCFWarning, InvalidInputError
from ..models import DEFAULT_MARGIN, resolve_model
from ..options import Interval, N, Options
from ..results.base import Stats
from ..results.global_actions import CURVE_COLUMNS, GlobalExplanation
from ..results.global_rules import rules_of
from ..solvers import make_backend
from ..solvers.base import Status
from ..utils import Deadline
from .actions import ActionSpace
from .cheapest import SETS_WORK, nearest_floor, reach_share
from .fairness import Fairness
from .neighbours import refine
from .pricing import ActionMIP
from .search import search
from .tree import fit_tree

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GlobalOptions(Options):
    """Options of :func:`explain_global`.

    Passed to :func:`~groupcf.explain_global` as keywords or as this object
    (``options=``); values are checked when the object is created.

    Parameters
    ----------
    n_solutions
        Columns asked of each pricing MIP (backends with several solutions per solve).
    polish
        Replace each chosen action by the cheapest action covering the people assigned to
        it (a MIP each; coverage never drops, cost never rises).
    margin
        Safety margin on the model's score in the MIPs (against solver tolerances): MIPs
        that build actions ask ``threshold + margin``, those that bound coverage
        ``threshold - margin``; people whose coverage cannot be decided within it are
        counted in every upper bound (``stats["undecided"]``).
    tie_break_time
        Seconds for each least-cost stage of the integer master (coverage is fixed first;
        ``stats["cost_proven"]`` says where the least cost over the pool was proven).
    pricing_time
        Seconds for each exact pricing MIP (``None``: no cap but ``time_limit``); a capped
        MIP still gives a valid bound, it just cannot prove convergence.
    max_seed_mips
        Nearest-action MIPs for every type up to this many; beyond it only for types no
        seed covers yet.
    tree_depth
        Depth (0–2) of the assignment tree with ``assign="tree"``.
    enumerate_work
        Most rows (types × actions) the enumeration pricing level evaluates
        (:mod:`~groupcf.global_actions.enumerate`: every action, when the action space is
        finite — categories, integer shifts, tree-ensemble split intervals — priced exactly
        without a MIP, the curve certified by the integer master); above it, or with a
        continuous feature on a model without split points, the MIP levels price. ``0``:
        never enumerate. With a ``time_limit`` the time decides instead (up to 10 times
        this many rows): it declines when the time it would take, extrapolated from its
        single-feature actions, passes half the time left.

    Raises
    ------
    InvalidInputError
        A value outside its rule (e.g. ``tree_depth`` outside 0–2).

    Examples
    --------
    >>> opts = gcf.GlobalOptions(polish=False, tree_depth=1)
    >>> opts.polish, opts.tree_depth, opts.n_solutions
    (False, 1, 5)
    >>> gcf.explain_global(S, pipe, Tmax=2, k=3, options=opts)  # doctest: +SKIP
    """

    n_solutions: int = 5
    polish: bool = True
    margin: float = DEFAULT_MARGIN
    tie_break_time: float | None = 2.0
    max_seed_mips: int = 100
    pricing_time: float | None = None
    tree_depth: int = 2
    enumerate_work: int = 100_000_000

    _constraints: ClassVar[dict] = {
        "n_solutions": N, "polish": [bool], "margin": [Interval(numbers.Real, 0, None)],
        "tie_break_time": [None, Interval(numbers.Real, 0, None)], "max_seed_mips": [Interval(numbers.Integral, 0, None)],
        "pricing_time": [None, Interval(numbers.Real, 0, None, closed="neither")],
        "tree_depth": [Interval(numbers.Integral, 0, 2)], "enumerate_work": [Interval(numbers.Integral, 0, None)]}


def explain_global(S: pd.DataFrame, model, *, Tmax: int | None = None, k: int | None = None, cost=None,
                   numeric: str = "shift", min_coverage: float | None = None, fair_by=None, max_gap: float = 0.05,
                   assign: str = "best",
                   threshold: float = 0.5,
                   solver="highs", time_limit: float | None = None, progress: bool = True, space=None,
                   options: GlobalOptions | None = None, **kwargs) -> GlobalExplanation:
    """A few shared actions that explain a rejected population, with certified coverage.

    An action sets categorical / ordinal / binary features to a category and shifts numeric
    features by one amount (the same for everyone; ``numeric="set"`` sets them), changing
    at most ``Tmax`` actionable features; it covers a person when the real model accepts
    the result and the rules hold (immutable untouched, increase-only not decreased,
    values inside the data's range, never clipped). See
    :mod:`groupcf.global_actions.actions` (definitions, cost) and
    :mod:`groupcf.global_actions.search` (column generation, bounds).

    Parameters
    ----------
    S
        Raw rows, all rejected by the model.
    model
        A fitted ``Pipeline(FeatureSpace, classifier)``, or a classifier with ``space=``.
    Tmax
        Most features one action changes (``None``: no limit).
    k
        Number of shared actions (the global-recourse literature's ``k``). ``None``: the
        fewest actions covering everyone coverable (the curve runs ``1 … that number``).
        An int: the most people covered by ``k`` actions, ties broken by total cost (the
        curve runs ``1 … k``). ``n=`` (the vocabulary's count) is accepted as its alias.
    cost
        ``{feature: weight}`` multiplying that feature's cost term (default 1).
    numeric
        ``"shift"`` (default) or ``"set"`` for continuous features.
    min_coverage
        With ``k``: the cheapest ``k`` actions covering at least this share of ``S``
        (falls back to the most covered when unreachable); the actions and the people
        counted are chosen together by a MIP (:mod:`~groupcf.global_actions.cheapest`),
        ``stats["min_coverage"]`` says whether the mean cost is proven least and its
        lower bound. That MIP runs until it proves its optimum or ``time_limit``: without a
        time limit this can take minutes or more on tree ensembles. With ``k=None``: the fewest
        actions reaching this share (then the cheapest such); ``lower_bound`` is then the
        fewest actions whose certified upper bound reaches it (``stats["share_target"]``
        people).
    fair_by
        A column of ``S`` or a Series indexed like ``S`` (e.g. ``X["sex"]``): with ``k``,
        every curve point's actions are the most covering ones whose coverage of each group
        lies within ``max_gap`` of every other group's
        (:mod:`~groupcf.global_actions.fairness`). ``result.stats["coverage_by_group"]``
        holds the groups' coverages; :meth:`GlobalExplanation.by_group` their intervals.
    max_gap
        Largest coverage gap between groups allowed with ``fair_by`` (a share, default
        0.05).
    assign
        ``"best"`` (default): each person takes the cheapest chosen action covering them.
        ``"tree"``: the assignment is a decision tree of depth ``≤ tree_depth`` (an option,
        default 2) over readable atoms of the raw features, the best such tree for the
        chosen actions (:mod:`~groupcf.global_actions.tree`); ``result.tree`` lists its
        leaves. Coverage can only drop; the free assignment's is in
        ``stats["free_assignment_covered"]``.
    threshold, solver, time_limit, progress, space
        As everywhere in groupcf.
    options, **kwargs
        A :class:`GlobalOptions` and/or its fields as keywords (``n_solutions``,
        ``polish``, ``margin``, ``tie_break_time``, ``max_seed_mips``).

    Returns
    -------
    GlobalExplanation
        Every curve point's ``upper_bound`` holds at the threshold itself: the people
        whose coverage the solvers cannot decide (their best score within ``margin`` of
        the threshold and no action found covering them: ``stats["undecided"]``; or not
        reached before ``time_limit``: ``stats["coverability_unknown"]``) are counted in
        it, with a warning. When fewer than ``k`` actions already cover everyone the best
        ``k`` cover, the actions no one is assigned to are left out (``n_actions < k``;
        ``stats["unused_actions"]`` counts them).

    Raises
    ------
    NotRejectedError
        Some row of ``S`` is already accepted.
    InvalidInputError
        Bad ``Tmax``, ``k``, ``numeric``, ``min_coverage``, ``cost``, ``fair_by`` (needs
        ``k``; not with ``min_coverage``), ``max_gap`` or option.

    Examples
    --------
    >>> res = gcf.explain_global(S, pipe, Tmax=2, k=3)          # doctest: +SKIP
    >>> res.curve, res.actions, res.apply()                      # doctest: +SKIP
    """
    if "n" in kwargs:                      # the vocabulary's count, an alias of k here
        if k is not None:
            raise InvalidInputError("explain_global: got both 'k' and its alias 'n'; pass only 'k'")
        k = kwargs.pop("n")
    opts = GlobalOptions.from_kwargs(options, owner="explain_global", **kwargs)
    if k is not None and (int(k) != k or k < 1):
        raise InvalidInputError(f"k must be a positive integer or None, got {k!r}")
    if min_coverage is not None and not 0.0 < float(min_coverage) <= 1.0:
        raise InvalidInputError(f"min_coverage must be a share in (0, 1], got {min_coverage!r}")
    if assign not in ("best", "tree"):
        raise InvalidInputError(f"assign must be 'best' or 'tree', got {assign!r}")
    if assign == "tree" and fair_by is not None:
        raise InvalidInputError("assign='tree' and fair_by= cannot be combined: the tree would break the gap bound")
    fair = None
    if fair_by is not None:
        if k is None or min_coverage is not None:
            raise InvalidInputError("fair_by= bounds the coverage gap of k actions: pass k= (an int) and no "
                                    "min_coverage=")
        fair = Fairness.from_input(S, fair_by, max_gap)
    t0 = time.perf_counter()
    deadline = Deadline(time_limit)
    tm = resolve_model(model, space=space, threshold=threshold)
    make_backend(solver)
    aspace = ActionSpace(tm, S, Tmax, numeric, cost, opts.margin, split_by=None if fair is None else fair.codes)
    res = search(aspace, None if k is None else int(k), solver, deadline,
                 min_coverage=min_coverage if k is not None else None, n_solutions=opts.n_solutions,
                 tie_break_time=opts.tie_break_time, progress=bool(progress),
                 max_seed_mips=opts.max_seed_mips, pricing_time=opts.pricing_time, fair=fair,
                 enumerate_work=opts.enumerate_work)
    m, n = aspace.m, len(S)
    pool = res.pool
    if not res.curve:
        point = None
    elif k is None and min_coverage is not None:
        target = math.ceil(float(min_coverage) * n - 1e-9)
        reach = [p for p in res.curve if p.covered >= target]
        point = reach[0] if reach else res.curve[-1]
    else:
        point = res.curve[-1]
    chosen = [] if point is None else list(point.chosen)
    acts = [pool.columns[j].payload for j in chosen]
    cols = [aspace.column(a) for a in acts]
    assign_t, cost_t = _assign(cols, len(m))
    pmip = res.mip if res.mip is not None else ActionMIP(aspace, solver)
    for _ in range(3 if point is not None and opts.polish else 0):     # polish, reassign, repeat
        if deadline.passed:
            break
        new = refine(aspace, acts, res.coverable)
        new = _polish(aspace, new, _assign([aspace.column(a) for a in new], len(m))[0], list(range(len(new))),
                      pmip, deadline)
        if [a.key for a in new] == [a.key for a in acts]:
            break
        new_cols = [aspace.column(a) for a in new]
        new_assign, new_cost = _assign(new_cols, len(m))
        if fair is not None and fair.gap(new_assign[aspace.type_of_row] >= 0) > fair.max_gap + 1e-9:
            break                      # the polished actions would widen the gap: keep the master's
        acts, cols, assign_t, cost_t = new, new_cols, new_assign, new_cost
    share_stats = None
    if min_coverage is not None and k is not None and point is not None:   # past the deadline: status "time limit"
        # the cheapest actions reaching the share: the action and the people counted chosen together
        acts, share_stats = reach_share(aspace, pmip, acts, math.ceil(float(min_coverage) * n - 1e-9), res.coverable,
                                        deadline, int(k), res.enum, min(opts.enumerate_work, SETS_WORK))
        cols = [aspace.column(a) for a in acts]
        assign_t, cost_t = _assign(cols, len(m))
    unused = 0
    if assign == "best" and k is not None:  # k above what covers everyone: an action nobody is assigned to is noise
        used = [j for j in range(len(acts)) if (assign_t == j).any()]
        unused = len(acts) - len(used)
        if unused:
            acts, cols = [acts[j] for j in used], [cols[j] for j in used]
            assign_t, cost_t = _assign(cols, len(m))
    # every person's counterfactual re-checked with the real model
    specs = [aspace.spec(a) for a in acts]
    idx = S.index
    assign_r, cost_r = assign_t[aspace.type_of_row], cost_t[aspace.type_of_row]
    tree = None
    if assign == "tree" and acts:
        assign_r, cost_r, tree = _tree_assignment(aspace, acts, opts.tree_depth)
    assignment = pd.Series(assign_r, index=idx, dtype="Int64", name="action")
    assignment[assignment < 0] = pd.NA
    share_target = None if k is not None or min_coverage is None else math.ceil(float(min_coverage) * n - 1e-9)
    result = _result(aspace, acts, specs, assignment, cost_r, res, point, k, solver, tm, time.perf_counter() - t0,
                     share_target)
    if unused:
        result.stats["unused_actions"] = unused
    if share_stats is not None:
        result.stats["min_coverage"] = share_stats
    if tree is not None:
        free = int((assign_t[aspace.type_of_row] >= 0).sum())
        result.tree = tree.frame()
        result.stats.update(assign="tree", free_assignment_covered=free)
        result.is_optimal = False          # certified for the free assignment, not for the tree
        if result.status == Status.OPTIMAL:
            result.status = Status.FEASIBLE
    _recheck(result, tm)
    if fair is not None:
        cov = fair.coverage(result.covered.to_numpy())
        result.stats.update(fair_by=fair.name, max_gap=fair.max_gap, coverage_by_group=cov.to_dict(),
                            coverage_gap=float(cov.max() - cov.min()))
    if point is not None and tree is None:   # the answer's own curve point: after polish and the re-check
        row = result.curve.index[result.curve["k"] == point.k]
        result.curve.loc[row, "n_covered"] = result.n_covered
        result.curve.loc[row, "coverage"] = result.coverage
        result.curve.loc[row, "mean_cost"] = result.mean_cost
        if result.n_covered < int(result.curve.loc[row, "upper_bound"].max()):   # e.g. the re-check uncovered some
            result.curve.loc[row, "status"] = Status.FEASIBLE.value if point.status == Status.OPTIMAL \
                else point.status.value
    if tree is not None:
        _tree_rules(result, tree)
    elif len(acts):
        sub = result.subgroups()
        result.actions["for_whom"] = sub["rule"]
        result.actions["precision"] = sub["precision"]
        result.actions["recall"] = sub["recall"]
    return result


def _tree_assignment(aspace, acts, depth):
    """Per person: the action of their leaf in the best assignment tree, its cost, the tree
    (:mod:`~groupcf.global_actions.tree`)."""
    cols = [aspace.column(a) for a in acts]
    rows = aspace.type_of_row
    cover = np.stack([c.cover[rows] for c in cols], axis=1)
    cost = np.stack([c.element_costs[rows] for c in cols], axis=1)
    tree = fit_tree(aspace.S, cover, cost, max_depth=depth)
    leaf_action = tree.assignment()
    r = np.arange(len(rows))
    ok = (leaf_action >= 0) & cover[r, np.maximum(leaf_action, 0)]
    assign_r = np.where(ok, leaf_action, -1)
    cost_r = np.where(ok, cost[r, np.maximum(leaf_action, 0)], np.nan)
    return assign_r, cost_r, tree


def _tree_rules(result: GlobalExplanation, tree) -> None:
    """``for_whom`` from the tree's leaves: the rule(s) sending people to each action;
    precision = share of the people it sends there that the action covers; recall 1."""
    leaves = tree.frame()
    leaf_action = tree.assignment()
    covered = result.covered.to_numpy()
    for j in result.actions.index:
        rules = leaves.loc[leaves["action_id"] == j, "rule"].tolist()
        sent = leaf_action == j
        result.actions.loc[j, "for_whom"] = " or ".join(f"({r})" if len(rules) > 1 else r for r in rules) or "nobody"
        result.actions.loc[j, "precision"] = float(covered[sent].mean()) if sent.any() else float("nan")
        result.actions.loc[j, "recall"] = 1.0


def _assign(cols, n_types):
    """Each type to its cheapest covering chosen action (``-1``: none)."""
    assign = np.full(n_types, -1)
    cost = np.full(n_types, np.nan)
    for j, c in enumerate(cols):
        better = c.cover & (np.isnan(cost) | (c.element_costs < cost - 1e-12))
        assign[better], cost[better] = j, c.element_costs[better]
    return assign, cost


#: the polish's share of the time left (with a time limit) and its cap per action, seconds
POLISH_SHARE, POLISH_CAP = 0.2, 30.0


def _polish(aspace, acts, assign, chosen, mip, deadline):
    """Each chosen action replaced by the cheapest one covering the types assigned to it
    (``mip``: an :class:`ActionMIP`, which remembers the sets it has solved). The action
    itself is each MIP's start (it covers its types: an incumbent at its cost); an action
    whose cost already equals the sum of its types' proven nearest-action costs
    (:func:`~groupcf.global_actions.cheapest.nearest_floor`) cannot get cheaper and is
    skipped. The polish takes at most :data:`POLISH_SHARE` of the time left (split over
    the actions still to polish) and :data:`POLISH_CAP` seconds per action: it improves
    the answer, it proves nothing."""
    out = []
    floor = nearest_floor(mip)
    left = deadline.left()
    budget = Deadline(None if left is None else POLISH_SHARE * left)
    for i, (a, j) in enumerate(zip(acts, chosen)):
        types = np.flatnonzero(assign == j)
        if len(types) == 0 or deadline.passed or budget.passed:
            out.append(a)
            continue
        c_old = aspace.column(a)
        old = float((aspace.m[types] * c_old.element_costs[types]).sum())
        if c_old.cover[types].all() and old <= float((aspace.m[types] * floor[types]).sum()) * (1 + 1e-9) + 1e-9:
            out.append(a)              # every type already at its proven nearest cost
            continue
        share = budget.left()
        r = mip.cheapest(types, time_limit=POLISH_CAP if share is None else min(POLISH_CAP, share / (len(acts) - i)),
                         start=a)
        new = r.actions[0] if r.status.has_solution else None
        if new is not None:
            c_new = aspace.column(new)
            if c_new.cover[types].all() and (aspace.m[types] * c_new.element_costs[types]).sum() < old - 1e-9:
                a = new
        out.append(a)
    return out


def _result(aspace, acts, specs, assign, cost_r, res, point, k, solver, tm, elapsed, target=None
            ) -> GlobalExplanation:
    """The answer; ``target``: with ``k=None`` and ``min_coverage``, the people to reach
    (the lower bound is then the fewest actions whose certified bound reaches it; when no
    bound does, the answer is the fallback, everyone coverable, with its own bound)."""
    S = aspace.S
    cost = pd.Series(cost_r, index=S.index, name="cost", dtype=float)
    cost[assign.isna().to_numpy()] = np.nan
    n = len(S)
    rows = []
    for j, a in enumerate(acts):
        mine = (assign == j).fillna(False).to_numpy(dtype=bool)
        rows.append({"action": aspace.describe(a), "features": [aspace.feats[l].name for l in a.features],
                     "n_covered": int(mine.sum()), "mean_cost": float(cost[mine].mean()) if mine.any() else math.nan})
    actions = pd.DataFrame(rows, columns=["action", "features", "n_covered", "mean_cost"],
                           index=pd.Index(range(len(acts)), name="action_id"))
    curve = pd.DataFrame([{"k": p.k, "n_covered": int(round(p.covered)), "coverage": p.covered / n,
                           "mean_cost": p.cost / p.covered if p.covered else math.nan,
                           "upper_bound": int(p.upper), "upper_bound_coverage": p.upper / n, "status": p.status.value}
                          for p in res.curve], columns=CURVE_COLUMNS)
    n_cov = int(assign.notna().sum())
    n_coverable = int(aspace.m[res.coverable].sum())
    n_undecided = 0 if res.undecided is None else int(aspace.m[res.undecided].sum())
    upper = int(point.upper) if point is not None else n_undecided
    optimal = point is not None and n_cov >= upper and point.status == Status.OPTIMAL
    lower = None
    reach = None if target is None else next((p.k for p in res.curve if p.upper >= target), None)
    if k is None and reach is not None:       # the fewest actions reaching the share
        lower = reach
        optimal = point is not None and point.covered >= target and len(acts) <= lower
    elif k is None:                           # everyone coverable (also a share no k reaches: the fallback)
        lower = res.min_k_bound if res.min_k_bound is not None else 0
        optimal = optimal and len(acts) <= (lower or 0) if res.min_k is not None \
            else n_coverable == 0 and n_undecided == 0
    status = Status.OPTIMAL if optimal else (point.status if point is not None else Status.OPTIMAL)
    if status == Status.OPTIMAL and not optimal:
        status = Status.FEASIBLE
    stats = Stats(res.stats)
    stats.update(n_types=aspace.n_types, n_mutable=len(aspace.mutable))
    if reach is not None:
        stats["share_target"] = target
    return GlobalExplanation(
        actions=actions, specs=specs, assignment=assign, cost=cost, coverage=n_cov / n, n_covered=n_cov,
        n_coverable=n_coverable, mean_cost=float(cost.mean()) if n_cov else math.nan, curve=curve, status=status,
        is_optimal=bool(optimal), k=k, Tmax=aspace.Tmax, numeric=aspace.numeric,
        solver=getattr(solver, "name", str(solver)), solve_time=elapsed, lower_bound=lower, upper_bound=upper,
        S=S.copy(), stats=stats, model=tm, threshold=tm.threshold, rules=rules_of(tm.space))


def _recheck(result: GlobalExplanation, tm) -> None:
    """Every covered person's counterfactual (``result.apply()``) through the real model;
    a person it rejects is uncovered, with a warning (never a silent wrong answer)."""
    covered = result.covered.to_numpy()
    if not covered.any():
        return
    X = result.apply(result.S.loc[covered])
    ok = np.asarray(tm.is_positive(X), dtype=bool)
    if ok.all():
        return
    bad = X.index[~ok]
    warnings.warn(f"{len(bad)} person(s) covered according to the model's embedding are rejected by the real "
                  f"model (numerical tolerance); they are reported uncovered: rows {list(bad[:10])}",
                  GroupCFWarning, stacklevel=3)
    result.assignment.loc[bad] = pd.NA
    result.cost.loc[bad] = np.nan
    n_cov = int(result.assignment.notna().sum())
    result.n_covered, result.coverage = n_cov, n_cov / len(result.S)
    result.mean_cost = float(result.cost.mean()) if n_cov else math.nan
    result.is_optimal = False
    if result.status == Status.OPTIMAL:
        result.status = Status.FEASIBLE
