"""Pricing levels of the generic column-generation engine.

A level is one class: ``price(duals, ctx)`` returns a :class:`Priced` — candidate columns
(the improving ones enter the master), priced columns that do not improve (``pool``: kept
for later rounds, never entered this round), optionally a *dual bound* ``beta`` (a proven upper bound on
``max_a π(C_a)/w_a`` over every column, from which the master derives its bound) and
whether the level *proved* that no column improves — or ``None`` when it does not apply
this round. The driver (:func:`~groupcf.colgen.driver.column_generation`) tries the levels
cheapest first and stops at the first that yields an improving column; each keeps its own
:class:`LevelStats`. An algorithm adds its own levels (heuristics, then an exact pricing
problem) after :class:`PoolLevel`: global actions (:mod:`groupcf.global_actions.search`)
and one-for-many groups (:mod:`groupcf.group.levels`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..solvers.base import Status
from ..utils import EPS, Deadline
from .masters import Duals
from .pool import Column, ColumnPool

__all__ = ["LevelStats", "Priced", "PricingContext", "PricingLevel", "PoolLevel"]


@dataclass
class LevelStats:
    """Counters of one pricing level: calls, hits, columns returned, seconds."""

    calls: int = 0       # times the level priced
    hits: int = 0        # times it returned improving columns
    columns: int = 0     # columns returned
    time: float = 0.0    # seconds spent pricing


@dataclass
class Priced:
    """One level's answer for the duals of one round."""

    columns: list[Column] = field(default_factory=list)   # candidates (the driver keeps the improving)
    pool: list[Column] = field(default_factory=list)      # priced, not improving: pool only
    dual_bound: float | None = None   # proven bound on max_a π(C_a)/w_a over every column
    proof: bool = False               # no column improves (when none of ``columns`` does)
    stop: Status | None = None        # the level could not answer: stop with this status


@dataclass
class PricingContext:
    """What the levels share during one run: the pool, the time budget, and whatever
    the algorithm needs (``data``)."""

    pool: ColumnPool
    deadline: Deadline
    data: Any = None


class PricingLevel:
    """Base class: ``name``, ``exact`` and ``stats``; subclasses implement :meth:`price`."""

    name = "level"
    exact = False

    def __init__(self):
        self.stats = LevelStats()

    def price(self, duals: Duals, ctx: PricingContext) -> Priced | None:
        raise NotImplementedError

    def __call__(self, duals: Duals, ctx: PricingContext) -> Priced | None:
        t = time.perf_counter()
        res = self.price(duals, ctx)
        self.stats.time += time.perf_counter() - t
        if res is not None:
            self.stats.calls += 1
            improving = [c for c in res.columns if duals.reduced(c) > EPS]
            self.stats.hits += bool(improving)
            self.stats.columns += len(res.columns)
        return res

    def __repr__(self) -> str:
        s = self.stats
        return f"{type(self).__name__}(calls={s.calls}, hits={s.hits}, time={s.time:.3f}s)"


class PoolLevel(PricingLevel):
    """The pool's columns outside the master, re-priced with the new duals (a
    matrix-vector product); the best ``max_columns`` improving ones enter.

    Parameters
    ----------
    max_columns
        At most this many columns per round (``None``: every improving one).
    best_first
        Take the improving columns by decreasing reduced cost (``False``: in the pool's
        order, as one-for-many groups do).
    """

    name = "pool"

    def __init__(self, max_columns: int | None = 20, best_first: bool = True):
        super().__init__()
        self.max_columns, self.best_first = max_columns, best_first

    def price(self, duals, ctx):
        out = ctx.pool.outside()
        if not out:
            return None
        cols = [ctx.pool.columns[j] for j in out]
        red = duals.reduced_many(ctx.pool.matrix(out), [c.weight for c in cols])
        order = np.argsort(-red) if self.best_first else np.arange(len(cols))
        order = [j for j in order if red[j] > EPS][: self.max_columns]
        return Priced([cols[j] for j in order])
