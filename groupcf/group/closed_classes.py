r"""The model-free relaxation over every *maximal class*, found without listing change sets.

:mod:`~groupcf.group.enumeration` lists the classes (types equal outside :math:`F`) of every
change set of size :math:`k = \min(T_{max}, \#\text{mutable})`; with :math:`\binom{30}{20}
\approx 3 \cdot 10^7` of them (Students, :math:`T_{max} = 20`) that is out of reach. Here
the classes are found from the types instead. Let :math:`A_{sj}` be the features on which
types :math:`s` and :math:`j` agree and :math:`m = L - k` the number of features outside a
maximal change set (:math:`L` features; the immutable ones are always outside). A class
containing :math:`s` is :math:`G = \{j : B \subseteq A_{sj}\}` for the complement
:math:`B` of a change set, so its *intent* :math:`I = \bigcap_{j \in G} A_{sj} \supseteq B`
has at least :math:`m` features, every immutable one among them, and :math:`G = \{j : I
\subseteq A_{sj}\}`. The intents are therefore intersections of the masks
:math:`A_{sj}` — enumerated per seed by intersecting one more mask at a time, keeping
those with :math:`m` features or more (intersections only shrink, so nothing is lost).

**Maximal classes.** Only the classes contained in no other class matter for a lower
bound: :math:`G` (intent :math:`I`, seed :math:`s \in G`) lies in a larger class iff some
:math:`j \notin G` leaves :math:`I \cap A_{sj}` with :math:`m` features or more, the
immutable ones included. A maximal class is the class of *every* change set whose
complement lies in :math:`I` (each such class contains :math:`G`, so equals it).

**The bound.** Every column (a point and its change set :math:`F`) covers a subset of a
class of :math:`F`, hence of a maximal class; so the set cover over the maximal classes,
ignoring the model, is at most :math:`y^*` — a valid lower bound. When the classes it
chooses all have accepted points (a greedy completion on one of their change sets,
:meth:`~groupcf.formulations.completion.Completions.check` without a MIP; not tried with
increase-only features), those points are an optimal answer.

**A cover at the LP bound first.** The LP over the classes gives :math:`b = \lceil z_{LP} \rceil
\le y^*`, and a cover of :math:`b` classes is then optimal. Such a cover, when there is one,
tends to use classes of small LP reduced cost, so before the full set cover a cover with
:math:`\sum y \le b` is sought among the classes of reduced cost at most ``NEAR_LP`` (a
primal heuristic with a share of the time; proving the bound is left to the full set cover).
On Students LR :math:`|S| = 100`, :math:`T_{max} = 20` (seed 2) HiGHS needs ~200 s CPU to find
the 17-cover among all 45,357 classes and 20–35 s among the ~9,550 of reduced cost at most
0.35; where no cover of :math:`b` classes exists there, ruling it out took 14–34 s.

**Time: all that is left; branch and price gets what it leaves.** The full set cover may use
all of the time left (the cover at the LP bound at most ``NEAR_LP_SHARE`` of it). Where the
relaxation's optimum is below :math:`y^*` (a class no one point covers whole), HiGHS proves
that optimum and the stage returns early, so branch and price keeps its time: the rows of the
paper grids where it certified after this stage are of that kind (Students RF :math:`|S| = 100`,
:math:`T_{max} = 10`, seed 3: classes 60, :math:`y^* = 61`, the stage 0.3 s, then 1 node).
When the set cover stops at the limit instead, branch and price faces the same question (a
cover of the incumbent minus one?) from the same root bound, with pricing at every node, and it
never closed such a gap (Students :math:`|S| = 100`, :math:`T_{max} = 20`: LR seed 2, 115 nodes;
NN seed 6, 245 nodes).

**Only the classes within reach.** With an incumbent of :math:`U` columns, only covers of
:math:`U - 1` or fewer matter: the full set cover is over the classes whose LP reduced cost
leaves room for one (:func:`_within_reach`, LP reduced-cost fixing; exact: same optimum, valid
bound) and the incumbent's columns. HiGHS fixes those columns itself, but only after a restart:
on Students NN seed 6 (:math:`|S| = 100`, :math:`T_{max} = 20`; 22,514 of 46,988 columns kept)
it proves 17 in 218 s where it had not in 330 s over all of them (BENCHMARKS.md).

Measured on Students RF, :math:`|S| = 100`, :math:`T_{max} = 20` (BENCHMARKS.md): 45,581
maximal classes, root LP 15.67 like column generation's, and HiGHS proves the set cover's
optimum 17 — the incumbent, which branch and price had not certified in 300 s.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..solvers.base import Status
from ..utils import EPS, Deadline
from .enumeration import GapResult
from .formulations.master import set_cover_by_components, solve_set_cover
from .problem import Column, GroupProblem

log = logging.getLogger(__name__)

#: most distinct intents per seed (and maximal classes in all) before giving up
MAX_CLASSES = 300_000
#: before the full set cover, a cover of exactly ``ceil(LP)`` classes is sought among the
#: classes of LP reduced cost at most this (a primal heuristic: when found it is optimal;
#: Students |S| = 100, Tmax 20, BENCHMARKS.md), given at most ``NEAR_LP_SHARE`` of the time
#: left (sought only where it was always found, ``NEAR_LP_FRACTION``; 13–87 s on a quiet machine,
#: and at load 3–4 Students NN seed 5 was cut at 30 %, 83 s); the full set cover then has all
#: that remains (module docstring: *Time*)
NEAR_LP = 0.35
NEAR_LP_SHARE = 0.5
#: its time without a time limit
NEAR_LP_SECONDS = 60.0
#: not sought when the LP's fractional part is at least this (:math:`\lceil z \rceil - z \le 0.5`:
#: little room above the LP for a cover of :math:`\lceil z \rceil`; a heuristic). Students
#: :math:`|S| = 100`, Tmax 20, four models, BENCHMARKS.md: found in every row with fraction
#: 0.00–0.45, never with 0.50–0.98 (seeds 0–4, 20 rows; then seeds 5–7, 12 rows that did not set
#: it), where ruling it out cost 12–71 s that the full set cover needs (NN seed 6)
NEAR_LP_FRACTION = 0.5


@dataclass
class MaximalClasses:
    """Distinct maximal classes: ``covers[r]`` (bool over types) has seed ``seeds[r]`` and
    intent ``intents[r]`` (bitmask of the ``n_features`` features on which its members all
    agree)."""

    covers: np.ndarray
    seeds: np.ndarray
    intents: np.ndarray
    n_features: int

    def __len__(self) -> int:
        return len(self.covers)

    def change_sets(self, r: int, need: int, immutable: int, tries: int = 3) -> list[frozenset]:
        """Up to ``tries`` change sets whose class is class ``r``: the complements of
        ``need`` features of its intent, the immutable ones always among them."""
        free = [l for l in range(63) if (int(self.intents[r]) >> l) & 1 and not (immutable >> l) & 1]
        extra = need - bin(immutable).count("1")
        picks = [free[:extra], free[-extra:] if extra else [], free[len(free) // 2 - extra // 2:][:extra]]
        out: list[frozenset] = []
        L = self.n_features
        for pick in picks[:tries]:
            B = set(pick) | {l for l in range(L) if (immutable >> l) & 1}
            F = frozenset(l for l in range(L) if l not in B)
            if F not in out:
                out.append(F)
        return out


def maximal_classes(problem: GroupProblem, deadline: Deadline | None = None,
                    limit: int = MAX_CLASSES) -> MaximalClasses | None:
    """Every maximal class of the problem (module docstring); ``None`` with more than 62
    features, more than ``limit`` intents for a seed or classes in all, or when the
    deadline passes."""
    L = problem.n_features
    if L > 62:
        return None
    space = problem.space
    mutable = np.array([not f.immutable for f in space])
    k = min(problem.Tmax, int(mutable.sum()))
    need = L - k
    bit = np.int64(1) << np.arange(L, dtype=np.int64)
    imm = np.int64(int(bit[~mutable].sum()))
    codes = problem.codes
    agree = np.abs(codes[:, None, :] - codes[None, :, :]) <= 1e-9
    A = (agree.astype(np.int64) * bit).sum(axis=2)                 # (types, types) masks
    valid = (np.bitwise_count(A) >= need) & ((A & imm) == imm)
    n = problem.n_types
    keys: dict[bytes, int] = {}
    covers: list[np.ndarray] = []
    seeds: list[int] = []
    intents: list[np.int64] = []
    for s in range(n):
        if deadline is not None and deadline.passed:
            return None
        I = np.zeros(0, dtype=np.int64)
        for j in np.flatnonzero(valid[s]):
            a = A[s, j]
            I = np.concatenate([I, I & a, [a]])
            I = np.unique(I[(np.bitwise_count(I) >= need) & ((I & imm) == imm)])
            if len(I) > limit:
                log.info("maximal classes: more than %d intents for type %d; not enumerated", limit, s)
                return None
        C = (A[s][None, :] & I[:, None]) == I[:, None]             # (intents, types)
        ext = I[:, None] & A[s][None, :]
        grows = (np.bitwise_count(ext) >= need) & ((ext & imm) == imm) & ~C
        keep = ~grows.any(axis=1)
        for c, i in zip(C[keep], I[keep]):
            key = np.packbits(c).tobytes()
            if key not in keys:
                keys[key] = len(covers)
                covers.append(c)
                seeds.append(s)
                intents.append(i)
        if len(covers) > limit:
            log.info("maximal classes: more than %d; not enumerated", limit)
            return None
    return MaximalClasses(np.array(covers, dtype=bool).reshape(-1, n), np.array(seeds, dtype=np.int64),
                          np.array(intents, dtype=np.int64), L)


def close_gap_by_maximal_classes(problem: GroupProblem, checker, active: np.ndarray, solver, deadline: Deadline,
                                 incumbent: Sequence[Column] = (), stats: dict | None = None) -> GapResult | None:
    """The set cover over the maximal classes (a lower bound on :math:`y^*`), given all
    of the time left (module docstring); and, when its chosen classes pass a greedy completion
    check, an optimal cover. ``None`` when the classes are not enumerated (too many, more
    than 62 features, the deadline). ``incumbent``: columns of a cover found before (MIP
    start; each lies in a maximal class, so the bound is unchanged)."""
    t = time.perf_counter()
    classes = maximal_classes(problem, deadline)
    if classes is None or not len(classes):
        return None
    t_enum = time.perf_counter() - t
    extra = [c for c in incumbent if (c.cover & active).any()]
    covers = np.vstack([classes.covers] + [c.cover[None, :] for c in extra]) if extra else classes.covers
    C = covers[:, active]
    alive = np.flatnonzero(C.any(axis=1))
    Ca = C[alive]
    left = deadline.left()
    columns = None
    near_deadline = Deadline(NEAR_LP_SECONDS if left is None else NEAR_LP_SHARE * left)
    lp = _set_cover_lp(Ca, solver, near_deadline)      # read by both the cover at the LP bound and the fixing
    near = None if lp is None else _cover_at_lp_bound(Ca, solver, near_deadline, lp=lp)
    if near is not None:
        lower, rows = near
        columns = _verify(problem, classes, checker, alive[rows], extra)
        if stats is not None:
            stats["cover_at_lp_bound"] = columns is not None
    if columns is None:
        keep = _within_reach(Ca, solver, deadline, len(extra), lp=lp) if extra else None
        rows = alive if keep is None else alive[keep | (alive >= len(classes))]
        start = (rows >= len(classes)).astype(float) if extra else None     # the incumbent's columns: MIP start
        lower, chosen = set_cover_by_components(C[rows], solver, deadline, start)   # all the time that is left
        chosen_rows = None if chosen is None else rows[chosen]
        columns = _verify(problem, classes, checker, chosen_rows, extra) if chosen_rows is not None else None
    if stats is not None:
        stats.update(maximal_classes=len(classes), time_maximal_classes=round(t_enum, 3),
                     maximal_classes_bound=int(lower), gap_closed_by_enumeration=columns is not None,
                     time_gap_enumeration=time.perf_counter() - t)
    log.info("maximal classes: %d in %.2fs, set cover bound %d%s", len(classes), t_enum, lower,
             "" if columns is None else " (verified)")
    return GapResult(int(lower), columns, 1, 0, 0)


@dataclass
class _CoverLP:
    r"""The set cover's LP relaxation over ``C``: its ``objective``, the duals ``w`` (clipped
    at 0) and each column's reduced cost ``reduced`` :math:`= 1 - \sum_{i \in C_j} w_i`."""

    objective: float
    w: np.ndarray
    reduced: np.ndarray


