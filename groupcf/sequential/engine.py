r"""Decoding random keys and evaluating a whole population of action sequences in numpy.

Genotype (Naumann & Ntoutsi 2021, §4): ``2A`` genes in ``[0, 1]`` for ``A`` actions. Key
gene ``j`` says whether action ``j`` is used (``key <= 0.5``) and where (the used actions
run in ascending key order); value gene ``A + j`` maps linearly onto action ``j``'s range
``lo + g (hi - lo)`` (evaluated in the state the action meets), or, for a ``set`` action,
to the category ``values[min(floor(g k), k - 1)]``.

Costs (paper eqs. 1-2): an action's cost is ``c_i = b_i(x_{t-1}, x_t) g_i(x_{t-1})`` with
``g_i`` the mean, over the features the action changed that have incoming dependency edges,
of ``ĝ_h(x_{t-1}) = mean_k tau_kh(x_{t-1})`` (``g_i = 1`` if there is none).

The rollout runs step by step; at step ``t`` every action is applied at once to all rows
whose ``t``-th action it is, so one generation costs ``A^2`` vectorised action calls and
one batched model evaluation.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from groupcf.models import TrainedModel
from groupcf.sequential.actions import (
    Action,
    ActionSet,
    Condition,
    DependencyGraph,
    StateView,
)


def decode_keys(K: np.ndarray) -> np.ndarray:
    """Key genes ``(m, A)`` -> action indices in execution order ``(m, A)``, ``-1`` padded."""
    K = np.atleast_2d(K)
    used = K <= 0.5
    order = np.argsort(np.where(used, K, np.inf), axis=1, kind="stable")
    return np.where(np.arange(K.shape[1])[None, :] < used.sum(1)[:, None], order, -1)


def decode_value(a: Action, gene: np.ndarray, before: StateView) -> np.ndarray:
    """Value gene(s) -> tweak value (``add``) or category (``set``, clamped index)."""
    gene = np.asarray(gene, float)
    if a.kind == "set":
        k = len(a.choices)
        return a.choices[np.clip(np.floor(gene * k).astype(np.int64), 0, k - 1)]
    lo, hi = a.value_range(before)
    return lo + gene * (hi - lo)


def apply_action(a: Action, B: np.ndarray, v: np.ndarray, index: Mapping[str, int],
                 decimals: int | None) -> np.ndarray:
    """The states after ``a`` with values ``v`` from the states ``B`` (rows).

    With ``decimals`` the direct feature is rounded first and a linear consequence moves by
    its factor times that rounded change (``Action``: "the feature changes by factor times
    the direct change"); then the whole state is rounded."""
    A = B.copy()
    f = index[a.feature]
    A[:, f] = B[:, f] + v if a.kind == "add" else v
    if decimals is not None:        # consequences follow the direct change as rounded, so a
        A[:, f] = np.round(A[:, f], decimals)   # tweak that rounds to no change moves nothing
    before = StateView(B, index)
    for g, eff in a.consequences.items():
        fn = eff[0] if isinstance(eff, tuple) else eff
        if callable(fn):
            A[:, index[g]] = fn(before, StateView(A, index))
        else:
            A[:, index[g]] += float(fn) * (A[:, f] - B[:, f])
    return np.round(A, decimals) if decimals is not None else A


def check_conditions(a: Action, before: StateView, after: StateView) -> np.ndarray:
    """Whether each state satisfies the action's pre- and post-conditions."""
    ok = np.ones(before.S.shape[0], dtype=bool)
    for c in a.pre:
        ok &= np.asarray(c(before, None) if isinstance(c, Condition) else c(before), bool)
    for c in a.post:
        ok &= np.asarray(c(before, after), bool)
    return ok


def discount(a: Action, graph: DependencyGraph | None, before: StateView,
             changed: np.ndarray, index: Mapping[str, int]) -> np.ndarray:
    """Eq. (2): ``g_i`` per row (``changed``: the rows' changed-feature mask)."""
    m = before.S.shape[0]
    if graph is None:
        return np.ones(m)
    num, den = np.zeros(m), np.zeros(m)
    for h in a.changed_features():
        if h in graph.incoming:
            mask = changed[:, index[h]]
            num += np.where(mask, graph.g_hat(h, before), 0.0)
            den += mask
    return np.where(den > 0, num / np.maximum(den, 1), 1.0)


@dataclass
class Problem:
    """Everything a rollout needs.

    ``model``: the classifier resolved by :func:`groupcf.models.resolve_encoded` (its
    ``margin`` of x-space states is ``>= 0`` where it accepts; its ``embedding``, when
    there is one, is what the certified bound puts into a MIP).
    """

    x0: np.ndarray
    actions: ActionSet
    model: TrainedModel
    graph: DependencyGraph | None = None
    decimals: int | None = None
    min_change: float = 1e-9
    discounted: bool = False          # objective 1: discounted (cscf) or plain (scf) cost
    ranges: np.ndarray | None = None  # Gower: numeric range per feature (nan: categorical)
    max_length: int | None = None     # Tmax: the most actions in a sequence (None: no limit)

    @property
    def n_genes(self) -> int:
        return 2 * len(self.actions)

    def replay(self, steps):
        """``(cost, discounted cost, probabilities, final state)`` of a sequence, every
        step checked (:func:`groupcf.sequential.result.replay`)."""
        from groupcf.sequential.result import replay
        return replay(self, steps)

    def accepts(self, state: np.ndarray) -> bool:
        """Whether the model accepts ``state``."""
        return bool(self.model.margin(np.atleast_2d(state))[0] >= 0)


@dataclass
class Rollout:
    """Decoded sequences of a population: steps, values, costs, final states, margins."""

    steps: np.ndarray        # (m, A) action indices, -1 padded
    values: np.ndarray       # (m, A) value applied at each step
    valid: np.ndarray        # (m,) every step valid
    cost: np.ndarray         # (m,) sum b_i
    disc_cost: np.ndarray    # (m,) sum b_i g_i
    counts: np.ndarray       # (m, n) how often each feature changed
    final: np.ndarray        # (m, n) final states
    margin: np.ndarray       # (m,) model margin at the final state
    distance: np.ndarray     # (m,) Gower distance start -> final
    states: list[np.ndarray] | None = None   # per step t: (m, n) states after step t (record=True)
    step_costs: np.ndarray | None = None

    @property
    def length(self) -> np.ndarray:
        return (self.steps >= 0).sum(1)

    @property
    def feasible(self) -> np.ndarray:
        return self.valid & (self.length > 0) & (self.margin >= 0)


def gower(problem: Problem, X: np.ndarray) -> np.ndarray:
    """Gower distance of each row of ``X`` to the start state (``problem.ranges`` set)."""
    r = problem.ranges
    if r is None:
        raise ValueError("the Gower distance needs the features' ranges (problem.ranges)")
    D = np.abs(X - problem.x0[None, :])
    cat = np.isnan(r)
    d: np.ndarray = np.where(cat[None, :], D > 0, D / np.where(cat, 1.0, r)[None, :])
    return d.sum(1) / X.shape[1]


def rollout(problem: Problem, G: np.ndarray, record: bool = False) -> Rollout:
    """Decode and evaluate the genotypes ``G`` (``(m, 2A)``) all at once."""
    G = np.atleast_2d(G)
    aset, idx = problem.actions, problem.actions.index
    m, nA, n = G.shape[0], len(problem.actions), len(problem.x0)
    steps = decode_keys(G[:, :nA])
    S = np.tile(problem.x0, (m, 1))
    values = np.full((m, nA), np.nan)
    step_costs = np.zeros((m, nA))
    valid = np.ones(m, dtype=bool)
    cost, disc = np.zeros(m), np.zeros(m)
    counts = np.zeros((m, n))
    states: list[np.ndarray] | None = [] if record else None
    for t in range(nA):
        col = steps[:, t]
        if not (col >= 0).any():
            break
        for j, a in enumerate(aset):
            rows = np.flatnonzero(col == j)
            if rows.size == 0:
                continue
            B = S[rows]
            before = StateView(B, idx)
            v = decode_value(a, G[rows, nA + j], before)
            A = apply_action(a, B, v, idx, problem.decimals)
            after = StateView(A, idx)
            changed = np.abs(A - B) >= problem.min_change
            ok = check_conditions(a, before, after) & changed.any(1)
            f = idx[a.feature]
            b = a.cost(before, after, A[:, f] - B[:, f], B[:, f])
            ok &= np.isfinite(b)
            b = np.where(np.isfinite(b), b, 0.0)
            d = discount(a, problem.graph, before, changed, idx)
            valid[rows] &= ok
            cost[rows] += b
            disc[rows] += b * d
            counts[rows] += changed
            step_costs[rows, t] = b * d if problem.discounted else b
            values[rows, t] = v
            S[rows] = A
        if states is not None:              # record
            states.append(S.copy())
    dist = gower(problem, S) if problem.ranges is not None else np.zeros(m)
    return Rollout(steps, values, valid, cost, disc, counts, S, problem.model.margin(S),
                   dist, states, step_costs)


def objectives(problem: Problem, r: Rollout) -> np.ndarray:
    """Objective matrix (all minimised): cost (discounted for cscf), per-feature change
    counts of the changeable features, Gower distance (2 decimals)."""
    mut = [problem.actions.index[f] for f in problem.actions.mutable]
    c = r.disc_cost if problem.discounted else r.cost
    return np.column_stack([c, r.counts[:, mut], np.round(r.distance, 2)])


def violation(problem: Problem, r: Rollout) -> np.ndarray:
    """Constraint violation (0 = feasible): rejection margin, plus 1 per broken rule."""
    v = np.maximum(0.0, -r.margin) + (~r.valid) + (r.length == 0)
    if problem.max_length is not None:     # Tmax: one unit per action beyond the limit
        v = v + np.maximum(0, r.length - problem.max_length)
    return v.astype(float)


def feature_ranges(features: Sequence[str], numeric: Mapping[str, float] | None,
                   categorical: Sequence[str] = ()) -> np.ndarray:
    """Gower ranges per feature: given numeric ranges, ``nan`` for categorical, 1 else."""
    out = np.ones(len(features))
    numeric = numeric or {}
    for i, f in enumerate(features):
        if f in categorical:
            out[i] = np.nan
        elif f in numeric:
            out[i] = max(float(numeric[f]), 1e-12)
    return out
