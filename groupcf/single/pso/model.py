"""The classifier as the swarm sees it: encoded rows in, probability of the positive class out.

The model is resolved by :func:`groupcf.models.resolve_model` with black boxes allowed:
a model with a registered embedding (logistic regression, ReLU nets, linear classifiers,
tree ensembles) is scored by the embedding's vectorised numpy evaluation; any other
classifier with ``predict_proba`` behind a groupcf FeatureSpace is queried as it is.
Every counterfactual is re-checked on raw rows with the user's own model
(:meth:`SwarmModel.is_positive`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...embeddings.base import Embedding
from ...exceptions import UnsupportedModelError
from ...models import black_box_classifier, resolve_model


class SwarmModel:
    """``space`` (the FeatureSpace), ``score(Z)`` = probability of the positive class of
    encoded rows, ``accepts(p)``, and ``is_positive`` / ``proba`` of raw rows with the
    real model. ``n_calls`` counts batched evaluations."""

    def __init__(self, model, space, threshold: float):
        tm = resolve_model(model, space=space, threshold=threshold, allow_black_box=True)
        if tm.space is None:
            raise UnsupportedModelError(
                "method='pso' searches the encoded space of a groupcf FeatureSpace: pass a "
                "Pipeline(FeatureSpace, classifier), or a bare classifier with space=FeatureSpace(...)")
        self.tm, self.model, self.space, self.threshold = tm, model, tm.space, threshold
        self._clf = black_box_classifier(tm) if tm.is_black_box else None
        classes = getattr(self._clf, "classes_", None)
        if classes is not None and len(classes) != 2:
            raise UnsupportedModelError(f"method='pso' explains binary classifiers; got {len(classes)} classes")
        self.n_calls = 0

    def _embedding(self) -> Embedding:
        """The model's embedding (not a black box)."""
        assert self.tm.embedding is not None   # resolve_model: a model that is no black box has one
        return self.tm.embedding

    def score(self, Z: np.ndarray) -> np.ndarray:
        """Probability of the positive class of the encoded rows ``Z``."""
        self.n_calls += 1
        if self._clf is None:
            return self._embedding().proba(Z)
        return np.asarray(self._clf.predict_proba(Z))[:, 1]

    def score_near(self, z: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """:meth:`score` of encoded rows ``Z`` that equal the encoded point ``z`` except
        on a few columns, by the embedding's partial evaluation where it has a cheap one
        (:meth:`~groupcf.embeddings.base.Embedding.delta_evaluator` with ``by_rows``: a
        tree ensemble walks only the trees whose path of ``z`` tests a changed column);
        the same values as :meth:`score` (exactly, for tree ensembles)."""
        Z = np.asarray(Z, dtype=float)
        emb = None if self._clf is not None else self._embedding()
        ev = None if emb is None or not len(Z) else emb.delta_evaluator(z)
        if emb is None or ev is None or not ev.by_rows:
            return self.score(Z)
        self.n_calls += 1
        return np.asarray(emb.score_to_proba(ev.score_rows(Z, ev.z0[None, :] != Z)), dtype=float)

    def split_points(self) -> list[np.ndarray] | None:
        """Per encoded column, the model's split points (its embedding's
        :meth:`~groupcf.embeddings.base.Embedding.split_points`); ``None`` for a black box
        or a model without them."""
        return None if self._clf is not None else self._embedding().split_points()

    def path_splits(self, z) -> tuple[np.ndarray, np.ndarray] | None:
        """``(columns, thresholds)`` of the split tests the encoded point ``z`` goes
        through (its embedding's :meth:`~groupcf.embeddings.base.Embedding.path_splits`);
        ``None`` for a black box or a model without them."""
        return None if self._clf is not None else self._embedding().path_splits(z)

    def first_crossing(self, z: np.ndarray, d: np.ndarray, t_max: float) -> float | None:
        """The smallest ``t`` in ``[0, t_max]`` where the encoded point ``z + t d`` reaches
        the threshold, by the embedding's line search
        (:meth:`~groupcf.embeddings.base.Embedding.first_crossing`: exact for ReLU networks,
        a scan and bisection otherwise); ``None`` when there is none or for a black box."""
        if self._clf is not None:
            return None
        emb = self._embedding()
        return emb.first_crossing(z, d, t_max, emb.score_threshold(self.threshold))

    @property
    def embedded(self) -> bool:
        """Whether the model is scored through its embedding (not a black box)."""
        return self._clf is None

    def accepts(self, p: np.ndarray) -> np.ndarray:
        """Acceptance from probabilities; at threshold 0.5 a tie is a rejection (a
        scikit-learn classifier's ``predict`` takes the first class on a tie)."""
        return p > self.threshold if self.threshold == 0.5 else p >= self.threshold

    def proba(self, X: pd.DataFrame) -> np.ndarray:
        return self.tm.proba(X)

    def is_positive(self, X: pd.DataFrame) -> np.ndarray:
        return self.tm.is_positive(X)
