"""Pricing levels of the one-for-many column generation (:mod:`groupcf.group.colgen`).

Each level is a :class:`groupcf.colgen.levels.PricingLevel` of the generic engine:
``price(duals, ctx)`` reads the type duals ``w = duals.pi`` (the set-cover master's
column price is 1: a column improves when its value ``w(C) > 1 + EPS``) and the group's
data ``ctx.data`` (:class:`GroupData`), and returns a :class:`~groupcf.colgen.levels.Priced`
(improving columns, non-improving ones for the pool, an optional bound on the best column
value, whether the level proved that nothing prices out) or ``None`` when the level does
not apply this round. The generic driver (:func:`groupcf.colgen.column_generation`) tries
them in order each round and stops at the first that yields columns. Every level here
records the change sets of the columns it returns (``ctx.data.known_F``, read by
:class:`KnownChangeSetsLevel`). A new level is one class.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from ..colgen.levels import PoolLevel as _PoolLevel
from ..colgen.levels import Priced, PricingContext, PricingLevel
from ..colgen.masters import Duals
from ..solvers.base import Status
from ..utils import EPS
from .formulations.pricing import BestChangeSet, PricingMIP
from .formulations.seed import SeedPricing
from .heuristics import price_known_change_sets
from .problem import Column, GroupProblem

__all__ = ["CompleteColumnsLevel", "ExactLevel", "GroupData", "GroupLevel", "KnownChangeSetsLevel", "PoolLevel"]


@dataclass
class GroupData:
    """What the group levels share during one run (``ctx.data``)."""

    problem: GroupProblem
    active: np.ndarray                            # bool over types: the types to explain
    known_F: set = field(default_factory=set)     # change sets of every column seen


class GroupLevel(PricingLevel):
    """A pricing level that records the change sets of the columns it returns."""

    def __call__(self, duals: Duals, ctx: PricingContext) -> Priced | None:
        res = super().__call__(duals, ctx)
        if res is not None:
            ctx.data.known_F.update(c.F for c in cast("list[Column]", res.columns))   # this engine's columns
        return res


class PoolLevel(GroupLevel, _PoolLevel):
    """Columns seen before that did not improve, re-priced with the new duals: every
    improving one, in the pool's order."""

    def __init__(self):
        super().__init__(max_columns=None, best_first=False)


class CompleteColumnsLevel(GroupLevel):
    """Every maximal column (additive model,
    :class:`~groupcf.group.complete.CompleteColumns`): exact pricing
    as a matrix product."""

    name = "complete"
    exact = True

    def __init__(self, full, n_solutions: int):
        super().__init__()
        self.full, self.n_solutions = full, n_solutions

    def price(self, duals, ctx):
        vals = self.full.covers @ duals.pi
        hits = [j for j in np.argsort(-vals)[: self.n_solutions] if vals[j] > 1 + EPS]
        return Priced([self.full.column(j) for j in hits], proof=not hits)


class KnownChangeSetsLevel(GroupLevel):
    """The classes of known (or all maximal) change sets, priced by the completion
    service (:func:`~groupcf.group.heuristics.price_known_change_sets`); exact when every
    maximal change set is priced, no feature is increase-only and every class was
    decided."""

    name = "known_change_sets"

    def __init__(self, completions, all_F: list, exact_enumeration: bool, allow_mip: bool = True):
        super().__init__()
        self.completions, self.all_F, self.exact_enumeration = completions, all_F, exact_enumeration
        self.allow_mip = allow_mip     # False: a class needing a MIP is left to the exact level

    def price(self, duals, ctx):
        cols, decided = price_known_change_sets(ctx.data.problem, self.completions,
                                                self.all_F if self.all_F else ctx.data.known_F, duals.pi,
                                                allow_mip=self.allow_mip, deadline=ctx.deadline)
        return Priced(cols, proof=bool(self.all_F) and self.exact_enumeration and decided)


class ExactLevel(GroupLevel):
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

    def price(self, duals, ctx):
        w, p, deadline = duals.pi, ctx.data.problem, ctx.deadline
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
            more = self.mip.solve(w, time_limit=deadline.left(), fix_cover=res.columns[0].cover & ctx.data.active)
            self.aux_calls += 1
            out.columns.extend(c for c in more.columns if float(c.cover @ w) > 1 + EPS)
        self.time_aux += time.perf_counter() - t
        return out
