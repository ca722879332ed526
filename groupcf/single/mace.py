"""MACE: the exact nearest counterfactual(s) of one instance, solved as a MIP.

The distance is MACE's weighted mix of normalised l0 / l1 / linf
(:mod:`groupcf.formulations.distances`), the model is
:class:`~groupcf.formulations.nearest.NearestCounterfactual`. Every counterfactual is
re-checked with the real model; if the solver's tolerance let through a point the real
model rejects, the logit margin is enlarged and the MIP re-solved.

Tree ensembles start from a numpy upper bound and its radius, the MIP built over the
radius only, with per-tree distance cuts (:mod:`groupcf.single.tree_bound`); ReLU networks likewise
(:mod:`groupcf.single.net_bound`; options ``upper_bound``, ``radius``, ``obbt``); MACE asks
for them through the embedding protocol only (``Embedding.incumbent``, ``start_mip``,
``radius``: :mod:`groupcf.embeddings.search`, the searches registered by capability in
:mod:`groupcf.single.searches`). Integer
columns the MIP solves as real (ranges above ``MAX_INTEGER_RANGE``) are rounded away from
the instance when decoded.
"""
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

from ..embeddings.search import SearchProblem
from ..exceptions import (
    GroupCFWarning,
    InvalidInputError,
    NoCounterfactualError,
    SolverTimeLimitError,
    ValidationError,
)
from ..formulations.distances import feature_distances, parse_distance
from ..formulations.nearest import NearestCounterfactual, actionable_bounds, change_tol
from ..models import DEFAULT_MARGIN, TrainedModel
from ..options import TIME_LIMIT, TMAX, Interval, N, Options
from ..progress import progress_bar
from ..results.base import Stats
from ..results.explanation import Explanation
from ..solvers import make_backend
from ..solvers.base import Backend, Status
from ..utils import Deadline
from .decode import decode, restore_dtypes, round_away
from .snap import off_cell, snap_to_cells

log = logging.getLogger(__name__)

#: how many times the logit margin is enlarged (x10) when the real model disagrees
MAX_MARGIN_RETRIES = 3

#: MACE's default relative MIP gap ("optimal within epsilon"); the solvers' own is 1e-4
MACE_MIP_GAP = 1e-6
#: MACE's absolute MIP gap: HiGHS' default (1e-6) is a relative 1e-4 at MACE's typical
#: distances (~0.005) and let a near-optimal MIP start pass as optimal
MACE_MIP_ABS_GAP = 1e-10

#: the MIP is built only when at least this share of the time limit is left after the
#: numpy search (else the search's point is the answer, with ``time_limit_reached``)
MIN_MIP_SHARE = 0.2

#: default tolerance (fraction of a feature's range) for "a real-valued feature differs"
DIVERSITY_TOL = 1e-3


