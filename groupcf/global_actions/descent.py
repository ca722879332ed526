r"""Cost descent: cheaper actions for the people an action already covers (numpy only).

Coverage pricing (:mod:`~groupcf.global_actions.search`) grows the pool by how many people
an action covers, never by what it costs them: once one column covers everyone an action is
assigned, the master has nothing left to price and the least-cost stage can only choose
among the columns that happen to be in the pool — on Default credit's MLP the only pool
column covering all 200 people was one greedy completion's shift of 9.87 bin widths, where
one categorical change plus a small shift covers them all at about 1.1.

:func:`descend` takes an action :math:`a` and the types :math:`G` assigned to it and looks
for a cheaper action covering every type of :math:`G`, by rounds of

1. **candidates**: :math:`a`; :math:`a` with one feature removed; with a set feature moved
   to each other category; with each category of a mutable categorical or binary feature
   added (within :math:`T_{\max}`) or put in place of one of :math:`a`'s features;
2. **shrink**: in each candidate, every shift in turn is bisected towards zero — the least
   factor :math:`f \in [0, 1]` of :math:`\delta_l` (an integer feature's shift rounded away
   from zero on its grid) at which the candidate still covers all of :math:`G` (every
   bisection step evaluates all candidates at once, stacked, with the embedding's numpy
   score; coverage need not be monotone in :math:`f`, so the answer is the smallest factor
   *seen* to cover, never a guess);
3. keep the candidate of least total cost :math:`\sum_{t \in G} m_t d_{ta}` that covers
   all of :math:`G`; stop when a round does not lower it.

Coverage never drops (each action keeps covering its own types; the others are untouched)
and every action returned was checked on every type of :math:`G`. Nothing is proven: the
least-cost MIP (:meth:`~groupcf.global_actions.pricing.ActionMIP.cheapest`) is the exact
step, and it starts from what this finds.
"""
from __future__ import annotations

import numpy as np

from .actions import Action, ActionSpace

#: bisection steps per shift (the factor's resolution: 2^-12 of the shift)
STEPS = 12
#: rows scored per batch (candidates × types)
BATCH_ROWS = 200_000


def descend(aspace: ActionSpace, action: Action, types: np.ndarray, rounds: int = 4,
            max_candidates: int = 64) -> Action:
    """The cheapest action found covering every type of ``types`` (module docstring);
    ``action`` itself when nothing cheaper is found (it must cover them all). Each round
    shrinks at most ``max_candidates`` candidates: those whose cost without their shifts
    is lowest (the others cannot beat the best so far)."""
    types = np.asarray(types, dtype=np.int64)
    if not len(types) or not len(action):
        return action
    G = _Group(aspace, types)
    best, best_cost = action, G.cost(action)
    for _ in range(rounds):
        cands = _candidates(aspace, best)
        # a candidate's cost without its shifts bounds its cost after any shrink: only those
        # that can beat the best, most promising first
        floor = np.array([G.cost(_without_shifts(aspace, c)) for c in cands])
        keep = np.flatnonzero(floor < best_cost - 1e-9)
        cands = [cands[j] for j in keep[np.argsort(floor[keep], kind="stable")][:max_candidates]]
        cands = [c for c, ok in zip(cands, G.covers(cands)) if ok]
        cands = _shrink(aspace, G, cands)
        if not cands:
            break
        costs = np.array([G.cost(c) for c in cands])
        j = int(np.argmin(costs))
        if costs[j] >= best_cost - 1e-9:
            break
        best, best_cost = cands[j], float(costs[j])
    return best


class _Group:
    """The types an action must keep covering: their rows, codes and weights."""

    def __init__(self, aspace: ActionSpace, types: np.ndarray):
        self.a, self.types = aspace, types
        self.Z, self.codes, self.m = aspace.Z[types], aspace.codes[types], aspace.m[types]

    def cost(self, action: Action) -> float:
        return float(self.m @ self.a.costs(action, codes=self.codes, Z=self.Z))

    def covers(self, actions: list) -> np.ndarray:
        """Bool per action: it covers every type of the group."""
        return np.asarray(self.a.cover_many(actions, BATCH_ROWS, self.types).all(axis=1))


