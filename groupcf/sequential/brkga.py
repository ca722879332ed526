r"""Biased random-key genetic algorithm with non-dominated sorting (Naumann & Ntoutsi 2021, §4;
BRKGA: Gonçalves & Resende, J. Heuristics 17, 2011).

Each generation, the *elites* are the first non-dominated front (pymoo's
``NonDominatedSorting``) of the feasible individuals, one per distinct objective vector.
Every offspring has one random elite and one random non-elite parent and inherits each
gene from the elite with probability ``bias``; ``mutants`` fresh random individuals keep
diversity; the next population is elites + offspring + mutants (the non-elites of the
previous generation are dropped). When no individual is feasible yet, the elites are the
individuals with the smallest constraint violation (rejection margin plus broken rules),
which pulls the population towards acceptance. The returned set is the feasible
non-dominated set of the last population.

Only the new individuals of a generation are evaluated, all at once
(:func:`groupcf.sequential.engine.rollout`).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from groupcf.progress import progress_bar
from groupcf.sequential.engine import Problem, objectives, rollout, violation

logger = logging.getLogger(__name__)


@dataclass
class GAOptions:
    """BRKGA settings (defaults: the paper's)."""

    population: int = 500
    offspring: int = 400
    mutants: int = 100
    bias: float = 0.7
    generations: int = 150
    seed: int = 0


def first_front(F: np.ndarray) -> np.ndarray:
    """Indices of the non-dominated rows of ``F`` (one per distinct row)."""
    if len(F) == 0:
        return np.zeros(0, dtype=np.int64)
    _, first = np.unique(F, axis=0, return_index=True)
    from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting
    front = NonDominatedSorting().do(F[first], only_non_dominated_front=True)
    return np.sort(first[np.asarray(front, dtype=np.int64)])


def _elites(F, cv, n_min: int) -> np.ndarray:
    feas = np.flatnonzero(cv <= 0)
    if len(feas):
        return feas[first_front(F[feas])]
    return np.argsort(cv, kind="stable")[:max(1, n_min)]


def run_brkga(problem: Problem, opts: GAOptions, seed_genes: np.ndarray | None = None,
              progress: bool = False, deadline=None):
    """Run the GA; returns ``(genes, objectives, violation)`` of the final population
    (stopping early, after a whole generation, when ``deadline`` passes)."""
    rng = np.random.default_rng(opts.seed)
    n = problem.n_genes
    P = rng.random((opts.population, n))
    if seed_genes is not None and len(seed_genes):
        P = np.vstack([np.atleast_2d(seed_genes), P])
    r = rollout(problem, P)
    F, cv = objectives(problem, r), violation(problem, r)
    for gen in progress_bar(range(opts.generations), enabled=progress, desc="BRKGA generations"):
        if deadline is not None and deadline.passed:
            logger.info("BRKGA stopped by the time limit after %d generation(s)", gen)
            break
        el = _elites(F, cv, opts.population // 10)
        rest = np.setdiff1d(np.arange(len(P)), el)
        if len(rest) == 0:
            rest = el
        e = el[rng.integers(len(el), size=opts.offspring)]
        ne = rest[rng.integers(len(rest), size=opts.offspring)]
        mask = rng.random((opts.offspring, n)) < opts.bias
        children = np.where(mask, P[e], P[ne])
        new = np.vstack([children, rng.random((opts.mutants, n))])
        rn = rollout(problem, new)
        P = np.vstack([P[el], new])
        F = np.vstack([F[el], objectives(problem, rn)])
        cv = np.concatenate([cv[el], violation(problem, rn)])
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("generation %d: %d elites, %d feasible", gen, len(el), int((cv <= 0).sum()))
    return P, F, cv


def polish(problem: Problem, G: np.ndarray, iters: int = 16) -> np.ndarray:
    """Move every feasible individual towards the decision boundary, one action at a time:
    bisect the factor ``alpha`` in ``[0, 1]`` that shrinks the action's tweak value towards
    zero (in gene space ``g' = g0 + alpha (g - g0)``, ``g0`` the gene of a zero tweak)
    while the sequence stays feasible. All individuals are bisected at once. Not in the
    paper; the search's result is only improved (every polished individual is re-checked)."""
    G = np.array(G, dtype=float)
    nA = len(problem.actions)
    for j, a in enumerate(problem.actions):
        if a.kind != "add" or a.static_range is None:
            continue
        lo, hi = a.static_range
        if not lo < 0 < hi:
            continue
        g0 = -lo / (hi - lo)
        used = G[:, j] <= 0.5
        if not used.any():
            continue
        rows = np.flatnonzero(used)
        base = G[rows].copy()
        a_lo, a_hi = np.zeros(len(rows)), np.ones(len(rows))
        for _ in range(iters):
            mid = 0.5 * (a_lo + a_hi)
            trial = base.copy()
            trial[:, nA + j] = g0 + mid[:, None][:, 0] * (base[:, nA + j] - g0)
            ok = rollout(problem, trial).feasible
            a_hi = np.where(ok, mid, a_hi)
            a_lo = np.where(ok, a_lo, mid)
        G[rows, nA + j] = g0 + a_hi * (base[:, nA + j] - g0)
    return G