@dataclass(frozen=True)
class MaceOptions(Options):
    """Options of ``gcf.explain(..., method="mace")`` (see :func:`groupcf.explain`).

    Passed to :func:`~groupcf.explain` as keywords or as this object (``options=``); values
    are checked when the object is created.

    Parameters
    ----------
    distance : str, dict or None, default None
        MACE's normalised distance: ``"l0"`` (``None``), ``"l1"``, ``"linf"`` or
        non-negative weights such as ``{"l0": 0.1, "l1": 0.9}``
        (:mod:`groupcf.formulations.distances`).
    Tmax : int or None, default None
        Most original features changed (``None``: no limit).
    solver : str or Backend, default "highs"
        The MIP backend (:func:`groupcf.solvers.make_backend`).
    n : int, default 1
        Number of counterfactuals; each differs from the earlier ones in at least one
        feature.
    time_limit : float or None, default None
        Seconds for the whole call (``None``: no limit): the numpy search, building the
        MIP (only with at least a fifth of it left) and solving it.
    mip_gap : float or None, default None
        Relative MIP gap (``None``: ``MACE_MIP_GAP`` = 1e-6).
    margin : float
        Score margin by which a counterfactual must be accepted in the MIP (enlarged x10,
        at most ``MAX_MARGIN_RETRIES`` times, when the real model disagrees).
    diversity_tol : float, default 1e-3
        For ``n > 1``: the fraction of its range by which a numeric feature must move to
        "differ" from an earlier counterfactual.
    threads : int or None, default None
        Solver threads (``None``: the solver's default).
    verbose : bool, default False
        Show the solver's log.
    progress : bool, default True
        A bar over the ``n`` counterfactuals (``n > 1``; only on a terminal).
    upper_bound : bool, default True
        ReLU networks: a numpy incumbent as the MIP start.
    radius : bool, default True
        ReLU networks: bound the search by that incumbent's radius (box, cardinality cut,
        single-change proof; ``n = 1``).
    obbt : bool, default True
        ReLU networks: second-layer neuron bounds by LP within the radius.
    distance_cuts : bool, default True
        Tree ensembles: per-tree leaf-distance cuts (each tree's chosen leaf bounds the
        distance from below).
    pair_scan : bool, default True
        Tree ensembles: the exact scan of every two-feature change before the MIP (it
        proves the optimum when at most two features can change in a better solution,
        else the MIP searches only solutions changing three or more).
    prune_leaves : bool, default True
        Tree ensembles: build the MIP without the leaves whose cell lies farther than the
        numpy incumbent (with the cutoff ``objective <= incumbent``).

    Raises
    ------
    InvalidInputError
        A value outside its rule (``n < 1``, ``time_limit <= 0``, ...) or an unknown
        distance.

    Examples
    --------
    >>> opts = gcf.MaceOptions(distance="l1", Tmax=3)
    >>> opts.distance, opts.Tmax, opts.n
    ('l1', 3, 1)
    >>> gcf.MaceOptions(n=0)
    Traceback (most recent call last):
    ...
    groupcf.exceptions.InvalidInputError: MaceOptions: option 'n' must be an integer in [1, inf); got 0
    """

    _constraints: ClassVar[dict[str, list]] = {
        "Tmax": TMAX, "n": N, "time_limit": TIME_LIMIT,
        "mip_gap": [None, Interval(numbers.Real, 0, None)],
        "margin": [Interval(numbers.Real, 0, None)],
        "diversity_tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "threads": [None, Interval(numbers.Integral, 1, None)],
        "verbose": [bool], "progress": [bool], "upper_bound": [bool], "radius": [bool], "obbt": [bool],
        "distance_cuts": [bool], "pair_scan": [bool], "prune_leaves": [bool],
    }

    def __post_init__(self):
        super().__post_init__()
        if self.distance is not None:
            parse_distance(self.distance)   # named InvalidInputError

    distance: object = None            # default "l0"
    Tmax: int | None = None
    solver: object = "highs"
    n: int = 1
    time_limit: float | None = None
    mip_gap: float | None = None       # default MACE_MIP_GAP
    margin: float = DEFAULT_MARGIN
    diversity_tol: float = DIVERSITY_TOL
    threads: int | None = None         # passed to the solver
    verbose: bool = False              # solver log
    progress: bool = True              # a bar over the n counterfactuals (n > 1; terminal only)
    upper_bound: bool = True           # ReLU networks: numpy incumbent as the MIP start
    radius: bool = True                # ... and its radius (box, cardinality cut, single-change proof; n = 1)
    obbt: bool = True                  # ... and second-layer neuron bounds by LP within the radius
    distance_cuts: bool = True         # tree ensembles: per-tree leaf-distance cuts
    pair_scan: bool = True             # tree ensembles: exact scan of two-feature changes before the MIP
    prune_leaves: bool = True          # tree ensembles: no leaves farther than the incumbent in the MIP


