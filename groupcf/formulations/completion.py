r"""Does an instance have an accepted completion on a change set, possibly extended?

The question behind every column (design §3): for an instance :math:`x` (expanded), a
set :math:`F` of features that may change and a budget :math:`k`, is there a point
:math:`v` equal to :math:`x` outside :math:`F \cup E` for some
:math:`E \subseteq \text{mutable} \setminus F`, :math:`|E| \le k`, with
:math:`\mathrm{score}(v) \ge \tau + \varepsilon`? Feasibility is monotone in
:math:`F` and in :math:`k`.

:class:`CompletionChecker` answers it in two steps:

1. **Greedy search in numpy** (certain when it succeeds): from :math:`x`, repeatedly
   apply the single-feature change (any category of a feature in :math:`F`, or of a
   further feature while the budget lasts) that raises the model's exact score most,
   all candidates scored in one batched call, until the score clears the threshold or no
   change improves it.
   For a linear score (logistic regression) the greedy search is exact — every
   feature's gain is independent, so it frees the features of :math:`F` and the
   :math:`k` largest further gains — and its failure is a proof.
2. **A feasibility MIP** otherwise: the counterfactual block with the agreement rows of
   :math:`x`, :math:`f_l = 1` on :math:`F` and :math:`\sum_l f_l \le |F| + k`; with
   :math:`k = 0` the free set is known, so :math:`v` is fixed by bounds outside
   :math:`F` and the network's big-M constants are computed over that small box only.
   Infeasible is a proof; a MIP stopped by its time limit answers "unknown".
"""
from __future__ import annotations

import logging

import numpy as np

from ..solvers import make_backend
from ..solvers.base import Status
from .blocks import add_agreement, add_counterfactual, box_outside
from .rows import RowBuffer

log = logging.getLogger(__name__)


class CompletionChecker:
    """See the module docstring. ``problem`` supplies the space, the embedding, the
    threshold ``score_lo`` and the expanded types ``Z``."""

    def __init__(self, problem, solver="highs"):
        self.problem, self.solver = problem, solver
        self.space = problem.space
        self.emb = problem.tm.embedding
        self.mutable = np.array([not f.immutable and not f.increase_only for f in self.space])
        self._options = [self._values(f) for f in self.space]
        self.linear = getattr(self.emb, "is_linear", False)
        self.calls = {"greedy": 0, "mip": 0, "infeasible": 0, "unknown": 0}

    @staticmethod
    def _values(feat) -> np.ndarray:
        """The candidate values of one feature over its expanded columns."""
        k = len(feat.columns)
        if feat.encoding == "onehot":
            return np.eye(k)
        return np.array([[0.0], [1.0]])     # binary, or a continuous column's extremes

    def check(self, z: np.ndarray, F, k: int, time_limit: float | None = None, prove: bool = True
              ) -> tuple[bool | None, np.ndarray | None, frozenset]:
        """``(answer, v, F')``: ``True`` with an accepted point ``v`` and the features it
        changes ``F'``; ``False`` (proven infeasible); ``None`` (unknown, e.g. the MIP's
        ``time_limit`` passed, or the greedy search failed on a network and
        ``prove=False`` skipped the MIP)."""
        F = frozenset(int(l) for l in F)
        v = self._greedy(z, F, k)
        if v is not None:
            self.calls["greedy"] += 1
            return True, v, self._changed(z, v)
        if self.linear:          # greedy is exact for a linear score: a proof
            self.calls["infeasible"] += 1
            return False, None, frozenset()
        if not prove:
            return None, None, frozenset()
        self.calls["mip"] += 1
        ok, v = self._mip(z, F, k, time_limit)
        if ok is None:
            self.calls["unknown"] += 1
        elif not ok:
            self.calls["infeasible"] += 1
        return ok, v, (self._changed(z, v) if v is not None else frozenset())

    def _changed(self, z, v) -> frozenset:
        return frozenset(l for l, f in enumerate(self.space)
                         if np.abs(v[f.columns] - z[f.columns]).max() > 1e-9)

    def _greedy(self, z: np.ndarray, F: frozenset, k: int) -> np.ndarray | None:
        lo = self.problem.score_lo
        v = z.astype(float).copy()
        score = float(self.emb.score(v[None, :])[0])
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
                opts = self._options[l]
                V = np.repeat(v[None, :], len(opts), axis=0)
                V[:, self.space.features_[l].columns] = opts
                blocks.append(V)
                owner.extend([l] * len(opts))
            V = np.vstack(blocks)
            s = self.emb.score(V)
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

    def _mip(self, z: np.ndarray, F: frozenset, k: int, time_limit) -> tuple[bool | None, np.ndarray | None]:
        space, p = self.space, self.problem
        dom = space.domain()
        be = make_backend(self.solver, time_limit=time_limit)
        if k == 0:
            _, lb, ub = box_outside(space, z, F)
            blk = add_counterfactual(be, space, self.emb, p.score_lo, lb, ub)
        else:
            allowed = self.mutable.copy()
            allowed[list(F)] = True
            blk = add_counterfactual(be, space, self.emb, p.score_lo, can_change=allowed, Tmax=len(F) + k)
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
        v = sol.x[blk.v]
        v[dom.integer] = np.round(v[dom.integer])
        if float(self.emb.score(v[None, :])[0]) < p.tm.logit_threshold:
            log.debug("completion MIP point rejected by the exact score; answer unknown")
            return None, None
        return True, v