def _set_cover_lp(C: np.ndarray, solver, deadline: Deadline) -> _CoverLP | None:
    """The LP relaxation of the set cover over ``C`` (columns × types); ``None`` when it is
    not solved to optimality in time."""
    lp = solve_set_cover(C, solver, time_limit=deadline.left(), integer=False)
    if lp.status != Status.OPTIMAL or lp.row_duals is None or lp.objective is None:
        return None
    w = np.maximum(np.asarray(lp.row_duals, dtype=float)[: C.shape[1]], 0.0)
    return _CoverLP(float(lp.objective), w, 1.0 - C.astype(float) @ w)


def _within_reach(C: np.ndarray, solver, deadline: Deadline, cutoff: int,
                  lp: _CoverLP | None = None) -> np.ndarray | None:
    r"""The columns of ``C`` (columns × types) that can be in a cover of fewer than ``cutoff``
    columns (the size of a known cover), by LP reduced costs: with the LP's duals
    :math:`w \ge 0`, :math:`r_j = 1 - \sum_{i \in C_j} w_i` and :math:`z = \sum_i w_i +
    \sum_j \min(r_j, 0)`, every cover :math:`y` has :math:`\sum_j y_j \ge z + r_k` for each chosen
    :math:`k` with :math:`r_k \ge 0`, so a column with :math:`r_k > cutoff - 1 - z` is in none of
    size ``cutoff - 1`` or less. A set cover over the kept columns and the known cover has the
    same optimum, and its bound holds for all. ``lp``: that LP when solved already (else it
    is solved here). ``None`` when the LP is not solved."""
    lp = _set_cover_lp(C, solver, deadline) if lp is None else lp
    if lp is None:
        return None
    w, r = lp.w, lp.reduced
    z = float(w.sum() + np.minimum(r, 0.0).sum())
    keep = r <= cutoff - 1 - z + EPS
    log.info("maximal classes: %d of %d within reach of a cover of %d (LP %.3f)", keep.sum(), len(C), cutoff - 1, z)
    return keep


