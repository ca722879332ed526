r"""Branch-and-price with Ryan–Foster branching (certifies when the integer master is
above the LP bound).

**Why branching on pairs is valid here.** Feasible groups are closed under taking
subsets (the same point and change set cover any subgroup), so every cover can be turned
into a partition of ``S`` with the same number of columns. In a partition two types
``i, j`` are either explained by the same counterfactual or by different ones; the two
children "same(i, j)" (every column covers both or neither) and "differ(i, j)" (no
column covers both) therefore keep every optimal partition (Ryan & Foster 1981).

**A node** holds the decisions on its path. Its restricted master is the covering LP
(paper eqs. 15–18) over the columns admissible there — every column generated so far,
*repaired*: a "same" group covered only in part is dropped from the column, and of a
"differ" pair covered together one side is dropped (subsets stay feasible) — plus one
artificial column per type with cost ``n + 1`` so the LP is always feasible. Each node is
one run of the generic engine (:func:`groupcf.colgen.column_generation` over a
:class:`~groupcf.colgen.SetCoverMaster`; node columns keyed by their cover), with one
pricing level: the exact seed pricing
(:class:`~groupcf.group.formulations.seed.SeedPricing`) with the branching rows
:math:`z_i = z_j` / :math:`z_i + z_j \le 1`. Farley's bound prunes the node as soon as it
reaches the incumbent (the engine's ``stop_when``; that round's columns are dropped).
When pricing proves that no column prices out, the LP value is the node's bound: an artificial column still in use
means the node is infeasible; a bound whose ceiling reaches the incumbent prunes the
node; an integral LP solution is a new incumbent; otherwise the integer master over the
node's columns is tried (at every ``ip_every``-th depth, ``ip_cap`` seconds: a primal
heuristic), then the node branches.
Every ``pool_every`` nodes the integer master over *all* columns seen (with their full
coverage) is tried too: columns priced in different nodes may combine into a smaller
cover, and an incumbent equal to the root bound ends the search.

**Choice of the pair.** Among pairs ``(i, j)`` such that a positive column covers both
and a positive column covers exactly one of them (both children then cut off the current
LP solution, so the tree is finite), the one whose joint coverage
:math:`\sum_{C \ni i, j} \lambda_C` is closest to 1/2. Nodes are explored depth first,
"same" before "differ".
"""
from __future__ import annotations

import logging
import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..colgen import Column as PoolColumn
from ..colgen import ColumnPool, Priced, PricingLevel, SetCoverMaster, column_generation
from ..exceptions import GroupCFWarning, SolverError
from ..utils import EPS
from .formulations.master import solve_set_cover
from .formulations.subsets import decisions
from .problem import Column

log = logging.getLogger(__name__)


@dataclass
class TreeResult:
    """Outcome of branch and price: the incumbent, its columns and the proven bound."""

    best: int                 # incumbent size
    columns: list[Column]     # incumbent columns (covers are admissible subsets)
    lower: int                # proven lower bound (== best when the tree is exhausted)
    nodes: int
    exhausted: bool


def repair(covers: np.ndarray, label: np.ndarray, differ, prefer_first: bool = True) -> np.ndarray:
    """The admissible subsets of ``covers`` (bool, one row per column, or one cover) under
    the node's decisions (see module doc): partially covered "same" groups are dropped;
    of a "differ" pair covered together, the group of the second (or first) member."""
    P = np.atleast_2d(covers).copy()
    groups = [np.flatnonzero(label == g) for g in np.unique(label)]
    groups = [m for m in groups if len(m) > 1]
    while True:
        changed = False
        for m in groups:
            some = P[:, m].any(axis=1)
            partial = some & ~P[:, m].all(axis=1)
            if partial.any():
                P[np.ix_(partial, m)] = False
                changed = True
        for i, j in differ:
            both = P[:, i] & P[:, j]
            if both.any():
                drop = j if prefer_first else i
                P[np.ix_(both, np.flatnonzero(label == label[drop]))] = False
                changed = True
        if not changed:
            return P if np.ndim(covers) == 2 else P[0]


