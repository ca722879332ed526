r"""Accepted completions: one service for "can ``x`` be accepted by changing only ``F``
(plus up to ``k`` further features), and how?"

For an instance :math:`x` (expanded), a set :math:`F` of features that may change and a
budget :math:`k`, a *completion* is a point :math:`v` equal to :math:`x` outside
:math:`F \cup E` for some :math:`E \subseteq \text{mutable} \setminus F`,
:math:`|E| \le k` (increase-only features not below given lower codes). It is accepted
when :math:`\mathrm{score}(v) \ge \tau + \varepsilon`. Feasibility is monotone in
:math:`F` and :math:`k`, and the same for every instance equal to :math:`x` outside
:math:`F` (the classes of Carrizosa, Ramírez-Ayerbe & Romero Morales 2024, §4.2).

:class:`Completions` answers the question once for every algorithm:

* **closed form** when the embedding is additive (:meth:`Embedding.additive`,
  :math:`\mathrm{score}(v) = c + w^\top v`): every free feature independently takes its
  best allowed value (:meth:`Completions.best`), and the gain of freeing feature
  :math:`l` of row :math:`i` is :math:`G_{il} = \max_{c} w_l^\top c - w_l^\top x_{i,l}
  \ge 0` (:meth:`Completions.gains`);
* **vectorised numpy** otherwise: all completions enumerated in one batched call when
  there are at most ``max_enumeration`` (:meth:`Completions.best`), or a greedy search
  that applies the best single-feature change until the score clears the threshold
  (:meth:`Completions.check`; exact for an additive score, so its failure is then a
  proof);
* **a MIP** when numpy cannot decide: the counterfactual block
  (:mod:`groupcf.formulations.blocks`) with the features outside :math:`F` fixed by
  bounds (big-M constants over that small box only), or with the agreement rows and
  :math:`\sum_l f_l \le |F| + k` when a budget remains. Infeasible is a proof; a MIP
  stopped without optimality answers "unknown" (never "infeasible").

The candidate values of each feature are computed by one helper
(:meth:`Completions.candidates`): every category of a one-hot feature, both values of a
binary one, the ends of a continuous one (exact for an additive score), lower codes of
increase-only features excluded.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import numpy as np

from ..embeddings.base import AdditiveForm, Embedding
from ..features.space import FeatureSpace
from ..solvers import make_backend
from ..solvers.base import Backend, Status
from ..utils import TOL, value_key
from .blocks import add_agreement, add_counterfactual, box_outside
from .rows import RowBuffer

log = logging.getLogger(__name__)


class Completions:
    """Accepted completions of instances under one model (module docstring).

    Parameters
    ----------
    space
        The fitted feature space.
    embedding
        The model.
    score_lo
        Score a completion must reach (threshold plus safety margin).
    solver
        Backend name or instance for the MIP proofs.
    accept
        Score at which a MIP's point is accepted when re-checked in numpy (default
        ``score_lo``; e.g. the bare threshold, below the margin the MIP enforced).
    max_enumeration
        Most completions :meth:`best` enumerates in numpy before using a MIP.
    """

    def __init__(self, space: FeatureSpace, embedding: Embedding, score_lo: float,
                 solver: str | type[Backend] | Backend = "highs", accept: float | None = None,
                 max_enumeration: int = 4096) -> None:
        self.space, self.embedding, self.solver = space, embedding, solver
        self.score_lo = float(score_lo)
        self.accept = self.score_lo if accept is None else float(accept)
        self.max_enumeration = max_enumeration
        self.form = embedding.additive()
        self.mutable = np.array([not f.immutable and not f.increase_only for f in space])
        self._cache: dict[tuple[bytes, tuple[int, ...], tuple[float, ...]], tuple[float, np.ndarray | None]] = {}
        self._candidates: dict[tuple[int, float], np.ndarray] = {}
        self._columns = [f.columns for f in space]
        self.calls = {"closed_form": 0, "enumeration": 0, "mip": 0, "cached": 0,
                      "greedy": 0, "infeasible": 0, "unknown": 0}

    @property
    def additive(self) -> bool:
        """The model's score is additive: closed forms and greedy proofs apply."""
        return self.form is not None

    # ------------------------------------------------------------------ candidates
    def candidates(self, l: int, low: float = 0.0) -> np.ndarray:
        """Allowed values of feature ``l`` over its expanded columns, one per row
        (codes ``>= low`` for an increase-only feature). Cached; do not modify."""
        key = (l, low)
        hit = self._candidates.get(key)
        if hit is None:
            hit = self._candidates[key] = self._make_candidates(l, low)
        return hit

    def _make_candidates(self, l: int, low: float) -> np.ndarray:
        f = self.space.features_[l]
        k = len(f.columns)
        if f.encoding == "onehot":
            start = int(low) if f.increase_only else 0
            return np.eye(k)[start:]
        if f.encoding == "binary":
            return np.array([[1.0]]) if (f.increase_only and low >= 0.5) else np.array([[0.0], [1.0]])
        lo = low if f.increase_only else 0.0
        return np.array([[lo], [1.0]])          # continuous: its ends (exact when additive)

    # ------------------------------------------------------------------ closed form
    def gains(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Additive model: scores ``s`` of the rows of ``Z`` and ``G[i, l] >= 0``, the
        largest score gain from freeing feature ``l`` of row ``i``."""
        form = self._additive()
        w = form.weights
        s = form.score(Z)
        G = np.zeros((len(Z), len(self.space)))
        for l, f in enumerate(self.space):
            wc = w[f.columns]
            G[:, l] = float((self.candidates(l) @ wc).max()) - Z[:, f.columns] @ wc
        return s, G

    def completion(self, z: np.ndarray, F: Iterable[int], low: np.ndarray | None = None) -> np.ndarray:
        """Additive model: the best completion of ``z`` on ``F`` (every feature of ``F``
        at its best allowed value; the first on ties)."""
        w = self._weights()
        v = np.array(z, dtype=float)
        for l in F:
            cols = self.space.features_[int(l)].columns
            opts = self.candidates(int(l), 0.0 if low is None else float(low[int(l)]))
            v[cols] = opts[int(np.argmax(opts @ w[cols]))]
        return v

    def _additive(self) -> AdditiveForm:
        if self.form is None:
            raise TypeError("closed-form completions need an additive model (Embedding.additive())")
        return self.form

    def _weights(self) -> np.ndarray:
        return self._additive().weights

    # ------------------------------------------------------------------ best completion
    def best(self, z: np.ndarray, F: Iterable[int], low: np.ndarray | None = None,
             allow_mip: bool = True) -> tuple[float, np.ndarray | None]:
        """``(best score, argmax v)`` over the completions of ``z`` on ``F`` (no
        budget); ``low[l]``: lowest code of increase-only feature ``l``. ``(-inf, None)``
        proves that none exists, ``(+inf, None)`` means unknown (a MIP was needed and
        ``allow_mip=False``, or it stopped without optimality). Cached."""
        F = tuple(sorted(int(l) for l in F))
        space = self.space
        lows = tuple(0.0 if low is None else float(low[l]) for l in F)
        fixed = np.ones(space.n_features_out_, dtype=bool)
        for l in F:
            fixed[self._columns[l]] = False
        key = (value_key(z[fixed]), F, lows)
        hit = self._cache.get(key)
        if hit is not None:
            self.calls["cached"] += 1
            return hit
        allowed = [self.candidates(l, lo) for l, lo in zip(F, lows)]
        n_comb = int(np.prod([len(a) for a in allowed])) if allowed else 1
        continuous = any(space.features_[l].encoding == "continuous" for l in F)
        res: tuple[float, np.ndarray | None]
        if self.form is not None:
            self.calls["closed_form"] += 1
            v = self.completion(z, F, None if low is None else low)
            res = (float(self.form.score(v)[0]), v)
        elif n_comb <= self.max_enumeration and not continuous:
            self.calls["enumeration"] += 1
            V = np.repeat(np.asarray(z, dtype=float)[None, :], n_comb, axis=0)
            # every combination of the allowed values, as row indices per feature of F
            idx = np.indices([len(a) for a in allowed]).reshape(len(F), -1) if F else np.zeros((0, 1), dtype=np.int64)
            for t, (l, a) in enumerate(zip(F, allowed)):
                V[:, self._columns[l]] = a[idx[t]]
            s = self.embedding.score(V)
            j = int(np.argmax(s))
            res = (float(s[j]), V[j])
        elif not allow_mip:
            return np.inf, None
        else:
            self.calls["mip"] += 1
            _, lb, ub = box_outside(space, z, F)
            res = self._max_score(F, lows, lb, ub)
        self._cache[key] = res
        return res

    def feasible(self, z: np.ndarray, F: Iterable[int], low: np.ndarray | None = None, allow_mip: bool = True) -> bool:
        """Whether some completion of ``z`` on ``F`` is accepted (``True`` when unknown)."""
        return self.best(z, F, low, allow_mip)[0] >= self.score_lo

    def _max_score(self, F: Sequence[int], lows: Sequence[float], lb: np.ndarray, ub: np.ndarray,
                   ) -> tuple[float, np.ndarray | None]:
        space = self.space
        lb, ub = lb.copy(), ub.copy()
        for l, lo in zip(F, lows):
            f = space.features_[l]
            if f.increase_only:
                if f.encoding == "onehot":
                    ub[f.columns[: int(lo)]] = 0.0
                else:
                    lb[f.columns] = lo
        be = make_backend(self.solver, mip_gap=1e-9)
        blk = add_counterfactual(be, space, self.embedding, None, lb, ub)
        be.set_objective([blk.constr.score], [1.0], sense="max")
        sol = be.solve()
        if sol.status == Status.INFEASIBLE:
            return -np.inf, None
        if sol.status != Status.OPTIMAL:   # unknown: never claim infeasibility
            return np.inf, None
        v = self._rounded(sol.values[blk.v])
        return float(self.embedding.score(v[None, :])[0]), v

    # ------------------------------------------------------------------ with a budget
    def check(self, z: np.ndarray, F: Iterable[int], k: int, time_limit: float | None = None, prove: bool = True
              ) -> tuple[bool | None, np.ndarray | None, frozenset[int]]:
        """``(answer, v, F')`` for completions of ``z`` on ``F`` plus at most ``k``
        further mutable features: ``True`` with an accepted point ``v`` and the features it
        changes ``F'``; ``False`` (proven: none exists); ``None`` (unknown: the MIP's
        ``time_limit`` passed, or the greedy search failed on a non-additive model and
        ``prove=False`` skipped the MIP)."""
        F = frozenset(int(l) for l in F)
        v = self._greedy(np.asarray(z, dtype=float), F, k)
        if v is not None:
            self.calls["greedy"] += 1
            return True, v, self.changed(z, v)
        if self.form is not None:      # greedy is exact for an additive score: a proof
            self.calls["infeasible"] += 1
            return False, None, frozenset()
        if not prove:
            return None, None, frozenset()
        self.calls["mip"] += 1
        ok, v = self._feasibility_mip(z, F, k, time_limit)
        if ok is None:
            self.calls["unknown"] += 1
        elif not ok:
            self.calls["infeasible"] += 1
        return ok, v, (self.changed(z, v) if v is not None else frozenset())

    def changed(self, z: np.ndarray, v: np.ndarray) -> frozenset[int]:
        """Features where ``v`` differs from ``z``."""
        return frozenset(l for l, f in enumerate(self.space)
                         if np.abs(v[f.columns] - z[f.columns]).max() > TOL)

    def _greedy(self, z: np.ndarray, F: frozenset[int], k: int) -> np.ndarray | None:
        """Best single-feature change first, all candidates scored in one call."""
        lo = self.score_lo
        v: np.ndarray = z.copy()
        score = float(self.embedding.score(v[None, :])[0])
        free = set(F)
        extra = [l for l in range(len(self.space)) if self.mutable[l] and l not in F]
        for _ in range(2 * (len(F) + k) + 2):
            if score >= lo:
                return v
            cand_l = sorted(free) + (extra if k > 0 else [])
            if not cand_l:
                return None
            blocks, owner = [], []
            for l in cand_l:
                opts = self.candidates(l)
                V = np.repeat(v[None, :], len(opts), axis=0)
                V[:, self.space.features_[l].columns] = opts
                blocks.append(V)
                owner.extend([l] * len(opts))
            V = np.vstack(blocks)
            s = self.embedding.score(V)
            j = int(np.argmax(s))
            if s[j] <= score + 1e-12:
                return None
            l = owner[j]
            v, score = V[j].copy(), float(s[j])
            if l not in free:
                free.add(l)
                extra.remove(l)
                k -= 1
        return v if score >= lo else None

    def _feasibility_mip(self, z: np.ndarray, F: frozenset[int], k: int, time_limit: float | None,
                         ) -> tuple[bool | None, np.ndarray | None]:
        space = self.space
        be = make_backend(self.solver, time_limit=time_limit)
        if k == 0:
            _, lb, ub = box_outside(space, z, F)
            blk = add_counterfactual(be, space, self.embedding, self.score_lo, lb, ub)
        else:
            allowed = self.mutable.copy()
            allowed[list(F)] = True
            blk = add_counterfactual(be, space, self.embedding, self.score_lo, can_change=allowed,
                                     Tmax=len(F) + k)
            rows = RowBuffer()
            add_agreement(rows, space, blk, z)
            rows.flush(be)
            if F:
                be.set_bounds(blk.f[sorted(F)], 1.0, 1.0)
        sol = be.solve()
        if sol.status == Status.INFEASIBLE:
            return False, None
        if not sol.status.has_solution:
            return None, None
        v = self._rounded(sol.values[blk.v])
        if float(self.embedding.score(v[None, :])[0]) < self.accept:
            log.debug("completion MIP point rejected by the exact score; answer unknown")
            return None, None
        return True, v

    def _rounded(self, v: np.ndarray) -> np.ndarray:
        v = np.array(v, dtype=float)
        integer = self.space.domain().integer
        v[integer] = np.round(v[integer])
        return v
