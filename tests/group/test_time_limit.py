"""A time limit bounds explain_group: the best answer found, never a time-limit error."""
from __future__ import annotations

import pytest
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import GroupCFWarning
from groupcf.formulations.completion import Completions


@pytest.fixture(scope="module")
def adult_mlp():
    ds = gcf.datasets.load("adult")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.5, random_state=0)
    pipe = make_pipeline(ds.space(numeric="passthrough"), MLPClassifier((8,), max_iter=300, random_state=0))
    pipe.fit(X_tr.iloc[:2000], y_tr.iloc[:2000])
    return pipe, X_te[pipe.predict(X_te) == 0].iloc[:25]


def test_a_tiny_limit_returns_a_valid_answer(adult_mlp):
    pipe, S = adult_mlp
    res = gcf.explain_group(S, pipe, Tmax=3, time_limit=0.01, progress=False)
    assert res.n_explanations >= res.lower_bound >= 1 or res.unexplained
    assert res.status in (gcf.Status.TIME_LIMIT, gcf.Status.OPTIMAL)
    res.validate()                         # every claim re-checked with the model


def test_unreached_rows_are_listed_not_raised(adult_mlp, monkeypatch):
    pipe, S = adult_mlp
    monkeypatch.setattr(Completions, "_greedy", lambda self, z, F, k: None)   # no cheap counterfactual at all
    with pytest.warns(GroupCFWarning, match="time limit passed before"):
        res = gcf.explain_group(S, pipe, Tmax=3, time_limit=1e-9, progress=False)
    assert res.status == gcf.Status.TIME_LIMIT and not res.is_optimal
    assert set(res.unexplained) <= set(S.index) and len(res.unexplained) > 0
    assert res.stats["unreached_rows"] == len(res.unexplained)
