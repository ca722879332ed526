r"""Mixed-discrete particle swarm (Chowdhury, Tong, Messac & Zhang, "A mixed-discrete
particle swarm optimization algorithm with explicit diversity-preservation", Struct.
Multidisc. Optim. 47, 2013), vectorised over the swarm.

Velocity of particle :math:`i` (all products element-wise, :math:`r_\cdot \sim U(0,1)`):

.. math::

    v_i \leftarrow w\,v_i + c_1 r_1 (p_i - x_i) + c_2 r_2 (g - x_i)
                 + \gamma_c\, r_3\, (x_i - g),
    \qquad x_i \leftarrow \mathrm{snap}(\mathrm{clip}(x_i + v_i))

with :math:`p_i` the particle's best, :math:`g` the swarm's best, and the diversity
weight :math:`\gamma_c = \gamma\,\max(0, 1 - D/D_0)` growing from 0 to :math:`\gamma`
as the swarm's spread :math:`D` (mean distance to its centroid, per unit of box width)
falls below its initial value :math:`D_0`. A move that leaves the box stops at the
bound (the velocity is truncated to the move actually made). Initial positions: a
scrambled Sobol sequence over the box, each particle then keeping only a random share
of its changes (so sparse starts exist; particle 0 is the query itself); up to a tenth
of the swarm starts at the accepted data rows nearest the query, moved into the box
(our addition: it lets a swarm start on the valid side where the box reaches it).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from scipy.stats import qmc

from .box import Box

log = logging.getLogger(__name__)


@dataclass
class SwarmResult:
    """Personal bests (``pbest``, ``pbest_cost``, ``pbest_valid``), every valid point
    visited (``archive`` rows, ``archive_cost``), iterations run, why it stopped and the highest
    probability of the desired class seen (``best_proba``)."""

    pbest: np.ndarray
    pbest_cost: np.ndarray
    pbest_valid: np.ndarray
    archive: np.ndarray
    archive_cost: np.ndarray
    iterations: int
    stopped_by: str
    best_proba: float = float("nan")


def run_swarm(box: Box, bb, params, rng: np.random.Generator, seed: int,
              guides: np.ndarray | None = None) -> SwarmResult:
    """Minimise the objective of ``box`` for the model ``bb`` (a :class:`~groupcf.single.pso.model.SwarmModel`).
    ``guides``: encoded rows the model accepts (e.g. of the training data); the nearest
    ones, moved into the box, seed up to a tenth of the swarm."""
    m, d = params.n_particles, box.dim
    thr = bb.threshold

    top = [-np.inf]

    def evaluate(P):
        p = bb.score(box.full(P))
        top[0] = max(top[0], float(np.max(p, initial=-np.inf)))
        valid = bb.accepts(p) & box.within(P, params.Tmax)
        cost = box.objective(P, p, valid, thr, params.invalid_penalty, params.w_proximity, params.w_sparsity)
        return cost, valid

    X = _initial(box, m, rng, seed, guides, params.Tmax)
    V = np.zeros((m, d))
    cost, valid = evaluate(X)
    pb, pb_cost, pb_valid = X.copy(), cost.copy(), valid.copy()
    arch, arch_cost = [X[valid]], [cost[valid]]
    g = int(np.argmin(pb_cost))
    best, stall, spread0 = pb_cost[g], 0, None
    stopped, it = "iterations", 0
    for it in range(1, params.n_iterations + 1):  # noqa: B007 (`it` is reported after the loop)
        gpos = pb[g]
        spread = float(np.mean(np.linalg.norm((X - X.mean(axis=0)) / box.width, axis=1)))
        if spread0 is None:
            spread0 = max(spread, 1e-12)
        gamma = params.diversity * max(0.0, 1.0 - spread / spread0)
        r1, r2, r3 = rng.random((3, m, d))
        V = (params.inertia * V + params.cognitive * r1 * (pb - X) + params.social * r2 * (gpos - X)
             + gamma * r3 * (X - gpos))
        moved = box.clip(X + V)
        V = moved - X
        X = box.snap(moved)
        cost, valid = evaluate(X)
        better = cost < pb_cost
        pb[better], pb_cost[better], pb_valid[better] = X[better], cost[better], valid[better]
        if valid.any():
            arch.append(X[valid])
            arch_cost.append(cost[valid])
        g = int(np.argmin(pb_cost))
        if pb_cost[g] < best - 1e-12:
            best, stall = pb_cost[g], 0
        else:
            stall += 1
            if stall >= params.patience:
                stopped = "patience"
                break
    log.debug("swarm: %d active features, %d columns, %d iterations (%s), %d valid pbests",
              len(box.active), d, it, stopped, int(pb_valid.sum()))
    return SwarmResult(pb, pb_cost, pb_valid, np.concatenate(arch), np.concatenate(arch_cost), it, stopped,
                       top[0])


def _initial(box: Box, m: int, rng: np.random.Generator, seed: int, guides=None,
             Tmax: int | None = None) -> np.ndarray:
    d = box.dim
    sob = (qmc.Sobol(d, scramble=True, seed=seed).random_base2(int(np.ceil(np.log2(m))))[:m]
           if d else np.zeros((m, 0)))
    P = box.lo + sob * (box.hi - box.lo)
    share = rng.random(m)[:, None]                      # each particle's share of changed features
    if Tmax is not None and len(box.active):
        share = share * min(1.0, Tmax / len(box.active))
    keep_feature = rng.random((m, len(box.active))) < share
    keep = keep_feature[:, box.owner]
    P = np.where(keep, P, box.p0)
    P[0] = box.p0
    if guides is not None and len(guides) and m > 2:
        G = box.snap(guides[:, box.cols])
        g = min(len(G), max(1, m // 10))
        near = np.argsort(np.abs(G - box.p0).sum(axis=1), kind="stable")[:g]
        P[1:1 + g] = G[near]
    return box.snap(P)
