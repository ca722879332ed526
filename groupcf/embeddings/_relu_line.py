r"""Exact first crossing of a ReLU network's score along a segment
(:meth:`groupcf.embeddings.network.ReLUNetwork.first_crossing`).

Along :math:`x(t) = z + t\,d`, :math:`t \in [0, t_{\max}]`, every pre-activation is
piecewise linear in :math:`t`: on a piece where the activation pattern is constant,
layer :math:`\ell` has :math:`a_\ell(t) = a_\ell + t\, \dot a_\ell` with
:math:`\dot a_\ell = W_\ell\, \dot y_{\ell-1}` and :math:`\dot y = \dot a` on active
neurons, 0 on inactive ones (a neuron at exactly 0 is active iff its slope is positive,
the pattern just after :math:`t`). The piece ends at the first :math:`t` where an active
neuron's pre-activation falls to 0 or an inactive one's rises to 0; inside it the score is
linear, so its first point :math:`\ge` ``lo`` is closed-form. Walking the pieces from
:math:`t = 0` gives the smallest :math:`t` with :math:`\mathrm{score}(x(t)) \ge` ``lo``
(up to floating point), or ``None`` when the score stays below ``lo`` on the segment.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from groupcf.embeddings._typing import ArrayLike, FloatArray

#: pre-activations within this of 0 count as "at the kink" (the slope decides the side)
KINK_TOL = 1e-12
#: pieces walked at most (each piece ends at a kink of one neuron; a bound, never reached
#: in practice: a segment crosses each neuron's kink a few times at most)
MAX_PIECES = 100_000


def first_crossing(layers: Sequence[tuple[FloatArray, FloatArray]], z: ArrayLike, d: ArrayLike,
                   t_max: float, lo: float) -> float | None:
    """Smallest ``t`` in ``[0, t_max]`` with ``score(z + t d) >= lo`` (module doc)."""
    z0, d0 = np.asarray(z, dtype=np.float64), np.asarray(d, dtype=np.float64)
    t = 0.0
    for _ in range(MAX_PIECES):
        y, dy = z0 + t * d0, d0
        step = np.inf
        for W, b in layers[:-1]:
            a, da = W @ y + b, W @ dy
            on = (a > KINK_TOL) | ((a >= -KINK_TOL) & (da > 0))
            ends = np.where(on, da < 0, da > 0)                      # falls to / rises to 0
            if ends.any():
                with np.errstate(over="ignore", divide="ignore"):
                    step = min(step, float(np.min(np.maximum(-a[ends] / da[ends], 0.0))))
            y, dy = np.where(on, a, 0.0), np.where(on, da, 0.0)
        W, b = layers[-1]
        s, ds = float(W[0] @ y + b[0]), float(W[0] @ dy)
        if s >= lo:
            return t
        end = min(t_max, t + step)
        if ds > 0 and s + ds * (end - t) >= lo:
            return min(end, t + (lo - s) / ds)
        if end >= t_max:
            return None
        t = end if end > t else float(np.nextafter(t, np.inf))   # a zero-length piece
    raise RuntimeError("first_crossing: too many pieces")       # pragma: no cover
