r"""Pricing by enumeration: every action, when the action space is finite and small.

**The finite action space.** An action changes at most :math:`T_{\max}` mutable features
(:mod:`~groupcf.global_actions.actions`). Per feature :math:`l` it takes its change from
a finite set :math:`V_l` of *representatives*, chosen so that every real change of
:math:`l` has a representative with the same cover of every type and, per type, a cost
no higher:

* one-hot and binary features: every category (every value);
* an integer feature, ``numeric="shift"``: every integer shift :math:`r` (raw units;
  scaled :math:`r/(\mathrm{high}_l - \mathrm{low}_l)`) that keeps some type inside the
  domain, :math:`r > 0` when increase-only (a shift of an integer feature is an integer);
  ``numeric="set"``: every integer value of the domain;
* a non-integer continuous feature, ``numeric="shift"``, on a model whose score moves in
  that column only at known split points (:meth:`Embedding.split_points
  <groupcf.embeddings.base.Embedding.split_points>`: tree ensembles): the finite set below;
* anything else (a continuous feature on a smooth model, ``numeric="set"`` of a
  non-integer feature): infinitely many classes — the level **declines** (logged) and the
  MIP levels price.

**Proposition (shifts on a tree ensemble).** Let :math:`t_1 < \dots < t_q` be the split
points of column :math:`l`: the score is constant on :math:`(-\infty, t_1], (t_1, t_2],
\dots, (t_q, \infty)` when column :math:`l` alone moves (every test on :math:`l` reads
:math:`x_l \le t_j`). Fix the rest of an action (its other changes). For type :math:`i`
(scaled value :math:`x_{il}`) and shift :math:`\delta`, the applied row differs only in
column :math:`l`, equal to :math:`x_{il} + \delta`; so its score changes only where
:math:`x_{il} + \delta` crosses a :math:`t_j`, i.e. at :math:`\delta = t_j - x_{il}`, and
its validity (domain :math:`[-\eta, 1 + \eta]`, :math:`\eta` = ``DOMAIN_TOL``; increase-only
:math:`\delta \ge 0`) only at :math:`-x_{il} - \eta`, :math:`1 - x_{il} + \eta`, :math:`0`.
Let :math:`B_l` be all these *breakpoints* over all types (finite: at most
:math:`(q + 2)n + 1`). On each open interval between consecutive breakpoints, and at each
breakpoint, the cover :math:`\{i : c_{i,a(\delta)} = 1\}` is constant — for every type at
once, whatever the other changes are. Beyond the extreme breakpoints every type leaves the
domain (nobody is covered). Hence one shift per interval and per breakpoint realises every
cover, and the products :math:`\prod_{l \in F} V_l` over feature sets :math:`|F| \le
T_{\max}` realise every cover of every action. The cost of a shift is
:math:`w_l|\delta|` for every type, so inside an interval (on one side of 0, since
:math:`0 \in B_l`) the representative closest to 0 is cheapest: :math:`b_j + \rho` on the
positive side, :math:`b_{j+1} - \rho` on the negative one (:math:`\rho = \min(10^{-7},
\text{gap}/2)`; any such shift has the same cover). An *integer* feature on a tree
ensemble keeps, per interval, the integer shift closest to 0 (same cover, least cost for
everyone), so its :math:`V_l` is at most :math:`2|B_l|` whatever its range.
*Floating point*: shifts at least ``SIGNATURE_TOL`` (scaled) from every breakpoint are
classified exactly; covers realised only within that distance of a breakpoint (several
breakpoints coinciding up to rounding) may be missed, as the pricing MIP misses the
slivers narrower than ``MERGE_TOL`` (:mod:`~groupcf.global_actions.pricing`).

**Exact pricing.** Every candidate :math:`a` is evaluated over every type, one feature set
at a time (:mod:`~groupcf.global_actions.enum_grid`: the covers of the whole product
:math:`\prod_{l \in F} V_l` at once, each distinct applied row — up to the model's split
cells — scored once with the numpy model path); costs are additive over features, so a
combination's cost vector is the sum of its changes'. Columns covering nobody are
dropped, and so is every column :math:`a` *dominated* by another :math:`b`
(:mod:`~groupcf.global_actions.enum_filter`, not quadratic in the actions): :math:`C_a
\subseteq C_b` and :math:`d_{ib} \le d_{ia}` for every :math:`i \in C_a` (of equal ones
the first is kept). Swapping :math:`a` for :math:`b` in any selection covers no fewer
people, each at no higher cost, so the integer master's lexicographic optimum (coverage,
then total cost) over the kept columns is the one over every action. With duals
:math:`\pi \ge 0`, :math:`\pi(C_a) \le \pi(C_b)` when :math:`C_a \subseteq C_b`, so
:math:`\beta = \max_a \pi(C_a)` over the *maximal* covers is the best reduced cost over
**all** actions — a valid dual bound, no MIP (:class:`EnumerationLevel`). With exact
pricing, column generation's LP bound is the true LP bound. When the kept columns enter
the pool (``in_pool``; if there are more than ``max_pool``, the maximal covers alone), any
:math:`k` actions are covered by :math:`\le k` pool columns, so the integer master's
optimum (its dual bound) over the pool is the optimum (a bound on it) over every action,
for every :math:`k` — the curve's points are then certified by the integer master itself
(:mod:`~groupcf.global_actions.search`); with every kept column in the pool, its
least-cost stage also works over every action (within ``tie_break_time``).

**Work cap.** The candidates :math:`\sum_{r \le T_{\max}} e_r(|V_l|)` times the types is
counted first; above ``max_work`` (or past the deadline) the level declines, logged. With a
time limit the time decides instead (the cap is ``TIMED_CAP`` times ``max_work``, for
memory): the rate (candidates per second, wall), measured from ``MIN_ESTIMATE_S`` seconds
in (setting up and the first, small feature sets are mostly fixed costs) over at least as
long again, is extrapolated to the rest after every chunk; when that estimate passes
``share`` of the time left the level declines, logged, and the MIP levels get the time. (The estimate is cautious on
tree ensembles, where larger feature sets merge more rows into one cell.) What it enumerated before
declining is not lost: those columns' maximal covers (the largest first, at most ``max_pool``) seed the
pool — real actions with exact covers, no certificate (:class:`Declined`). The rate is wall time,
as the deadline is: on a loaded machine it is lower and the level declines sooner.
"""
from __future__ import annotations

