"""Pricing levels of the column generation (:mod:`groupcf.group.colgen`).

Each level is one class with the interface of :class:`PricingLevel`: ``price(w, ctx)``
returns a :class:`Priced` (columns to enter, columns for the pool, an optional bound on
the best column value, whether the level proved that nothing prices out) or ``None`` when
the level does not apply this round. The driver tries the levels in order each iteration
and stops at the first that yields columns. ``exact`` marks levels whose empty answer
settles pricing; each level keeps its own :class:`LevelStats`. A new level is one class.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..solvers.base import Status
from ..utils import EPS, Deadline
from .formulations.pricing import BestChangeSet, PricingMIP
from .formulations.seed import SeedPricing
from .heuristics import price_known_change_sets
from .problem import Column, GroupProblem


@dataclass
class LevelStats:
    """Counters of one pricing level: calls, hits, columns returned, seconds."""

    calls: int = 0       # times the level priced
    hits: int = 0        # times it returned improving columns
    columns: int = 0     # improving columns returned
    time: float = 0.0    # seconds spent pricing


@dataclass
class Priced:
    """One level's answer for the duals ``w``."""

    columns: list[Column] = field(default_factory=list)   # improving (value > 1 + EPS), in order
    pool: list[Column] = field(default_factory=list)      # priced, not improving: for later rounds
    dual_bound: float | None = None   # proven bound on the best column value (Farley's bound)
    proof: bool = False               # nothing prices out (when no column enters)
    stop: Status | None = None        # the level could not answer: stop with this status


@dataclass
class PricingContext:
    """What the levels share during one run."""

    problem: GroupProblem
    deadline: Deadline
    active: np.ndarray
    known_F: set = field(default_factory=set)     # change sets of every column seen
    pool: dict = field(default_factory=dict)      # key -> Column, priced but not improving


class PricingLevel:
    """Base class: ``name``, ``exact`` and ``stats``; subclasses implement :meth:`price`."""

    name = "level"
    exact = False

    def __init__(self):
        self.stats = LevelStats()

    def price(self, w: np.ndarray, ctx: PricingContext) -> Priced | None:
        raise NotImplementedError

    def __call__(self, w: np.ndarray, ctx: PricingContext) -> Priced | None:
        t = time.perf_counter()
        res = self.price(w, ctx)
        self.stats.time += time.perf_counter() - t
        if res is not None:
            self.stats.calls += 1
            self.stats.hits += bool(res.columns)
            self.stats.columns += len(res.columns)
        return res

    def __repr__(self) -> str:
        s = self.stats
        return f"{type(self).__name__}(calls={s.calls}, hits={s.hits}, time={s.time:.3f}s)"


class PoolLevel(PricingLevel):
    """Columns seen before that did not improve, re-priced with the new duals."""

    name = "pool"

    def price(self, w, ctx):
        if not ctx.pool:
            return None
        keys = list(ctx.pool)
        vals = np.array([ctx.pool[k].cover for k in keys]) @ w
        return Priced([ctx.pool.pop(keys[j]) for j in np.flatnonzero(vals > 1 + EPS)])


class CompleteColumnsLevel(PricingLevel):
    """Every maximal column (additive model,
    :class:`~groupcf.group.complete.CompleteColumns`): exact pricing
    as a matrix product."""

    name = "complete"
    exact = True

    def __init__(self, full, n_solutions: int):
        super().__init__()
        self.full, self.n_solutions = full, n_solutions

    def price(self, w, ctx):
        vals = self.full.covers @ w
        hits = [j for j in np.argsort(-vals)[: self.n_solutions] if vals[j] > 1 + EPS]
        return Priced([self.full.column(j) for j in hits], proof=not hits)


class KnownChangeSetsLevel(PricingLevel):
    """The classes of known (or all maximal) change sets, priced by the completion
    service (:func:`~groupcf.group.heuristics.price_known_change_sets`); exact when every
    maximal change set is priced, no feature is increase-only and every class was
    decided."""

    name = "known_change_sets"

    def __init__(self, completions, all_F: list, exact_enumeration: bool, allow_mip: bool = True):
        super().__init__()
        self.completions, self.all_F, self.exact_enumeration = completions, all_F, exact_enumeration
        self.allow_mip = allow_mip     # False: a class needing a MIP is left to the exact level

    def price(self, w, ctx):
        cols, decided = price_known_change_sets(ctx.problem, self.completions,
                                                self.all_F if self.all_F else ctx.known_F, w,
                                                allow_mip=self.allow_mip, deadline=ctx.deadline)
        return Priced(cols, proof=bool(self.all_F) and self.exact_enumeration and decided)


class ExactLevel(PricingLevel):
    """Seed pricing or the joint pricing MIP, each column extended by auxiliary MIP 1
    (best change set for its point) and, for the pricing MIP, auxiliary MIP 2 (another
    point covering the best column's types)."""

    name = "exact"
    exact = True

    def __init__(self, problem: GroupProblem, solver, seed: SeedPricing | None, mip: PricingMIP | None,
                 n_solutions: int, aux: bool):
        super().__init__()
        self.seed, self.mip, self.n_solutions, self.aux = seed, mip, n_solutions, aux
        self.best_F = BestChangeSet(problem, solver)
        self.aux_calls, self.time_aux, self.time_solve = 0, 0.0, 0.0
        self.name = f"seed-{seed.mode}" if seed is not None else "mip"

    def price(self, w, ctx):
        p, deadline = ctx.problem, ctx.deadline
        res = (self.seed.solve(w, max_columns=self.n_solutions, deadline=deadline) if self.seed is not None
               else self.mip.solve(w, time_limit=deadline.left()))
        self.time_solve += res.time
        if not res.solution.status.has_solution and res.solution.status != Status.INFEASIBLE:
            return Priced(stop=Status.TIME_LIMIT)
        out = Priced(dual_bound=res.dual_bound, proof=res.optimal or res.dual_bound <= 1 + EPS)
        t = time.perf_counter()
        for col in res.columns:
            cand = [col]
            if self.aux:
                F, val = self.best_F.best(col.v, w)
                if val > float(col.cover @ w) + EPS:
                    cand.append(p.make_column(col.v, F, "aux-assignment"))
                self.aux_calls += 1
            for c in cand:
                (out.columns if float(c.cover @ w) > 1 + EPS else out.pool).append(c)
        if (self.aux and self.mip is not None and res.columns and float(res.columns[0].cover @ w) > 1 + EPS
                and not deadline.passed):
            more = self.mip.solve(w, time_limit=deadline.left(), fix_cover=res.columns[0].cover & ctx.active)
            self.aux_calls += 1
            out.columns.extend(c for c in more.columns if float(c.cover @ w) > 1 + EPS)
        self.time_aux += time.perf_counter() - t
        return out
