"""A curve point whose coverage exceeds its bound is not reported as certified.

The bound's MIPs ask each score to clear the threshold by ``margin`` (against solver
tolerances) while coverage is counted at the threshold; a person inside that band can make the
bound fall below what the actions found. A large margin makes the band wide enough to see it.
"""
from __future__ import annotations

import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import GroupCFWarning


@pytest.fixture(scope="module")
def german():
    ds = gcf.datasets.load("german")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.3, random_state=0)
    pipe = make_pipeline(ds.space(numeric="passthrough"), LogisticRegression(max_iter=2000)).fit(X_tr, y_tr)
    return X_te[pipe.predict(X_te) == 0].iloc[:40], pipe


def test_a_contradicted_bound_is_no_certificate(german):
    S, pipe = german
    with pytest.warns(GroupCFWarning, match="not certified"):
        res = gcf.explain_global(S, pipe, Tmax=1, k=1, margin=0.5, progress=False)
    point = res.curve.iloc[0]
    assert point["n_covered"] > 0
    assert point["upper_bound"] >= point["n_covered"]          # never a bound below what was found
    assert point["status"] != "optimal"
    assert res.validate().ok


def test_the_default_margin_certifies(german):
    S, pipe = german
    res = gcf.explain_global(S, pipe, Tmax=1, k=2, progress=False)
    assert (res.curve["upper_bound"] >= res.curve["n_covered"]).all()
    assert (res.curve["status"] == "optimal").all()
