"""Mixed-discrete PSO counterfactuals end to end (groupcf.single.pso): every answer
accepted and actionable, reproducible, input errors, Tmax, and a model flat around the
query is never silent."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import (
    InvalidInputError,
    NoCounterfactualError,
    NotRejectedError,
)
from groupcf.single.pso import explain_pso


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(i=st.integers(0, 10**6), seed=st.integers(0, 1000), n=st.integers(1, 5))
def test_every_counterfactual_is_accepted_and_actionable(pso_rf, i, seed, n):
    X, _, pipe, rejected = pso_rf
    x = rejected.iloc[i % len(rejected)]
    exp = explain_pso(x, pipe, data=X, n=n, random_state=seed, n_iterations=40)
    cfs = exp.counterfactuals
    assert 1 <= len(cfs) <= n
    assert np.all(pipe.predict_proba(cfs)[:, 1] > 0.5)
    assert np.all(pipe.predict(cfs) == 1)
    for _, cf in cfs.iterrows():
        assert cf["f2"] == x["f2"] and cf["color"] == x["color"]
        assert cf["count"] >= x["count"] and float(cf["count"]).is_integer()
        levels = ["low", "mid", "high"]
        assert levels.index(cf["level"]) >= levels.index(x["level"])
    assert len(cfs.drop_duplicates()) == len(cfs)
    assert exp.distances == sorted(exp.distances)
    assert exp.method == "pso" and not exp.is_optimal


def test_seeded_runs_are_reproducible(pso_rf):
    X, _, pipe, rejected = pso_rf
    a = explain_pso(rejected.iloc[0], pipe, data=X, random_state=3)
    b = explain_pso(rejected.iloc[0], pipe, data=X, random_state=3)
    pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)


def test_explain_dispatches_pso_and_bare_classifier_with_space(pso_rf):
    X, _, pipe, rejected = pso_rf
    x = rejected.iloc[1]
    exp = gcf.explain(x, pipe, method="pso", data=X, n=3, random_state=0)
    assert exp.method == "pso" and 1 <= exp.n_counterfactuals <= 3
    assert np.all(pipe.predict(exp.counterfactuals) == 1)
    exp2 = gcf.explain(x, pipe[-1], method="pso", space=pipe[0], data=X, n=2, random_state=0)
    assert np.all(pipe.predict(exp2.counterfactuals) == 1)


def test_no_valid_point_in_the_box_raises():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0, 1, size=(300, 3)), columns=["a", "b", "c"])
    y = (X.a > 0.7).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"),
                         RandomForestClassifier(n_estimators=20, random_state=0)).fit(X, y)
    x = pd.Series({"a": 0.1, "b": 0.5, "c": 0.5})
    assert pipe.predict(x.to_frame().T)[0] == 0
    with pytest.raises(NoCounterfactualError):
        explain_pso(x, pipe, data=X, epsilon=0.05, max_epsilon=0.05, seed_with_data=False, random_state=0)
    # the same query with the whole range allowed is explained
    exp = explain_pso(x, pipe, data=X, random_state=0)
    assert np.all(exp.counterfactuals["a"] > 0.5)


def test_input_errors(pso_rf):
    X, _, pipe, rejected = pso_rf
    accepted = X[pipe.predict(X) == 1].iloc[0]
    with pytest.raises(NotRejectedError):
        explain_pso(accepted, pipe, data=X)
    with pytest.raises(InvalidInputError, match="data="):
        explain_pso(rejected.iloc[0], pipe)
    with pytest.raises(InvalidInputError, match=r"'particles' \(did you mean 'n_particles'\?\)"):
        explain_pso(rejected.iloc[0], pipe, data=X, particles=3)
    with pytest.raises(InvalidInputError):
        explain_pso(rejected.iloc[0], pipe, data=X, epsilon=0)
    with pytest.raises(InvalidInputError, match="Tmax"):          # through the registry: checked
        gcf.explain(rejected.iloc[0], pipe, method="pso", data=X, Tmax=1.5)


@pytest.mark.parametrize("Tmax", [1, 2])
def test_tmax_bounds_the_changed_features(pso_rf, Tmax):
    X, _, pipe, rejected = pso_rf
    space = pipe[0]
    found = 0
    for i in range(4):
        x = rejected.iloc[i]
        try:
            e = gcf.explain(x, pipe, method="pso", data=X, n=3, Tmax=Tmax, random_state=i, progress=False)
        except NoCounterfactualError:
            continue
        found += 1
        changed = np.abs(space.codes(e.counterfactuals) - space.codes(x.to_frame().T)) > 1e-9
        assert changed.sum(axis=1).max() <= Tmax
        assert pipe.predict(e.counterfactuals).all()
    assert found >= 2
    with pytest.raises(InvalidInputError):
        gcf.explain(rejected.iloc[0], pipe, method="pso", data=X, Tmax=0)


def test_flat_model_around_the_query_says_why():
    """The label depends on an immutable feature only: the forest is flat over every
    actionable change, so no counterfactual exists and the error says what was reached."""
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(300, 4)), columns=["g", "a", "b", "c"])
    y = (X.g > 0).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough", immutable=["g"]),
                         RandomForestClassifier(n_estimators=20, random_state=0)).fit(X, y)
    x = X[(pipe.predict_proba(X)[:, 1] == 0)].iloc[0]
    with pytest.raises(NoCounterfactualError, match=r"highest probability of the desired class the swarm reached was 0\.0"):
        gcf.explain(x, pipe, method="pso", data=X, n=3, random_state=0, progress=False,
                    n_iterations=10, patience=3)


def test_note_is_empty_when_n_are_found(pso_rf):
    X, _, pipe, rejected = pso_rf
    e = gcf.explain(rejected.iloc[0], pipe, method="pso", data=X, n=2, random_state=0, progress=False)
    assert len(e.counterfactuals) < 2 or e.stats["note"] == ""


@pytest.fixture(scope="module")
def nearly_flat():
    """The label is set by the immutable ``g`` except for a rare actionable route
    (``a`` in its top 2 %): around a query with ``g < 0`` and a typical ``a`` the forest is
    flat at (nearly) 0 over most of ``a``'s range."""
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(600, 3)), columns=["g", "a", "b"])
    y = ((X.g > 0) | (X.a > X.a.quantile(0.98))).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough", immutable=["g", "b"]),
                         RandomForestClassifier(n_estimators=30, random_state=0)).fit(X, y)
    p = pipe.predict_proba(X)[:, 1]
    x = X[(p == 0) & (X.a.abs() < 0.3)].iloc[0]
    return X, pipe, x