def mace(x: pd.Series, tm: TrainedModel, *, distance="l0", Tmax: int | None = None, solver="highs",
         n: int = 1, time_limit: float | None = None, mip_gap: float | None = None,
         margin: float = DEFAULT_MARGIN, diversity_tol: float = DIVERSITY_TOL, progress: bool = True,
         upper_bound: bool = True, radius: bool = True, obbt: bool = True, distance_cuts: bool = True,
         pair_scan: bool = True, prune_leaves: bool = True, **options) -> Explanation:
    """Nearest counterfactual(s) of ``x`` under the MACE ``distance`` (see
    :func:`groupcf.explain` for the arguments).

    With ``n > 1`` the MIP is re-solved after adding, for each solution found, the cut
    "differ from it in at least one feature"; the counterfactuals come back sorted by
    distance. Raises :class:`NoCounterfactualError` when none exists within ``Tmax`` and
    the actionability constraints, :class:`SolverTimeLimitError` when the time limit
    passes before any counterfactual is found.

    ``time_limit`` bounds the whole call: one :class:`~groupcf.utils.Deadline` goes
    through every phase — the numpy search (which stops its phases when it passes and
    keeps its best point), building the MIP (skipped, or built without the distance cuts,
    when no time is left), and each solve (given what is left). When it passes with an
    incumbent, that point is the answer (re-checked by the real model; status
    ``FEASIBLE``, ``stats["time_limit_reached"]``, ``lower_bound`` the best proven
    bound: the solver's dual bound or the cheapest single change); without one,
    :class:`SolverTimeLimitError`. ``stats["time_left"]`` records the seconds each phase
    received (``None``: no limit).
    """
    t_start = time.perf_counter()
    deadline = Deadline(time_limit)
    time_left: dict = {"search": deadline.left()}
    dist = parse_distance(distance)
    if not diversity_tol > 0:
        raise InvalidInputError(f"diversity_tol must be > 0, got {diversity_tol!r}")
    space = tm.space
    assert space is not None and tm.embedding is not None   # explain resolved a model groupcf embeds
    z0 = space.transform(x)[0]
    kw = dict(options)
    if time_limit is not None:
        kw["time_limit"] = time_limit
    if mip_gap is not None:
        kw["mip_gap"] = mip_gap
    elif not (isinstance(solver, Backend) and solver.options.mip_gap is not None):
        kw["mip_gap"] = MACE_MIP_GAP
    if not (isinstance(solver, Backend) and solver.options.mip_abs_gap is not None):
        kw.setdefault("mip_abs_gap", MACE_MIP_ABS_GAP)
    backend = make_backend(solver, **kw)
    emb, score_lo = tm.embedding, tm.logit_threshold + margin
    strict = tm.logit_threshold + margin * 10 ** MAX_MARGIN_RETRIES   # valid for every retry
    lb, ub, can = actionable_bounds(space, z0)
    bounds = (lb, np.maximum(ub, lb))             # (for rounding: the box may be narrower)
    # the model's own numpy search, radius and MIP start, through the embedding protocol
    problem = SearchProblem(space, z0, *bounds, can, dist, strict, score_lo, Tmax=Tmax, radius=radius,
                            single=n == 1, upper_bound=upper_bound, obbt=obbt, pairs=pair_scan,
                            prune=prune_leaves, deadline=deadline)
    found = emb.incumbent(problem)
    found.stats["time_left"] = time_left
    if found.stats.get("single_optimal") and n == 1:
        # proven by the exact single-change scan: no MIP to build
        exp = _from_point(x, tm, z0, found, dist, backend, Tmax, margin, t_start, proven=True)
        if exp is not None:
            return exp
    if deadline.passed or (found.point is not None and short_of_time(deadline)):
        # no time left for a MIP (building a large ensemble's takes seconds, and the solver
        # would not prove anything in what is left): the search's point, or nothing
        return _out_of_time(x, tm, z0, found, dist, backend, Tmax, margin, t_start, time_limit)
    box = found.box
    time_left["build"] = deadline.left()
    mip = NearestCounterfactual(space, found.embedding or emb, z0,
                                backend, distance=dist, score_lo=score_lo, Tmax=Tmax,
                                box=box[:3] if box else None, scale_objective=True,
                                distance_cuts=distance_cuts, deadline=deadline).build()
    found = emb.start_mip(problem, mip, found)
    tree_stats, ub_point = found.stats, found.point
    caps = emb.capabilities
    integer_cols = space.domain().integer

    rows, changes, statuses, objectives, lower_bound = [], [], [], [], None
    if ub_point is not None and not caps.leaf_cells:
        ub_point = _round_wide(space, mip, bounds, ub_point, z0, tm, x)
    if tree_stats.get("single_optimal") and ub_point is not None:   # proven by the exact single-change scan
        cf = decode(space, x, ub_point, z0)
        if tm.is_positive(cf)[0]:
            rows, statuses, objectives = [cf.iloc[0]], [Status.OPTIMAL], [tree_stats["upper_bound"]]
            changes = [[space.features_[l].name for l in mip.changed(ub_point)]]
            lower_bound = tree_stats.get("lower_bound", objectives[0])
    retries = 0
    bar = progress_bar(range(n), enabled=progress and n > 1, total=n, desc="MACE")
    time_left["solve"] = []
    out_of_time = cutoff_proof = False
    while len(rows) < n:
        left = deadline.left()
        if left is not None:
            if left <= 0:
                out_of_time = True
                break
            backend.options.time_limit = left
        time_left["solve"].append(left)
        sol = backend.solve()
        if not sol.status.has_solution:
            if sol.status == Status.INFEASIBLE:
                if rows or ub_point is not None:   # (the start is feasible: numerical trouble)
                    # with the cutoff (tree_bound.start): nothing better than the incumbent
                    cutoff_proof = not rows and bool(tree_stats.get("cutoff"))
                    break  # no further distinct counterfactual
                within = f" within Tmax={Tmax} changed features" if Tmax is not None else ""
                raise NoCounterfactualError(
                    f"no counterfactual exists for instance {x.name!r}{within} under the "
                    "actionability constraints (immutable / increase-only features) and the "
                    "data's ranges", rows=[x.name])
            if sol.status == Status.TIME_LIMIT and not rows and ub_point is None:
                raise SolverTimeLimitError(
                    f"time limit ({time_limit}s) reached before any counterfactual was found; "
                    "raise time_limit")
            out_of_time = out_of_time or sol.status == Status.TIME_LIMIT or deadline.passed
            if not rows and sol.dual_bound is not None:   # the solver's bound without a solution
                lower_bound = min(float(sol.dual_bound) / mip.objective_scale,
                                  float(tree_stats.get("upper_bound", math.inf)))
            break
        v = np.round(sol.values[mip.v], 9)
        v[integer_cols] = np.round(v[integer_cols])
        keep: set[int] = set()
        if caps.leaf_cells:   # stay inside the chosen leaves' cells
            cells = mip.constr.input_cells(sol.values)
            v = snap_to_cells(space, v, *cells)
            keep = off_cell(space, z0, *cells)    # a crossing closer to x than change_tol is kept
        else:
            v = _round_wide(space, mip, bounds, v, z0, tm, x)
        cf = decode(space, x, v, z0, keep)
        if not tm.is_positive(cf)[0]:
            # the solver's tolerance let a point through that the real model rejects
            retries += 1
            if retries > MAX_MARGIN_RETRIES:
                raise ValidationError(
                    f"the real model rejects the MIP's counterfactual even with margin {margin:g}; "
                    "the embedding may not match the model")
            margin *= 10
            log.info("real model rejected a counterfactual; re-solving with logit margin %g", margin)
            backend.set_row_bounds([mip.constr.lo_row], [tm.logit_threshold + margin], [np.inf])
            continue
        if not rows:
            lower_bound = None if sol.dual_bound is None else sol.dual_bound / mip.objective_scale
            out_of_time = left is not None and sol.status != Status.OPTIMAL   # stopped by its time limit
        rows.append(cf.iloc[0])
        if hasattr(bar, "update"):
            bar.update(1)
        changes.append([space.features_[l].name for l in sorted(set(mip.changed(v)) | set(keep))])
        statuses.append(sol.status)
        assert sol.objective is not None          # a solution has an objective value
        objectives.append(float(sol.objective) / mip.objective_scale)
        if len(rows) < n and not mip.exclude(v, tol=diversity_tol):
            break
    if hasattr(bar, "close"):
        bar.close()
    if ub_point is not None and (n == 1 or not rows):
        # the search's point when the solver stopped (time limit) with none, or when the
        # solver's answer, decoded to raw values, is farther (tolerances, snapping)
        ub = tree_stats["upper_bound"]
        tol = max(1e-6, MACE_MIP_GAP * abs(ub))
        if not rows or _raw_distance(space, dist, x, rows[0]) > ub + tol:
            cf = decode(space, x, ub_point, z0)
            if tm.is_positive(cf)[0]:
                proven = cutoff_proof or ((not statuses or statuses[0] == Status.OPTIMAL) and
                                          lower_bound is not None and ub <= lower_bound + tol)
                if cutoff_proof:
                    lower_bound = ub
                rows, objectives = [cf.iloc[0]], [ub]
                statuses = [Status.OPTIMAL if proven else Status.FEASIBLE]
                changes = [[space.features_[l].name for l in mip.changed(ub_point)]]
                tree_stats["from_upper_bound"] = True
    if not rows:
        raise SolverTimeLimitError(f"time limit ({time_limit}s) reached before any counterfactual was found")
    if tree_stats.get("min_changes", 1) > 1 and lower_bound is not None:
        # the MIP's bound is over the solutions changing >= 3 features; the others cost >= U
        lower_bound = min(lower_bound, float(tree_stats["upper_bound"]))
    if out_of_time:
        tree_stats["time_limit_reached"] = True
        floor = tree_stats.get("scan_lower_bound")
        if floor is not None and statuses[0] != Status.OPTIMAL and (lower_bound is None or floor > lower_bound):
            lower_bound = float(floor)      # the cheapest single change bounds every counterfactual
    cfs = restore_dtypes(space, pd.DataFrame(rows).reset_index(drop=True))
    dists = dist.aggregate(feature_distances(space, x, cfs))
    slack = _rounding_slack(space, mip, dist)
    for d_true, obj in zip(dists, objectives):
        # integer features solved as real move up to one unit when decoded (_round_wide): expected,
        # nothing for the user to do; a larger gap means the embedding and the decoding disagree
        if abs(d_true - obj) > 1e-6 * max(1.0, abs(obj)) + slack:
            warnings.warn(f"MACE: distance of the decoded counterfactual ({d_true:g}) differs from "
                          f"the MIP objective ({obj:g}); the reported distance is the decoded one",
                          GroupCFWarning, stacklevel=3)
    order = np.argsort(dists, kind="stable")   # best first (the gap may swap near-ties)
    cfs = cfs.iloc[order].reset_index(drop=True)
    return Explanation(
        instance=x, counterfactuals=cfs, changes=[changes[k] for k in order],
        distances=[float(dists[k]) for k in order], probabilities=tm.proba(cfs),
        status=statuses[0], is_optimal=all(s == Status.OPTIMAL for s in statuses),
        solve_time=time.perf_counter() - t_start, method="mace", distance_name=dist.name,
        solver=backend.name, lower_bound=lower_bound, Tmax=Tmax, model=tm,
        objectives=[objectives[k] for k in order],
        stats=Stats({**tree_stats, "margin": margin, "binaries": mip.constr.n_binaries, "distance_weights": dist.weights,
               "distance_cuts": mip.n_distance_cuts,
               "integer_features": [space.features_[l].name for l in mip.u]}))


