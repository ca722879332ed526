r"""Every maximal column of an additive model, increase-only features included (issue 14).

For an additive score :math:`\mathrm{score}(v) = b + \sum_l g_l(v_l)` (logistic
regression, linear classifiers), whether a column :math:`(v, F)` exists for a set of types
is a closed form. Coverage is monotone in :math:`F`, so only the change sets of size
:math:`k = \min(T_{\max}, \#\text{mutable})` matter. Fix one, :math:`F`, and a class
:math:`K` of types equal outside :math:`F` (their score outside :math:`F` is a common
:math:`\beta_K`). Let :math:`I = F \cap \{\text{increase-only}\}`.

* :math:`I = \emptyset`: the class is covered whole iff
  :math:`\beta_K + \sum_{l \in F} \max_u g_l(u) \ge \tau` (the only case listed up front
  before this module).
* :math:`I \ne \emptyset`: a point covers :math:`k \in K` only if :math:`v_l \ge x_{kl}`
  for :math:`l \in I`. For thresholds :math:`t \in \mathbb{R}^I` the set
  :math:`K(t) = \{k \in K : x_{kl} \le t_l\ \forall l \in I\}` is covered by one point iff

  .. math::

      \beta_K + \sum_{l \in F \setminus I} \max_u g_l(u)
      + \sum_{l \in I} \max_{u \ge t_l} g_l(u) \;\ge\; \tau ,

  non-increasing in every :math:`t_l`. Any feasible column :math:`(v, F')` covers a set
  :math:`K' \subseteq K(t)` for some :math:`F \supseteq F'` of size :math:`k`, its class
  :math:`K \supseteq K'` and :math:`t_l = \max_{k \in K'} x_{kl}` (a member's code) —
  feasible, since :math:`v` itself reaches :math:`\tau`. So the maximal columns are the
  :math:`K(t)` of the *staircase*: for every combination of member codes on
  :math:`I` minus its last feature, the largest feasible member code on the last one.

The result is the complete column set: pricing over it is a matrix product and the set
cover over it is the exact optimum, with every chosen cover turned into an accepted point
by the closed-form completion with lower codes :math:`t` (its exact coverage recomputed;
it contains the enumerated cover). Covers are told apart by the wrapping sum of random
64-bit ids of their members (a collision, probability about ``m² / 2⁶⁴`` for ``m``
covers, would drop one; the same device as :mod:`~groupcf.group.enumeration`).
``None`` (the caller falls back to seed pricing and
branch-and-price) when a class's staircase exceeds ``max_staircase`` combinations, the
cover matrix ``max_cells`` cells or the deadline passes.
"""
from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..exceptions import SolverError
from ..formulations.completion import Completions
from .enumeration import class_covers, classes_of
from .formulations.master import set_cover_by_components
from .problem import Column, GroupProblem

log = logging.getLogger(__name__)

#: codes within this distance are the same value
TOL = 1e-9


