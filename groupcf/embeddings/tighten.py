"""LP-based tightening of a ReLU network's second-layer bounds inside a MIP (used by
:mod:`groupcf.sequential.bound`): smaller big-M constants, same model. Any other
embedding is returned unchanged."""
from __future__ import annotations

import numpy as np

from groupcf.embeddings.network import ReLUNetwork
from groupcf.solvers.base import Status


class _Tight(ReLUNetwork):
    """The same network with precomputed (tighter) pre-activation bounds."""

    def __init__(self, layers, bounds):
        super().__init__(layers)
        self._bounds = bounds

    def bounds(self, domain):
        return self._bounds


def tightened(emb, build) -> ReLUNetwork:
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
            if sol.status.has_solution:
                v = sol.dual_bound if sol.dual_bound is not None else sol.objective
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
