r"""ReLU networks with a linear output: the one model every embedding reduces to.

A :class:`ReLUNetwork` with layers :math:`(W_1, b_1), \dots, (W_L, b_L)` computes

.. math::

    y^0 = x, \qquad
    y^\ell = \max(0,\; W_\ell\, y^{\ell-1} + b_\ell) \quad (\ell = 1, \dots, L-1), \qquad
    \mathrm{score}(x) = W_L\, y^{L-1} + b_L \in \mathbb{R},

with :math:`W_\ell` of shape ``(out, in)`` and a single output (the logit of the positive
class). A logistic regression is the case :math:`L = 1`.

MIP formulation
---------------
Write :math:`a = W_\ell y^{\ell-1} + b_\ell` for the pre-activation of one neuron and
:math:`[L, U]` for bounds on :math:`a` valid over the input domain. The output
:math:`h = \max(0, a)` is modelled by cases:

* :math:`U \le 0` — the neuron is always inactive: :math:`h = 0`. No variable, no binary,
  no row; its column is simply dropped from the next layer.
* :math:`L \ge 0` — always active: a continuous :math:`h \in [L, U]` with the row
  :math:`h = a`. No binary.
* :math:`L < 0 < U` — a binary :math:`s` (1 = active) and the big-M rows

  .. math::

      h \ge a, \qquad h \le a - L(1 - s), \qquad h \le U s, \qquad h \ge 0 .

  With :math:`s = 1` they force :math:`h = a \ge 0`; with :math:`s = 0`,
  :math:`h = 0 \ge a`.

The output layer is one equality row ``score = W_L y^{L-1} + b_L`` on a free variable.
All rows of a layer are assembled as one sparse matrix and passed to the backend in one
call.

Bounds, and what is tight
-------------------------
The big-M constants are interval bounds over the *actual* input domain
(:class:`~groupcf.features.domain.InputDomain`), never magic constants:

* Layer 1: :meth:`InputDomain.interval_bounds` — each one-hot group contributes the
  min / max of its (allowed) weights, free columns ``min/max(w lb, w ub)``. The domain is
  a product of simplices and intervals and a linear function is separable over that
  product, so these bounds are **exact** for every neuron separately (each is attained
  at some point of the domain; not simultaneously for all neurons).
* Layers :math:`\ell \ge 2`: interval arithmetic through the ReLU,
  :math:`[\max(0,L), \max(0,U)]` per neuron, then
  :math:`L' = b + W^+ \underline{y} + W^- \overline{y}`,
  :math:`U' = b + W^+ \overline{y} + W^- \underline{y}`.
  Valid but generally **not tight**: it treats the neurons of a layer as independent,
  so the looseness grows with depth. (An LP- or MIP-based tightening would shrink them;
  it is not implemented here.)
* Given exact :math:`[L, U]` for :math:`a`, the big-M rows describe the convex hull of
  :math:`\{(a, h, s) : h = \max(0, a), a \in [L, U]\}` — ideal for the neuron *taken as a
  function of its pre-activation* — but not for the neuron composed with the affine map
  of its inputs, so the LP relaxation of a deep network can still be weak.

Neurons whose state is fixed by the bounds get no binary; with one-hot inputs this is
common in layer 1 because the exact bounds are much narrower than the usual
sum-of-absolute-weights bound.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from groupcf.embeddings._relu_line import first_crossing
from groupcf.embeddings._relu_rows import add_relu_layer, affine_block
from groupcf.embeddings._typing import ArrayLike, FloatArray, IntArray
from groupcf.embeddings.base import AdditiveForm, DeltaEvaluator, Embedding, EmbeddingCapabilities, EmbeddingConstr

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.features.domain import InputDomain
    from groupcf.solvers.base import Backend

logger = logging.getLogger(__name__)

INF = math.inf


class ReLUNetwork(Embedding):
    """A feed-forward ReLU network with one linear output (the score).

    The embedding of scikit-learn's ``LogisticRegression`` (no hidden layer) and
    ``MLPClassifier(activation="relu")``, and of PyTorch ``nn.Sequential`` of
    ``Linear`` / ``ReLU``; its MIP is the big-M formulation with interval bounds.

    Parameters
    ----------
    layers : sequence of (numpy.ndarray, numpy.ndarray or None)
        ``[(W1, b1), ..., (WL, bL)]`` with ``W`` of shape ``(out, in)`` and ``b`` of shape
        ``(out,)`` (``None`` means zeros). The last layer has one output. ReLU is applied
        after every layer but the last.

    Raises
    ------
    ValueError
        No layer, shapes that do not chain, a last layer with more than one output, or
        weights that are not finite.

    Examples
    --------
    >>> from groupcf.embeddings import ReLUNetwork
    >>> net = ReLUNetwork([(np.array([[1.0, -1.0], [0.5, 0.5]]), np.array([0.0, -0.5])),
    ...                    (np.array([[2.0, -1.0]]), np.array([0.1]))])
    >>> net, net.score(np.array([[1.0, 0.0], [0.0, 1.0]]))
    (ReLUNetwork(inputs=2, hidden=[2]), array([2.1, 0.1]))
    """

    capabilities = EmbeddingCapabilities(line_search=True)

    def __init__(self, layers: Sequence[tuple[ArrayLike, ArrayLike | None]]) -> None:
        if len(layers) == 0:
            raise ValueError("a ReLUNetwork needs at least one layer")
        checked: list[tuple[FloatArray, FloatArray]] = []
        n_in = None
        for k, (W_in, b_in) in enumerate(layers):
            W = np.array(W_in, dtype=np.float64)
            if W.ndim == 1:
                W = W[None, :]
            if W.ndim != 2:
                raise ValueError(f"layer {k}: W must be 2-D (out, in), got shape {W.shape}")
            out, inp = W.shape
            b = np.zeros(out) if b_in is None else np.array(b_in, dtype=np.float64).reshape(-1)
            if b.shape != (out,):
                raise ValueError(f"layer {k}: b has shape {b.shape}, expected ({out},)")
            if n_in is not None and inp != n_in:
                raise ValueError(f"layer {k}: W has {inp} inputs, the previous layer {n_in} outputs")
            if not (np.all(np.isfinite(W)) and np.all(np.isfinite(b))):
                raise ValueError(f"layer {k}: weights must be finite")
            W.setflags(write=False)
            b.setflags(write=False)
            checked.append((W, b))
            n_in = out
        if n_in != 1:
            raise ValueError(f"the last layer must have one output (the score), it has {n_in}")
        self.layers: tuple[tuple[FloatArray, FloatArray], ...] = tuple(checked)

    # -- description --------------------------------------------------------------------
    @property
    def n_inputs(self) -> int:
        return int(self.layers[0][0].shape[1])

    @property
    def is_linear(self) -> bool:
        """A single affine layer (logistic regression): the score is linear in the input."""
        return len(self.layers) == 1

    @property
    def n_layers(self) -> int:
        """Number of affine layers (hidden layers plus the output)."""
        return len(self.layers)

    @property
    def hidden_sizes(self) -> list[int]:
        return [int(W.shape[0]) for W, _ in self.layers[:-1]]

    def additive(self) -> AdditiveForm | None:
        """Exact for a network without hidden layers: ``score = b + W z``.

        Returns
        -------
        AdditiveForm or None
            ``None`` with hidden layers.
        """
        if len(self.layers) != 1:
            return None
        W, b = self.layers[0]
        return AdditiveForm(W[0], float(b[0]))

    def score_bounds(self, lb: ArrayLike, ub: ArrayLike) -> tuple[float, float]:
        """Interval arithmetic through the layers (valid, not tight with hidden layers).

        Parameters
        ----------
        lb, ub : numpy.ndarray
            The input box, one bound per input.

        Returns
        -------
        tuple of float
            ``(lo, hi)``.
        """
        ylo = np.asarray(lb, dtype=np.float64).reshape(-1)
        yhi = np.asarray(ub, dtype=np.float64).reshape(-1)
        if ylo.shape != (self.n_inputs,) or yhi.shape != (self.n_inputs,):
            raise ValueError(f"bounds must have {self.n_inputs} entries")
        for k, (W, b) in enumerate(self.layers):
            L, U = _interval_affine(W, b, ylo, yhi)
            if k < len(self.layers) - 1:
                ylo, yhi = np.maximum(L, 0.0), np.maximum(U, 0.0)
        return float(L[0]), float(U[0])

    def delta_evaluator(self, z0: ArrayLike) -> _ReLUDelta:
        """Folds ``z0`` into the first layer per column set; the hidden layers then run
        once for all groups of a batch.

        Parameters
        ----------
        z0 : array-like
            The reference point.

        Returns
        -------
        DeltaEvaluator
            The network's evaluator.
        """
        return _ReLUDelta(self, z0)

    def __repr__(self) -> str:
        return f"ReLUNetwork(inputs={self.n_inputs}, hidden={self.hidden_sizes})"

    # -- numpy evaluation ---------------------------------------------------------------
    def preactivations(self, Z: ArrayLike) -> list[FloatArray]:
        """Pre-activations of every layer (hidden layers, then the output) at the rows of ``Z``.

        Parameters
        ----------
        Z : numpy.ndarray
            Points, shape ``(m, n_inputs)``.

        Returns
        -------
        list of numpy.ndarray
            One array of shape ``(m, out_l)`` per layer.
        """
        Y = self._check_points(Z)
        out: list[FloatArray] = []
        for k, (W, b) in enumerate(self.layers):
            A = Y @ W.T + b
            out.append(A)
            if k < len(self.layers) - 1:
                Y = np.maximum(A, 0.0)
        return out

    def score(self, Z: ArrayLike) -> FloatArray:
        Y = self._check_points(Z)
        last = len(self.layers) - 1
        for k, (W, b) in enumerate(self.layers):
            A: FloatArray = Y @ W.T + b
            if k == last:
                return A[:, 0]
            Y = np.maximum(A, 0.0)
        raise AssertionError("unreachable")  # pragma: no cover

    def first_crossing(self, z: ArrayLike, d: ArrayLike, t_max: float, lo: float) -> float | None:
        """Smallest ``t`` in ``[0, t_max]`` with ``score(z + t d) >= lo``.

        Exact up to floating point (walks the linear pieces, :mod:`._relu_line`).

        Parameters
        ----------
        z : array-like
            The start point.
        d : array-like
            The direction.
        t_max : float
            The longest step.
        lo : float
            The score to reach.

        Returns
        -------
        float or None
            ``t``, or ``None`` if none.
        """
        return first_crossing(self.layers, z, d, t_max, lo)

    # -- partial evaluation -------------------------------------------------------------
    def partial(self, fixed_idx: ArrayLike, fixed_values: ArrayLike) -> ReLUNetwork:
        r"""Fix inputs ``fixed_idx`` to ``fixed_values``.

        With :math:`F` the fixed and :math:`R` the remaining inputs, the first layer becomes
        :math:`W_1[:, R]\, x_R + (b_1 + W_1[:, F]\, x_F)`. Other layers are shared.

        Parameters
        ----------
        fixed_idx : sequence of int
            The inputs to fix.
        fixed_values : sequence of float
            Their values.

        Returns
        -------
        ReLUNetwork
            The network over the remaining inputs.
        """
        idx = np.asarray(fixed_idx, dtype=np.int64).reshape(-1)
        values = np.asarray(fixed_values, dtype=np.float64).reshape(-1)
        n = self.n_inputs
        if idx.shape != values.shape:
            raise ValueError(f"{len(idx)} indices but {len(values)} values")
        if len(idx) and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"fixed indices must lie in [0, {n})")
        if len(np.unique(idx)) != len(idx):
            raise ValueError("fixed indices must be distinct")
        keep = np.ones(n, dtype=bool)
        keep[idx] = False
        W1, b1 = self.layers[0]
        first = (W1[:, keep], b1 + W1[:, idx] @ values)
        return ReLUNetwork([first, *self.layers[1:]])

    # -- bounds ---------------------------------------------------------------------------
    def gradient_bound(self, d: ArrayLike, domain: InputDomain) -> float:
        """Interval arithmetic through the Jacobian.

        A neuron whose pre-activation bounds over ``domain`` straddle 0 contributes a derivative
        in ``[0, 1]``.

        Parameters
        ----------
        d : array-like
            The direction, one entry per input.
        domain : InputDomain
            Where ``z`` lies.

        Returns
        -------
        float
            An upper bound of the directional derivative's absolute value.
        """
        v_lo = v_hi = self.layers[0][0] @ np.asarray(d, dtype=float)
        for (L, U), (W, _) in zip(self.bounds(domain)[:-1], self.layers[1:]):
            on, off = L >= 0, U <= 0
            h_lo = np.where(on, v_lo, np.where(off, 0.0, np.minimum(v_lo, 0.0)))
            h_hi = np.where(on, v_hi, np.where(off, 0.0, np.maximum(v_hi, 0.0)))
            Wp, Wn = np.maximum(W, 0.0), np.minimum(W, 0.0)
            v_lo, v_hi = Wp @ h_lo + Wn @ h_hi, Wp @ h_hi + Wn @ h_lo
        return float(max(abs(v_lo[0]), abs(v_hi[0])))

    def bounds(self, domain: InputDomain) -> list[tuple[FloatArray, FloatArray]]:
        """Pre-activation bounds ``(L, U)`` of every layer (hidden layers, then the output) over ``domain``.

        Exact for layer 1, interval arithmetic after (see the module docstring).

        Parameters
        ----------
        domain : InputDomain
            Where the inputs lie.

        Returns
        -------
        list of tuple
            ``(L, U)`` per layer.

        Raises
        ------
        ValueError
            The domain does not have ``n_inputs`` columns.
        """
        if domain.n != self.n_inputs:
            raise ValueError(f"the domain has {domain.n} columns, the model {self.n_inputs} inputs")
        W1, b1 = self.layers[0]
        lo, hi = domain.interval_bounds(W1, b1)
        out = [(lo, hi)]
        for W, b in self.layers[1:]:
            lo, hi = _interval_affine(W, b, np.maximum(lo, 0.0), np.maximum(hi, 0.0))
            out.append((lo, hi))
        return out

    # -- MIP formulation --------------------------------------------------------------
    def add_to(self, backend: Backend, x_idx: ArrayLike, domain: InputDomain,
               lo: float | None = None) -> NetworkConstr:
        """Add the network to ``backend`` (formulation in the module docstring).

        Parameters
        ----------
        backend : Backend
            The MIP.
        x_idx : array-like of int
            Backend indices of the input variables, one per input.
        domain : InputDomain
            Where the inputs lie.
        lo : float or None, default None
            Also add the row ``score >= lo``.

        Returns
        -------
        NetworkConstr
            What was added.
        """
        inputs = np.asarray(x_idx, dtype=np.int64).reshape(-1)
        if len(inputs) != self.n_inputs:
            raise ValueError(f"{len(inputs)} input variables for a model with {self.n_inputs} inputs")
        bounds = self.bounds(domain)
        for k, (L, U) in enumerate(bounds[:-1]):
            bad = ~(np.isfinite(L) & np.isfinite(U))
            if bad.any():
                raise ValueError(
                    f"layer {k + 1}: neurons {np.flatnonzero(bad).tolist()} have unbounded "
                    "pre-activations over the domain; give every continuous input finite bounds")

        rows: list[IntArray] = []
        hidden: list[IntArray] = []
        binaries: list[IntArray] = []
        prev = inputs                                 # backend indices of y^{l-1}
        prev_cols = np.arange(self.n_inputs)          # their columns in W_l
        for (W, b), (L, U) in zip(self.layers[:-1], bounds[:-1]):
            Wl = W[:, prev_cols]
            h_idx, s_idx, new_rows = add_relu_layer(backend, Wl, b, L, U, prev)
            hidden.append(h_idx)
            binaries.append(s_idx)
            rows.append(new_rows)
            alive = h_idx >= 0
            prev, prev_cols = h_idx[alive], np.flatnonzero(alive)

        W, b = self.layers[-1]
        score = int(backend.add_vars(1, lb=-INF, ub=INF)[0])
        A = affine_block(-W[:, prev_cols], prev, np.array([score]), None, None,
                          backend.num_vars)
        rows.append(np.asarray(backend.add_rows(A, b, b), dtype=np.int64))
        lo_row = None
        if lo is not None:
            lo_row = int(backend.add_row([score], [1.0], float(lo), INF))
            rows.append(np.array([lo_row], dtype=np.int64))

        constr = NetworkConstr(embedding=self, inputs=inputs, score=score, hidden=hidden,
                                 binaries=binaries, bounds=bounds,
                                 rows=np.concatenate(rows), lo_row=lo_row)
        logger.debug("added %r: %d binaries, %d always active, %d always inactive",
                     constr, constr.n_binaries, constr.n_fixed_active, constr.n_fixed_inactive)
        return constr


class _ReLUDelta(DeltaEvaluator):
    r"""Delta evaluation of a :class:`ReLUNetwork` around ``z0``: for changed columns
    :math:`C`, the first layer is :math:`W_1[:, C]\, z_C + (b_1 + W_1 z_0 - W_1[:, C]\, z_{0,C})`
    (the first layer of ``partial(other columns, z0[other])``), and the hidden layers
    run once for the stacked first-layer outputs of every group."""

    embedding: ReLUNetwork

    def __init__(self, network: ReLUNetwork, z0: ArrayLike) -> None:
        super().__init__(network, z0)
        W1, b1 = network.layers[0]
        self._base = b1 + W1 @ self.z0

    def _prepare(self, cols: IntArray) -> tuple[FloatArray, FloatArray]:
        Wc = np.ascontiguousarray(self.embedding.layers[0][0][:, cols])
        return Wc.T.copy(), self._base - Wc @ self.z0[cols]

    def score_groups(self, groups: Iterable[tuple[ArrayLike, ArrayLike]]) -> list[FloatArray]:
        firsts: list[FloatArray] = []
        sizes: list[int] = []
        for group_cols, group_Zc in groups:
            cols, Zc = self._args(group_cols, group_Zc)
            if len(cols) == 0:
                firsts.append(np.repeat(self._base[None, :], len(Zc), axis=0))
            else:
                WcT, bc = self._prepared(cols)
                firsts.append(Zc @ WcT + bc)
            sizes.append(len(Zc))
        if not firsts:
            return []
        out = np.vstack(firsts) if len(firsts) > 1 else firsts[0]
        for W, b in self.embedding.layers[1:]:
            out = np.maximum(out, 0.0) @ W.T + b
        return np.split(out[:, 0], np.cumsum(sizes)[:-1])


@dataclass(repr=False)
class NetworkConstr(EmbeddingConstr):
    """What :meth:`ReLUNetwork.add_to` added (:class:`EmbeddingConstr` plus the neurons).

    Parameters
    ----------
    embedding : Embedding
        The network that was added.
    inputs : numpy.ndarray
        Backend indices of the input variables (as given).
    score : int
        Backend index of the score variable.
    rows : numpy.ndarray
        Backend indices of every row added (including the threshold row).
    lo_row : int or None, default None
        Backend index of the row ``score >= lo`` (``None`` without ``lo``).
    hidden : list of numpy.ndarray
        Per hidden layer, the backend indices of the post-activation variables ``h``;
        ``-1`` for a neuron proven always inactive (its output is the constant 0 and no
        variable was created).
    binaries : list of numpy.ndarray
        Per hidden layer, the backend indices of the activation binaries ``s``; ``-1`` for
        a neuron whose state is known from its bounds (no binary needed).
    bounds : list of tuple
        Per layer (hidden layers then the output), the pre-activation bounds ``(L, U)``
        used for the big-M constants.

    Examples
    --------
    >>> from groupcf.embeddings import ReLUNetwork
    >>> from groupcf.solvers import make_backend
    >>> net = ReLUNetwork([(np.array([[1.0, -1.0], [0.5, 0.5]]), np.array([0.0, -0.5])),
    ...                    (np.array([[2.0, -1.0]]), np.array([0.1]))])
    >>> b = make_backend("highs")
    >>> x = b.add_vars(2, ub=1, vtype="B")
    >>> c = net.add_to(b, x, gcf.InputDomain.box(2), lo=0.0)
    >>> c.n_binaries, c.bounds[-1]                # output bounds over the box
    (2, (array([-0.4]), array([2.1])))
    >>> sol = b.solve()
    >>> c.get_error(sol)
    0.0
    """

    embedding: ReLUNetwork
    hidden: list[IntArray] = field(default_factory=list)
    binaries: list[IntArray] = field(default_factory=list)
    bounds: list[tuple[FloatArray, FloatArray]] = field(default_factory=list)

    @property
    def n_binaries(self) -> int:
        return int(sum(int(np.count_nonzero(b >= 0)) for b in self.binaries))

    @property
    def n_fixed_inactive(self) -> int:
        """Neurons proven always inactive (no variable, no binary)."""
        return int(sum(int(np.count_nonzero(h < 0)) for h in self.hidden))

    @property
    def n_fixed_active(self) -> int:
        """Neurons proven always active (a variable, no binary)."""
        return int(sum(int(np.count_nonzero((h >= 0) & (b < 0)))
                       for h, b in zip(self.hidden, self.binaries)))

    def start_values(self, x_values: ArrayLike) -> tuple[IntArray, FloatArray]:
        """Values of every variable this record added, at input values ``x_values``.

        Hidden outputs, activation binaries and the score.

        Parameters
        ----------
        x_values : array-like
            The input values.

        Returns
        -------
        tuple of numpy.ndarray
            ``(idx, values)``: backend indices and their values.
        """
        pre = self.embedding.preactivations(np.asarray(x_values, dtype=float)[None, :])
        idx, vals = [int(self.score)], [float(pre[-1][0, 0])]
        for h, s, a in zip(self.hidden, self.binaries, pre[:-1]):
            a = a[0]
            on = h >= 0
            idx.extend(h[on].tolist())
            vals.extend(np.maximum(a[on], 0.0).tolist())
            on = s >= 0
            idx.extend(s[on].tolist())
            vals.extend((a[on] > 0).astype(float).tolist())
        return np.array(idx, dtype=np.int64), np.array(vals)

    def __repr__(self) -> str:
        widths = [len(h) for h in self.hidden]
        return (f"NetworkConstr({type(self.embedding).__name__}, inputs={len(self.inputs)}, "
                f"hidden={widths}, binaries={self.n_binaries}, score=x[{self.score}], "
                f"rows={len(self.rows)})")


def _interval_affine(W: FloatArray, b: FloatArray, ylo: FloatArray,
                     yhi: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Bounds of ``W y + b`` for ``y`` in the box ``[ylo, yhi]`` (interval arithmetic);
    a zero weight times an infinite bound counts as 0."""
    Wp, Wn = np.maximum(W, 0.0), np.minimum(W, 0.0)
    if np.all(np.isfinite(ylo)) and np.all(np.isfinite(yhi)):
        return b + Wp @ ylo + Wn @ yhi, b + Wp @ yhi + Wn @ ylo
    with np.errstate(invalid="ignore"):
        def dot(A: FloatArray, y: FloatArray) -> FloatArray:
            out: FloatArray = np.nan_to_num(A * y, nan=0.0, posinf=np.inf, neginf=-np.inf).sum(axis=1)
            return out
        return b + dot(Wp, ylo) + dot(Wn, yhi), b + dot(Wp, yhi) + dot(Wn, ylo)
