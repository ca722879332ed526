r"""MACE on ReLU networks: an upper bound from numpy, the exact single-change scan, a radius.

The MIP's LP relaxation of a ReLU network is weak (on Credit's 20×20 MLP its root bound is
0: the big-M hull reaches the score threshold without moving the instance), so the solver
proves optimality by branching alone. Most nearest counterfactuals change one or two
features, and a good upper bound :math:`U` confines the search to a small box, where
most neurons are stable (no binary) and the big-M constants are small.

1. **Single changes** (:func:`best_single`, exact): for every mutable feature the cheapest
   accepted point that changes it alone — every other category or binary value, every
   value of an integer grid (ranges up to
   :data:`~groupcf.formulations.nearest.MAX_INTEGER_RANGE`, as in the MIP), and for a
   real-valued column the first point, in each direction, where the score reaches the
   bound (:meth:`~groupcf.embeddings.network.ReLUNetwork.first_crossing`, exact along a
   segment: the score is piecewise linear there). An integer column with a wider range
   (solved continuous by the MIP, rounded when decoded) is rounded away from
   :math:`x^0`; the unrounded crossing is the lower bound.
2. **Several changes** (:func:`upper_bound`, when the best single change leaves room for
   two changes): the greedy completion
   (:meth:`~groupcf.formulations.completion.Completions.check`) and a pair search
   (:func:`best_pair`: the discrete changes of highest score combined with every other
   discrete change, or moved along every real-valued column to the first crossing), each
   polished by coordinate descent: each changed feature is reset to :math:`x^0` when the
   point stays accepted, else a real-valued one is moved back to the first crossing from
   :math:`x^0`.
3. **Radius** (:func:`radius_box`): with weights :math:`w_0, w_1, w_\infty`, changing
   feature :math:`l` by :math:`\delta > 0` costs at least
   :math:`(w_0 + w_1\delta)/|T| + w_\infty\delta`, so no solution of objective
   :math:`\le U` moves a continuous column by more than
   :math:`r = (U - w_0/|T|)/(w_1/|T| + w_\infty)` nor changes a discrete feature whose
   cheapest change costs more than :math:`U`; and at most
   :math:`k = \lfloor U|T|/w_0 \rfloor` features change; their l1 part (continuous
   moves plus discrete distances) is at most :math:`(U - w_0/|T|)\,|T|/w_1`. The MIP is
   built over the box :math:`[x^0 - r, x^0 + r]` with :math:`\sum_l f_l \le k`, and its
   neuron bounds (big-M constants, which neurons need a binary) hold over the box within
   that budget (:func:`tightened_embedding`; the second layer by LP with ``obbt``). When
   :math:`k \le 1` the optimum is the best single change of step 1 and no MIP is solved.
   Valid for the best counterfactual only (``n = 1``).
"""
from __future__ import annotations

import math

import numpy as np

from ..embeddings.search import SearchProblem
from ..embeddings.tighten import Option, budget_tightened
from ..features.domain import InputDomain
from ..formulations.completion import Completions
from ..formulations.distances import feature_measure
from ..formulations.nearest import MAX_INTEGER_RANGE
from .decode import round_away
from .radius import Radius, category_changes, deltas, max_changes

#: discrete changes (highest score first) that :func:`best_pair` extends by a second change
PAIR_BEAM = 12


def _grid(f, z0c: float):
    """``(low, range)`` when feature ``f``'s column is solved on its integer grid."""
    rng = f.high - f.low
    raw0 = f.low + z0c * rng
    if f.integer and 0 < rng <= MAX_INTEGER_RANGE and abs(raw0 - round(raw0)) <= 1e-9 * max(1.0, abs(raw0)):
        return f.low, rng
    return None