def branch_and_price(problem, columns: list[Column], pricing, solver, deadline, incumbent: list[Column],
                     root_lower: int, active: np.ndarray, max_columns: int = 10, ip_cap: float = 0.5,
                     pool_every: int = 20, ip_every: int = 4, on_node=None) -> TreeResult:
    """Close the gap between ``root_lower`` and ``len(incumbent)`` (see module doc);
    ``on_node(nodes, incumbent, bound)`` is called as each node opens (progress)."""
    n = problem.n_types
    pool: dict[bytes, Column] = {}
    for c in columns:
        pool.setdefault(c.cover.tobytes(), c)
    best, best_cols = len(incumbent), list(incumbent)
    # every column seen, with its full coverage: the pooled integer master (a primal
    # heuristic run every ``pool_every`` nodes) may combine columns of different nodes
    full: dict[bytes, Column] = {}

    def remember(col: Column) -> None:
        c = problem.make_column(col.v, col.F, col.source)
        full.setdefault(c.cover.tobytes(), c)

    for c in columns:
        remember(c)
    stack: list[tuple[tuple, int]] = [((), root_lower)]   # (decisions, parent's bound)
    nodes = 0
    while stack:
        if deadline.passed:
            break
        branching, parent_bound = stack.pop()
        if parent_bound >= best:
            continue
        nodes += 1
        if on_node is not None:
            on_node(nodes, best, max(root_lower, min([best, parent_bound] + [b for _, b in stack])))
        if nodes % pool_every == 0 and best > root_lower:
            keys = list(full)
            C = np.array([full[k].cover for k in keys])[:, active]
            left = deadline.left()
            sol = solve_set_cover(C, solver, time_limit=5 * ip_cap if left is None else min(5 * ip_cap, left))
            if sol.status.has_solution and sol.objective is not None and round(sol.objective) < best:
                best_cols = [full[keys[j]] for j in np.flatnonzero(sol.values[: len(keys)] > 0.5)]
                best = len(best_cols)
                log.debug("branch-and-price: pooled integer master, incumbent %d", best)
                if best <= root_lower:
                    break
        label, differ = decisions(n, branching)
        # node master over the admissible repairs of every known column, built in one go;
        # one artificial column per type (cost n + 1) keeps it feasible
        cols = list(pool.values())
        P = np.array([c.cover for c in cols]) & active
        reps = [(cols, repair(P, label, differ, True))]
        if differ:
            reps.append((cols, repair(P, label, differ, False)))
        node_cols: list[Column] = []
        seen: set[bytes] = set()
        for src, R in reps:
            for col, cover in zip(src, R):
                key = cover.tobytes()
                if cover.any() and key not in seen:
                    seen.add(key)
                    node_cols.append(Column(col.v, col.F, cover, col.source))
        n_art = int(active.sum())
        master, pool_n = _node_master(n, node_cols, active, solver)
        level = _NodePricing(pricing, branching, max_columns, active)
        run = column_generation(master, pool_n, [level], deadline=deadline,
                                stop_when=lambda b, best=best: math.ceil(b - EPS) >= best)
        # every column priced in the node (not in a round that pruned it) joins the pool
        for priced in (level.rounds[:-1] if run.stopped == "bound" else level.rounds):
            for col in priced:
                pool.setdefault(col.cover.tobytes(), col)
                remember(col)
        node_cols = [c.payload for c in master.columns[n_art:]]
        if run.stopped == "bound" or run.converged:
            bound = math.ceil(run.bound - EPS)
        else:                          # time limit inside the node (or no proof): keep it open
            if run.stopped == "no_improvement" and not deadline.passed:
                warnings.warn("branch-and-price: pricing found no new column without a proof; stopping "
                              "(the result is not certified)", GroupCFWarning, stacklevel=2)
            stack.append((branching, parent_bound))
            break
        if bound >= best:
            continue                   # pruned
        z, lam = run.lp_value, run.x
        assert lam is not None   # the node's LP converged (else it was kept open above)
        if (lam[:n_art] > 1e-9).any():
            continue                   # some type cannot be covered in this node
        lam = lam[n_art:]
        C = np.array([c.cover for c in node_cols])
        if np.all((lam < 1e-9) | (lam > 1 - 1e-9)):
            chosen = [node_cols[k] for k in np.flatnonzero(lam > 0.5)]
            if len(chosen) < best:
                best, best_cols = len(chosen), chosen
                log.debug("branch-and-price: integral node, incumbent %d", best)
            continue
        left = deadline.left()
        ip = None
        if len(branching) % ip_every == 0:
            ip = solve_set_cover(C[:, active], solver, time_limit=ip_cap if left is None else min(ip_cap, left))
        if ip is not None and ip.status.has_solution:
            chosen = [node_cols[k] for k in np.flatnonzero(ip.values[: len(node_cols)] > 0.5)]
            if len(chosen) < best:
                best, best_cols = len(chosen), chosen
                log.debug("branch-and-price: node %d integer master, incumbent %d", nodes, best)
        if bound >= best:
            continue
        pair = choose_pair(C, lam)
        if pair is None:   # cannot happen for a fractional solution with distinct covers
            raise SolverError("internal error: fractional master without a branching pair")
        i, j = pair
        log.debug("branch-and-price: node %d depth %d LP %.3f bound %d, branching on (%d, %d)",
                  nodes, len(branching), z, bound, i, j)
        stack.append((branching + ((i, j, False),), bound))
        stack.append((branching + ((i, j, True),), bound))
    exhausted = not stack
    lower = best if exhausted else max(root_lower, min([best] + [b for _, b in stack]))
    return TreeResult(best, best_cols, int(lower), nodes, exhausted)


