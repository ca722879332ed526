"""GeCo's genetic search: population, group samplers, operators, selection, refinement."""
from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import numpy as np

from ...formulations.distances import feature_distances_codes
from ...plaf import Candidates
from ...utils import cells
from .params import geco_distance
from .sampling import GroupSamplers

if TYPE_CHECKING:
    from .explainer import GeCo
    from .scoring import _Scorer



# ====================================================================== the search
class _Population:
    """Candidates in Δ-representation with their evaluation."""

    __slots__ = ("M", "V", "h", "p", "pos", "dist", "fit")

    def __init__(self, M, V, h, p, pos, dist, fit):
        self.M, self.V, self.h, self.p, self.pos, self.dist, self.fit = M, V, h, p, pos, dist, fit

    def __len__(self):
        return len(self.M)

    def take(self, idx) -> _Population:
        return _Population(*(getattr(self, s)[idx] for s in self.__slots__))

    @staticmethod
    def concat(a: _Population, b: _Population) -> _Population:
        return _Population(*(np.concatenate([getattr(a, s), getattr(b, s)]) for s in _Population.__slots__))


def a_empty() -> np.ndarray:
    """No parents (an empty index array)."""
    return np.zeros(0, dtype=np.int64)


def _find(sorted_keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``values`` is among the sorted ``sorted_keys``, by one search: ``(found,
    at)``, ``at`` its position where found (elsewhere some valid position, or 0 without keys).
    ``found`` is ``np.isin(values, sorted_keys)``, which sorts both arrays together on every
    call (~7x the time on the population's hashes)."""
    at = np.searchsorted(sorted_keys, values)
    if not len(sorted_keys):
        return np.zeros(len(at), dtype=bool), at
    at = np.minimum(at, len(sorted_keys) - 1)
    return sorted_keys[at] == values, at


def _rank_within(inv: np.ndarray) -> np.ndarray:
    """Position of each element among the earlier elements with the same label."""
    order = np.argsort(inv, kind="stable")
    sorted_inv = inv[order]
    starts = np.flatnonzero(np.r_[True, sorted_inv[1:] != sorted_inv[:-1]])
    run_start = np.repeat(starts, np.diff(np.r_[starts, len(inv)]))
    rank = np.empty(len(inv), dtype=np.int64)
    rank[order] = np.arange(len(inv)) - run_start
    return rank



class _Run:
    """One genetic search (state of one explanation)."""

    def __init__(self, geco: GeCo, scorer: _Scorer, xkeys, allowed, samplers, rng, k):
        self.g, self.scorer, self.xkeys, self.allowed = geco, scorer, xkeys, allowed
        self.samplers, self.rng, self.k = samplers, rng, k
        self.sampling = GroupSamplers(samplers)
        # the rules a candidate may break: every value it changes is drawn from ``allowed``
        self.clauses = geco.bound.open_clauses(xkeys) if geco._has_rules else []
        self.P = geco.params
        dom = geco.domain
        self.n = len(dom)
        # the instance-free tables, built once per explainer (read only)
        self.numeric, self.span, self._num_keys, self.together = geco._tables()
        self.delta = self._mace_tables() if geco.mace_distance is not None else None
        # added to a non-counterfactual's distance: at least the largest possible distance
        w = (geco.mace_distance.weights.values() if geco.mace_distance is not None else
             (self.P.alpha, self.P.beta, self.P.gamma))
        self.penalty = max(1.0, float(sum(w)))
        self.n_barred = 0          # candidates dropped unscored by the bar of prepare
        self._ranked_cache: tuple | None = None
        # every candidate scored in this run: sorted hashes, p, pos (see score)
        self.seen: tuple[np.ndarray, np.ndarray, np.ndarray] = (np.zeros(0, np.int64), np.zeros(0), np.zeros(0, bool))

    def _mace_tables(self) -> np.ndarray:
        """MACE's per-feature distance of each active-domain value to the instance
        (:func:`~groupcf.formulations.distances.feature_distances_codes`), ``(feature, value code)``;
        codes past a feature's domain repeat its last value (never read)."""
        feats = self.g.domain.features
        size = max(f.size for f in feats)
        C = np.empty((size, self.n))
        for l, f in enumerate(feats):
            C[:, l] = f.space_codes()[np.minimum(np.arange(size), f.size - 1)]
        xcodes = self.g.space.codes(self.scorer.x.to_frame().T)[0]
        return np.ascontiguousarray(feature_distances_codes(self.g.space, xcodes, C).T)

    # ------------------------------------------------------------------ operators
    def initial(self):
        P, n = self.P, self.n
        m = P.m_init * len(self.samplers)
        M = np.zeros((m, n), dtype=bool)
        V = np.full((m, n), -1, dtype=np.int32)
        which = np.repeat(np.arange(len(self.samplers)), P.m_init)     # m_init rows per group
        self.sampling.apply(M, V, np.arange(m), which, self.rng, np.zeros(m, dtype=bool))
        return M, V

    def mutate(self, pop: _Population):
        P = self.P
        parents = np.repeat(np.arange(len(pop)), P.m_mut)
        M, V = pop.M[parents].copy(), pop.V[parents].copy()
        which = self.rng.integers(len(self.samplers), size=len(parents))
        changed = self.sampling.changes_group(M, which)                  # may revert its group's change
        self.sampling.apply(M, V, np.arange(len(parents)), which, self.rng, changed)
        return M, V, parents

    def crossover(self, pop: _Population):
        """Children of pairs of parents (the best candidate of each changed-feature set,
        fittest first): the union of the parents' changes, groups taken whole from the
        fitter parent ``a`` where it changes them, from ``b`` elsewhere."""
        reps = np.sort(self._first_per_set(pop.M))
        budget = self.P.n_crossover if self.P.n_crossover is not None else self.P.q
        R = min(len(reps), int((1 + math.isqrt(1 + 8 * budget)) // 2))
        if R < 2:
            return pop.M[:0], pop.V[:0], a_empty()
        i, j = np.triu_indices(R, 1)
        a, b = reps[i], reps[j]
        from_a = (pop.M[a].astype(np.float64) @ self.together) > 0    # features of a's changed groups
        new = (pop.M[b] & ~from_a).any(axis=1)                # b adds something
        a, b, from_a = a[new], b[new], from_a[new]
        M = np.where(from_a, pop.M[a], pop.M[b])
        V = np.where(from_a, pop.V[a], pop.V[b]).astype(np.int32)
        return M, V, a

    def _first_per_set(self, M) -> np.ndarray:
        """The first row of each changed-feature set of ``M``."""
        return np.unique(self.scorer.set_labels(M), return_index=True)[1]

    # ------------------------------------------------------------------ evaluation
    def hashes(self, M, V) -> np.ndarray:
        return (np.where(M, V.astype(np.int64) + 1, 0)) @ self.g._hash_w

    def bar(self, pop: _Population) -> float:
        """A fitness above which no new candidate can enter the next :meth:`select` of
        ``pop`` and the new ones: the ``q``-th smallest fitness among the members of ``pop``
        ranked below ``max_per_set`` in their changed-feature set (``inf`` when fewer).
        Adding candidates to ``pop`` only lowers the ``j``-th best fitness of each set, so
        at least ``q`` members ranked below the cap keep a fitness ``<=`` the bar and come
        first; a candidate whose fitness (``>=`` its distance) is above the bar is placed
        after them, and it moves no one who comes before it. So dropping it unscored
        leaves the selection as it was."""
        q, cap = self.P.q, self.P.max_per_set
        if len(pop) < q:
            return math.inf
        if cap is None:
            f = np.sort(pop.fit, kind="stable")
        else:
            order, _, rank = self._ranked(pop)
            f = pop.fit[order][rank < cap]
        return float(f[q - 1]) if len(f) >= q else math.inf

    def _ranked(self, pop: _Population) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(order, labels, rank)`` of ``pop``: its members by fitness (stable), their
        changed-feature sets' labels (:meth:`_Scorer.set_labels`) and each one's rank within
        its set in that order; computed once per population (:meth:`bar` and :meth:`set_bars`
        read the same)."""
        hit = self._ranked_cache
        if hit is None or hit[0] is not pop:
            order = np.argsort(pop.fit, kind="stable")
            labels = self.scorer.set_labels(pop.M[order])
            hit = self._ranked_cache = (pop, order, labels, _rank_within(labels))
        return hit[1], hit[2], hit[3]

    def set_bars(self, pop: _Population) -> tuple[np.ndarray, np.ndarray] | None:
        """Per changed-feature set with at least ``max_per_set`` members in ``pop``, its
        ``max_per_set``-th smallest fitness there: ``(set codes, sorted; their bars)``. None
        without a cap, with more than 62 features (no set codes), or when fewer than ``q``
        members of ``pop`` rank below the cap in their set (:meth:`select`'s first tier).

        Otherwise a new candidate of such a set whose distance (a lower bound of its
        fitness) is above its set's bar is never selected: adding candidates only lowers a
        set's ``j``-th best fitness, and on ties the population's members come first, so at
        least ``max_per_set`` members of its set come before it and it falls in the second
        tier; the first tier only grows as candidates are added, so it holds at least ``q``
        members and :meth:`select` never reaches the second. Dropping it unscored changes
        nothing, as for :meth:`bar`."""
        q, cap = self.P.q, self.P.max_per_set
        if cap is None or len(pop) < q or not self.scorer.has_set_codes:
            return None
        order, codes, rank = self._ranked(pop)         # up to 62 features the labels are the set codes
        if int((rank < cap).sum()) < q:
            return None
        at = rank == cap - 1
        keys, bars = codes[at], pop.fit[order][at]
        o = np.argsort(keys, kind="stable")
        return keys[o], bars[o]

    def prepare(self, M, V, known: np.ndarray | None = None, parent: np.ndarray | None = None,
                bar: float = math.inf, sets: tuple[np.ndarray, np.ndarray] | None = None) -> _Population | None:
        """Cascade, check, drop no-ops / duplicates / known candidates and those whose
        distance is above ``bar`` (:meth:`bar`) or above their set's bar in ``sets``
        (:meth:`set_bars`), evaluate (``parent``:
        each candidate's parent in the population last given to the scorer's
        ``set_parents``, or ``-1``; only where the score is computed from, not what it is)."""
        if parent is None:
            parent = np.full(len(M), -1, dtype=np.int64)
        if self.clauses and len(M):
            cand = Candidates(M, V, self.g.domain.keys, self.xkeys)
            self.g.bound.cascade(cand, self.allowed, self.clauses)
            ok = self.g.bound.check(cand, self.clauses)
            M, V, parent = M[ok], V[ok], parent[ok]
        keep = M.any(axis=1)
        if self.P.Tmax is not None:                  # at most Tmax changed features
            keep &= M.sum(axis=1) <= self.P.Tmax
        M, V, parent = M[keep], V[keep], parent[keep]
        if not len(M):
            return None
        h = self.hashes(M, V)
        _, first = np.unique(h, return_index=True)
        first.sort()
        if known is not None and len(known):
            first = first[~_find(np.sort(known), h[first])[0]]
        if not len(first):
            return None
        M, V, h, parent = M[first], V[first], h[first], parent[first]
        dist = self.distance(M, V)
        if bar < math.inf:
            near = dist <= bar
            codes = self.scorer.set_codes(M) if sets is not None and len(sets[0]) else None
            if sets is not None and codes is not None:
                found, at = _find(sets[0], codes)
                near &= ~(found & (dist > sets[1][at]))
            self.n_barred += int(len(near) - near.sum())
            if not near.all():
                M, V, h, parent, dist = M[near], V[near], h[near], parent[near], dist[near]
                if not len(M):
                    return None
        p, pos = self.score(M, V, h, parent)
        fit = np.where(pos, dist, dist + self.penalty + (1.0 - p))
        return _Population(M, V, h, p, pos, dist, fit)

    def score(self, M, V, h, parent) -> tuple[np.ndarray, np.ndarray]:
        """The scorer's ``(p, pos)`` of the candidates, hashes ``h``; a candidate scored
        before in this run (dropped from the population since) is looked up, not scored again."""
        seen = self.seen
        hit, at = _find(seen[0], h)
        if hit.all():
            return seen[1][at], seen[2][at]
        new = ~hit
        p, pos = np.empty(len(h)), np.empty(len(h), dtype=bool)
        p[hit], pos[hit] = seen[1][at[hit]], seen[2][at[hit]]
        p[new], pos[new] = self.scorer(M[new], V[new], parent[new])
        hs = np.concatenate([seen[0], h[new]])
        order = np.argsort(hs, kind="stable")
        self.seen = (hs[order], np.concatenate([seen[1], p[new]])[order], np.concatenate([seen[2], pos[new]])[order])
        return p, pos

    def distance(self, M, V) -> np.ndarray:
        if self.delta is not None and self.g.mace_distance is not None:   # MACE's distance (option distance=)
            D = np.zeros(M.shape)
            rows, cols = cells(M)
            D[rows, cols] = self.delta[cols, V[rows, cols]]
            return self.g.mace_distance.aggregate(D)
        D = M.astype(float)
        rows, cols = cells(M & self.numeric[None, :])        # numeric changes: |key - x| / span
        D[rows, cols] = np.abs(self._num_keys[cols, V[rows, cols]] - self.xkeys[cols]) / self.span[cols]
        P = self.P
        return geco_distance(M, D, P.alpha, P.beta, P.gamma)

    def select(self, pop: _Population) -> _Population:
        """The ``q`` fittest, at most ``max_per_set`` per changed-feature set first (the
        rest only fill remaining places)."""
        order = np.argsort(pop.fit, kind="stable")
        cap = self.P.max_per_set
        if cap is not None and len(order) > self.P.q:
            rank = _rank_within(self.scorer.set_labels(pop.M[order]))
            order = np.concatenate([order[rank < cap], order[rank >= cap]])
        return pop.take(order[: self.P.q])

    # ------------------------------------------------------------------ refinement
    #: values tried per (candidate, feature) and pass: all of them when at most this
    #: many, else an even grid over them plus the ones nearest the current value
    REFINE_VALUES = 128

    def _top(self, pop: _Population) -> np.ndarray:
        """Indices of the ``k`` fittest counterfactuals of ``pop``."""
        cand = np.flatnonzero(pop.pos)
        return cand[np.argsort(pop.fit[cand], kind="stable")][: self.k]

    def refine(self, pop: _Population, stats: dict) -> _Population:
        """Coordinate descent on the top-``k`` counterfactuals (option ``refine`` of
        :class:`GeCoOptions`): per changed numeric (ordinal too under MACE's distance)
        feature, the active-domain values nearer the instance's, and undoing the change;
        the candidates go through the PLAF cascade, are scored and merged by
        SELECTFITTEST. Stops after a pass that does not improve the top-``k``."""
        t0 = time.perf_counter()
        dom = self.g.domain
        single = np.zeros(self.n, dtype=bool)
        for members in self.g.groups:
            if len(members) == 1:
                single[members[0]] = True
        kinds = ("numeric", "ordinal") if self.delta is not None else ("numeric",)
        refinable = single & np.array([f.kind in kinds for f in dom.features])
        close = [self.delta[l, :f.size] if self.delta is not None else
                 np.abs(f.keys - self.xkeys[l]) / self.span[l] for l, f in enumerate(dom.features)]
        R = self.REFINE_VALUES
        passes = 0
        for _ in range(self.P.refine_passes):
            top = self._top(pop)
            if not len(top):
                break
            Ms, Vs = [], []
            for c in top:
                for l in np.flatnonzero(pop.M[c]):
                    if pop.M[c].sum() > 1:                     # undo this change
                        m, v = pop.M[c].copy(), pop.V[c].copy()
                        m[l], v[l] = False, -1
                        Ms.append(m[None, :])
                        Vs.append(v[None, :])
                    if not refinable[l]:
                        continue
                    d = close[l]
                    ok = (d < d[pop.V[c, l]] - 1e-12) & (d > 1e-12)   # nearer, still a change
                    if self.allowed[l] is not None:
                        ok &= self.allowed[l]
                    vals = np.flatnonzero(ok)
                    if len(vals) > R:                          # grid + the nearest to the current
                        grid = vals[np.linspace(0, len(vals) - 1, R // 2).round().astype(np.int64)]
                        near = vals[np.argsort(-d[vals], kind="stable")[: R // 2]]
                        vals = np.union1d(grid, near)
                    if not len(vals):
                        continue
                    M = np.repeat(pop.M[c][None, :], len(vals), axis=0)
                    V = np.repeat(pop.V[c][None, :], len(vals), axis=0)
                    V[:, l] = vals
                    Ms.append(M)
                    Vs.append(V)
            if not Ms:
                break
            new = self.prepare(np.concatenate(Ms), np.concatenate(Vs), known=pop.h, bar=self.bar(pop),
                               sets=self.set_bars(pop))
            passes += 1
            if new is None:
                break
            before = pop.fit[top]
            pop = self.select(_Population.concat(pop, new))
            after = pop.fit[self._top(pop)]
            if len(after) == len(before) and not (after < before - 1e-12).any():
                break
        stats["refine_passes"] = passes
        stats["refine_time"] = time.perf_counter() - t0
        return pop

    # ------------------------------------------------------------------ main loop
    def search(self):
        P = self.P
        t0 = time.perf_counter()
        stats = {"generations": 0, "stopped_by": None}
        if not self.samplers:
            stats["stopped_by"] = "nothing can change"
            return _Population(*(np.zeros((0, self.n), bool), np.zeros((0, self.n), np.int32),
                                 np.zeros(0, np.int64), np.zeros(0), np.zeros(0, bool),
                                 np.zeros(0), np.zeros(0))), stats
        pop = self.prepare(*self.initial())
        if pop is None:
            stats["stopped_by"] = "no valid initial candidate"
            return _Population(*(np.zeros((0, self.n), bool), np.zeros((0, self.n), np.int32),
                                 np.zeros(0, np.int64), np.zeros(0), np.zeros(0, bool),
                                 np.zeros(0), np.zeros(0))), stats
        pop = self.select(pop)
        top, stable = None, 0
        for gen in range(1, P.max_generations + 1):
            self.scorer.set_parents(pop.M, pop.V, pop.h)
            Mm, Vm, pm = self.mutate(pop)
            Mc, Vc, pc = self.crossover(pop)
            new = self.prepare(np.concatenate([Mc, Mm]), np.concatenate([Vc, Vm]), known=pop.h,
                               parent=np.concatenate([pc, pm]), bar=self.bar(pop), sets=self.set_bars(pop))
            if new is not None:
                pop = self.select(_Population.concat(pop, new))
            stats["generations"] = gen
            kk = min(self.k, len(pop))
            cur = pop.h[:kk]
            stable = stable + 1 if top is not None and np.array_equal(cur, top) else 0
            top = cur
            if pop.pos[:kk].all() and stable >= P.stable_generations:
                stats["stopped_by"] = "converged"
                break
            if pop.pos[0] and stable >= P.patience:
                stats["stopped_by"] = "patience"
                break
            if P.time_limit is not None and time.perf_counter() - t0 > P.time_limit:
                stats["stopped_by"] = "time_limit"
                break
        else:
            stats["stopped_by"] = "max_generations"
        stats["hit_generation_cap"] = stats["stopped_by"] == "max_generations"
        stats["search_time"] = time.perf_counter() - t0
        return pop, stats