def _crossing(emb, z, c: int, target: float, lo: float):
    """First point from ``z`` towards ``z[c] = target`` (column ``c`` only) with score
    ``>= lo``: the new value of ``z[c]``, or ``None``."""
    span = target - z[c]
    if span == 0:
        return None
    d = np.zeros_like(z)
    d[c] = math.copysign(1.0, span)
    t = emb.first_crossing(z, d, abs(span), lo)
    return None if t is None else float(z[c] + d[c] * t)


def _discrete_changes(space, z0, lb, ub, can_change):
    """Every single change of a one-hot, binary or integer-grid feature: rows of points and
    the feature each changes."""
    rows, feats = [], []
    for l, f in enumerate(space):
        if not can_change[l] or f.immutable:
            continue
        cols = np.asarray(f.columns)
        vals = category_changes(f, z0, lb, ub)
        if vals is None and (grid := _grid(f, z0[cols[0]])) is not None:
            low, rng = grid
            c = int(cols[0])
            raw = np.arange(math.ceil(low + lb[c] * rng - 1e-9), math.floor(low + ub[c] * rng + 1e-9) + 1)
            vals = [np.array([v]) for v in (raw - low) / rng if abs(v - z0[c]) > 1e-12]
        for val in vals or ():
            z = z0.copy()
            z[cols] = val
            rows.append(z)
            feats.append(l)
    return np.array(rows).reshape(-1, len(z0)), np.array(feats, dtype=np.int64)


def _real_columns(space, z0, can_change):
    """``(feature, column)`` of the mutable real-valued columns (no integer grid)."""
    return [(l, int(f.columns[0])) for l, f in enumerate(space)
            if can_change[l] and not f.immutable and f.encoding == "continuous" and _grid(f, z0[f.columns[0]]) is None]


def _along(space, emb, z, l, c, lb, ub, score_lo):
    """From ``z``, the first accepted points along column ``c`` (both directions):
    ``(rounded, unrounded)`` lists (wide integers rounded away from ``z``)."""
    f = space.features_[l]
    out, raw = [], []
    for target in (lb[c], ub[c]):
        v = _crossing(emb, z, c, float(target), score_lo)
        if v is None:
            continue
        p = z.copy()
        p[c] = v
        raw.append(p.copy())
        p[c] = min(max(round_away(f, v, target > z[c]), lb[c]), ub[c])
        out.append(p)
    return out, raw


def best_single(space, emb, z0, lb, ub, can_change, distance, score_lo):
    """The cheapest accepted single-feature change: ``(point, objective, lower)``, or
    ``(None, inf, inf)``; ``lower`` (``<= objective``) is the exact minimum over single
    changes when wide integer columns may take real values (module doc, step 1)."""
    z0 = np.asarray(z0, dtype=float)
    Z, _ = _discrete_changes(space, z0, lb, ub, can_change)
    rows, lows = list(Z), []
    for l, c in _real_columns(space, z0, can_change):
        out, raw = _along(space, emb, z0, l, c, lb, ub, score_lo)
        rows.extend(out)
        lows.extend(raw)
    if not rows:
        return None, math.inf, math.inf
    Z = np.array(rows)
    ok = emb.score(Z) >= score_lo
    lower = float(distance.aggregate(deltas(space, z0, np.array(lows))).min()) if lows else math.inf
    if not ok.any():
        return None, math.inf, lower
    obj = distance.aggregate(deltas(space, z0, Z[ok]))
    k = int(np.argmin(obj))
    return Z[ok][k], float(obj[k]), min(lower, float(obj[k]))


