r"""A cheap pricing level: neighbours of the best known actions, scored in one batch.

Before the exact pricing MIP (:class:`~groupcf.global_actions.search.ExactLevel`), each
round takes the ``n_base`` pool actions of highest dual value :math:`\pi(C_a)` and lists
their neighbours — one feature removed, its value changed (every other category; a shift
scaled by ½, ¾, 1¼, 1½, 2), or one feature added (every category; the shifts seen in the
pool for that feature) within ``Tmax`` — and evaluates all of them over every type at once
with the numpy model path (:meth:`ActionSpace.cover_many`). Improving ones enter the
master; the level proves nothing (the exact level does), it only saves MIPs.
"""
from __future__ import annotations

import numpy as np

from ..colgen import Priced, PricingLevel
from ..utils import EPS
from .actions import Action, ActionSpace

SHIFT_FACTORS = (0.5, 0.75, 1.25, 1.5, 2.0)


class NeighbourLevel(PricingLevel):
    """Neighbours of the best pool actions (module docstring)."""

    name = "neighbours"

    def __init__(self, aspace: ActionSpace, n_base: int = 4, max_columns: int = 10, max_candidates: int = 3000):
        super().__init__()
        self.a, self.n_base, self.max_columns, self.max_candidates = aspace, n_base, max_columns, max_candidates

    def price(self, duals, ctx):
        pool = ctx.pool
        if not len(pool):
            return None
        vals = pool.matrix().astype(float) @ duals.pi
        base = [pool.columns[j].payload for j in np.argsort(-vals)[: self.n_base]]
        shifts = self._known_shifts(pool)
        cands, seen = [], set()
        for act in base:
            for nb in self._neighbours(act, shifts):
                if nb.key not in seen and nb.key not in pool and len(nb):
                    seen.add(nb.key)
                    cands.append(nb)
        cands = cands[: self.max_candidates]
        if not cands:
            return Priced([])
        cover = self.a.cover_many(cands)
        red = cover.astype(float) @ duals.pi - duals.price
        best = [j for j in np.argsort(-red)[: self.max_columns] if red[j] > EPS]
        return Priced([self.a.column(cands[j], "neighbour") for j in best])

    def _known_shifts(self, pool) -> dict:
        out: dict = {}
        for c in pool.columns:
            for l, v in c.payload.changes:
                if self.a.feats[l].encoding == "continuous":
                    out.setdefault(l, set()).add(float(v))
        return out

    def _neighbours(self, act: Action, shifts: dict):
        a = self.a
        ch = dict(act.changes)
        T = a.Tmax or len(a.mutable)
        for l in list(ch):
            if len(ch) > 1:
                yield _make({k: v for k, v in ch.items() if k != l})
            for v in self._values(l, ch[l], shifts):
                yield _make({**ch, l: v})
        if len(ch) < T:
            for l in a.mutable:
                if l not in ch:
                    for v in self._values(l, None, shifts):
                        yield _make({**ch, l: v})

    def _values(self, l, current, shifts):
        f = self.a.feats[l]
        if f.encoding == "onehot":
            return [c for c in range(len(f.columns)) if c != current]
        if f.encoding == "binary":
            return [c for c in (0, 1) if c != current]
        vals = set(shifts.get(l, ()))
        if current is not None:
            vals |= {current * s for s in SHIFT_FACTORS}
            if f.integer and f.high > f.low:
                R = f.high - f.low
                vals = {round(v * R) / R for v in vals}
        vals.discard(current)
        if self.a.numeric == "shift":
            vals.discard(0.0)
            if f.increase_only:
                vals = {v for v in vals if v > 0}
        return sorted(v for v in vals if -1.0 <= v <= 1.0)


def _make(ch: dict) -> Action:
    return Action(tuple(sorted(ch.items())))


def refine(aspace: ActionSpace, actions: list, coverable: np.ndarray, rounds: int = 3) -> list:
    """Lower the total cost of a selection at equal (or higher) coverage: each round lists
    the neighbours of the chosen actions (:class:`NeighbourLevel`'s moves), scores them over
    every type at once, and runs the add/swap local search
    (:func:`~groupcf.colgen.local_search.improve`) over the chosen actions and their
    neighbours, at most as many actions as given."""
    from ..colgen.local_search import improve, selection_value

    level = NeighbourLevel(aspace)
    m = aspace.m
    for _ in range(rounds):
        cands = _with_neighbours(aspace, level, actions)
        C = aspace.cover_many(cands) & coverable[None, :]
        D = np.array([aspace.costs(a) for a in cands])
        start = list(range(len(actions)))
        cov0, cost0 = selection_value(C, D, m, start)
        chosen = improve(C, D, m, start, cov0, len(actions))
        if selection_value(C, D, m, chosen)[1] >= cost0 - 1e-9:
            break
        actions = [cands[j] for j in chosen]
    return actions


def climb(aspace: ActionSpace, actions: list, coverable: np.ndarray, k: int, rounds: int = 3) -> list:
    """Raise the coverage of a selection of at most ``k`` actions: each round the chosen
    actions' neighbours are scored at once and the add/swap search
    (:func:`~groupcf.colgen.local_search.improve_coverage`) picks among them; for answers the
    bounds do not certify (the new actions also enter the pool)."""
    from ..colgen.local_search import improve_coverage

    if not actions:                # nothing to climb from (a fair_by master may choose no action)
        return actions
    level = NeighbourLevel(aspace)
    m = aspace.m * coverable
    for _ in range(rounds):
        cands = _with_neighbours(aspace, level, actions)
        C = aspace.cover_many(cands)
        start = list(range(len(actions)))
        chosen = improve_coverage(C, m, start, k)
        if float(m[C[chosen].any(axis=0)].sum()) <= float(m[C[start].any(axis=0)].sum()) + 1e-9:
            break
        actions = [cands[j] for j in chosen]
    return actions


def _with_neighbours(aspace: ActionSpace, level: NeighbourLevel, actions: list) -> list:
    """``actions`` followed by their distinct neighbours (the shift values already used for
    each continuous feature are the ones tried)."""
    shifts: dict = {}
    for act in actions:
        for l, v in act.changes:
            if aspace.feats[l].encoding == "continuous":
                shifts.setdefault(l, set()).add(float(v))
    cands, seen = list(actions), {a.key for a in actions}
    for act in actions:
        for nb in level._neighbours(act, shifts):
            if len(nb) and nb.key not in seen:
                seen.add(nb.key)
                cands.append(nb)
    return cands