@dataclass
class CompleteColumns:
    """Distinct maximal covers (``covers``, bool, covers × types), each with a change set,
    a member type and lower codes from which :meth:`column` builds its point."""

    problem: GroupProblem
    completions: Completions
    sets: list[frozenset]
    covers: np.ndarray
    set_of: np.ndarray           # change-set index per cover
    seed: np.ndarray             # a member type per cover
    low: np.ndarray              # lower codes per cover (covers × features; 0 off I)

    def __len__(self) -> int:
        return len(self.covers)

    def __repr__(self) -> str:
        return f"CompleteColumns({len(self)} covers over {len(self.sets)} change sets)"

    def column(self, j: int) -> Column:
        """The column of cover ``j``: the closed-form completion of its member on its change
        set with its lower codes; its exact coverage contains the cover."""
        F = self.sets[self.set_of[j]]
        v = self.completions.completion(self.problem.Z[self.seed[j]], F, self.low[j])
        col = self.problem.make_column(v, F, "enumeration")
        if (self.covers[j] & ~col.cover).any():
            raise SolverError(f"internal error: complete column {j} does not cover its enumerated types")
        return col

    def solve(self, active: np.ndarray, solver, deadline, incumbent: Sequence[Column] = ()
              ) -> tuple[int, list[Column] | None]:
        """The exact optimum over the ``active`` types: ``(lower bound, optimal columns or
        None when a set cover stopped at the deadline)``.

        The set cover separates over the connected components of the types–covers graph
        (no cover reaches two of them), so each is solved alone, smallest first; the
        bound is the sum of the components' bounds. The ``incumbent`` columns (a cover
        found before) enter too, as MIP starts: each lies inside a complete cover, so
        the optimum is unchanged."""
        extra = [c for c in incumbent if (c.cover & active).any()]
        A = np.vstack([self.covers] + [c.cover[None, :] for c in extra]) & active
        cols = np.flatnonzero(A.any(axis=1))
        start = (cols >= len(self.covers)).astype(float) if extra else None
        lower, chosen = set_cover_by_components(A[np.ix_(cols, np.flatnonzero(active))], solver, deadline, start)
        if chosen is None:
            return lower, None
        n = len(self.covers)
        return lower, [self.column(j) if j < n else extra[j - n] for j in cols[chosen]]