import itertools
import logging
import math
import time
from dataclasses import dataclass

import numpy as np

from ..colgen import Column, ColumnPool, Priced, PricingLevel
from ..utils import EPS, Deadline
from .actions import DOMAIN_TOL, Action, ActionSpace
from .enum_filter import Found
from .enum_grid import FeatureGrid

log = logging.getLogger(__name__)

#: a shift this close (scaled) to a breakpoint is classified as lying on it
SIGNATURE_TOL = 1e-10
#: distance of a cell's representative shift from its breakpoint (scaled), at most half the cell
REPRESENTATIVE_GAP = 1e-7
#: with a time limit the work cap is this many times ``max_work`` (memory), the time estimate decides
TIMED_CAP = 10
#: seconds of enumeration before its rate is trusted for the time estimate
MIN_ESTIMATE_S = 1.0


@dataclass
class Enumeration:
    """The enumerated action space (module docstring): the columns kept (``actions``,
    covers ``C``, costs ``D``; every cover maximal, cost-Pareto among equal covers),
    ``coverable`` (types some action covers: exact), ``candidates`` evaluated and seconds."""

    actions: list
    C: np.ndarray
    D: np.ndarray
    maximal: np.ndarray          # per kept column: its cover is inside no other's
    coverable: np.ndarray
    candidates: int
    seconds: float
    in_pool: bool = False        # every kept column entered the pool: the integer master is exact
    scored: int = 0              # distinct rows the model scored (:mod:`~groupcf.global_actions.enum_grid`)


class Declined(str):
    """Why the level declined (a ``str``), carrying in ``partial`` the columns already
    enumerated when the time estimate stopped it (``None`` when it stopped before any, on
    the work cap, or at the deadline): real actions with exact covers, which seed the pool
    though they prove nothing."""

    partial: Enumeration | None = None


def action_values(aspace: ActionSpace) -> tuple[dict | None, str]:
    """Per mutable feature, :func:`feature_values` with one value per action key (the first
    of those that round alike, in their order), or ``(None, reason)`` when some feature's
    are not finite."""
    values = {}
    for l in aspace.mutable:
        v, why = feature_values(aspace, l)
        if v is None:
            return None, why
        _, first = np.unique(np.round(v, 9), return_index=True)      # one value per action key
        values[l] = v[np.sort(first)]
    return values, ""


