"""The classifier as the swarm sees it: encoded rows in, probability of the positive class out.

Temporary private adapter for black-box models (anything with ``predict_proba``, random
forests included) until :func:`groupcf.models.resolve_model` accepts models without an
embedding; it is replaced at merge. Accepted: a ``Pipeline(FeatureSpace, ...)`` or a
bare classifier with ``space=`` (a fitted FeatureSpace). Every counterfactual is
re-checked on raw rows with the user's own model (:meth:`BlackBox.is_positive`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...exceptions import InvalidInputError, UnsupportedModelError
from ...features.space import FeatureSpace
from ...models import TrainedModel


class BlackBox:
    """``space`` (the FeatureSpace), ``score(Z)`` on encoded rows, ``is_positive(X_raw)``
    and ``proba(X_raw)`` with the real model."""

    def __init__(self, model, space: FeatureSpace | None, threshold: float):
        if not 0.0 < threshold < 1.0:
            raise InvalidInputError(f"threshold must be a probability in (0, 1), got {threshold}")
        steps = getattr(model, "steps", None)
        if steps is not None:
            first = steps[0][1]
            if not isinstance(first, FeatureSpace):
                raise UnsupportedModelError(
                    "method='pso' needs a Pipeline whose first step is a groupcf FeatureSpace "
                    f"(got {type(first).__name__}), or a bare classifier with space=FeatureSpace(...)")
            space, clf = first, (model[1:] if len(steps) > 2 else steps[-1][1])
        else:
            if space is None:
                raise InvalidInputError(
                    f"a bare {type(model).__name__} needs space=FeatureSpace(...) (fitted), or pass "
                    "a Pipeline(FeatureSpace, classifier)")
            clf = model
        if not hasattr(space, "features_"):
            raise InvalidInputError("the FeatureSpace is not fitted: call .fit(X) first")
        if not hasattr(clf, "predict_proba"):
            raise UnsupportedModelError(
                f"method='pso' needs a classifier with predict_proba; {type(clf).__name__} has none")
        self.model, self.space, self.clf, self.threshold = model, space, clf, threshold
        self._trees = _forest_trees(clf)
        if self._trees is not None:   # per tree: leaf -> probability of the positive class
            self._leaf_p = []
            for t in self._trees:
                v = t.tree_.value[:, 0, :]
                self._leaf_p.append(v[:, 1] / np.maximum(v.sum(axis=1), 1e-300))
        self._pos = _positive_column(clf)
        self.tm = TrainedModel(model, space, None, threshold)
        self.n_calls = 0

    def score(self, Z: np.ndarray) -> np.ndarray:
        """Probability of the positive class of encoded rows ``Z``. Random forests are
        averaged tree by tree from the leaves' class shares (what ``predict_proba``
        computes, without its per-tree validation overhead)."""
        self.n_calls += 1
        if self._trees is not None:
            Z32 = np.ascontiguousarray(Z, dtype=np.float32)
            acc = np.zeros(len(Z))
            for t, leaf_p in zip(self._trees, self._leaf_p):
                acc += leaf_p[t.tree_.apply(Z32)]
            return acc / len(self._trees)
        return np.asarray(self.clf.predict_proba(Z))[:, self._pos]

    def accepts(self, p: np.ndarray) -> np.ndarray:
        """Acceptance from probabilities; at threshold 0.5 a tie is a rejection (the
        model's own ``predict`` takes the first class on a tie)."""
        return p > self.threshold if self.threshold == 0.5 else p >= self.threshold

    def proba(self, X: pd.DataFrame) -> np.ndarray:
        return self.tm.proba(X)

    def is_positive(self, X: pd.DataFrame) -> np.ndarray:
        return self.tm.is_positive(X)


def _positive_column(clf) -> int:
    classes = getattr(clf, "classes_", None)
    if classes is not None and len(classes) != 2:
        raise UnsupportedModelError(f"method='pso' explains binary classifiers; got {len(classes)} classes")
    return 1


def _forest_trees(clf):
    """The trees of a fitted sklearn random forest / extra-trees classifier, else None."""
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    if isinstance(clf, (RandomForestClassifier, ExtraTreesClassifier)) and hasattr(clf, "estimators_") \
            and all(len(t.classes_) == len(clf.classes_) for t in clf.estimators_):
        return list(clf.estimators_)
    return None
