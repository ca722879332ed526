r"""Counterfactuals for high-dimensional data by a mixed-discrete particle swarm
(Shekhar, Salim, Bansode, Jinturkar & Nayak, "A PSO Based Method to Generate Actionable
Counterfactuals for High Dimensional Data", arXiv 2311.12825, 2023)::

    exp = gcf.explain(x, pipe, method="pso", data=X_train, n=5, random_state=0)

Any fitted binary classifier with ``predict_proba`` works (a black box: random forests
included), in a ``Pipeline(FeatureSpace, clf)`` or bare with ``space=``.

1. **Active set** (§IV-E, :mod:`.iv`): actionable features ranked by information value
   against the model's own labels on ``data``; only the top ``h`` are searched.
   ``h`` starts at ``h0`` (40) and doubles until the swarm finds ``n`` valid points or
   every actionable feature is active; then, while nothing valid is found, the box
   half-width ``epsilon`` doubles up to ``max_epsilon``.
2. **Box and objective** (§IV, eqs. 3-7, :mod:`.box`): ``±epsilon`` around the query
   on the scaled features, increase-only features only upwards, immutable ones fixed;
   objective ``l1 + l2 + l3`` (validity shortfall + penalty, distance, fraction of
   changed features). The distance is, by default (``scale="mad"``), the mean change in
   median absolute deviations: the proximity the paper *reports* (eq. 8), not the Gower
   distance (changes in ranges) it *optimises*; ``scale="range"`` gives the paper's
   objective. Defaults were tuned by ``benchmarks/pso.py`` on tuning queries only
   (:class:`PSOOptions`).
3. **Swarm** (:mod:`.swarm`): Chowdhury et al.'s (2013) mixed-discrete PSO with its
   diversity-preservation term; snapping after every move.
4. **Diverse set** (§V-B2, :mod:`.select`): from the distinct valid personal bests
   *and* every other valid point the swarm visited, over all rounds (the personal bests
   alone collapse onto the global best), a greedy max-min pick: each next counterfactual
   minimises its objective minus ``w_diversity`` times its distance to the nearest one
   already picked, never within ``min_separation`` of one; then a greedy polish (undo /
   halve its own changes while the model still accepts, the score drops and the points
   stay apart).

5. **Model-aware local search** (``split_search``): crossings just past the split points
   of a tree ensemble (:mod:`.splits`), or, for a model without split points scored
   through its embedding (a ReLU network: exact), one-feature moves to the decision
   boundary by the embedding's line search (:mod:`.lines`), join the pool before the
   selection; only the embedding protocol is used, never the model's type.

Every returned counterfactual is re-checked on raw rows with the user's model and
against immutable / increase-only rules. No valid point in the largest box with every
actionable feature active raises :class:`~groupcf.exceptions.NoCounterfactualError`.
PSO is a heuristic: ``is_optimal`` is always False.
"""
from __future__ import annotations

import itertools
import logging
import math
import time
import warnings
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import GroupCFWarning, InvalidInputError, NoCounterfactualError, NotRejectedError
from ...features.validation import validate_instance
from ...options import deprecated_aliases
from ...progress import progress_bar
from ...results.base import Stats
from ...results.explanation import Explanation
from ...solvers.base import Status
from ..decode import decode
from .box import Box
from .iv import information_value, rank_features
from .lines import line_crossings
from .model import SwarmModel
from .params import PSOOptions
from .select import polish, select_diverse, unique_rows
from .splits import ascend, box_splits
from .swarm import run_swarm

log = logging.getLogger(__name__)

__all__ = ["PSOOptions", "explain_pso", "information_value", "rank_features"]

_RANK_CACHE: dict = {}
#: at most this many valid candidates (the cheapest) per round go to the selection
POOL_SIZE = 5000