def test_nearly_flat_forest_in_a_fixed_box_says_how_many_particles_crossed(nearly_flat):
    """Coverage below 1 is explained: no particle crossed, and the best probability."""
    X, pipe, x = nearly_flat
    with pytest.raises(NoCounterfactualError,
                       match=r"none of the 50 particles crossed.*highest probability of the desired class "
                             r"the swarm reached was 0\.\d\d\d"):
        gcf.explain(x, pipe, method="pso", data=X, n=3, random_state=0, progress=False,
                    epsilon=0.05, max_epsilon=0.05)


def test_nearly_flat_forest_grows_the_box_until_it_crosses(nearly_flat):
    X, pipe, x = nearly_flat
    e = gcf.explain(x, pipe, method="pso", data=X, n=1, random_state=0, progress=False, epsilon=0.05)
    assert pipe.predict(e.counterfactuals).all()
    eps = [r["epsilon"] for r in e.stats["rounds"]]
    assert eps[0] == 0.05 and eps[-1] > 0.05                 # the box had to grow


def test_fewer_than_n_warns_with_particles_and_best_probability():
    """One actionable integer feature whose top value alone is accepted: a single
    distinct counterfactual exists; the shortfall is a GroupCFWarning and the note says
    how many particles never crossed and the highest probability reached."""
    rng = np.random.default_rng(6)
    X = pd.DataFrame({"a": rng.integers(0, 5, 500), "g": rng.normal(size=500)})
    y = (X.a == 4).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough", immutable=["g"]),
                         RandomForestClassifier(n_estimators=20, random_state=0)).fit(X, y)
    x = X[X.a == 0].iloc[0]
    with pytest.warns(gcf.exceptions.GroupCFWarning, match=r"1 of 5 counterfactuals: \d+ of the 50 particles "
                                                          r"never crossed"):
        e = gcf.explain(x, pipe, method="pso", data=X, n=5, random_state=0, progress=False)
    assert len(e.counterfactuals) == 1 and e.counterfactuals.a.iloc[0] == 4
    top = float(pipe.predict_proba(e.counterfactuals)[0, 1])      # a = 4 is the only accepted point
    assert f"highest probability of the desired class reached was {top:.3f}" in e.stats["note"]
