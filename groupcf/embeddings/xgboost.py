r"""XGBoost's ``XGBClassifier`` (binary) as a :class:`~groupcf.embeddings.trees.TreeEnsemble`.

The score is the raw margin, ``predict(..., output_margin=True)``: the sum of the leaf
values (already scaled by the learning rate) plus the base margin
:math:`\mathrm{logit}(\texttt{base\_score})` of ``binary:logistic``; positive iff it is
``>= logit(p)``. XGBoost sends ``x`` left iff ``float32(x) < t`` with a float32 split
value ``t``; :func:`~groupcf.embeddings.trees.lt_threshold_f32` turns that into the
float64 test ``x <= t'`` exactly. Inputs never hold NaN here, so the default directions
of missing values do not matter. Only the ``gbtree`` booster with numerical splits and
``binary:logistic`` / ``binary:logitraw`` is supported; anything else raises
:class:`~groupcf.exceptions.UnsupportedModelError`. Needs ``pip install 'groupcf[trees]'``.
"""
from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from groupcf.embeddings._typing import TreeArrays
from groupcf.embeddings.sklearn_trees import _concat
from groupcf.embeddings.split_rules import lt_threshold_f32
from groupcf.embeddings.trees import TreeEnsemble
from groupcf.exceptions import UnsupportedModelError

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.registry import Register


def _float(text: object) -> float:
    return float(str(text).strip("[]").split(",")[0])


def xgb_classifier(model: Any) -> TreeEnsemble:
    """Embedding of a fitted binary ``xgboost.XGBClassifier``."""
    booster = model.get_booster()
    learner = json.loads(bytes(booster.save_raw("json")))["learner"]
    objective = learner["objective"]["name"]
    if objective not in ("binary:logistic", "binary:logitraw"):
        raise UnsupportedModelError(
            f"XGBClassifier with objective {objective!r} is not supported: only binary "
            "classification (binary:logistic) on a 0/1 target")
    gb = learner["gradient_booster"]
    if gb["name"] != "gbtree":
        raise UnsupportedModelError(f"XGBoost booster {gb['name']!r} is not supported, only 'gbtree'")
    params = learner["learner_model_param"]
    if int(params.get("num_class", 0)) > 1 or int(params.get("num_target", 1)) != 1:
        raise UnsupportedModelError("XGBClassifier must be binary (one output)")
    base_score = _float(params["base_score"])
    base = math.log(base_score / (1.0 - base_score)) if objective == "binary:logistic" else base_score
    trees_json = gb["model"]["trees"]
    n_parallel = int(gb["model"]["gbtree_model_param"].get("num_parallel_tree", 1))
    best = getattr(model, "best_iteration", None) if _has_best(model) else None
    if best is not None:
        trees_json = trees_json[:(int(best) + 1) * n_parallel]
    trees: list[TreeArrays] = []
    for t in trees_json:
        left = np.asarray(t["left_children"], dtype=np.int64)
        right = np.asarray(t["right_children"], dtype=np.int64)
        cond = np.asarray(t["split_conditions"], dtype=np.float64)
        leaf = left < 0
        if np.any(np.asarray(t.get("split_type", [0] * len(left)))[~leaf] != 0):
            raise UnsupportedModelError(
                "XGBoost categorical splits are not supported; let the FeatureSpace one-hot "
                "encode categorical features instead")
        feat = np.where(leaf, -1, np.asarray(t["split_indices"], dtype=np.int64))
        thr = np.where(leaf, 0.0, lt_threshold_f32(np.where(leaf, 0.0, cond)))
        trees.append((feat, thr, left, right, np.where(leaf, cond.astype(np.float32), 0.0)))
    n = int(params["num_feature"])
    return _concat(trees, n, 1.0, base, False, "XGBClassifier")


def _has_best(model: Any) -> bool:
    try:
        return getattr(model, "best_iteration", None) is not None
    except AttributeError:
        return False


def register_all(register: Register) -> None:
    """Register the XGBoost converters (called when xgboost is imported)."""
    from xgboost import XGBClassifier

    register(XGBClassifier, xgb_classifier)