def _cover_at_lp_bound(C: np.ndarray, solver, deadline: Deadline,
                       lp: _CoverLP | None = None) -> tuple[int, np.ndarray] | None:
    """``(b, rows)``: ``b = ceil(LP)`` of the set cover over ``C`` (columns × types) and a
    cover of ``b`` columns found among those of LP reduced cost ``<= NEAR_LP``; ``None``
    when there is none there (or none found in time), or without a search when the LP's
    fractional part is at least ``NEAR_LP_FRACTION``. ``b`` is a lower bound on every
    cover, so such a cover is optimal. ``lp``: the LP when solved already (else it is
    solved here)."""
    lp = _set_cover_lp(C, solver, deadline) if lp is None else lp
    if lp is None:
        return None
    fraction = lp.objective - math.floor(lp.objective + EPS)
    if fraction >= NEAR_LP_FRACTION:
        log.info("maximal classes: LP %.3f, fraction %.2f: no cover at the LP bound sought", lp.objective, fraction)
        return None
    b = math.ceil(lp.objective - EPS)
    idx = np.flatnonzero(lp.reduced <= NEAR_LP)
    if not len(idx) or not C[idx].any(axis=0).all():
        return None
    sol = solve_set_cover(C[idx], solver, time_limit=deadline.left(), most=b)
    if sol.x is None or sol.objective is None or round(sol.objective) > b:
        return None                          # none that small there (or none found in time)
    rows = idx[np.asarray(sol.x[: len(idx)]) > 0.5]
    if len(rows) > b or not C[rows].any(axis=0).all():
        return None
    log.info("maximal classes: a cover of %d = ceil(LP %.3f) among %d of %d classes", b, lp.objective, len(idx), len(C))
    return b, rows


def _verify(problem: GroupProblem, classes: MaximalClasses, checker, rows: np.ndarray,
            extra: Sequence[Column]) -> list[Column] | None:
    """Columns for the chosen rows (incumbent columns as they are; a class by a greedy
    completion of its seed on one of its change sets), or ``None`` when one fails."""
    space = problem.space
    if any(f.increase_only and not f.immutable for f in space):
        return None                 # a class need not be covered whole: the bound only
    mutable = np.array([not f.immutable for f in space])
    need = problem.n_features - min(problem.Tmax, int(mutable.sum()))
    immutable = sum(1 << l for l in np.flatnonzero(~mutable).tolist())
    out: list[Column] = []
    for r in rows.tolist():
        if r >= len(classes):
            out.append(extra[r - len(classes)])
            continue
        s = int(classes.seeds[r])
        col = None
        for F in classes.change_sets(r, need, immutable):
            ok, v, _ = checker.check(problem.Z[s], F, 0, prove=False)
            if ok:
                cand = problem.make_column(v, F, "enumeration")
                if problem.is_positive(cand.v) and cand.cover[classes.covers[r]].all():
                    col = cand
                    break
        if col is None:
            return None
        out.append(col)
    return out