def _ranking(bb: SwarmModel, data: pd.DataFrame, bins: int):
    """IV ranking for (model, data), cached for repeated queries on the same data."""
    ends = tuple(pd.util.hash_pandas_object(data.iloc[[0, -1]], index=False).tolist())
    key = (id(bb.model), id(bb.space), bb.space.n_features_out_, id(data), data.shape, ends, bins,
           bb.threshold, tuple(bool(f.immutable) for f in bb.space))
    hit = _RANK_CACHE.get(key)
    if hit is None:
        space = bb.space
        Zd = space.transform(data)
        y = bb.accepts(bb.score(Zd))
        hit = (*rank_features(space, space.codes(data), y, bins=bins), Zd[y], _mad_scale(space, Zd))
        if len(_RANK_CACHE) > 8:
            _RANK_CACHE.clear()
        _RANK_CACHE[key] = hit
    return hit


def _mad_scale(space, Zd: np.ndarray) -> np.ndarray:
    """Per feature, range / MAD of a continuous feature on the data (1 otherwise); a zero
    MAD counts as one raw unit, as in the reported metric (:func:`groupcf.metrics_hd.mad`),
    so the scale is then the range itself."""
    out = np.ones(len(space))
    for l, f in enumerate(space):
        if f.encoding == "continuous":
            z = Zd[:, f.columns[0]]
            m = float(np.median(np.abs(z - np.median(z))))
            R = float(f.high - f.low)
            out[l] = 1.0 / m if m > 0 else (R if R > 0 else 1.0)
    return out


def explain_pso(x, model, *, data=None, n: int = 5, space=None, threshold: float = 0.5,
                random_state=None, progress: bool = True, options: PSOOptions | None = None,
                **params) -> Explanation:
    """Up to ``n`` diverse counterfactuals of ``x`` by mixed-discrete PSO (see the module
    docstring; options: a :class:`PSOOptions` as ``options=`` and/or its fields as
    keywords). ``data``: raw rows (e.g. the training data) for the information-value
    ranking."""
    t0 = time.perf_counter()
    prm = PSOOptions.from_kwargs(options, owner="method='pso'", **params)
    if int(n) != n or n < 1:
        raise InvalidInputError(f"n must be a positive integer, got {n!r}")
    n = int(n)
    if not isinstance(data, pd.DataFrame) or len(data) < 2:
        raise InvalidInputError("method='pso' needs data= (a DataFrame of raw rows, e.g. the training "
                                "data) to rank features by information value")
    bb = SwarmModel(model, space, threshold)
    sp = bb.space
    x = validate_instance(x, sp)
    X0 = x.to_frame().T
    if bb.is_positive(X0)[0]:
        raise NotRejectedError(f"the model already accepts instance {x.name!r} "
                               f"(p = {bb.proba(X0)[0]:.3f} >= {threshold}); nothing to explain")
    z0 = sp.transform(X0)[0]
    order, iv, guides, mad_scale = _ranking(bb, data, prm.iv_bins)
    if len(order) == 0:
        raise NoCounterfactualError("every feature is immutable: nothing can change")
    seed = int(np.random.default_rng(random_state).integers(2**31 - 1))
    rng = np.random.default_rng(seed)
    h = min(prm.h or prm.h0, len(order))
    eps = prm.epsilon
    pool_Z: list[np.ndarray] = []
    pool_cost: list[np.ndarray] = []
    rounds: list[dict[str, Any]] = []
    change_tol = prm.change_tol
    assert change_tol is not None       # PSOOptions fills the scale's default
    box: Box | None = None
    for _ in progress_bar(itertools.count(), enabled=progress, desc="PSO rounds"):
        mad = prm.scale == "mad"
        box = Box(sp, z0, order[:h], eps, change_tol, mad_scale if mad else None, mad_units=mad)
        res = run_swarm(box, bb, prm, rng, seed + len(rounds), guides if prm.seed_with_data else None)
        rounds.append({"h": h, "epsilon": eps, "iterations": res.iterations, "stopped_by": res.stopped_by,
                       "valid_pbests": int(res.pbest_valid.sum()), "best_proba": res.best_proba})
        Pp = np.vstack([res.pbest[res.pbest_valid], res.archive])
        cp = np.concatenate([res.pbest_cost[res.pbest_valid], res.archive_cost])
        best = np.argsort(cp, kind="stable")[:POOL_SIZE]       # the best valid points only
        Zp, cp = unique_rows(box.full(Pp[best]), cp[best], box.cols)
        pool_Z.append(Zp)
        pool_cost.append(cp)
        pick, Z = _pick(box, pool_Z, pool_cost, n, prm)
        if len(pick) >= n:
            break
        if h < len(order):
            h = min(len(order), math.ceil(h * prm.h_growth))
        elif eps < prm.max_epsilon and not sum(len(p) for p in pool_Z):
            eps = min(prm.max_epsilon, 2 * eps)
        else:
            break
    assert box is not None                 # the loop ran at least once
    box, splits = _split_box(box, bb, z0, order, mad_scale, prm)
    if splits:                                    # threshold-aware crossings join the pool
        Pa, ca = ascend(box, bb, splits, prm, rng, restarts=min(n, prm.ascents))
        if len(Pa):
            Za, ca = unique_rows(box.full(Pa), ca, box.cols)
            pool_Z.append(Za)
            pool_cost.append(ca)
            pick, Z = _pick(box, pool_Z, pool_cost, n, prm)
        rounds[-1]["crossings"] = len(Pa)
    elif prm.split_search and bb.embedded:     # no split points (networks): one-feature moves to the boundary
        box = _line_box(box, bb, z0, order, mad_scale, prm)
        Pl = line_crossings(box, bb)
        if len(Pl):
            Zl, cl = unique_rows(box.full(Pl), _costs(box, Pl, prm), box.cols)
            pool_Z.append(Zl)
            pool_cost.append(cl)
            pick, Z = _pick(box, pool_Z, pool_cost, n, prm)
        rounds[-1]["crossings"] = len(Pl)
    if len(Z) == 0:
        top = max(r["best_proba"] for r in rounds)
        raise NoCounterfactualError(
            f"no counterfactual found: none of the {prm.n_particles} particles crossed the decision "
            f"boundary; the highest probability of the desired class the swarm reached "
            f"was {top:.3f} (threshold {threshold}; the query's {bb.proba(X0)[0]:.3f}) over "
            f"{sum(r['iterations'] for r in rounds)} iterations in {len(rounds)} rounds, within ±{eps} "
            f"(scaled) of the query with the top {h} of {len(order)} actionable features active"
            + (f" changing at most Tmax={prm.Tmax} features" if prm.Tmax is not None else "")
            + "; try a larger epsilon= or more n_iterations=")
    note = ""
    if len(pick) < n:
        note = _shortfall_note(len(pick), n, len(Z), rounds, prm, threshold, float(bb.proba(X0)[0]))
        warnings.warn(f"PSO: {note}", GroupCFWarning, stacklevel=2)
    Zs = Z[pick]
    if prm.polish:
        Zs = polish(box, bb, Zs, prm, splits=splits)
    Zs, _ = unique_rows(Zs, np.arange(len(Zs), dtype=float), box.cols)
    return _result(x, bb, box, Zs, z0, prm, t0, rounds, iv, order, note)


