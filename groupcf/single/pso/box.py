r"""The search box around the query and the mixed-discrete snapping (Shekhar et al. 2023,
§IV; Chowdhury et al. 2013 for the snapping).

A particle is a vector over the expanded columns (:class:`~groupcf.FeatureSpace`) of the
*active* features only; every other feature keeps the query's encoding. Per active
feature ``l`` with query encoding :math:`z^0`:

* continuous (numeric passthrough, scaled to [0, 1]): :math:`z \in [z^0-\varepsilon,
  z^0+\varepsilon] \cap [0, 1]` (an additive box, so features at 0 can move);
  increase-only: lower bound :math:`z^0`; integer features snap to the nearest integer
  raw value inside the box; a change smaller than ``change_tol`` (of the range, or
  with ``mad_units`` of the feature's MAD) snaps back to :math:`z^0` (otherwise the
  sparsity term carries no signal);
* binary: {0, 1} (increase-only: from :math:`z^0` up), snapped by rounding;
* one-hot group (categorical, ordinal, binned numeric): snapped to its largest allowed
  entry. Ordinal groups allow the codes with :math:`|c - c^0|/(k-1) \le \varepsilon`
  (at least the neighbours), increase-only ones only :math:`c \ge c^0`; unordered
  categorical groups allow every category.

Immutable features are never active.

Objective (eqs. 3-7), on snapped points, with :math:`p` the model's probability of the
desired class, :math:`t` the threshold and :math:`n` the number of original features:

.. math::

    f = w_2 \underbrace{\tfrac1n \textstyle\sum_l \delta_l}_{l_2\ \text{(Gower)}}
        + w_3 \underbrace{\tfrac1n \#\{l : \delta_l > 0\}}_{l_3}
    \ \text{if } p \ge t, \qquad
    f = \underbrace{\pi + w_2 + w_3 + (t - p)}_{l_1} \ \text{otherwise}

with :math:`\delta_l = |\Delta z_l|` for a continuous feature (:math:`|\Delta|/R_l`) and
0/1 for any other (``scale="mad"``: a continuous :math:`\delta_l` is
:math:`|\Delta|/\mathrm{MAD}_l` instead, the scale of the paper's proximity metric, eq. 8).
Every valid point is better than every invalid one
(:math:`l_2, l_3 \le 1`); invalid points are ranked by their shortfall :math:`t - p`
alone. (The paper sums :math:`l_1 + l_2 + l_3` everywhere; with :math:`l_3` counting
changed features, that keeps a swarm that starts far from the boundary next to the
query, where nothing is valid.)
"""
from __future__ import annotations

import numpy as np


