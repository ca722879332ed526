r"""Building blocks shared by every counterfactual formulation.

A *counterfactual block* is one candidate point :math:`v` in the expanded space with its
per-feature change indicators :math:`f_l` and the model's "classified positive"
constraint:

.. math::

    \sum_{h\in T_l} v_h = 1 \quad (l \in T_c), \qquad
    \sum_{l} f_l \le T_{\max}\,[y], \qquad
    \mathrm{score}(v) \ge \tau + \varepsilon, \qquad
    f_l = 0 \ (l \text{ immutable}).

*Agreement rows* tie an instance :math:`x^0` (expanded) to a block: "if the instance is
covered (:math:`z = 1`), :math:`v` equals :math:`x^0` on every feature outside the change
set". Per original feature this is one row, tighter than one row per column:

.. math::

    z \le v_{h(l)} + f_l \quad (l \text{ one-hot}), \qquad
    z \le v_l + f_l \ \ (x^0_l = 1), \qquad z \le 1 - v_l + f_l \ \ (x^0_l = 0)
    \quad (l \text{ binary}),

and :math:`|v_l - x^0_l| \le f_l + (1 - z)` for a continuous column scaled to [0, 1].
Increase-only features add :math:`z \le \sum_{h \ge h(l)} v_h` (ordinal one-hot),
:math:`z \le v_l` (binary with :math:`x^0_l = 1`) or :math:`v_l \ge x^0_l z` (continuous):
a covered instance never has to *decrease* such a feature. With :math:`z` the constant 1
(a single instance that must be explained) the same rows become the nearest-counterfactual
constraints.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..embeddings.base import Embedding, EmbeddingConstr
from ..features.domain import InputDomain
from ..features.space import Feature, FeatureSpace
from ..solvers.base import INF, Backend, VarType
from .rows import RowBuffer


@dataclass
class CounterfactualBlock:
    """Backend indices of one counterfactual's variables."""

    v: np.ndarray               # expanded point
    f: np.ndarray               # per original feature: changed?
    constr: EmbeddingConstr     # the model, score(v) >= lo
    tmax_row: int | None = None


def add_counterfactual(backend: Backend, space: FeatureSpace, embedding: Embedding, score_lo: float | None,
                       lb: np.ndarray | None = None, ub: np.ndarray | None = None,
                       can_change: np.ndarray | None = None, Tmax: int | None = None,
                       y: int | None = None) -> CounterfactualBlock:
    """Add ``v``, ``f``, the one-hot rows, ``Σ f ≤ Tmax`` (``≤ Tmax·y`` when a usage
    variable ``y`` is given) and ``score(v) ≥ score_lo``.

    ``lb``/``ub`` restrict ``v`` (and the embedding's domain, so big-M constants are
    computed over that region only); ``can_change[l] = False`` fixes ``f_l = 0``.
    Immutable features are never allowed to change.
    """
    dom = space.domain()
    lb = dom.lb if lb is None else lb
    ub = dom.ub if ub is None else ub
    allowed = np.array([not feat.immutable for feat in space])
    if can_change is not None:
        allowed &= can_change
    vtypes = np.where(dom.integer, VarType.BINARY.value, VarType.CONTINUOUS.value)
    v = backend.add_vars(space.n_features_out_, lb=lb, ub=ub, vtype=list(vtypes))
    f = backend.add_vars(len(space), lb=0.0, ub=allowed.astype(float), vtype=VarType.BINARY)
    rows = RowBuffer()
    for g in dom.onehot:
        rows.add(v[g], 1.0, 1.0, 1.0)
    rows.flush(backend)
    tmax_row = None
    if Tmax is not None:
        if y is None:
            tmax_row = backend.add_row(f, np.ones(len(f)), -INF, float(Tmax))
        else:
            tmax_row = backend.add_row(np.append(f, y), np.append(np.ones(len(f)), -float(Tmax)), -INF, 0.0)
    domain = InputDomain(np.asarray(lb, float), np.asarray(ub, float), dom.integer, dom.onehot, dom.grids)
    constr = embedding.add_to(backend, v, domain, lo=score_lo)
    return CounterfactualBlock(v, f, constr, tmax_row)