def best_pair(space, emb, z0, lb, ub, can_change, distance, score_lo, bound):
    """A cheap accepted two-feature change below ``bound`` (a heuristic, module doc step 2):
    the :data:`PAIR_BEAM` discrete changes of highest score that leave room for a second
    change, combined with every other discrete change and moved along every real-valued
    column to the first crossing. ``(point, objective)`` or ``(None, inf)``."""
    z0 = np.asarray(z0, dtype=float)
    Z, feat = _discrete_changes(space, z0, lb, ub, can_change)
    if not len(Z):
        return None, math.inf
    cost = distance.aggregate(deltas(space, z0, Z))
    keep = np.flatnonzero(cost + distance.l0 / max(len(space), 1) < bound)
    top = keep[np.argsort(-emb.score(Z[keep]))][:PAIR_BEAM]
    cand = []
    for i in top:
        others = keep[feat[keep] != feat[i]]
        P = Z[others].copy()
        cols = space.features_[feat[i]].columns
        P[:, cols] = Z[i, cols]
        cand.extend(P)
        for l, c in _real_columns(space, z0, can_change):
            cand.extend(_along(space, emb, Z[i], l, c, lb, ub, score_lo)[0])
    if not cand:
        return None, math.inf
    P = np.array(cand)
    P = P[emb.score(P) >= score_lo]
    if not len(P):
        return None, math.inf
    obj = distance.aggregate(deltas(space, z0, P))
    k = int(np.argmin(obj))
    return P[k], float(obj[k])


def polish(space, emb, z0, v, distance, score_lo, lb, ub):
    """Coordinate descent on an accepted point ``v`` (module doc, step 2)."""
    v = np.array(v, dtype=float)

    def cost(l):
        return float(distance.aggregate(deltas(space, z0, _only(z0, v, space.features_[l].columns)))[0])

    for _ in range(2):
        changed = [l for l, f in enumerate(space) if np.abs(v[f.columns] - z0[f.columns]).max() > 1e-12]
        for l in sorted(changed, key=lambda l: -cost(l)):
            f = space.features_[l]
            trial = v.copy()
            trial[f.columns] = z0[f.columns]
            if emb.score(trial)[0] >= score_lo:
                v = trial
                continue
            if f.encoding != "continuous":
                continue
            c = int(f.columns[0])
            new = _crossing(emb, trial, c, float(v[c]), score_lo)
            if new is None:
                continue
            up = v[c] > z0[c]
            grid = _grid(f, z0[c])
            if grid is not None:
                low, rng = grid
                raw = low + new * rng
                new = ((math.ceil(raw - 1e-9) if up else math.floor(raw + 1e-9)) - low) / rng
            else:
                new = round_away(f, new, up)
            trial[c] = min(max(new, lb[c]), ub[c])
            if emb.score(trial)[0] >= score_lo and abs(trial[c] - z0[c]) < abs(v[c] - z0[c]):
                v = trial
    return v


def _only(z0, v, cols):
    z = z0.copy()
    z[cols] = v[cols]
    return z[None, :]


def upper_bound(space, emb, z0, lb, ub, can_change, distance, score_lo, Tmax=None, bound=math.inf):
    """``(point, objective)`` of the best accepted point below ``bound`` found by the
    greedy completion and the pair search, polished, or ``(None, inf)``; points break no
    bound and change at most ``Tmax`` features."""
    z0 = np.asarray(z0, dtype=float)
    found = []
    ok, v, _ = Completions(space, emb, score_lo).check(z0, (), len(space) if Tmax is None else int(Tmax),
                                                       prove=False)
    if ok:
        found.append(polish(space, emb, z0, v, distance, score_lo, lb, ub))
        bound = min(bound, _objective(space, distance, z0, found[-1]))
    if Tmax is None or Tmax >= 2:
        pair, _ = best_pair(space, emb, z0, lb, ub, can_change, distance, score_lo, bound)
        if pair is not None:
            found.append(polish(space, emb, z0, pair, distance, score_lo, lb, ub))
    best, best_obj = None, math.inf
    for v in found:
        changed = [l for l, f in enumerate(space) if np.abs(v[f.columns] - z0[f.columns]).max() > 1e-12]
        obj = _objective(space, distance, z0, v)
        if (obj < best_obj and emb.score(v)[0] >= score_lo and np.all(v >= lb - 1e-12) and np.all(v <= ub + 1e-12)
                and all(can_change[l] for l in changed) and (Tmax is None or len(changed) <= Tmax)):
            best, best_obj = v, obj
    return best, best_obj