def complete_columns(problem: GroupProblem, completions, sets, deadline=None, max_staircase: int = 20_000,
                     max_cells: int = 50_000_000) -> CompleteColumns | None:
    """Every maximal column for the change sets ``sets`` (module doc), or ``None``;
    ``max_cells`` caps the cover matrix (distinct covers × types)."""
    form = completions.form
    if form is None:
        raise TypeError("complete columns need an additive model (Embedding.additive())")
    space, Z, codes = problem.space, problem.Z, problem.codes
    n, L = problem.n_types, problem.n_features
    w = form.weights
    inc = np.array([f.increase_only and not f.immutable for f in space])
    own = np.column_stack([Z[:, f.columns] @ w[f.columns] for f in space])
    best_free = np.array([float((completions.candidates(l) @ w[f.columns]).max()) for l, f in enumerate(space)])
    # the best contribution of feature l with its lower code at each type's own code
    best_own = np.zeros((n, L))
    for l in np.flatnonzero(inc):
        cols = space.features_[l].columns
        best_own[:, l] = [float((completions.candidates(int(l), float(c)) @ w[cols]).max()) for c in codes[:, l]]
    s = form.score(Z)
    member = np.random.default_rng(54321).integers(1, 2**63, size=n, dtype=np.uint64)
    P = int(inc.sum())
    acc = _Accumulator(P)
    lo = problem.score_lo
    for j, F in enumerate(sets):
        if deadline is not None and j % 256 == 0 and deadline.passed:
            return None
        Fl = sorted(F)
        I = [l for l in Fl if inc[l]]
        first, cls, _ = classes_of(problem.outside_keys(Fl), member)
        base = s - own[:, Fl].sum(axis=1) + best_free[[l for l in Fl if not inc[l]]].sum()
        if len(I) > 1:
            res = _staircases(cls, first, codes[:, I], base, best_own[:, I], lo, max_staircase)
            if res is None:
                return None
            if res:
                acc.add(np.array([member[m].sum(dtype=np.uint64) for _, m in res], dtype=np.uint64), j,
                        np.array([m[0] for _, m in res]), np.array([t for t, _ in res]))
        elif not I:
            ok = np.flatnonzero(base[first] >= lo)
            inside = np.isin(cls, ok)
            t = np.zeros((len(first), 0))
        else:
            l = I[0]
            feas = base + best_own[:, l] >= lo
            t1 = np.full(len(first), -np.inf)
            np.maximum.at(t1, cls[feas], codes[feas, l])
            ok = np.flatnonzero(np.isfinite(t1))
            inside = codes[:, l] <= t1[cls] + TOL
            t = t1[:, None]
        if len(I) <= 1 and len(ok):
            ident = np.zeros(len(first), dtype=np.uint64)
            np.add.at(ident, cls[inside], member[inside])
            # a member of each cover: the first type of the class inside it
            rep = np.full(len(first), -1)
            where = np.flatnonzero(inside)[::-1]
            rep[cls[where]] = where
            acc.add(ident[ok], j, rep[ok], t[ok])
        if acc.distinct * n > max_cells:
            log.debug("complete columns: over %d distinct covers", max_cells // n)
            return None
    set_of, seeds, ts = acc.result()
    covers = class_covers(problem, sets, set_of, seeds)
    lows = np.zeros((len(seeds), L))
    for r in range(len(seeds)):
        I = [l for l in sorted(sets[set_of[r]]) if inc[l]]
        if I:               # the class's members at or below the thresholds
            lows[r, I] = ts[r, : len(I)]
            covers[r] &= (codes[:, I] <= lows[r, I] + TOL).all(axis=1)
    log.debug("complete columns: %d covers over %d change sets", len(covers), len(sets))
    return CompleteColumns(problem, completions, list(sets), covers, set_of, seeds, lows)


class _Accumulator:
    """Distinct covers by identity (the wrapping sum of their members' random ids), each
    with its change set, a member and its thresholds (padded to ``width``); deduplicated in
    batches so that memory follows the distinct covers, not every (change set, class)."""

    BATCH = 200_000

    def __init__(self, width: int):
        self.width = width
        self.parts: list[tuple] = []
        self.pending = 0
        self.distinct = 0

    def add(self, ident, j: int, seeds, t) -> None:
        T = np.zeros((len(ident), self.width))
        T[:, : t.shape[1]] = t
        self.parts.append((ident, np.full(len(ident), j), np.asarray(seeds), T))
        self.pending += len(ident)
        if self.pending > self.BATCH:
            self._merge()

    def _merge(self) -> None:
        ident, js, seeds, T = (np.concatenate(a) for a in zip(*self.parts))
        _, pick = np.unique(ident, return_index=True)
        pick.sort()                                # keep the first occurrence, in order
        self.parts = [(ident[pick], js[pick], seeds[pick], T[pick])]
        self.pending = self.distinct = len(pick)

    def result(self):
        if not self.parts:
            return np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros((0, self.width))
        self._merge()
        _, js, seeds, T = self.parts[0]
        return js, seeds, T


def _staircases(cls, first, C, base, B, lo, cap):
    """Per class with two or more increase-only features in ``F``: the maximal feasible
    threshold vectors (module doc) as ``(t, members)``; ``None`` over ``cap``.
    ``C``/``B``: the types' codes and best contributions at their own codes on ``I``."""
    out = []
    order = np.argsort(cls, kind="stable")
    bounds = np.searchsorted(cls[order], np.arange(len(first) + 1))
    for c in range(len(first)):
        m = order[bounds[c]: bounds[c + 1]]
        Cm, Bm, b = C[m], B[m], float(base[m[0]])
        values = [np.unique(Cm[:, d]) for d in range(C.shape[1] - 1)]
        if math.prod(len(v) for v in values) > cap:
            return None
        for combo in itertools.product(*values):
            tv = np.array(combo)
            # members at or below the thresholds on the first dimensions
            below = (Cm[:, :-1] <= tv + TOL).all(axis=1)
            # best contribution at threshold t_d: that of any member whose code is t_d
            gain = sum(float(Bm[np.flatnonzero(np.abs(Cm[:, d] - tv[d]) <= TOL)[0], d]) for d in range(len(tv)))
            feas = below & (b + gain + Bm[:, -1] >= lo)
            if not feas.any():
                continue
            t_last = float(Cm[feas, -1].max())
            members = m[below & (Cm[:, -1] <= t_last + TOL)]
            out.append((np.r_[tv, t_last], members))
    return out
