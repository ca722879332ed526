"""A user's trained model, resolved once: feature space, embedding, and the real model.

Every algorithm works with a :class:`TrainedModel`: the :class:`~groupcf.FeatureSpace`
that encodes raw rows, the :class:`~groupcf.embeddings.base.Embedding` the solvers see,
and the user's own object, which has the last word — every counterfactual returned by
groupcf is re-checked with :meth:`TrainedModel.is_positive`, i.e. with the real model's
``predict_proba`` / forward pass, never with our own copy of its weights.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .embeddings import get_embedding
from .embeddings.base import Embedding
from .exceptions import InvalidInputError, UnsupportedModelError
from .features.space import FeatureSpace

#: default safety margin on the logit, against solver feasibility tolerances
DEFAULT_MARGIN = 1e-6


def logit(p: float) -> float:
    """The logit of probability ``p`` (``InvalidInputError`` outside (0, 1))."""
    if not 0.0 < p < 1.0:
        raise InvalidInputError(f"threshold must be a probability in (0, 1), got {p}")
    return math.log(p / (1.0 - p))


@dataclass
class TrainedModel:
    """``model`` (the user's object) with its ``space`` and ``embedding``.

    ``threshold`` is the probability of the positive class from which an instance counts
    as accepted (default 0.5, i.e. logit 0).

    Black boxes (``resolve_model(..., allow_black_box=True)``: any classifier with
    ``predict_proba`` and no registered embedding) have ``embedding = None``; only the
    methods that merely query the model (GeCo, PSO) accept them. ``space`` is ``None`` too when
    the model takes raw rows without a FeatureSpace (e.g. a Pipeline(ColumnTransformer,
    RandomForestClassifier)): :meth:`proba` then gives it the raw rows.

    ``encoder`` (optional, see :func:`resolve_encoded`) maps numeric rows to the model's
    inputs when there is no FeatureSpace (e.g. sequential counterfactuals' x-space states,
    one column per raw feature, to a one-hot encoded network); ``positive_class`` is the
    ``predict_proba`` column of the accepted class (default 1). ``model`` may be an
    :class:`~groupcf.embeddings.base.Embedding` itself (then it is its own real model).
    """

    model: object
    space: FeatureSpace | None
    embedding: Embedding | None
    threshold: float = 0.5
    encoder: Callable[[np.ndarray], np.ndarray] | None = None
    positive_class: int = 1

    @property
    def is_black_box(self) -> bool:
        return self.embedding is None

    @property
    def logit_threshold(self) -> float:
        logit(self.threshold)  # validates
        if self.embedding is None:
            raise AttributeError("a black-box model (no embedding) has no score threshold")
        return self.embedding.score_threshold(self.threshold)

    def encode(self, X: pd.DataFrame | np.ndarray) -> np.ndarray:
        """The model's input columns of the rows ``X`` (the encoder's, else the space's)."""
        if self.encoder is not None:
            return np.asarray(self.encoder(np.atleast_2d(np.asarray(X, dtype=float))), dtype=float)
        if self.space is None:
            return np.atleast_2d(np.asarray(X, dtype=float))
        return self.space.transform(X)

    def _inputs(self, X: pd.DataFrame | np.ndarray) -> pd.DataFrame | np.ndarray:
        """What the real model is given: the encoder's columns; raw rows for a pipeline or
        a model without a space; the space's encoding for a bare model."""
        if self.encoder is not None:
            return self.encode(X)
        return X if hasattr(self.model, "steps") or self.space is None else self.encode(X)

    def _final_inputs(self, X: pd.DataFrame | np.ndarray) -> Any:
        """What the real model's final step is given: :meth:`_inputs` through a
        pipeline's transforms."""
        X_in = self._inputs(X)
        m: Any = self.model
        if hasattr(m, "steps") and len(m.steps) > 1:
            X_in = m[:-1].transform(X_in)
        return X_in

    def _model_proba(self) -> Callable[[Any], np.ndarray] | None:
        """The embedding's ``model_proba`` (the real model's own ``predict_proba`` on its
        final step's inputs, bit for bit, without its per-part cost), when it has one."""
        return None if self.embedding is None else self.embedding.model_proba

    def proba(self, X: pd.DataFrame | np.ndarray) -> np.ndarray:
        """Probability of the positive class according to the *real* model (raw rows go
        to a pipeline as they are; a bare model gets them encoded by the space; with an
        ``encoder``, the model gets the encoder's columns)."""
        m = self.model
        if isinstance(m, Embedding):       # an embedding given as the model is its own real model
            return np.asarray(m.proba(self.encode(X)), dtype=float)
        if hasattr(m, "predict_proba"):
            fast = self._model_proba()
            if fast is not None:
                return fast(self._final_inputs(X))[:, self.positive_class]
            return np.asarray(m.predict_proba(self._inputs(X)))[:, self.positive_class]
        if hasattr(m, "decision_function"):  # margin classifier: sigmoid of its margin
            d = np.asarray(m.decision_function(self._inputs(X)), dtype=float)
            return 0.5 * (1.0 + np.tanh(0.5 * d.reshape(-1)))
        return _torch_proba(m, self.encode(X))

    def margin(self, X: pd.DataFrame | np.ndarray) -> np.ndarray:
        """How far each row is inside the accepted side (``>= 0``: accepted): the
        embedding's score minus its score at ``threshold`` when the model is an embedding,
        else the real model's probability minus ``threshold``."""
        if isinstance(self.model, Embedding):
            return np.asarray(self.model.score(self.encode(X)), dtype=float) - self.logit_threshold
        return self.proba(X) - self.threshold

    def is_positive(self, X: pd.DataFrame) -> np.ndarray:
        """Whether the real model accepts each row: probability ``>= threshold`` and, at
        the default threshold, the model's own ``predict`` says positive too (read from
        the same ``predict_proba`` pass, its argmax, when the embedding's
        ``predict_follows_proba`` states that ``predict`` follows it)."""
        return self.check(X)[1]

    def check(self, X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """``(proba, accepted)`` of each row by the real model: :meth:`proba` and
        :meth:`is_positive` from one pass of it (a pipeline's transforms run once; a
        tree ensemble's ``predict_proba`` is called once, its argmax standing for
        ``predict``)."""
        m: Any = self.model
        if self.threshold == 0.5 and not isinstance(m, Embedding) and hasattr(m, "predict") \
                and hasattr(m, "classes_") and hasattr(_final_step(m), "predict_proba"):
            # one pass of the pipeline's transforms; predict too unless the embedding
            # states that predict follows predict_proba's argmax
            X_in = self._final_inputs(X)
            clf = _final_step(m)
            fast = self._model_proba()
            P = np.asarray(clf.predict_proba(X_in) if fast is None else fast(X_in))
            p = P[:, self.positive_class]
            ok = p >= self.threshold
            if self.embedding is not None and self.embedding.predict_follows_proba:
                pred = np.argmax(P, axis=1) == self.positive_class
                # a tie (0.5 / 0.5): argmax takes the first class, but predict need not
                # (gradient boosting predicts positive at a decision value of exactly 0)
                tie = (P.max(axis=1, keepdims=True) == P).sum(axis=1) > 1
                if tie.any():
                    rows = np.flatnonzero(tie)
                    X_tie = X_in.iloc[rows] if hasattr(X_in, "iloc") else X_in[rows]
                    pred[rows] = np.asarray(clf.predict(X_tie)) == m.classes_[self.positive_class]
                ok &= pred
            else:
                ok &= np.asarray(clf.predict(X_in)) == m.classes_[self.positive_class]
            return p, ok
        p = self.proba(X)
        ok = p >= self.threshold
        if self.threshold == 0.5 and hasattr(m, "predict") and hasattr(m, "classes_"):
            pred = np.asarray(m.predict(self._inputs(X)))
            ok &= pred == m.classes_[self.positive_class]
        return p, ok


def resolve_model(model: Any, space: FeatureSpace | None = None, threshold: float = 0.5, *,
                  allow_black_box: bool = False) -> TrainedModel:
    """Resolve a fitted Pipeline(FeatureSpace, clf), a Pipeline of scikit-learn
    preprocessing then a classifier (``space=``, optional: a FeatureSpace fitted on the
    training rows, for numeric ranges and actionability), or a bare classifier / torch module
    with ``space=``, into a :class:`TrainedModel`.

    ``allow_black_box``: a model without a registered embedding but with ``predict_proba``
    resolves to a black box (``embedding=None``; ``space`` the pipeline's FeatureSpace when
    it is ``Pipeline(FeatureSpace, clf)``, ``space=`` for a bare model, else ``None``)
    instead of raising :class:`UnsupportedModelError`."""
    if isinstance(model, TrainedModel):
        return model
    try:
        found_space, emb = get_embedding(model, space=space)
    except UnsupportedModelError as e:
        if not allow_black_box:
            raise
        return _black_box(model, space, threshold, e)
    if found_space is None:
        raise InvalidInputError(
            f"a bare {type(model).__name__} needs space=FeatureSpace(...) (fitted) to know how "
            "raw features are encoded; or pass a Pipeline(FeatureSpace, classifier)")
    if not hasattr(found_space, "features_"):
        raise InvalidInputError("the FeatureSpace is not fitted: call .fit(X) first")
    if emb.n_inputs != found_space.n_features_out_:
        raise InvalidInputError(
            f"the model has {emb.n_inputs} inputs but the FeatureSpace produces "
            f"{found_space.n_features_out_} columns")
    logit(threshold)  # validates
    if threshold != 0.5 and _margin_only(model):
        raise InvalidInputError(
            f"{type(_final_step(model)).__name__} has no predict_proba, only a decision function "
            f"(positive iff decision_function >= 0): only threshold=0.5 is meaningful, got {threshold}")
    return TrainedModel(model, found_space, emb, threshold)


def resolve_encoded(model: Any, encode: Callable[[np.ndarray], np.ndarray] | None = None, *,
                    threshold: float = 0.5, positive_class: int = 1) -> TrainedModel:
    """Resolve a model that takes numeric rows through an ``encode`` map (no FeatureSpace).

    The adapter of methods whose states are plain numeric vectors (the sequential
    counterfactuals' x-space: one column per raw feature, categories as codes).

    Parameters
    ----------
    model : Embedding, TrainedModel or classifier with ``predict_proba``
        An :class:`~groupcf.embeddings.base.Embedding` is scored by its numpy ``score``
        and is its own real model (its MIP is available to bounds); any other object with
        ``predict_proba`` is a black box queried for column ``positive_class``. A
        :class:`TrainedModel` is returned as it is.
    encode : callable, optional
        Maps rows ``(m, n)`` to the model's inputs (e.g. a
        :class:`~groupcf.sequential.encoding.OneHotEncoding`); ``None``: the identity.
    threshold : float, default 0.5
        Probability of the positive class from which a row is accepted.
    positive_class : int, default 1
        The ``predict_proba`` column of the accepted class (black boxes only).

    Returns
    -------
    TrainedModel
        ``space=None``, the ``encoder``; ``embedding`` the model when it is one, else ``None``.

    Raises
    ------
    UnsupportedModelError
        The model is neither an embedding nor has ``predict_proba``.
    InvalidInputError
        ``threshold`` is not a probability in (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from groupcf.embeddings import ReLUNetwork
    >>> net = ReLUNetwork([(np.array([[1.0, -1.0]]), np.array([0.0]))])
    >>> tm = resolve_encoded(net)
    >>> tm.margin(np.array([[2.0, 1.0], [0.0, 1.0]]))
    array([ 1., -1.])
    """
    if isinstance(model, TrainedModel):
        return model
    logit(threshold)  # validates
    if isinstance(model, Embedding):
        return TrainedModel(model, None, model, threshold, encode, positive_class)
    if not hasattr(model, "predict_proba"):
        raise UnsupportedModelError(f"{type(model).__name__} is neither an Embedding nor has predict_proba")
    return TrainedModel(model, None, None, threshold, encode, positive_class)


def reference_space(model: Any, data: object) -> FeatureSpace | None:
    """For a Pipeline of scikit-learn preprocessing (its first step not a FeatureSpace) and
    reference rows ``data`` (GeCo's and PSO's ``data=``): a FeatureSpace fitted on them,
    whose numeric ranges and integrality the translation of the preprocessing uses
    (:mod:`groupcf.features.preprocessing`); ``None`` otherwise or when the rows cannot be
    fitted (then the scalers' statistics give the ranges)."""
    steps = getattr(model, "steps", None)
    names = getattr(model, "feature_names_in_", None)
    if not steps or names is None or not isinstance(data, pd.DataFrame):
        return None
    first = [e for _, e in steps if e is not None and not isinstance(e, str)][:1]
    if not first or isinstance(first[0], FeatureSpace):
        return None
    cols = [str(c) for c in names]
    if any(c not in data.columns for c in cols):
        return None
    try:
        return FeatureSpace(numeric="passthrough").fit(data[cols].dropna())
    except (InvalidInputError, ValueError, TypeError):
        return None


def _final_step(model: Any) -> Any:
    return model.steps[-1][1] if hasattr(model, "steps") else model


def _margin_only(model: Any) -> bool:
    """A classifier with a decision function but no probabilities (e.g. ``LinearSVC``)."""
    m = _final_step(model)
    return hasattr(m, "decision_function") and not hasattr(m, "predict_proba")


def black_box_classifier(tm: TrainedModel) -> Any:
    """The classifier of a black box that takes encoded rows (behind its FeatureSpace), or
    ``None`` when it takes raw rows."""
    if tm.space is None:
        return None
    steps = getattr(tm.model, "steps", None)
    return tm.model if steps is None else [e for _, e in steps if e is not None and not isinstance(e, str)][-1]


def _black_box(model: Any, space: FeatureSpace | None, threshold: float, why: UnsupportedModelError) -> TrainedModel:
    if not hasattr(model, "predict_proba"):
        raise UnsupportedModelError(f"{why}; nor has {type(model).__name__} a predict_proba to query "
                                    "as a black box") from why
    logit(threshold)
    steps = getattr(model, "steps", None)
    if steps is not None:
        ests = [e for _, e in steps if e is not None and not isinstance(e, str)]
        sp = ests[0] if len(ests) == 2 and isinstance(ests[0], FeatureSpace) else None
        return TrainedModel(model, sp, None, threshold)
    if space is not None and not hasattr(space, "features_"):
        raise InvalidInputError("the FeatureSpace is not fitted: call .fit(X) first")
    return TrainedModel(model, space, None, threshold)


def _torch_proba(module: Any, Z: np.ndarray) -> np.ndarray:
    import torch

    with torch.no_grad():
        p = next(module.parameters(), None)
        dtype = p.dtype if p is not None else torch.float32
        out = module(torch.as_tensor(Z, dtype=dtype)).double().numpy()
    out = out.reshape(len(Z), -1)
    s = out[:, 0] if out.shape[1] == 1 else out[:, 1] - out[:, 0]
    proba: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * s))   # torch is untyped here: s is Any
    return proba
