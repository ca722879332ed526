r"""Linear upper bounds of a score over boxes, batched (a backward linear relaxation of a
ReLU network, as in CROWN: Zhang et al., "Efficient neural network robustness
certification with general activation functions", NeurIPS 2018).

The input is an affine image of a box: :math:`z = A_k y + c_k` with
:math:`y \in [\ell_k, u_k]` for every box :math:`k` of a batch. For each box we return
:math:`(a_k, d_k)` with

.. math::

    \mathrm{score}(A_k y + c_k) \le a_k^\top y + d_k \qquad \forall y \in [\ell_k, u_k].

Proof sketch (valid for every box): for a neuron :math:`h = \max(0, t)` with
pre-activation bounds :math:`L \le t \le U` on the box, :math:`s_\ell t \le h \le
s_u t + t_u` where, if :math:`L < 0 < U`, :math:`s_u = U / (U - L)`,
:math:`t_u = -L U / (U - L)` (the chord) and :math:`s_\ell \in \{0, 1\}`; if
:math:`L \ge 0`, :math:`s_u = s_\ell = 1, t_u = 0`; if :math:`U \le 0`, all are 0. Going
backward from the output, a coefficient :math:`\lambda \ge 0` on :math:`h` is replaced
by :math:`\lambda (s_u t + t_u)` (an upper bound) and :math:`\lambda < 0` by
:math:`\lambda s_\ell t` (also an upper bound, since :math:`\lambda h \le \lambda s_\ell
t`); the pre-activation is affine in the previous layer, so the bound stays affine and
ends affine in :math:`y`. Pre-activation bounds of the first layer are exact over the box
(an affine function's range); those of deeper layers come from the same backward pass
(upper bound of :math:`t`, and of :math:`-t` for the lower bound), intersected with
interval arithmetic.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from groupcf.embeddings._typing import ArrayLike, FloatArray

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.base import Embedding

#: an affine layer ``(W, b)``; ``W`` of shape ``(out, in)`` or batched ``(K, out, in)``
Layer = tuple[FloatArray, FloatArray]
#: pre-activation bounds ``(low, up)`` of one layer, per box ``(K, out)``
Bounds = tuple[FloatArray, FloatArray]


def linear_upper(emb: Embedding, A: FloatArray, c: ArrayLike, lo: ArrayLike,
                 hi: ArrayLike) -> tuple[FloatArray, FloatArray] | None:
    """``(a, d)``, shapes ``(K, p)`` and ``(K,)``: ``score(A_k y + c_k) <= a_k . y + d_k``
    on ``lo_k <= y <= hi_k`` (``A``: ``(K, n, p)`` or ``(n, p)``, ``c``: ``(K, n)``), or
    ``None`` when the embedding has no such relaxation (only ReLU networks and additive
    scores do)."""
    from groupcf.embeddings.network import ReLUNetwork
    low: FloatArray = np.atleast_2d(lo).astype(np.float64)
    up: FloatArray = np.atleast_2d(hi).astype(np.float64)
    K = low.shape[0]
    A = np.broadcast_to(A, (K, *A.shape[-2:])) if A.ndim == 2 else A
    cb: FloatArray = np.broadcast_to(np.asarray(c, np.float64), (K, A.shape[1]))
    if isinstance(emb, ReLUNetwork):
        layers = emb.layers
    else:
        add = emb.additive()
        if add is None:
            return None
        w = np.asarray(add.weights, np.float64)
        return np.einsum("n,knp->kp", w, A), cb @ w + float(add.bias)
    W1, b1 = layers[0]
    Wy = np.matmul(W1, A)                           # first layer as a function of y
    by = cb @ W1.T + b1
    if len(layers) == 1:
        return Wy[:, 0, :], by[:, 0]
    eff: list[Layer] = [(Wy, by), *layers[1:]]
    bounds = [_box_range(Wy, by, low, up)]
    for k in range(1, len(layers) - 1):
        m = layers[k][0].shape[0]
        eye = np.broadcast_to(np.eye(m), (K, m, m))
        ua, ud = _backward(eye, k, eff, bounds)
        la, ld = _backward(-eye, k, eff, bounds)
        u = ud + _box_max(ua, low, up)
        lw = -(ld + _box_max(la, low, up))
        il, iu = _interval_layer(layers[k], bounds[-1])     # interval arithmetic, intersected
        bounds.append((np.maximum(lw, il), np.minimum(u, iu)))
    a, d = _backward(np.ones((K, 1, 1)), len(layers) - 1, eff, bounds)
    return a[:, 0, :], d[:, 0]


def _box_range(W: FloatArray, b: FloatArray, lo: FloatArray, hi: FloatArray) -> Bounds:
    """Exact range of ``W_k y + b_k`` over the boxes (``W``: ``(K, m, p)``)."""
    Wp, Wn = np.maximum(W, 0.0), np.minimum(W, 0.0)
    low = b + (Wp @ lo[:, :, None])[..., 0] + (Wn @ hi[:, :, None])[..., 0]
    up = b + (Wp @ hi[:, :, None])[..., 0] + (Wn @ lo[:, :, None])[..., 0]
    return low, up


def _box_max(a: FloatArray, lo: FloatArray, hi: FloatArray) -> FloatArray:
    """``max over the box of a . y`` for ``a``: ``(K, m, p)``."""
    out: FloatArray = np.maximum(a * lo[:, None, :], a * hi[:, None, :]).sum(-1)
    return out


def _interval_layer(layer: Layer, prev: Bounds) -> Bounds:
    W, b = layer
    hl, hu = np.maximum(prev[0], 0.0), np.maximum(prev[1], 0.0)
    Wp, Wn = np.maximum(W, 0.0), np.minimum(W, 0.0)
    return hl @ Wp.T + hu @ Wn.T + b, hu @ Wp.T + hl @ Wn.T + b


def _relax(low: FloatArray, up: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Upper slope/intercept and lower slope of ``max(0, t)`` on ``[low, up]``."""
    unstable = (low < 0) & (up > 0)
    den = np.where(unstable, up - low, 1.0)
    su = np.where(low >= 0, 1.0, np.where(unstable, up / den, 0.0))
    tu = np.where(unstable, -low * up / den, 0.0)
    sl = np.where(low >= 0, 1.0, np.where(unstable & (up > -low), 1.0, 0.0))
    return su, tu, sl


def _backward(lam: FloatArray, k: int, eff: Sequence[Layer], bounds: Sequence[Bounds]) -> tuple[FloatArray, FloatArray]:
    """An upper bound ``(coefficients on y, constant)`` of ``lam . t_k`` (``t_k`` the
    pre-activation of layer ``k``, ``k >= 1``)."""
    W, b = eff[k]
    const = lam @ b
    lam = lam @ W
    for j in range(k - 1, -1, -1):
        su, tu, sl = _relax(*bounds[j])
        pos = lam > 0
        const = const + (np.where(pos, lam, 0.0) @ tu[:, :, None])[..., 0]
        lam = lam * np.where(pos, su[:, None, :], sl[:, None, :])
        Wj, bj = eff[j]
        if j == 0:
            const = const + (lam @ bj[:, :, None])[..., 0]
            lam = lam @ Wj
        else:
            const = const + lam @ bj
            lam = lam @ Wj
    return lam, const
