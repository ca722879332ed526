r"""Tighter pre-activation bounds for a ReLU network inside a MIP: smaller big-M
constants and fewer unstable neurons, same model. Any other embedding is returned
unchanged.

* :func:`tightened` (used by :mod:`groupcf.sequential.bound`): LP-based, second layer.
* :func:`budget_tightened` (used by MACE with a radius, :mod:`groupcf.single.net_bound`):
  over the domain intersected with a budget
  :math:`\sum_{c \in B} |x_c - z_c| + \sum_o \kappa_o\, [\text{option } o] \le \beta`
  on the continuous columns :math:`B` and discrete changes ("options" :math:`o`: another
  category or binary value, costing :math:`\kappa_o > 0`). Layer 1 per neuron: the other
  columns over their domain (:meth:`InputDomain.interval_bounds`, budgeted columns at
  :math:`z`) plus the largest (smallest) change of the pre-activation within the budget,
  bounded by a fractional knapsack — items are the continuous columns (gain
  :math:`|W_{jc}|` per unit, as far as the column's bound allows in the favourable
  direction) and the options (gain :math:`W_j (x^o - z)` for cost :math:`\kappa_o`, at
  most once each; several options of one feature may be taken, which only loosens the
  bound), taken by decreasing gain per cost until the budget is spent. Later layers by
  interval arithmetic. With ``lp=True`` the second layer's still unstable neurons are
  then minimised and maximised over the LP: the domain (one-hot rows), the budget row
  (:math:`e_c \ge \pm(x_c - z_c)` for the continuous part, each option's indicator
  linear in :math:`x`), and layer 1 by its big-M hull over the bounds just computed
  (binaries relaxed).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from groupcf.embeddings._typing import ArrayLike, FloatArray, IntArray
from groupcf.embeddings.network import ReLUNetwork
from groupcf.solvers.base import Status

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.base import Embedding
    from groupcf.features.domain import InputDomain
    from groupcf.solvers.base import Backend

#: pre-activation bounds ``(L, U)`` of one layer
Bounds = tuple[FloatArray, FloatArray]
#: what :func:`tightened`'s ``build`` returns: the MIP so far (backend, three blocks of
#: variables the caller uses), the model's input variables and their domain
Built = tuple["Backend", Any, Any, Any, ArrayLike, "InputDomain"]

INF = math.inf


class _Tight(ReLUNetwork):
    """The same network with precomputed (tighter) pre-activation bounds."""

    def __init__(self, layers: Sequence[tuple[ArrayLike, ArrayLike | None]], bounds: list[Bounds]) -> None:
        super().__init__(layers)
        self._bounds = bounds

    def bounds(self, domain: InputDomain) -> list[Bounds]:
        return self._bounds


def tightened(emb: Embedding, build: Callable[[], Built]) -> Embedding:
    """LP-based tightening of the second layer's pre-activation bounds: maximise and
    minimise each neuron over the LP relaxation (layer 1 by its exact big-M hull) of the
    whole MIP without the rest of the network; later layers by interval arithmetic."""
    if not isinstance(emb, ReLUNetwork) or len(emb.layers) < 3:
        return emb
    be, _u, _d, _c, x_idx, domain = build()
    bounds = emb.bounds(domain)
    (W0, b0), (W1, b1) = emb.layers[0], emb.layers[1]
    first = ReLUNetwork([(W0, b0), (W1[:1], b1[:1])])
    con = first.add_to(be, x_idx, domain)
    nb = be.num_vars
    be.set_vtype(np.arange(nb), "C")
    h = con.hidden[0]
    alive = h >= 0
    L, U = bounds[1][0].copy(), bounds[1][1].copy()
    for k in range(W1.shape[0]):
        for sense in ("min", "max"):
            be.set_objective(h[alive], W1[k, alive], sense, float(b1[k]))
            sol = be.solve()
            if sol.status is Status.INFEASIBLE:
                return _Tight(emb.layers, [(np.full_like(lo, 1.0), np.full_like(lo, -1.0))
                                           for lo, _ in bounds])   # empty: caller sees infeasible
            v = sol.dual_bound if sol.dual_bound is not None else sol.objective
            if sol.status.has_solution and v is not None:      # a solution has an objective
                if sense == "min":
                    L[k] = max(L[k], v - 1e-7)
                else:
                    U[k] = min(U[k], v + 1e-7)
    out = [bounds[0], (L, U)]
    lo, hi = L, U
    for W, b in emb.layers[2:]:
        Wp, Wn = np.maximum(W, 0), np.minimum(W, 0)
        ylo, yhi = np.maximum(lo, 0), np.maximum(hi, 0)
        lo, hi = b + Wp @ ylo + Wn @ yhi, b + Wp @ yhi + Wn @ ylo
        out.append((lo, hi))
    return _Tight(emb.layers, out)


def _knapsack(A: FloatArray, room: FloatArray, budget: float) -> FloatArray:
    """Per row ``j``: max of ``sum_i A[j, i] d_i`` over ``0 <= d_i <= room[j, i]``,
    ``sum_i d_i <= budget`` (``A >= 0``; greedy by decreasing ``A``: exact for a
    fractional knapsack)."""
    order = np.argsort(-A, axis=1)
    a = np.take_along_axis(A, order, axis=1)
    r = np.take_along_axis(room, order, axis=1)
    before = np.cumsum(r, axis=1) - r                  # budget spent by the better items
    take = np.clip(budget - before, 0.0, r)
    out: FloatArray = (a * take).sum(axis=1)
    return out


class Option(NamedTuple):
    """A discrete change in the budget: columns ``cols`` set to ``values``, costing
    ``cost`` (> 0); in the LP its indicator is ``const + sign * x[col]``."""

    cols: IntArray
    values: FloatArray
    cost: float
    col: int
    sign: float
    const: float


def budget_tightened(emb: Embedding, domain: InputDomain, z: FloatArray, cols: ArrayLike, budget: float,
                     lp: bool = False, options: Sequence[Option] = ()) -> Embedding:
    """``emb`` with pre-activation bounds over ``domain`` and the budget (module doc):
    continuous columns ``cols`` cost ``|x_c - z_c|``, discrete changes their ``options``."""
    if not isinstance(emb, ReLUNetwork) or emb.is_linear or not np.isfinite(budget):
        return emb
    from groupcf.features.domain import InputDomain

    budgeted = np.asarray(cols, dtype=np.int64)
    lb, ub = domain.lb.copy(), domain.ub.copy()
    for c in [budgeted, *(o.cols for o in options)]:
        lb[c] = ub[c] = z[c]
    rest = InputDomain(lb, ub, domain.integer, domain.onehot, domain.grids)
    W, b = emb.layers[0]
    lo, hi = rest.interval_bounds(W, b)
    Wc = W[:, budgeted]
    up = np.maximum(domain.ub[budgeted] - z[budgeted], 0.0)
    down = np.maximum(z[budgeted] - domain.lb[budgeted], 0.0)
    cost = np.array([o.cost for o in options])
    G = np.array([W[:, o.cols] @ (o.values - z[o.cols]) for o in options]).reshape(len(options), len(W)).T / cost
    room_o = np.broadcast_to(cost, G.shape)
    hi = hi + _knapsack(np.hstack([np.abs(Wc), np.maximum(G, 0)]),
                        np.hstack([np.where(Wc > 0, up, down), room_o]), budget)
    lo = lo - _knapsack(np.hstack([np.abs(Wc), np.maximum(-G, 0)]),
                        np.hstack([np.where(Wc > 0, down, up), room_o]), budget)
    base = emb.bounds(domain)
    out = [(np.maximum(lo, base[0][0]), np.minimum(hi, base[0][1]))]
    for W, b in emb.layers[1:]:
        Wp, Wn = np.maximum(W, 0), np.minimum(W, 0)
        ylo, yhi = np.maximum(out[-1][0], 0), np.maximum(out[-1][1], 0)
        L, U = b + Wp @ ylo + Wn @ yhi, b + Wp @ yhi + Wn @ ylo
        k = len(out)
        out.append((np.maximum(L, base[k][0]), np.minimum(U, base[k][1])))
        if lp and k == 1 and len(emb.layers) > 2:
            out[1] = _lp_second_layer(emb, domain, z, budgeted, budget, options, out[0], out[1])
    return _Tight(emb.layers, out)


def _lp_second_layer(emb: ReLUNetwork, domain: InputDomain, z: FloatArray, cols: IntArray, budget: float,
                     options: Sequence[Option], first: Bounds, second: Bounds) -> Bounds:
    """Second-layer bounds by LP over the budget (module doc); ``second`` where the LP
    does not improve them."""
    from groupcf.solvers import make_backend

    be = make_backend("highs")
    x = be.add_vars(domain.n, lb=domain.lb, ub=domain.ub)
    for g in domain.onehot:
        be.add_row(x[g], np.ones(len(g)), 1.0, 1.0)
    e = be.add_vars(len(cols), lb=0.0)
    for c, ec in zip(cols, e):
        be.add_row([ec, x[c]], [1.0, -1.0], -z[c], INF)       # e >= x - z
        be.add_row([ec, x[c]], [1.0, 1.0], z[c], INF)         # e >= z - x
    idx = np.concatenate([e, [x[o.col] for o in options]]).astype(np.int64)
    coef = np.concatenate([np.ones(len(e)), [o.cost * o.sign for o in options]])
    be.add_row(idx, coef, -INF, budget - sum(o.cost * o.const for o in options))
    (W0, b0), (W1, b1) = emb.layers[0], emb.layers[1]
    con = _Tight([(W0, b0), (W1[:1], b1[:1])], [first, (second[0][:1], second[1][:1])]).add_to(be, x, domain)
    be.set_vtype(np.arange(be.num_vars), "C")
    h = con.hidden[0]
    alive = h >= 0
    L, U = second[0].copy(), second[1].copy()
    for k in np.flatnonzero((L < 0) & (U > 0)):
        for sense in ("min", "max"):
            be.set_objective(h[alive], W1[k, alive], sense, float(b1[k]))
            sol = be.solve()
            if sol.status is Status.OPTIMAL and sol.objective is not None:
                if sense == "min":
                    L[k] = max(L[k], sol.objective - 1e-7 * max(1.0, abs(sol.objective)))
                else:
                    U[k] = min(U[k], sol.objective + 1e-7 * max(1.0, abs(sol.objective)))
            if not L[k] < 0 < U[k]:
                break
    return L, U
