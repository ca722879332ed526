r"""Exact completion checks for seed pricing with increase-only features (mode ``"embedded"``).

For a seed :math:`s`, a union :math:`U` of difference sets and lower codes
:math:`\ell` of the increase-only features, the question is whether some change set
:math:`F \supseteq U`, :math:`|F| \le T_{\max}`, admits an accepted completion of
:math:`x_s` with every increase-only feature :math:`l \in F` at least :math:`\ell_l`.
Feasibility is monotone in :math:`F`, so only the maximal sets
:math:`F = U \cup E` (:math:`E` over the other mutable features,
:math:`|F| = \min(T_{\max}, \#\text{mutable})`) are tried, each answered exactly by
:meth:`~groupcf.formulations.completion.Completions.best` without a MIP (closed form for
an additive model, enumeration of every completion of a discrete space) — or "unknown".

With :math:`\ell` the codes of the chosen types, "feasible" gives a column covering all
of them (the seed's relaxation value is attained). With :math:`\ell` the seed's own
codes (every column of seed :math:`s` respects them), "infeasible" holds for every union
:math:`U' \supseteq U`. As a test of the chosen types :math:`K` (:func:`items_test`,
:math:`\ell` = their largest codes) it is monotone — adding types only grows :math:`U`
and :math:`\ell` — so the seed's depth-first search prunes with it and its optimum is the
seed's exact pricing value, no MIP involved.

For a network, a question whose change set holds a continuous feature needs a MIP
(:meth:`~groupcf.formulations.completion.Completions.best`): when every maximal extension
of :math:`U` holds one, "infeasible" cannot be shown here and the search is told so at
once (``refute_only``) instead of enumerating the discrete extensions.
The additive-model tests of mode ``"linear"`` (:func:`linear_union_test`,
:func:`extend_by_gain`) live here too.
"""
from __future__ import annotations

import itertools

import numpy as np

from .subsets import bits

#: most completions one :func:`check_union` call may enumerate (a non-additive model);
#: beyond, the answer is "unknown" at once (measured: Adult MLP(20,20), Tmax = 5 needs
#: millions per type, Tmax = 3 tens of thousands)
BUDGET = 50_000


def check_union(completions, problem, s: int, core, low: np.ndarray, mutable: np.ndarray,
                budget: int = BUDGET, refute_only: bool = False) -> tuple[bool | None, np.ndarray | None, frozenset]:
    """``(True, v, F)`` for an accepted completion of seed ``s`` on a maximal ``F ⊇ core``
    with increase-only features at least ``low``; ``(False, None, ∅)`` when none exists;
    ``(None, None, ∅)`` when some question needed a MIP or more than ``budget``
    completions would be enumerated (module doc). ``refute_only``: the caller only needs
    to know whether the answer is ``False``, so ``None`` is returned as soon as some
    extension is known to need a MIP (then ``False`` is impossible)."""
    core = frozenset(int(l) for l in core)
    rest = [int(l) for l in np.flatnonzero(mutable) if int(l) not in core]
    size = min(problem.Tmax, int(mutable.sum()))
    if len(core) > size:
        return False, None, frozenset()
    unknown = False
    if not completions.additive:
        # a continuous feature needs a MIP (Completions.best): only the extensions made
        # of discrete features can be decided here, the others leave the answer open
        continuous = {l for l in core.union(rest) if problem.space.features_[l].encoding == "continuous"}
        if core & continuous:
            return None, None, frozenset()
        unknown = size > len(core) and any(l in continuous for l in rest)
        if unknown and refute_only:
            return None, None, frozenset()
        rest = [l for l in rest if l not in continuous]
        n = [len(completions.candidates(l, float(low[l]))) for l in rest]
        base = int(np.prod([len(completions.candidates(l, float(low[l]))) for l in core])) if core else 1
        if base * _sum_of_products(n, size - len(core)) > budget:
            return None, None, frozenset()
    extensions = itertools.combinations(rest, size - len(core))
    for extra in extensions:
        F = core | frozenset(extra)
        score, v = completions.best(problem.Z[s], F, low, allow_mip=False)
        if v is None:
            unknown |= score > 0          # +inf: a MIP would be needed
            continue
        if score >= problem.score_lo:
            return True, v, F
    return (None if unknown else False), None, frozenset()


def _sum_of_products(n: list[int], k: int) -> int:
    """Sum over the ``k``-subsets of ``n`` of their products (the elementary symmetric
    polynomial of degree ``k``): how many completions the extensions enumerate."""
    e = [1] + [0] * k
    for x in n:
        for j in range(k, 0, -1):
            e[j] += e[j - 1] * x
    return e[k] if k >= 0 else 0


def lower_codes(problem, inc: np.ndarray, members) -> np.ndarray:
    """Lowest codes of the increase-only features ``inc`` (bool) covering ``members``."""
    return np.where(inc, problem.codes[np.asarray(members)].max(axis=0), 0.0)


def items_test(completions, problem, s: int, ks: np.ndarray, unit: np.ndarray, inc: np.ndarray,
               mutable: np.ndarray, memo: dict | None = None):
    """``(union, chosen units) -> bool`` for the seed's search: ``False`` only when
    :func:`check_union` proves that no completion covers the chosen types (``ks``: the
    candidate types, ``unit``: each one's unit); memoised on the union and lower codes in
    ``memo`` (answers do not depend on the duals: pass the seed's dict to keep them across
    pricing rounds)."""
    memo = {} if memo is None else memo
    cols = np.flatnonzero(inc)
    # each unit's largest codes on the increase-only features
    unit_low = np.full((int(unit.max()) + 1 if len(unit) else 0, len(cols)), -np.inf)
    np.maximum.at(unit_low, unit, problem.codes[np.ix_(ks, cols)])

    def test(U, chosen) -> bool:
        top = unit_low[chosen].max(axis=0)
        key = (int(U), top.tobytes())
        hit = memo.get(key)
        if hit is None:
            low = np.zeros(problem.n_features)
            low[cols] = top
            hit = memo[key] = check_union(completions, problem, s, bits(int(U)), low, mutable,
                                          refute_only=True)[0] is not False
        return hit
    return test


def linear_union_test(g: np.ndarray, need: float, Tmax: int):
    """Monotone feasibility of a union of difference sets (bitmask) for an additive model
    without increase-only features: the union's gains ``g`` (per feature, ≥ 0; 0 for
    immutable ones) plus the best further ``Tmax - |union|`` gains reach ``need``."""
    order = np.argsort(-g, kind="stable")          # features by gain, best first
    g_sorted = g[order]
    shifts = order.astype(np.int64)

    def feasible(U) -> bool:
        inside = ((np.int64(U) >> shifts) & 1).astype(bool)     # in gain order
        extra = g_sorted[~inside][: Tmax - int(inside.sum())]
        return float(g_sorted[inside].sum() + extra.sum()) >= need

    return feasible


def extend_by_gain(g: np.ndarray, core, Tmax: int) -> frozenset:
    """``core`` plus the further features of largest positive gain ``g`` (``-inf``: not
    allowed), up to ``Tmax`` features."""
    g = g.copy()
    g[list(core)] = -np.inf
    k = Tmax - len(core)
    extra = [int(l) for l in np.argsort(-g, kind="stable")[:k] if np.isfinite(g[l]) and g[l] > 0]
    return frozenset(core) | frozenset(extra)