def short_of_time(deadline: Deadline) -> bool:
    """Less than :data:`MIN_MIP_SHARE` of the time limit is left (never without a limit)."""
    left = deadline.left()
    return left is not None and deadline.limit is not None and left < MIN_MIP_SHARE * deadline.limit


def _out_of_time(x: pd.Series, tm: TrainedModel, z0: np.ndarray, found, dist, backend, Tmax, margin: float,
                 t_start: float, time_limit: float | None) -> Explanation:
    """The deadline passed before the MIP: the search's point (``FEASIBLE``, its lower
    bound the cheapest single change) when it has one the real model accepts, else
    :class:`SolverTimeLimitError`."""
    found.stats["time_limit_reached"] = True
    exp = None if found.point is None else \
        _from_point(x, tm, z0, found, dist, backend, Tmax, margin, t_start, proven=False)
    if exp is None:
        raise SolverTimeLimitError(f"time limit ({time_limit}s) reached before any counterfactual was found; "
                                   "raise time_limit")
    return exp


def _from_point(x: pd.Series, tm: TrainedModel, z0: np.ndarray, found, dist, backend, Tmax, margin: float,
                t_start: float, proven: bool) -> Explanation | None:
    """The explanation of the search's point without a MIP, re-checked by the real model
    (``None`` when the real model rejects it): ``proven`` — the search proved it optimal
    (the exact single-change scan); else the time limit passed (``FEASIBLE``, lower bound
    ``stats["scan_lower_bound"]`` when the scan computed it)."""
    space, v = tm.space, found.point
    assert space is not None and v is not None   # (mace's caller checked both)
    cf = decode(space, x, v, z0)
    if not tm.is_positive(cf)[0]:
        return None
    cfs = restore_dtypes(space, cf.reset_index(drop=True))
    d = float(dist.aggregate(feature_distances(space, x, cfs))[0])
    ub = float(found.stats["upper_bound"])
    changed = [f.name for f in space if np.any(np.abs(v[f.columns] - z0[f.columns]) > change_tol(f))]
    lower = found.stats.get("lower_bound", ub) if proven else found.stats.get("scan_lower_bound")
    return Explanation(
        instance=x, counterfactuals=cfs, changes=[changed], distances=[d], probabilities=tm.proba(cfs),
        status=Status.OPTIMAL if proven else Status.FEASIBLE, is_optimal=proven,
        solve_time=time.perf_counter() - t_start, method="mace",
        distance_name=dist.name, solver=backend.name, lower_bound=lower, Tmax=Tmax,
        model=tm, objectives=[ub],
        stats=Stats({**found.stats, "margin": margin, "binaries": 0, "distance_weights": dist.weights,
                     "distance_cuts": 0, "integer_features": []}))


