r"""LightGBM's ``LGBMClassifier`` (binary) as a :class:`~groupcf.embeddings.trees.TreeEnsemble`.

The score is the raw score, ``predict(..., raw_score=True)``: the sum of the leaf values
(shrinkage and the initial score from ``boost_from_average`` are already in them; with
``boosting="rf"`` their mean); positive iff it is ``>= logit(p)``. LightGBM compares the
float64 input with a float64 threshold, ``x <= t`` goes left, which is already the form
of :class:`~groupcf.embeddings.trees.TreeEnsemble`. Inputs never hold NaN here; a split
whose missing type is ``Zero`` (zero treated as missing), a categorical split or a linear
tree raises :class:`~groupcf.exceptions.UnsupportedModelError`, as do objectives other
than ``binary``. Needs ``pip install 'groupcf[trees]'``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from groupcf.embeddings._typing import TreeArrays
from groupcf.embeddings.sklearn_trees import _concat
from groupcf.embeddings.trees import TreeEnsemble
from groupcf.exceptions import UnsupportedModelError

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.registry import Register


def _tree_arrays(node: dict[str, Any]) -> TreeArrays:
    feat: list[int] = []
    thr: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []

    def emit(nd: dict[str, Any]) -> int:
        k = len(feat)
        feat.append(-1)
        thr.append(0.0)
        left.append(-1)
        right.append(-1)
        value.append(0.0)
        if "leaf_value" in nd or "split_feature" not in nd:
            value[k] = float(nd.get("leaf_value", 0.0))
            if nd.get("leaf_coeff"):
                raise UnsupportedModelError("LightGBM linear trees (linear_tree=True) are not supported")
            return k
        if nd.get("decision_type", "<=") != "<=":
            raise UnsupportedModelError(
                "LightGBM categorical splits are not supported; let the FeatureSpace one-hot "
                "encode categorical features instead")
        if nd.get("missing_type", "None") == "Zero":
            raise UnsupportedModelError(
                "LightGBM splits treating zero as missing (zero_as_missing=True) are not "
                "supported; refit with zero_as_missing=False")
        feat[k] = int(nd["split_feature"])
        thr[k] = float(nd["threshold"])
        left[k] = emit(nd["left_child"])
        right[k] = emit(nd["right_child"])
        return k

    emit(node)
    return (np.array(feat, dtype=np.int64), np.array(thr), np.array(left, dtype=np.int64),
            np.array(right, dtype=np.int64), np.array(value))


def lgbm_classifier(model: Any) -> TreeEnsemble:
    """Embedding of a fitted binary ``lightgbm.LGBMClassifier``."""
    booster = model.booster_
    n_iter = getattr(model, "best_iteration_", None) or -1
    dump = booster.dump_model(num_iteration=n_iter)
    objective = str(dump.get("objective", "")).split()[0]
    if objective not in ("binary", "cross_entropy") or dump.get("num_class", 1) != 1 \
            or dump.get("num_tree_per_iteration", 1) != 1:
        raise UnsupportedModelError(
            f"LGBMClassifier with objective {dump.get('objective')!r} is not supported: only "
            "binary classification (objective='binary')")
    trees = [_tree_arrays(t["tree_structure"]) for t in dump["tree_info"]]
    scale = 1.0 / len(trees) if dump.get("average_output") else 1.0
    n = int(dump["max_feature_idx"]) + 1
    return _concat(trees, n, scale, 0.0, False, "LGBMClassifier")


def register_all(register: Register) -> None:
    """Register the LightGBM converters (called when lightgbm is imported)."""
    from lightgbm import LGBMClassifier

    register(LGBMClassifier, lgbm_classifier)