def _shortfall_note(k, n, n_valid, rounds, prm, threshold, p0) -> str:
    """Why fewer than ``n`` counterfactuals: how many particles never crossed the
    boundary (last round), the highest probability reached and how few distinct valid
    points there were."""
    last = rounds[-1]
    never = prm.n_particles - last["valid_pbests"]
    top = max(r["best_proba"] for r in rounds)
    return (f"{k} of {n} counterfactuals: {never} of the {prm.n_particles} particles never crossed the "
            f"decision boundary in the last of {len(rounds)} rounds (top {last['h']} features, "
            f"±{last['epsilon']:g}); the highest probability of the desired class reached was {top:.3f} "
            f"(threshold {threshold}; the query's {p0:.3f}); the {n_valid} distinct valid points found are "
            f"within min_separation={prm.min_separation:g} of each other: the model's accepted region "
            f"near the query is small, or the model is flat around it")


def _split_box(box, bb, z0, order, mad_scale, prm):
    """``(box, splits)`` of the threshold-aware search and the polish: with
    ``ascent_scope="all"``, a box over every actionable feature and its whole range
    (``max_epsilon``; the cheapest crossings in MADs are often on features of low
    information value, outside the swarm's active set), else the swarm's last box;
    ``splits`` ``None`` without ``split_search`` or split points."""
    points = bb.split_points() if prm.split_search else None
    if points is None:
        return box, None
    if prm.ascent_scope == "all":
        mad = prm.scale == "mad"
        box = Box(bb.space, z0, order, prm.max_epsilon, prm.change_tol, mad_scale if mad else None, mad_units=mad)
    return box, box_splits(box, points)