def _round_wide(space, mip, bounds, v: np.ndarray, z0: np.ndarray, tm, x: pd.Series) -> np.ndarray:
    """Integer columns the MIP solves as real (ranges above ``MAX_INTEGER_RANGE``), when
    changed, rounded *away* from the instance (nearest rounding can fall back below the
    threshold), then each moved one unit back towards it when the real model still accepts
    the point (it may, inside the logit margin): at most one unit from the real-valued
    optimum, ``1 / range`` in the scaled distance, and never farther than rounding allows."""
    wide = [(f, f.columns[0]) for l, f in enumerate(space)
            if f.encoding == "continuous" and f.integer and l not in mip.u
            and abs(v[f.columns[0]] - z0[f.columns[0]]) > change_tol(f)]
    if not wide:
        return v
    v, (lb, ub) = v.copy(), bounds
    for f, c in wide:
        v[c] = min(max(round_away(f, v[c], v[c] > z0[c]), lb[c]), ub[c])
    for f, c in wide:
        back = v.copy()
        back[c] -= math.copysign(1.0 / (f.high - f.low), v[c] - z0[c])
        if (back[c] - z0[c]) * (v[c] - z0[c]) >= 0 and lb[c] <= back[c] <= ub[c] \
                and tm.is_positive(decode(space, x, back, z0))[0]:
            v = back
    return v


def _rounding_slack(space, mip, dist) -> float:
    """How far :func:`_round_wide` may move the distance: one unit (``1 / range`` scaled)
    per integer feature the MIP solves as real, through the distance's l1 and linf parts."""
    r = np.array([1.0 / (f.high - f.low) if f.encoding == "continuous" and f.integer and l not in mip.u
                  and f.high > f.low else 0.0 for l, f in enumerate(space)])
    if not r.any():
        return 0.0
    return float(dist.l1 * r.sum() / len(r) + dist.linf * r.max())


def _raw_distance(space, dist, x: pd.Series, row: pd.Series) -> float:
    return float(dist.aggregate(feature_distances(space, x, restore_dtypes(space, row.to_frame().T)))[0])


#END
