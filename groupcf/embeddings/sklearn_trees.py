r"""scikit-learn tree models as :class:`~groupcf.embeddings.trees.TreeEnsemble`.

* ``DecisionTreeClassifier``, ``RandomForestClassifier``, ``ExtraTreesClassifier``: the
  score is the mean over trees of the leaf's fraction of class ``classes_[1]``
  (``predict_proba(x)[:, 1]``); positive iff it is ``>= p`` (``averaging=True``).
* ``GradientBoostingClassifier`` (``loss="log_loss"``, binary) and
  ``HistGradientBoostingClassifier`` (binary log-loss): the score is the raw
  ``decision_function`` = initial raw prediction + the (learning-rate scaled) leaf values;
  positive iff it is ``>= logit(p)``.

scikit-learn's trees send ``x`` left iff ``float32(x) <= t`` (inputs are cast to float32
before the comparison with the float64 threshold): converted exactly with
:func:`~groupcf.embeddings.trees.le_threshold_f32`. HistGradientBoosting compares float64
``x <= t`` with its bin thresholds: kept as they are. Categorical splits, multiclass
models and other losses raise :class:`~groupcf.exceptions.UnsupportedModelError`.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.sparse import issparse
from sklearn.utils.validation import check_is_fitted

from groupcf.embeddings._typing import FloatArray, TreeArrays
from groupcf.embeddings.sklearn import _check_binary
from groupcf.embeddings.split_rules import le_threshold_f32
from groupcf.embeddings.trees import TreeEnsemble
from groupcf.exceptions import UnsupportedModelError

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.registry import Register


def _concat(trees: Sequence[TreeArrays], n_inputs: int, scale: float, base: float, averaging: bool,
            name: str) -> TreeEnsemble:
    """``trees``: list of ``(feature, threshold_le, left, right, value)`` with local
    indices (``-1`` children at leaves)."""
    parts: list[list[np.ndarray]] = [[] for _ in range(5)]
    roots: list[int] = []
    off = 0
    for feat, thr, lft, rgt, val in trees:
        n = len(feat)
        roots.append(off)
        leaf = np.asarray(feat) < 0
        parts[0].append(np.where(leaf, -1, feat))
        parts[1].append(thr)
        parts[2].append(np.where(leaf, -1, np.asarray(lft) + off))
        parts[3].append(np.where(leaf, -1, np.asarray(rgt) + off))
        parts[4].append(val)
        off += n
    feature, threshold, left, right, value = (np.concatenate(p) for p in parts)
    ens = TreeEnsemble(n_inputs, feature, threshold, left, right, value, roots=np.array(roots), scale=scale,
                       base=base, averaging=averaging, name=name)
    # every converter here (scikit-learn, XGBoost, LightGBM) reads a model whose predict is
    # the argmax of its predict_proba, or (GradientBoosting: decision_function > 0) implied by it
    ens.predict_follows_proba = True
    return ens


def _sk_tree(tree: Any, value: FloatArray) -> TreeArrays:
    """One fitted ``sklearn.tree._tree.Tree`` with leaf values ``value``."""
    feat = tree.feature.astype(np.int64)
    leaf = tree.children_left < 0
    thr = np.where(leaf, 0.0, le_threshold_f32(np.where(leaf, 0.0, tree.threshold)))
    return feat, thr, tree.children_left, tree.children_right, value


def _class1_fraction(tree: Any) -> FloatArray:
    v = np.asarray(tree.value[:, 0, :], dtype=np.float64)
    tot = v.sum(axis=1)
    tot[tot == 0] = 1.0
    out: FloatArray = v[:, 1] / tot
    return out


def _check_single_output(model: Any) -> None:
    _check_binary(model)
    if getattr(model, "n_outputs_", 1) != 1:
        raise UnsupportedModelError(f"{type(model).__name__} with {model.n_outputs_} outputs is not supported")


def decision_tree(model: Any) -> TreeEnsemble:
    """Embedding of a fitted binary ``DecisionTreeClassifier`` (score = P(class 1))."""
    check_is_fitted(model)
    _check_single_output(model)
    t = model.tree_
    return _concat([_sk_tree(t, _class1_fraction(t))], model.n_features_in_, 1.0, 0.0, True,
                   type(model).__name__)


def forest(model: Any) -> TreeEnsemble:
    """Embedding of a fitted binary ``RandomForestClassifier`` / ``ExtraTreesClassifier``
    (score = mean P(class 1) over the trees), with :class:`ForestProba` as its
    ``model_proba``."""
    check_is_fitted(model)
    _check_single_output(model)
    trees = [_sk_tree(e.tree_, _class1_fraction(e.tree_)) for e in model.estimators_]
    ens = _concat(trees, model.n_features_in_, 1.0 / len(trees), 0.0, True, type(model).__name__)
    if _own_forest_proba(model):
        ens.model_proba = ForestProba(model)
    return ens


def _own_forest_proba(model: Any) -> bool:
    """Whether ``model``'s ``predict_proba`` is scikit-learn's forest one (a subclass that
    overrides it keeps its own: :class:`ForestProba` would not reproduce it)."""
    from sklearn.ensemble import RandomForestClassifier

    return getattr(type(model), "predict_proba", None) is RandomForestClassifier.predict_proba


class ForestProba:
    """A fitted scikit-learn forest's own ``predict_proba``, tree by tree.

    ``forest.predict_proba(X)`` validates ``X`` (``_validate_X_predict``: float32), then
    runs one joblib task per tree, each adding the tree's ``predict_proba(X,
    check_input=False)`` — its fitted ``tree_.predict(X)`` (the leaf's class fractions)
    cut to the ``n_classes_`` columns, after a fitted check — into a float64 array, and
    divides by the number of trees. The task and the per-tree checks cost ~0.1 ms a tree
    beyond the tree's own work (scikit-learn re-installs the caller's configuration and
    warning filters in each task): ~50 ms for 500 trees on one row, most of a single
    explanation's re-check. This does the same steps in one loop — the forest's own
    validation, each fitted tree's own ``tree_.predict`` on the validated rows, added in
    the forest's order, the same division — so the result is the forest's
    ``predict_proba`` with ``n_jobs=1`` bit for bit (with ``n_jobs > 1`` the forest adds
    the trees in the order its threads finish, which may differ in the last bits).
    Trees of a class that overrides ``predict_proba`` are asked through it
    (``check_input=False``, as the forest does). Batches of more than ``PARALLEL_ROWS``
    rows of a forest with ``n_jobs`` other than 1, sparse input, or a scikit-learn without
    ``_validate_X_predict`` go to the forest's own ``predict_proba``.
    """

    #: rows from which a forest with ``n_jobs != 1`` gets its own (parallel) predict_proba
    PARALLEL_ROWS = 1000

    def __init__(self, model: Any):
        from sklearn.tree import DecisionTreeClassifier

        self.model = model
        #: every tree's predict_proba is the base one: its tree_.predict, cut to n_classes_
        self.plain = all(type(e).predict_proba is DecisionTreeClassifier.predict_proba and e.n_outputs_ == 1
                         for e in model.estimators_)

    def __call__(self, X: Any) -> FloatArray:
        m = self.model
        validate = getattr(m, "_validate_X_predict", None)
        if validate is None or issparse(X) or (m.n_jobs not in (None, 1) and len(X) > self.PARALLEL_ROWS):
            out: FloatArray = np.asarray(m.predict_proba(X), dtype=np.float64)
            return out
        X = validate(X)
        if issparse(X):
            return np.asarray(m.predict_proba(X), dtype=np.float64)
        k = int(m.n_classes_)
        proba = np.zeros((X.shape[0], k), dtype=np.float64)
        for e in m.estimators_:
            proba += e.tree_.predict(X)[:, :k] if self.plain else e.predict_proba(X, check_input=False)
        proba /= len(m.estimators_)
        return proba


def gradient_boosting(model: Any) -> TreeEnsemble:
    """Embedding of a fitted binary ``GradientBoostingClassifier`` with log-loss."""
    check_is_fitted(model)
    _check_binary(model)
    if model.loss != "log_loss":
        raise UnsupportedModelError(
            f"GradientBoostingClassifier(loss={model.loss!r}) is not supported: only "
            "loss='log_loss', whose decision_function is the logit of predict_proba")
    if model.estimators_.shape[1] != 1:
        raise UnsupportedModelError("GradientBoostingClassifier must be binary")
    init = model.init_
    from sklearn.dummy import DummyClassifier
    if not (isinstance(init, DummyClassifier) or init == "zero"):
        raise UnsupportedModelError(
            f"GradientBoostingClassifier(init={type(init).__name__}) is not supported: the "
            "initial prediction must be constant (init=None or 'zero')")
    n = model.n_features_in_
    base = float(np.asarray(model._raw_predict_init(np.zeros((1, n)))).reshape(-1)[0])
    trees = [_sk_tree(e.tree_, np.asarray(e.tree_.value[:, 0, 0], dtype=float))
             for e in model.estimators_[:, 0]]
    return _concat(trees, n, float(model.learning_rate), base, False, "GradientBoostingClassifier")


def hist_gradient_boosting(model: Any) -> TreeEnsemble:
    """Embedding of a fitted binary ``HistGradientBoostingClassifier`` (log-loss)."""
    check_is_fitted(model)
    _check_binary(model)
    if getattr(model, "n_trees_per_iteration_", 1) != 1:
        raise UnsupportedModelError("HistGradientBoostingClassifier must be binary (one tree per iteration)")
    if type(model._loss).__name__ != "HalfBinomialLoss":
        raise UnsupportedModelError(
            f"HistGradientBoostingClassifier with loss {type(model._loss).__name__} is not supported")
    trees: list[TreeArrays] = []
    for (pred,) in model._predictors:
        nd = pred.nodes
        if np.any(nd["is_categorical"] & ~nd["is_leaf"].astype(bool)):
            raise UnsupportedModelError(
                "HistGradientBoostingClassifier with categorical splits is not supported; "
                "let the FeatureSpace one-hot encode categorical features instead")
        leaf = nd["is_leaf"].astype(bool)
        feat = np.where(leaf, -1, nd["feature_idx"]).astype(np.int64)
        lft = np.where(leaf, -1, nd["left"].astype(np.int64))
        rgt = np.where(leaf, -1, nd["right"].astype(np.int64))
        trees.append((feat, nd["num_threshold"].astype(float), lft, rgt, nd["value"].astype(float)))
    base = float(np.asarray(model._baseline_prediction).reshape(-1)[0])
    return _concat(trees, model.n_features_in_, 1.0, base, False, "HistGradientBoostingClassifier")


def register_all(register: Register) -> None:
    """Register scikit-learn's trees, forests and boosting."""
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        GradientBoostingClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )
    from sklearn.tree import DecisionTreeClassifier

    register(DecisionTreeClassifier, decision_tree)
    register(RandomForestClassifier, forest)
    register(ExtraTreesClassifier, forest)
    register(GradientBoostingClassifier, gradient_boosting)
    register(HistGradientBoostingClassifier, hist_gradient_boosting)
