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
                budget: int = BUDGET) -> tuple[bool | None, np.ndarray | None, frozenset]:
    """``(True, v, F)`` for an accepted completion of seed ``s`` on a maximal ``F ⊇ core``
    with increase-only features at least ``low``; ``(False, None, ∅)`` when none exists;
    ``(None, None, ∅)`` when some question needed a MIP or more than ``budget``
    completions would be enumerated (module doc)."""
    core = frozenset(int(l) for l in core)
    rest = [int(l) for l in np.flatnonzero(mutable) if int(l) not in core]
    size = min(problem.Tmax, int(mutable.sum()))
    if len(core) > size:
        return False, None, frozenset()
    extensions = list(itertools.combinations(rest, size - len(core)))
    if not completions.additive:
        n = {l: len(completions.candidates(l, float(low[l]))) for l in core.union(rest)}
        base = int(np.prod([n[l] for l in core])) if core else 1
        if sum(base * int(np.prod([n[l] for l in e])) for e in extensions) > budget:
            return None, None, frozenset()
    unknown = False
    for extra in extensions:
        F = core | frozenset(extra)
        score, v = completions.best(problem.Z[s], F, low, allow_mip=False)
        if v is None:
            unknown |= score > 0          # +inf: a MIP would be needed
            continue
        if score >= problem.score_lo:
            return True, v, F
    return (None if unknown else False), None, frozenset()


def lower_codes(problem, inc: np.ndarray, members) -> np.ndarray:
    """Lowest codes of the increase-only features ``inc`` (bool) covering ``members``."""
    return np.where(inc, problem.codes[np.asarray(members)].max(axis=0), 0.0)


def items_test(completions, problem, s: int, ks: np.ndarray, unit: np.ndarray, inc: np.ndarray,
               mutable: np.ndarray):
    """``(union, chosen units) -> bool`` for the seed's search: ``False`` only when
    :func:`check_union` proves that no completion covers the chosen types (``ks``: the
    candidate types, ``unit``: each one's unit); memoised on the union and lower codes."""
    memo: dict = {}
    cols = np.flatnonzero(inc)

    def test(U, chosen) -> bool:
        members = ks[np.isin(unit, chosen)]
        key = (int(U), problem.codes[np.ix_(members, cols)].max(axis=0).tobytes())
        if key not in memo:
            low = lower_codes(problem, inc, members)
            memo[key] = check_union(completions, problem, s, bits(int(U)), low, mutable)[0] is not False
        return memo[key]
    return test
