r"""scikit-learn classifiers as :class:`~groupcf.embeddings.network.ReLUNetwork`.

* ``LogisticRegression`` (binary): one layer, :math:`\mathrm{score}(x) = w^\top x + c`
  with ``w = coef_[0]``, ``c = intercept_[0]``; equals ``decision_function``.
* ``MLPClassifier(activation="relu")`` (binary): scikit-learn gives a binary MLP a single
  logistic output unit, whose pre-activation is the score:
  ``predict_proba(x)[:, 1] = sigmoid(score(x))``. ``coefs_[k]`` has shape ``(in, out)``
  and is transposed to the ``(out, in)`` convention.

The positive class is ``classes_[1]`` (as for ``decision_function`` and
``predict_proba(x)[:, 1]``). Anything else (multiclass, multi-label, other activations) raises
:class:`~groupcf.exceptions.UnsupportedModelError`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from groupcf.embeddings.network import ReLUNetwork
from groupcf.exceptions import UnsupportedModelError

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.registry import Register


def _check_binary(model: Any) -> None:
    classes = getattr(model, "classes_", None)
    if classes is None or np.ndim(classes) != 1 or len(classes) != 2:
        n = "?" if classes is None else (len(classes) if np.ndim(classes) == 1 else "multi-output")
        raise UnsupportedModelError(
            f"{type(model).__name__} must be a binary classifier (2 classes), this one has "
            f"{n} classes; refit it on a 0/1 target")


def logistic_regression(model: Any) -> ReLUNetwork:
    """Embedding of a fitted binary ``sklearn.linear_model.LogisticRegression``."""
    check_is_fitted(model)
    _check_binary(model)
    coef = np.asarray(model.coef_, dtype=float)
    intercept = np.asarray(model.intercept_, dtype=float).reshape(-1)
    if coef.shape[0] != 1 or intercept.shape != (1,):
        raise UnsupportedModelError(
            f"LogisticRegression with coef_ of shape {coef.shape} is not a binary model")
    return ReLUNetwork([(coef, intercept)])


def mlp_classifier(model: Any) -> ReLUNetwork:
    """Embedding of a fitted binary ``sklearn.neural_network.MLPClassifier`` with ReLU."""
    check_is_fitted(model)
    if model.activation != "relu":
        raise UnsupportedModelError(
            f"MLPClassifier(activation={model.activation!r}) is not supported: only "
            "activation='relu' has an exact MIP formulation here")
    _check_binary(model)
    if getattr(model, "n_outputs_", 1) != 1 or getattr(model, "out_activation_", "logistic") != "logistic":
        raise UnsupportedModelError(
            f"MLPClassifier with {model.n_outputs_} outputs and output activation "
            f"{model.out_activation_!r} is not a binary classifier")
    layers = [(np.asarray(W, dtype=float).T, np.asarray(b, dtype=float))
              for W, b in zip(model.coefs_, model.intercepts_)]
    return ReLUNetwork(layers)


def register_all(register: Register) -> None:
    """Register LogisticRegression and MLPClassifier."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    register(LogisticRegression, logistic_regression)
    register(MLPClassifier, mlp_classifier)
