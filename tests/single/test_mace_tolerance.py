"""MACE warns only where a user must act: the decoding's rounding of wide-range integer
features (solved as real, moved at most one unit) is expected, not a warning."""
from __future__ import annotations

import warnings

import pytest

import groupcf as gcf
from groupcf.exceptions import GroupCFWarning


def test_l1_on_german_passthrough_warns_nothing():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    ds = gcf.datasets.load("german")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.3, random_state=0)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), LogisticRegression(max_iter=2000)).fit(X_tr, y_tr)
    R = X_te[pipe.predict(X_te) == 0].iloc[:10]
    rounded = 0
    for i in range(len(R)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", GroupCFWarning)     # before the fix: 8 of these 10 rows warned
            exp = gcf.explain(R.iloc[i], pipe, method="mace", distance="l1", progress=False)
        exp.validate()
        gap = abs(exp.distances[0] - exp.objectives[0])
        rounded += gap > 1e-6 * max(1.0, abs(exp.objectives[0]))
        # one unit of credit_amount (range over 1000: solved as real), in the l1 mean over features
        f = pipe[0]["credit_amount"]
        assert gap <= 1e-6 + 1.0 / (f.high - f.low) / len(pipe[0].features_)
    assert rounded >= 1       # the case the fix is about occurs here


def test_a_real_mismatch_still_warns(monkeypatch):
    """The check itself stays: a decoded distance off by more than the rounding warns."""
    import importlib

    mace = importlib.import_module("groupcf.single.mace")     # the module (groupcf.single.mace is a function too)
    monkeypatch.setattr(mace, "_rounding_slack", lambda *a: -1.0)    # any difference is too large
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    ds = gcf.datasets.load("german")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.3, random_state=0)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), LogisticRegression(max_iter=2000)).fit(X_tr, y_tr)
    x = X_te[pipe.predict(X_te) == 0].iloc[0]
    with pytest.warns(GroupCFWarning, match="differs from the MIP objective"):
        gcf.explain(x, pipe, method="mace", distance="l1", progress=False)