def _candidates(aspace: ActionSpace, act: Action) -> list[Action]:
    """Step 1 of the module docstring (distinct, non-empty; ``act`` first)."""
    ch = dict(act.changes)
    T = aspace.Tmax or len(aspace.mutable)
    sets = {l: _categories(aspace, l) for l in aspace.mutable if aspace.feats[l].encoding != "continuous"}
    out: dict[tuple, Action] = {act.key: act}

    def add(changes: dict) -> None:
        if changes:
            cand = Action(tuple(sorted(changes.items())))
            out.setdefault(cand.key, cand)

    for l in ch:
        if len(ch) > 1:
            add({k: v for k, v in ch.items() if k != l})
        for c in sets.get(l, ()):
            if c != ch[l]:
                add({**ch, l: c})
    for l, cats in sets.items():
        if l in ch:
            continue
        for c in cats:
            if len(ch) < T:
                add({**ch, l: c})
            for drop in ch:                    # in place of one of the action's features
                add({**{k: v for k, v in ch.items() if k != drop}, l: c})
    return list(out.values())


def _categories(aspace: ActionSpace, l: int) -> list[int]:
    f = aspace.feats[l]
    return [0, 1] if f.encoding == "binary" else list(range(len(f.columns)))


def _shrink(aspace: ActionSpace, G: _Group, cands: list[Action]) -> list[Action]:
    """Step 2 of the module docstring, all candidates in lockstep (each still covers G)."""
    cands = list(cands)
    width = max((len(c) for c in cands), default=0)
    for pos in range(width):                    # the pos-th change of every candidate
        slots = [j for j, c in enumerate(cands) if pos < len(c) and aspace.is_shift(c.changes[pos][0])]
        if not slots:
            continue
        lo = np.zeros(len(slots))               # factors: lo may fail, hi covers
        hi = np.ones(len(slots))
        for _ in range(STEPS):
            mid = (lo + hi) / 2
            trial = [_scaled(aspace, cands[j], pos, f) for j, f in zip(slots, mid)]
            ok = G.covers(trial)
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        zero = G.covers([_scaled(aspace, cands[j], pos, 0.0) for j in slots])
        for i, j in enumerate(slots):
            cands[j] = _scaled(aspace, cands[j], pos, 0.0 if zero[i] else float(hi[i]))
    # shifts shrunk to zero leave the action (kept as 0 above so positions stay aligned)
    out = [Action(tuple((l, v) for l, v in c.changes if not (aspace.is_shift(l) and abs(v) < 1e-12))) for c in cands]
    return [c for c in out if len(c)]


def _scaled(aspace: ActionSpace, act: Action, pos: int, f: float) -> Action:
    """``act`` with its ``pos``-th change (a shift) times ``f``, on an integer feature's grid
    (rounded away from zero, as the pricing MIP's integer shifts)."""
    l, v = act.changes[pos]
    feat = aspace.feats[l]
    val = float(v) * f
    R = feat.high - feat.low
    if feat.integer and round(R) == R and R >= 1:
        val = float(np.sign(v) * np.ceil(abs(val) * R - 1e-9) / R)
    changes = list(act.changes)
    changes[pos] = (l, val)
    return Action(tuple(changes))


def _without_shifts(aspace: ActionSpace, act: Action) -> Action:
    return Action(tuple((l, v) for l, v in act.changes if not aspace.is_shift(l)))


def descend_selection(aspace: ActionSpace, pool, chosen: list, assign: np.ndarray, deadline=None) -> tuple[list, list]:
    """:func:`descend` for each chosen pool column over the types ``assign`` gives it;
    the cheaper actions join ``pool``. Returns ``(chosen, added)``: the new pool positions
    of the selection and those of the columns added (for the caller's master)."""
    out, added = [], []
    for j in chosen:
        types = np.flatnonzero(assign == j)
        if deadline is not None and deadline.passed:
            out.append(j)
            continue
        act = pool.columns[j].payload
        new = descend(aspace, act, types)
        if new.key == act.key:
            out.append(j)
            continue
        pos = pool.add(aspace.column(new, "descent"))
        if pos is None:
            pos = pool.index[new.key]
        else:
            added.append(pos)
        out.append(pos)
    return out, added