class Box:
    """Bounds, snapping and objective terms over the columns of ``active`` features."""

    def __init__(self, space, z0: np.ndarray, active: np.ndarray, epsilon: float, change_tol: float,
                 feature_scale: np.ndarray | None = None, mad_units: bool = False):
        self.space, self.z0, self.active = space, np.asarray(z0, dtype=float), np.asarray(active)
        self.n_features = len(space)
        feats = [space.features_[l] for l in self.active]
        self.cols = np.concatenate([f.columns for f in feats]) if feats else np.zeros(0, dtype=np.int64)
        d = len(self.cols)
        self.lo, self.hi = np.zeros(d), np.ones(d)
        self.owner = np.zeros(d, dtype=np.int64)          # position in `active` of each column
        cont: list[int] = []                   # positions (into cols)
        binary: list[int] = []
        self.groups: list[np.ndarray] = []
        self.int_scale = []                                # (pos, low, R) of integer features
        self.change_tol = change_tol
        fs = np.ones(len(space)) if feature_scale is None else np.asarray(feature_scale, dtype=float)
        # per active feature, the length (on the [0, 1]-scaled feature) of one unit of
        # change_tol / min_separation: 1, or its MAD with mad_units
        self.unit = np.ones(len(self.active))
        pos = 0
        for a, f in enumerate(feats):
            k = len(f.columns)
            idx = np.arange(pos, pos + k)
            self.owner[idx] = a
            zq = self.z0[f.columns]
            if f.encoding == "continuous":
                if mad_units:
                    self.unit[a] = 1.0 / fs[self.active[a]]
                v = zq[0]
                lo, hi = max(min(0.0, v), v - epsilon), min(max(1.0, v), v + epsilon)
                if f.increase_only:
                    lo = v
                if f.integer:
                    R = f.high - f.low
                    lo_v = np.ceil(f.low + lo * R - 1e-9)
                    hi_v = np.floor(f.low + hi * R + 1e-9)
                    v_raw = f.low + v * R
                    lo_v, hi_v = min(lo_v, v_raw), max(hi_v, v_raw)
                    lo, hi = (lo_v - f.low) / R, (hi_v - f.low) / R
                    self.int_scale.append((pos, f.low, R))
                self.lo[pos], self.hi[pos] = lo, hi
                cont.append(pos)
            elif f.encoding == "binary":
                if f.increase_only:
                    self.lo[pos] = zq[0]
                binary.append(pos)
            else:
                c0 = int(np.argmax(zq))
                codes = np.arange(k)
                allowed = np.ones(k, dtype=bool)
                if f.kind != "categorical":           # ordered: ordinal or binned numeric
                    reach = max(1, int(np.floor(epsilon * (k - 1) + 1e-9)))
                    allowed &= np.abs(codes - c0) <= reach
                if f.increase_only:
                    allowed &= codes >= c0
                self.hi[idx] = allowed.astype(float)
                self.groups.append(idx)
            pos += k
        self.cont = np.asarray(cont, dtype=np.int64)
        self.binary = np.asarray(binary, dtype=np.int64)
        self.p0 = self.z0[self.cols].copy()
        self.discrete = np.ones(len(self.active), dtype=bool)
        self.discrete[self.owner[self.cont]] = False
        # per active feature, the weight of its delta in l2 (1: Gower; R/MAD: MAD-scaled)
        self.scale = fs[self.active] if len(self.active) else np.zeros(0)
        self.l2_max = max(1.0, float(self.scale.sum()) / self.n_features)
        self.width = np.maximum(self.hi - self.lo, 1e-12)
        self.tol = change_tol * self.unit                  # per active feature
        self.tol_cont = self.tol[self.owner[self.cont]]

    def within(self, P: np.ndarray, Tmax: int | None) -> np.ndarray:
        """Rows of ``P`` changing at most ``Tmax`` features (all when ``Tmax`` is None)."""
        if Tmax is None:
            return np.ones(len(P), dtype=bool)
        return (self.feature_deltas(P) > 0).sum(axis=1) <= Tmax

    @property
    def dim(self) -> int:
        return len(self.cols)

    def clip(self, P: np.ndarray) -> np.ndarray:
        return np.clip(P, self.lo, self.hi)

    def snap(self, P: np.ndarray) -> np.ndarray:
        """Nearest feasible mixed-discrete point of each row of ``P`` (a new array)."""
        P = self.clip(P)
        if len(self.cont):
            c = self.cont
            near = np.abs(P[:, c] - self.p0[c]) < self.tol_cont
            P[:, c] = np.where(near, self.p0[c], P[:, c])
        for pos, low, R in self.int_scale:
            v = np.round(low + P[:, pos] * R)
            P[:, pos] = np.clip((v - low) / R, self.lo[pos], self.hi[pos])
        if len(self.binary):
            b = self.binary
            P[:, b] = np.clip(np.round(P[:, b]), self.lo[b], self.hi[b])
        for idx in self.groups:
            block = np.where(self.hi[idx] > 0, P[:, idx], -np.inf)
            P[:, idx] = 0.0
            P[np.arange(len(P)), idx[np.argmax(block, axis=1)]] = 1.0
        return P

    def full(self, P: np.ndarray) -> np.ndarray:
        """Encoded rows: the query's encoding with the active columns from ``P``."""
        Z = np.repeat(self.z0[None, :], len(P), axis=0)
        Z[:, self.cols] = P
        return Z

    def feature_deltas(self, P: np.ndarray, ref: np.ndarray | None = None) -> np.ndarray:
        """Per active feature, Gower's :math:`\\delta_l` (|Δz| continuous, 0/1 otherwise)
        of each row of ``P`` against ``ref`` (a row over the same columns; the query)."""
        D = np.zeros((len(P), len(self.active)))
        diff = np.abs(P - (self.p0 if ref is None else ref))
        np.maximum.at(D.T, self.owner, diff.T)            # max over a feature's columns
        D[:, self.discrete] = (D[:, self.discrete] > 0.5).astype(float)
        return D

    def separation(self, D: np.ndarray) -> np.ndarray:
        """Largest per-feature difference of each row of deltas ``D`` in units (module
        docstring); 0 for no active feature."""
        return (D / self.unit).max(axis=1) if D.shape[1] else np.zeros(len(D))

    def terms(self, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(l2, l3)`` of each snapped row (Gower mean and fraction of changed features,
        both over all original features)."""
        D = self.feature_deltas(P)
        changed = D > 0
        return D @ self.scale / self.n_features, changed.sum(axis=1) / self.n_features

    def objective(self, P: np.ndarray, p: np.ndarray, valid: np.ndarray, threshold: float,
                  penalty: float, w2: float, w3: float) -> np.ndarray:
        l2, l3 = self.terms(P)
        cost = w2 * l2 + w3 * l3
        # an invalid point: its shortfall on top of a constant above any valid point's cost
        # (w2 * l2_max + w3 bounds it), without the distance terms, which would otherwise
        # hold a swarm far from the boundary next to the query
        return np.where(valid, cost, penalty + w2 * self.l2_max + w3 + np.maximum(threshold - p, 0.0))
