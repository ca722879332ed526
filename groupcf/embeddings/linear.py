r"""Linear classifiers: ``score(x) = w^T x + c``, positive iff ``score >= 0``.

scikit-learn's margin classifiers ``LinearSVC``, ``SGDClassifier``, ``RidgeClassifier``
and ``Perceptron`` (binary) predict ``classes_[1]`` iff
:math:`\mathrm{decision\_function}(x) = w^\top x + c > 0` with ``w = coef_[0]`` and
``c = intercept_[0]``; the :class:`LinearModel` score is that decision function. (At
exactly 0 scikit-learn predicts ``classes_[0]``; the algorithms add a small positive margin
to the threshold, so their counterfactuals are strictly positive.) They have no
probability: only the decision threshold 0 (probability threshold 0.5) is meaningful.

The MIP formulation is one row, :math:`s - w^\top x = c` on a free variable :math:`s`,
and the model is exactly additive (:meth:`LinearModel.additive`), so every closed-form
path (best completion, per-feature gains) applies.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from groupcf.embeddings._typing import ArrayLike, FloatArray
from groupcf.embeddings.base import AdditiveForm, Embedding, EmbeddingConstr
from groupcf.exceptions import UnsupportedModelError

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.registry import Register
    from groupcf.features.domain import InputDomain
    from groupcf.solvers.base import Backend


class LinearModel(Embedding):
    """``score(z) = bias + z @ weights`` (a linear decision function).

    The embedding of scikit-learn's ``LinearSVC``, ``SGDClassifier``,
    ``RidgeClassifier`` and ``Perceptron`` (binary); exactly additive.

    Parameters
    ----------
    weights : array-like
        One weight per input column.
    bias : float, default 0.0
        The intercept.

    Raises
    ------
    ValueError
        Weights or bias that are not finite.

    Examples
    --------
    >>> from groupcf.embeddings import LinearModel
    >>> emb = LinearModel([1.0, -2.0, 0.5], bias=0.25)
    >>> emb, emb.score(np.array([[1, 0, 1]]))
    (LinearModel(inputs=3), array([1.75]))
    >>> emb.score_bounds(np.zeros(3), np.ones(3))
    (-1.75, 1.75)
    """

    def __init__(self, weights: ArrayLike, bias: float = 0.0) -> None:
        w = np.array(weights, dtype=np.float64).reshape(-1)
        if not (np.all(np.isfinite(w)) and math.isfinite(float(bias))):
            raise ValueError("weights and bias must be finite")
        w.setflags(write=False)
        self.weights, self.bias = w, float(bias)

    @property
    def n_inputs(self) -> int:
        return len(self.weights)

    def __repr__(self) -> str:
        return f"LinearModel(inputs={self.n_inputs})"

    def score(self, Z: ArrayLike) -> FloatArray:
        return self._check_points(Z) @ self.weights + self.bias

    def additive(self) -> AdditiveForm:
        return AdditiveForm(self.weights, self.bias)

    def partial(self, fixed_idx: ArrayLike, fixed_values: ArrayLike) -> LinearModel:
        idx = np.asarray(fixed_idx, dtype=np.int64).reshape(-1)
        values = np.asarray(fixed_values, dtype=np.float64).reshape(-1)
        if idx.shape != values.shape:
            raise ValueError(f"{len(idx)} indices but {len(values)} values")
        keep = np.ones(self.n_inputs, dtype=bool)
        keep[idx] = False
        return LinearModel(self.weights[keep], self.bias + float(self.weights[idx] @ values))

    def score_bounds(self, lb: ArrayLike, ub: ArrayLike) -> tuple[float, float]:
        """Exact bounds over a box: each column at the end its weight favours.

        Parameters
        ----------
        lb, ub : numpy.ndarray
            The input box, one bound per input.

        Returns
        -------
        tuple of float
            ``(lo, hi)``.
        """
        low, up = np.asarray(lb, dtype=np.float64), np.asarray(ub, dtype=np.float64)
        w = self.weights
        with np.errstate(invalid="ignore"):
            lo = np.where(w > 0, w * low, np.where(w < 0, w * up, 0.0))
            hi = np.where(w > 0, w * up, np.where(w < 0, w * low, 0.0))
        return self.bias + float(lo.sum()), self.bias + float(hi.sum())

    def add_to(self, backend: Backend, x_idx: ArrayLike, domain: InputDomain,
               lo: float | None = None) -> EmbeddingConstr:
        """Add one row ``score - w x = bias`` (``score >= lo`` as a second row).

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
        EmbeddingConstr
            What was added.
        """
        inputs = np.asarray(x_idx, dtype=np.int64).reshape(-1)
        if len(inputs) != self.n_inputs:
            raise ValueError(f"{len(inputs)} input variables for a model with {self.n_inputs} inputs")
        score = int(backend.add_vars(1, lb=-math.inf, ub=math.inf)[0])
        nz = np.flatnonzero(self.weights)
        cols = np.concatenate([inputs[nz], [score]])
        data = np.concatenate([-self.weights[nz], [1.0]])
        A = sp.csr_matrix((data, (np.zeros(len(cols), dtype=np.int64), cols)), shape=(1, backend.num_vars))
        rows = [np.asarray(backend.add_rows(A, [self.bias], [self.bias]), dtype=np.int64)]
        lo_row = None
        if lo is not None:
            lo_row = int(backend.add_row([score], [1.0], float(lo), math.inf))
            rows.append(np.array([lo_row], dtype=np.int64))
        return EmbeddingConstr(embedding=self, inputs=inputs, score=score,
                               rows=np.concatenate(rows), lo_row=lo_row)


def linear_classifier(model: Any) -> LinearModel:
    """Embedding of a fitted binary scikit-learn linear classifier (``coef_``,
    ``intercept_``, ``decision_function``)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model)
    classes = getattr(model, "classes_", None)
    if classes is None or np.ndim(classes) != 1 or len(classes) != 2:
        raise UnsupportedModelError(
            f"{type(model).__name__} must be a binary classifier (2 classes); refit it on a 0/1 target")
    coef = np.asarray(model.coef_, dtype=float)
    if coef.ndim == 1:                     # RidgeClassifier on a 1-D target
        coef = coef[None, :]
    intercept = np.asarray(model.intercept_, dtype=float).reshape(-1)
    if coef.ndim != 2 or coef.shape[0] != 1 or intercept.shape != (1,):
        raise UnsupportedModelError(
            f"{type(model).__name__} with coef_ of shape {coef.shape} is not a binary linear model")
    return LinearModel(coef[0], float(intercept[0]))


def register_all(register: Register) -> None:
    """Register scikit-learn's linear classifiers."""
    from sklearn.linear_model import Perceptron, RidgeClassifier, SGDClassifier
    from sklearn.svm import LinearSVC

    for cls in (LinearSVC, SGDClassifier, RidgeClassifier, Perceptron):
        register(cls, linear_classifier)