def _objective(space, distance, z0, v) -> float:
    return float(distance.aggregate(deltas(space, z0, v[None, :]))[0])


def tightened_embedding(space, emb, z0, box: Radius, lp: bool = False):
    """The network with pre-activation bounds over the box and the budget
    (:func:`~groupcf.embeddings.tighten.budget_tightened`; with ``lp``, the second layer
    by LP): for the MIP built over ``box``. Every solution of objective ``<= U`` changes
    some feature, so its l1 part, the continuous moves :math:`|\\delta_c|` plus the
    discrete distances (1 for another category or binary value, :math:`|h - h_0|/(k-1)`
    on an ordinal), is at most ``box.budget`` :math:`= (U - w_0/|T|)\\,|T|/w_1`."""
    z0 = np.asarray(z0, dtype=float)
    dom = space.domain()
    domain = InputDomain(box.lb, box.ub, dom.integer, dom.onehot, dom.grids)
    cols, options = [], []
    for l, f in enumerate(space):
        if not box.can_change[l]:
            continue
        c = np.asarray(f.columns)
        if f.encoding == "continuous":
            cols.append(int(c[0]))
        elif f.encoding == "binary":
            new = 1.0 - z0[c[0]]
            if box.lb[c[0]] <= new <= box.ub[c[0]]:
                options.append(Option(c, np.array([new]), 1.0, int(c[0]), 1.0 - 2.0 * z0[c[0]], z0[c[0]]))
        else:
            h0 = int(np.argmax(z0[c]))
            ordinal = feature_measure(f) == "ordinal"
            for h in range(len(c)):
                if h != h0 and box.ub[c[h]] >= 0.5:
                    cost = abs(h - h0) / (len(c) - 1) if ordinal else 1.0
                    options.append(Option(c, np.eye(len(c))[h], cost, int(c[h]), 1.0, 0.0))
    return budget_tightened(emb, domain, z0, np.array(cols, dtype=np.int64), box.budget, lp=lp, options=options)


def search(space, emb, z0, lb, ub, can_change, distance, strict, score_lo, Tmax=None, radius=True):
    """Steps 1–3 of the module doc for a MIP with bounds ``lb, ub, can_change`` and score
    bound ``score_lo``: ``(stats, point, box)``. ``point`` (score ``>= strict``, a bound
    valid for every margin retry; ``None`` if none was found) is the MIP start; ``box``
    (a :class:`Radius`, ``None`` without ``radius``) the radius. With
    ``stats["single_optimal"]`` the point is the proven optimum (the best single change,
    at ``score_lo``) and ``stats["lower_bound"]`` its bound."""
    point, obj, _ = best_single(space, emb, z0, lb, ub, can_change, distance, strict)
    k = max_changes(space, distance, obj) if point is not None else None
    if not (radius and k is not None and k <= 1):     # (else no better point changes two features)
        more, m_obj = upper_bound(space, emb, z0, lb, ub, can_change, distance, strict, Tmax=Tmax, bound=obj)
        if more is not None and m_obj < obj:
            point, obj = more, m_obj
    stats = {"upper_bound": obj}
    if point is None or not radius:
        return stats, point, None
    k = max_changes(space, distance, obj)
    if k is not None and k <= 1:      # at most one feature changes: the scan is the optimum
        single, s_obj, s_low = best_single(space, emb, z0, lb, ub, can_change, distance, score_lo)
        tol = 1e-6 * max(1.0, abs(s_obj))   # as mace's decoded-vs-objective check (wide integers)
        if single is not None and s_obj <= obj and s_obj <= s_low + tol:
            stats.update(upper_bound=s_obj, lower_bound=s_low, single_optimal=True)
            return stats, single, None
    box = emb.radius(SearchProblem(space, z0, lb, ub, can_change, distance, strict, score_lo, Tmax), obj)
    stats.update(max_changes=k, fixed_features=int(np.sum(can_change & ~box.can_change)))
    return stats, point, box
