"""The real model's re-check of every cover (audit of issue 23): a tie at the threshold
decided as the model's own ``predict`` decides it, and a curve point the re-check lowers
is no longer called optimal."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.exceptions import GroupCFWarning
from groupcf.models import TrainedModel, resolve_model


@pytest.fixture(scope="module")
def tie_gbt():
    """One depth-2 boosting tree on x in {0, 1, 2, 3}: at x = 0 the decision value is exactly
    0 (probability 0.5, and scikit-learn predicts the positive class), x = 1, 2 rejected."""
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import make_pipeline

    X = pd.DataFrame({"x": [0, 0, 0, 0, 1, 1, 2, 3, 3, 3]})
    y = [1, 1, 0, 0, 0, 0, 0, 1, 1, 1]
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"),
                         GradientBoostingClassifier(n_estimators=1, max_depth=2, random_state=0)).fit(X, y)
    T = pd.DataFrame({"x": [0, 1, 2, 3]})
    assert pipe.decision_function(T)[0] == 0.0 and pipe.predict_proba(T)[0, 1] == 0.5    # the setting holds
    return pipe, X


def test_a_tie_is_accepted_when_the_model_predicts_positive(tie_gbt):
    pipe, _ = tie_gbt
    T = pd.DataFrame({"x": [0, 1, 2, 3]})
    np.testing.assert_array_equal(resolve_model(pipe).is_positive(T), pipe.predict(T) == 1)


def test_global_covers_at_a_tie_as_predict_does(tie_gbt):
    pipe, X = tie_gbt
    S = X[X["x"] == 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # no "rejected by the real model" warning
        res = gcf.explain_global(S, pipe, Tmax=1, k=1, progress=False)
    assert res.n_covered == 2 and (pipe.predict(res.apply()) == 1).all()
    assert res.curve["status"].tolist() == ["optimal"]


def test_a_point_the_recheck_lowers_is_not_optimal(german_lr, monkeypatch):
    """When the real model rejects a cover (numerical tolerance), the answer's curve point
    shows the lower coverage and is no longer called optimal (it was, below its bound)."""
    pipe, S = german_lr
    check = TrainedModel.check
    first = S.index[0]

    def reject_first(self, X):
        p, ok = check(self, X)
        return p, ok & (X.index != first)

    monkeypatch.setattr(TrainedModel, "check", reject_first)
    with pytest.warns(GroupCFWarning, match="rejected by the real model"):
        res = gcf.explain_global(S, pipe, Tmax=1, k=1, progress=False)
    row = res.curve.iloc[-1]
    assert row["n_covered"] == res.n_covered < row["upper_bound"]
    assert row["status"] != "optimal" and not res.is_optimal