def box_outside(space: FeatureSpace, z0: np.ndarray, F: Iterable[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(fixed, lb, ub)``: the expanded columns outside the features ``F`` and bounds on
    ``v`` that fix them to ``z0`` (the rest keeps the domain's bounds) — a point that may
    change only ``F``, with big-M constants computed over that small box."""
    dom = space.domain()
    fixed = np.ones(space.n_features_out_, dtype=bool)
    for l in F:
        fixed[space.features_[l].columns] = False
    lb, ub = dom.lb.copy(), dom.ub.copy()
    lb[fixed] = ub[fixed] = z0[fixed]
    return fixed, lb, ub


def add_agreement(rows: RowBuffer, space: FeatureSpace, block: CounterfactualBlock, z0: np.ndarray,
                  z: int | None = None) -> None:
    """Rows "covered ⇒ ``v`` agrees with ``z0`` outside the change set" (see module doc).

    ``z`` is the backend index of the coverage variable; ``None`` means the constant 1.
    """
    v, f = block.v, block.f
    for l, feat in enumerate(space):   # immutable features have f_l = 0: rows force agreement
        _feature_rows(rows, feat, v[feat.columns], int(f[l]), z0[feat.columns], z)
    sides = block.constr.query_sides(z0)
    if sides:   # thresholds: leaving z0's side of one changes the feature, however close
        owner = {int(c): l for l, feat in enumerate(space) for c in feat.columns}
        le = _le(rows, z)
        for c, y, left in sides:
            fl = int(f[owner[c]])
            if left:
                le([y, fl], [-1.0, -1.0], 0.0, 1.0)                      # z <= y + f
            else:
                le([y, fl], [1.0, -1.0], 1.0, 1.0)                       # z <= 1 - y + f


#: ``le(idx, coefs, rhs, z_coef)``: one row ``coefs·vars + z_coef·z ≤ rhs``
_Le = Callable[[npt.ArrayLike, npt.ArrayLike, float, float], None]


def _le(rows: RowBuffer, z: int | None) -> _Le:
    """``le(idx, coefs, rhs, z_coef)`` adds ``coefs·vars + z_coef·z ≤ rhs``, with ``z``
    either a variable or the constant 1 moved to the right side."""

    def le(idx: npt.ArrayLike, coefs: npt.ArrayLike, rhs: float, z_coef: float) -> None:
        if z is None:
            rows.add(idx, coefs, -INF, rhs - z_coef)
        else:
            rows.add([*np.ravel(idx).tolist(), z], [*np.ravel(coefs).tolist(), z_coef], -INF, rhs)

    return le


def _feature_rows(rows: RowBuffer, feat: Feature, vc: np.ndarray, fl: int, x: np.ndarray, z: int | None) -> None:
    """Agreement (and increase-only) rows of one feature."""
    le = _le(rows, z)
    if feat.encoding == "onehot":
        le([vc[int(np.argmax(x))], fl], [-1.0, -1.0], 0.0, 1.0)          # z <= v_h0 + f
    elif feat.encoding == "binary":
        if x[0] >= 0.5:
            le([vc[0], fl], [-1.0, -1.0], 0.0, 1.0)                      # z <= v + f
        else:
            le([vc[0], fl], [1.0, -1.0], 1.0, 1.0)                       # z <= 1 - v + f
    else:  # continuous, range scaled to 1: |v - x| <= f + 1 - z
        x0 = float(x[0])
        le([vc[0], fl], [1.0, -1.0], 1.0 + x0, 1.0)                      # v - x <= f + 1 - z
        le([vc[0], fl], [-1.0, -1.0], 1.0 - x0, 1.0)                     # x - v <= f + 1 - z
    if feat.increase_only:
        increase_only_rows(rows, feat, vc, x, z)


def increase_only_rows(rows: RowBuffer, feat: Feature, vc: np.ndarray, x: np.ndarray, z: int | None) -> None:
    """"Covered ⇒ ``v`` not below ``x``" for one increase-only feature (module doc)."""
    le = _le(rows, z)
    if feat.encoding == "onehot":
        h0 = int(np.argmax(x))
        if h0 > 0:
            le(vc[h0:], -np.ones(len(vc) - h0), 0.0, 1.0)                # z <= sum_{h>=h0} v_h
    elif feat.encoding == "binary":
        if x[0] >= 0.5:
            le([vc[0]], [-1.0], 0.0, 1.0)                                # z <= v
    else:
        le([vc[0]], [-1.0], 0.0, float(x[0]))                            # x z <= v