def feature_values(aspace: ActionSpace, l: int) -> tuple[np.ndarray | None, str]:
    """The representatives :math:`V_l` (scaled values of the change) of mutable feature
    ``l`` (module docstring), or ``(None, reason)`` when they are not finite."""
    f = aspace.feats[l]
    if f.encoding == "onehot":
        return np.arange(len(f.categories), dtype=float), ""
    if f.encoding == "binary":
        return np.array([0.0, 1.0]), ""
    span = f.high - f.low
    x = aspace.codes[:, l]
    if aspace.numeric == "set":
        if not f.integer:
            return None, f"numeric='set' of the non-integer feature {f.name!r}"
        return (np.arange(math.ceil(f.low - 1e-9), math.floor(f.high + 1e-9) + 1) - f.low) / span, ""
    splits = aspace.embedding.split_points()
    if f.integer:
        lo = math.ceil(-x.max() * span - 1e-6)
        hi = math.floor((1 - x.min()) * span + 1e-6)
        if splits is None:
            r = np.arange(lo, hi + 1, dtype=float)
        else:                     # per interval, the integer shift closest to 0
            B = _breakpoints(aspace, l, splits)
            b = B * span
            r = np.unique(np.concatenate([np.floor(b), np.ceil(b), np.floor(b) + 1, np.ceil(b) - 1]))
            r = r[(r >= lo) & (r <= hi)]
        r = r[r != 0]
        if f.increase_only:
            r = r[r > 0]
        v = r / span
        return (v if splits is None else _closest_per_cell(v, B)), ""
    if splits is None:
        return None, f"the continuous feature {f.name!r} on a model without split points"
    B = _breakpoints(aspace, l, splits)
    gaps = np.diff(B)
    rho = np.minimum(REPRESENTATIVE_GAP, gaps / 2)
    inner = np.where(B[1:] <= 0, B[1:] - rho, B[:-1] + rho)     # the cell's end nearer 0
    v = np.concatenate([B, inner])
    v = v[np.abs(v) > SIGNATURE_TOL]
    if f.increase_only:
        v = v[v > 0]
    return np.unique(v), ""


def _breakpoints(aspace: ActionSpace, l: int, splits) -> np.ndarray:
    """:math:`B_l` of the module docstring (scaled shifts, sorted, distinct)."""
    x = aspace.codes[:, l]
    t = np.asarray(splits[aspace.feats[l].columns[0]], dtype=float)
    return np.unique(np.concatenate([(t[:, None] - x[None, :]).ravel(), -x - DOMAIN_TOL, 1 - x + DOMAIN_TOL, [0.0]]))