def _node_master(n: int, node_cols: list[Column], active: np.ndarray, solver) -> tuple[SetCoverMaster, ColumnPool]:
    """The node's restricted master (the generic set-cover master over the active types)
    and its pool: one artificial column per active type (cost ``n + 1``), then the node's
    columns, each keyed by its cover (a node keeps one column per admissible cover)."""
    master, pool = SetCoverMaster(n, solver, active=active), ColumnPool(n)
    arts = [PoolColumn(("artificial", int(i)), np.eye(n, dtype=bool)[i], weight=n + 1.0)
            for i in np.flatnonzero(active)]
    for col in arts + [PoolColumn(c.cover.tobytes(), c.cover, payload=c, source=c.source) for c in node_cols]:
        pool.add(col)
        master.add(col)
        pool.in_master[-1] = True
    return master, pool


class _NodePricing(PricingLevel):
    """Seed pricing with the node's branching rows; records every round's columns (they
    join the cross-node pool unless the round pruned the node)."""

    name = "seed-branching"
    exact = True

    def __init__(self, pricing, branching, max_columns: int, active: np.ndarray):
        super().__init__()
        self.pricing, self.branching, self.max_columns, self.active = pricing, branching, max_columns, active
        self.rounds: list[list[Column]] = []

    def price(self, duals, ctx):
        res = self.pricing.solve(duals.pi, max_columns=self.max_columns, branching=self.branching,
                                 deadline=ctx.deadline)
        self.rounds.append(res.columns)
        cols = []
        for col in res.columns:
            cover = col.cover & self.active
            if cover.any():
                cols.append(PoolColumn(cover.tobytes(), cover, payload=Column(col.v, col.F, cover, col.source),
                                       source=col.source))
        return Priced(cols, dual_bound=res.dual_bound if math.isfinite(res.dual_bound) else None,
                      proof=res.optimal)


def choose_pair(C: np.ndarray, lam: np.ndarray) -> tuple[int, int] | None:
    """The Ryan–Foster pair (module doc) for covers ``C`` (columns × types) with LP
    values ``lam``, or ``None``."""
    pos = lam > 1e-9
    A = C[pos].astype(float)
    l = lam[pos]
    both = A.T @ (A * l[:, None])                        # sum of lam over columns with i and j
    cov = (A * l[:, None]).sum(axis=0)
    exactly_one = cov[:, None] + cov[None, :] - 2 * both
    ok = (both > 1e-9) & (exactly_one > 1e-9)
    np.fill_diagonal(ok, False)
    if not ok.any():
        return None
    score = np.where(ok, np.abs(both - 0.5), np.inf)
    i, j = np.unravel_index(int(np.argmin(score)), score.shape)
    return int(min(i, j)), int(max(i, j))
