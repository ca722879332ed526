"""Feasibility of a change set: does some completion make the model accept?

For a change set ``F`` and an instance type ``x`` (or a class of types equal outside
``F``), the counterfactuals that can cover it are the points ``v`` equal to ``x`` outside
``F``, free on ``F`` (increase-only features not below a given lower code). Whether one is
classified positive is monotone in ``F`` and the same for the whole class (design §3).

:class:`FeasibilityOracle` answers "the best score over those completions" exactly:

* a logistic model (one linear layer) in closed form: each free feature contributes its
  best allowed weight;
* any other embedding by enumerating the completions in one vectorised numpy call when
  there are at most ``max_enumeration`` of them;
* otherwise (or with a free continuous feature) by a small MIP maximising the score
  with the outside features fixed; when that MIP is not solved to optimality the answer
  is ``(+inf, None)``: "unknown", which callers must treat as possibly feasible.

Answers are cached, keyed on the fixed part and the free set.
"""
from __future__ import annotations

import itertools
import logging

import numpy as np

from ..formulations.blocks import add_counterfactual, box_outside
from ..solvers import make_backend
from ..solvers.base import Status

log = logging.getLogger(__name__)


class FeasibilityOracle:
    def __init__(self, problem, solver="highs", max_enumeration: int = 4096):
        self.problem = problem
        self.solver = solver
        self.max_enumeration = max_enumeration
        self.space = problem.space
        emb = problem.tm.embedding
        self.linear = getattr(emb, "is_linear", False)
        if self.linear:
            W, b = emb.layers[0]
            self.w, self.b = W[0], float(b[0])
        self.cache: dict = {}
        self.calls = {"closed_form": 0, "enumeration": 0, "mip": 0, "cached": 0}

    # ------------------------------------------------------------------ domain
    def _allowed(self, l: int, low: float) -> list[np.ndarray]:
        """The allowed expanded values of free feature ``l`` (codes >= ``low`` for
        increase-only features), as small vectors over its columns."""
        f = self.space.features_[l]
        k = len(f.columns)
        if f.encoding == "onehot":
            start = int(low) if f.increase_only else 0
            return [np.eye(k)[c] for c in range(start, k)]
        if f.encoding == "binary":
            return [np.array([1.0])] if (f.increase_only and low >= 0.5) else [np.array([0.0]), np.array([1.0])]
        lo = low if f.increase_only else 0.0
        return [np.array([lo]), np.array([1.0])]   # continuous: extremes (exact for linear)

    def best(self, z: np.ndarray, F, low: np.ndarray | None = None,
             allow_mip: bool = True) -> tuple[float, np.ndarray]:
        """``(best score, argmax v)`` over completions of ``z`` (expanded) on features
        ``F``; ``low[l]`` is the lowest code allowed for an increase-only feature. With
        ``allow_mip=False`` a question that needs a MIP is answered "unknown"
        (``(+inf, None)``) instead."""
        F = tuple(sorted(int(l) for l in F))
        space = self.space
        low = np.zeros(len(space)) if low is None else low
        lows = tuple(float(low[l]) for l in F)
        fixed, lb, ub = box_outside(space, z, F)
        key = (np.round(z[fixed], 9).tobytes(), F, lows)
        hit = self.cache.get(key)
        if hit is not None:
            self.calls["cached"] += 1
            return hit
        allowed = [self._allowed(l, lo) for l, lo in zip(F, lows)]
        n_comb = int(np.prod([len(a) for a in allowed])) if allowed else 1
        v = z.copy()
        continuous = any(space.features_[l].encoding == "continuous" for l in F)
        if self.linear:
            self.calls["closed_form"] += 1
            for l, opts in zip(F, allowed):
                cols = space.features_[l].columns
                v[cols] = max(opts, key=lambda o: float(self.w[cols] @ o))
            res = (float(self.w @ v + self.b), v)
        elif n_comb <= self.max_enumeration and not continuous:
            self.calls["enumeration"] += 1
            V = np.repeat(z[None, :], n_comb, axis=0)
            for r, combo in enumerate(itertools.product(*allowed)):
                for l, o in zip(F, combo):
                    V[r, space.features_[l].columns] = o
            s = self.problem.tm.embedding.score(V)
            j = int(np.argmax(s))
            res = (float(s[j]), V[j])
        elif not allow_mip:
            return np.inf, None
        else:
            self.calls["mip"] += 1
            res = self._mip(F, lows, lb, ub)
        self.cache[key] = res
        return res

    def _mip(self, F, lows, lb, ub) -> tuple[float, np.ndarray]:
        space = self.space
        dom = space.domain()
        lb, ub = lb.copy(), ub.copy()
        for l, lo in zip(F, lows):
            f = space.features_[l]
            if f.increase_only:
                if f.encoding == "onehot":
                    ub[f.columns[: int(lo)]] = 0.0
                else:
                    lb[f.columns] = lo
        be = make_backend(self.solver, mip_gap=1e-9)
        blk = add_counterfactual(be, space, self.problem.tm.embedding, None, lb, ub)
        be.set_objective([blk.constr.score], [1.0], sense="max")
        sol = be.solve()
        if sol.status == Status.INFEASIBLE:
            return -np.inf, None
        if sol.status != Status.OPTIMAL:   # unknown: never claim infeasibility
            return np.inf, None
        v = sol.x[blk.v]
        v[dom.integer] = np.round(v[dom.integer])
        return float(self.problem.tm.embedding.score(v[None, :])[0]), v

    def feasible(self, z: np.ndarray, F, low: np.ndarray | None = None, allow_mip: bool = True) -> bool:
        """Whether some completion is accepted (``True`` when unknown)."""
        return self.best(z, F, low, allow_mip)[0] >= self.problem.score_lo