def _closest_per_cell(v: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Of the shifts ``v``, per cell of ``B`` (an open interval, or a breakpoint), the one
    closest to 0 (module docstring: same cover, least cost)."""
    lo = np.searchsorted(B, v - SIGNATURE_TOL, side="left")
    hi = np.searchsorted(B, v + SIGNATURE_TOL, side="right")
    at = hi > lo                                     # on a breakpoint: kept as they are
    inside = np.flatnonzero(~at)
    order = inside[np.lexsort((np.abs(v[inside]), lo[inside]))]
    _, first = np.unique(lo[order], return_index=True)     # per interval, the closest to 0
    return np.sort(np.concatenate([v[at], v[order[first]]]))


def count_candidates(sizes, T: int) -> int:
    """:math:`\\sum_{r=1}^{T} e_r(\\text{sizes})`: the actions of at most ``T`` features."""
    e = [1] + [0] * T
    for s in sizes:
        for r in range(T, 0, -1):
            e[r] += e[r - 1] * int(s)
    return sum(e[1:])


def enumerate_actions(aspace: ActionSpace, max_work: int, deadline: Deadline | None = None,
                      batch_rows: int = 1_000_000, share: float = 0.5) -> Enumeration | Declined:
    """Every action of ``aspace`` (module docstring), or the reason it declines.

    ``max_work`` caps the types × candidates; with a time limit the level declines when
    the time it would take — extrapolated from its own rate so far — passes ``share`` of
    the time left (module docstring, "Work cap")."""
    t0, c0 = time.perf_counter(), time.process_time()
    deadline = deadline or Deadline(None)
    if max_work <= 0:
        return Declined("disabled (enumerate_work=0)")
    values, why = action_values(aspace)
    if values is None:
        return Declined(why)
    T = aspace.Tmax or len(aspace.mutable)
    n_cand = count_candidates([len(values[l]) for l in aspace.mutable], T)
    cap = max_work if deadline.left() is None else TIMED_CAP * max_work      # with a time limit, time decides
    if n_cand * aspace.n_types > cap:
        return Declined(f"{n_cand:,} actions x {aspace.n_types:,} types > {cap:,} (enumerate_work={max_work:,})")
    grid = FeatureGrid(aspace, values)
    single_costs = {l: np.array([aspace.costs(Action(((l, float(x)),))) for x in values[l]]).reshape(len(values[l]), -1)
                    for l in aspace.mutable}
    found = Found(aspace, values, single_costs)
    done, scored = 0, 0
    clock = _Clock(deadline, n_cand, share)
    for r in range(1, T + 1):
        for F in itertools.combinations(aspace.mutable, r):
            for J, C, n_scored in grid.covers(F, batch_rows):
                found.add(F, J, C)
                done += len(J)
                scored += n_scored
                if deadline.passed:
                    return Declined("time limit reached while enumerating")
                why = clock.too_slow(done)
                if why:
                    declined = Declined(f"{n_cand:,} actions x {aspace.n_types:,} types: {why}")
                    acts, C, D, maximal = found.result()
                    declined.partial = Enumeration(acts, C, D, maximal, found.coverable, done,
                                                   time.perf_counter() - t0, scored=scored)
                    return declined
    acts, C, D, maximal = found.result()
    out = Enumeration(acts, C, D, maximal, found.coverable, n_cand, time.perf_counter() - t0, scored=scored)
    log.info("enumeration: %d actions over %d types (%d distinct rows scored), %d columns kept, %d maximal "
             "(%.1f s, %.1f s CPU)", n_cand, aspace.n_types, scored, len(acts), int(maximal.sum()), out.seconds,
             time.process_time() - c0)
    return out


class _Clock:
    """The time estimate (module docstring, "Work cap"): the rate is measured from the first
    moment ``MIN_ESTIMATE_S`` seconds have passed (setting up and the first, small feature
    sets are mostly fixed costs), over at least ``MIN_ESTIMATE_S`` more."""

    def __init__(self, deadline: Deadline, n_cand: int, share: float):
        self.deadline, self.n_cand, self.share = deadline, n_cand, share
        self.t0 = time.perf_counter()
        self.mark: tuple[float, int] | None = None

    def too_slow(self, done: int) -> str:
        """Why the rest would take more than ``share`` of the time left, or ``""``."""
        left = self.deadline.left()
        now = time.perf_counter()
        if left is None or done >= self.n_cand or now - self.t0 < MIN_ESTIMATE_S:
            return ""
        if self.mark is None:
            self.mark = (now, done)
            return ""
        t1, d1 = self.mark
        if now - t1 < MIN_ESTIMATE_S or done <= d1:
            return ""
        rate = (done - d1) / (now - t1)
        need = (self.n_cand - done) / rate
        return (f"about {need:.0f} s more at the measured {rate:,.0f} actions/s > {self.share:.0%} of the "
                f"{left:.0f} s left" if need > self.share * left else "")


def enumeration_for(aspace: ActionSpace, max_work: int, deadline: Deadline, pool: ColumnPool,
                    max_pool: int = 3000) -> EnumerationLevel | None:
    """The enumeration level of ``aspace`` for the search (its :class:`Enumeration` is
    ``.enum``), ``None`` (logged) when it declines; its columns enter ``pool`` when there
    are at most ``max_pool`` (``in_pool``)."""
    enum = enumerate_actions(aspace, max_work, deadline)
    if isinstance(enum, Declined):
        log.info("enumeration pricing declines: %s; the MIP levels price", enum)
        part = enum.partial
        if part is not None and len(part.actions):      # what it found is kept: the largest maximal covers
            cols = np.flatnonzero(part.maximal)
            cols = cols[np.argsort(-part.C[cols].astype(float) @ aspace.m, kind="stable")][:max_pool]
            for j in cols:
                pool.add(Column(key=part.actions[j].key, cover=part.C[j], payload=part.actions[j],
                                element_costs=part.D[j], source="enumeration (partial)"))
            log.info("  its %d maximal covers of %d actions enumerated seed the pool", len(cols), part.candidates)
        return None
    level = EnumerationLevel(aspace, enum)
    for cols in (np.arange(len(enum.actions)), np.flatnonzero(enum.maximal)):
        if len(cols) <= max_pool:        # all non-dominated columns (else the maximal ones): every k is exact
            for j in cols:
                pool.add(level.column(int(j)))
            enum.in_pool = True
            break
    return level


class EnumerationLevel(PricingLevel):
    r"""Exact pricing over the enumerated columns (module docstring): :math:`\beta =
    \max_a \pi(C_a)` is the dual bound, proof when :math:`\beta \le` the master's price;
    the ``max_columns`` best improving columns enter."""

    name = "enumeration"
    exact = True

    def __init__(self, aspace: ActionSpace, enum: Enumeration, max_columns: int = 20):
        super().__init__()
        self.a, self.enum, self.max_columns = aspace, enum, max_columns
        self._cols: dict = {}

    def price(self, duals, ctx):
        e = self.enum
        if not len(e.actions):
            return Priced([], dual_bound=0.0, proof=True)
        val = np.where(e.maximal, e.C.astype(float) @ duals.pi, -np.inf)    # β is reached on a maximal cover
        beta = float(val.max())
        order = [j for j in np.argsort(-val, kind="stable")[: self.max_columns] if val[j] - duals.price > EPS]
        return Priced([self.column(j) for j in order], dual_bound=beta, proof=beta <= duals.price + EPS)

    def column(self, j: int):
        """The engine's column of kept action ``j`` (its cover and costs already known)."""
        if j not in self._cols:
            e = self.enum
            self._cols[j] = Column(key=e.actions[j].key, cover=e.C[j], payload=e.actions[j], element_costs=e.D[j],
                                   source="enumeration")
        return self._cols[j]