def _line_box(box, bb, z0, order, mad_scale, prm):
    """The box of the line crossings and the polish: every actionable feature over its
    whole range with ``ascent_scope="all"``, else the swarm's last box."""
    if prm.ascent_scope != "all":
        return box
    mad = prm.scale == "mad"
    return Box(bb.space, z0, order, prm.max_epsilon, prm.change_tol, mad_scale if mad else None, mad_units=mad)


def _costs(box, P, prm):
    """The objective of accepted points ``P`` (box columns)."""
    l2, l3 = box.terms(P)
    return prm.w_proximity * l2 + prm.w_sparsity * l3


def _pick(box, pool_Z, pool_cost, n, prm):
    """Indices of the diverse pick among the distinct pooled rows, and those rows."""
    Z, cost = unique_rows(np.vstack(pool_Z), np.concatenate(pool_cost), box.cols)
    return select_diverse(box, Z[:, box.cols], cost, n, prm), Z


def _result(x, bb, box, Zs, z0, prm, t0, rounds, iv, order, note="") -> Explanation:
    sp = bb.space
    # every feature the search moved is decoded, however small the move (a crossing just
    # past a split point of a feature whose range is ~10^6 MADs is below decode's own
    # change tolerance, which would put the query's value back)
    moved = [{l for l, f in enumerate(sp) if np.any(z[f.columns] != z0[f.columns])} for z in Zs]
    rows = pd.concat([decode(sp, x, z, z0, keep=k) for z, k in zip(Zs, moved)], ignore_index=True)
    ok = bb.is_positive(rows) & _actionable(sp, x, rows)
    if prm.Tmax is not None:
        ok &= (np.abs(sp.codes(rows) - sp.codes(x.to_frame().T)) > 1e-9).sum(axis=1) <= prm.Tmax
    if not ok.all():
        warnings.warn(f"PSO: {int((~ok).sum())} candidate(s) dropped: the real model rejects them, they "
                      "break actionability on raw values or change more than Tmax features",
                      GroupCFWarning, stacklevel=2)
        note = (note + "; " if note else "") + f"{int((~ok).sum())} dropped by the re-check"
    rows, Zs = rows[ok].reset_index(drop=True), Zs[ok]
    if len(rows) == 0:
        raise NoCounterfactualError("PSO: no candidate survived the re-check with the real model")
    P = Zs[:, box.cols]
    l2, _ = box.terms(P)
    D = box.feature_deltas(P)
    changes = [[sp.features_[box.active[a]].name for a in np.flatnonzero(D[i] > 0)] for i in range(len(P))]
    order_k = np.argsort(l2, kind="stable")
    rows = rows.iloc[order_k].reset_index(drop=True)
    return Explanation(
        instance=x, counterfactuals=rows, changes=[changes[i] for i in order_k],
        distances=[float(l2[i]) for i in order_k], probabilities=bb.proba(rows),
        status=Status.FEASIBLE, is_optimal=False, solve_time=time.perf_counter() - t0, method="pso",
        distance_name="gower" if prm.scale == "range" else "mad", solver="mdpso",
        stats=Stats({"rounds": rounds, "h": rounds[-1]["h"], "model_calls": bb.n_calls,
                     "params": asdict(prm), "top_features": [sp.features_[l].name for l in order[:10]],
                     "note": note}))


def _actionable(space, x, rows: pd.DataFrame) -> np.ndarray:
    """Immutable features unchanged, increase-only ones not decreased (feature codes)."""
    xc, C = space.codes(x.to_frame().T)[0], space.codes(rows)
    ok = np.ones(len(rows), dtype=bool)
    for l, f in enumerate(space):
        if f.immutable:
            ok &= np.abs(C[:, l] - xc[l]) <= 1e-9
        if f.increase_only:
            ok &= C[:, l] >= xc[l] - 1e-9
    return ok

__getattr__ = deprecated_aliases(__name__, {'PSOParams': PSOOptions})
