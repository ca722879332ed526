"""Typed options of ``gcf.explain`` (registry), the ``Explanation`` result API shared with
``GroupExplanation``, and user-facing warnings / progress."""
from __future__ import annotations

import functools
import json
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import GroupCFWarning, InvalidInputError, ValidationError
from groupcf.progress import progress_bar
from groupcf.results.base import Stats
from groupcf.single.registry import get_method, methods, register_method


@functools.cache
def compas():
    ds = gcf.datasets.load("compas", variant="paper")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.5, random_state=0)
    pipe = make_pipeline(gcf.FeatureSpace(immutable=["Race", "Sex"]), LogisticRegression(C=10, max_iter=1000))
    pipe.fit(X_tr, y_tr)
    rejected = X_te[pipe.predict(X_te) == 0]
    return pipe, X_tr, rejected


@functools.cache
def mace_result(n: int = 2):
    pipe, _, rejected = compas()
    return gcf.explain(rejected.iloc[0], pipe, method="mace", distance="l1", Tmax=3, n=n)


# ---------------------------------------------------------------------- options
@pytest.mark.parametrize("method", ["mace", "geco"])
def test_unknown_option_is_named_with_accepted_list(method):
    pipe, X, rejected = compas()
    with pytest.raises(InvalidInputError) as e:
        gcf.explain(rejected.iloc[0], pipe, method=method, data=X, bogus_option=3) if method == "geco" \
            else gcf.explain(rejected.iloc[0], pipe, method=method, bogus_option=3)
    msg = str(e.value)
    assert "bogus_option" in msg
    for name in get_method(method).accepted:
        assert repr(name) in msg


@pytest.mark.parametrize("option", [{"solver": "highs"}, {"mip_gap": 1e-3}])
def test_geco_rejects_mace_options(option):
    pipe, X, rejected = compas()
    with pytest.raises(InvalidInputError, match=next(iter(option))) as e:
        gcf.explain(rejected.iloc[0], pipe, method="geco", data=X, random_state=0, **option)
    assert "method='mace'" in str(e.value)   # says where it applies


def test_mace_rejects_geco_options():
    pipe, _, rejected = compas()
    with pytest.raises(InvalidInputError, match="random_state"):
        gcf.explain(rejected.iloc[0], pipe, method="mace", random_state=0)
    with pytest.raises(InvalidInputError, match="unknown method"):
        gcf.explain(rejected.iloc[0], pipe, method="nope")


def test_register_method_is_one_call():
    from dataclasses import dataclass

    @dataclass
    class EchoOptions:
        level: int = 1

    def echo(x, model, level=1, space=None, threshold=0.5):
        return ("echo", level)

    try:
        register_method("echo", echo, EchoOptions)
        assert "echo" in methods()
        assert gcf.explain(None, None, method="echo", level=4) == ("echo", 4)
        with pytest.raises(InvalidInputError, match="Tmax"):
            gcf.explain(None, None, method="echo", Tmax=2)
    finally:
        from groupcf.single import registry
        registry._METHODS.pop("echo", None)


# ---------------------------------------------------------------------- Explanation
def test_explanation_validate_summary_html_and_names():
    exp = mace_result()
    pipe = compas()[0]
    assert exp.validate().ok and exp.validate(pipe).ok
    assert isinstance(exp.status, gcf.Status) and isinstance(exp.stats, Stats)
    assert exp.changed_features == {k: c for k, c in enumerate(exp.changes)}
    assert all(len(c) <= 3 for c in exp.changed_features.values())
    assert exp.lower_bound is None or exp.lower_bound <= exp.distances[0] + 1e-6
    text = exp.summary()
    assert repr(exp).splitlines()[1:] == text.splitlines()[1:1 + exp.n_counterfactuals]
    assert len(repr(exp).splitlines()) == 1 + exp.n_counterfactuals and "->" in repr(exp)
    for c in exp.changes[0]:
        assert c in text
    assert exp._repr_html_().startswith("<pre>") and "<" not in exp._repr_html_()[5:-6]
    assert json.loads(json.dumps(exp.stats.as_dict()))


def test_explanation_validate_catches_tampering():
    exp = mace_result()
    bad = gcf.Explanation.from_dict(exp.to_dict())
    bad.model = exp.model
    bad.counterfactuals = exp.instance.to_frame().T.reset_index(drop=True)   # the rejected point itself
    bad.changes = [[]]
    with pytest.raises(ValidationError, match="not accepted"):
        bad.validate()
    c = exp.changes[0][0]
    bad2 = gcf.Explanation(**{**exp.__dict__, "changes": [exp.changes[0][1:]] + exp.changes[1:]})
    with pytest.raises(ValidationError, match=c):
        bad2.validate()
    bad3 = gcf.Explanation(**{**exp.__dict__, "Tmax": 0})
    with pytest.raises(ValidationError, match="Tmax"):
        bad3.validate()
    with pytest.raises(ValidationError, match="needs the model"):
        gcf.Explanation.from_dict(exp.to_dict()).validate()


def test_explanation_immutable_change_is_caught():
    exp = mace_result(n=1)
    cf = exp.counterfactuals.copy()
    other = next(v for v in exp.model.space["Race"].categories if v != exp.instance["Race"]) \
        if hasattr(exp.model.space["Race"], "categories") else None
    if other is None:
        pytest.skip("Race has no categories attribute")
    cf.loc[0, "Race"] = other
    bad = gcf.Explanation(**{**exp.__dict__, "counterfactuals": cf, "changes": [exp.changes[0] + ["Race"]]})
    with pytest.raises(ValidationError, match="immutable feature 'Race'"):
        bad.validate()


def test_explanation_json_round_trip():
    exp = mace_result()
    d = exp.to_dict()
    back = gcf.Explanation.from_dict(json.loads(json.dumps(d)))
    assert back.to_dict() == d
    assert back.lower_bound == exp.lower_bound and back.status == exp.status
    assert back.changed_features == exp.changed_features
    back.model = exp.model
    back.validate()      # values come back as text/numbers the FeatureSpace still reads


def test_dual_bound_is_a_deprecated_alias():
    exp = mace_result()
    with pytest.warns(DeprecationWarning, match="lower_bound"):
        assert exp.dual_bound == exp.lower_bound
    old = gcf.Explanation(**{k: v for k, v in exp.__dict__.items() if k != "lower_bound"}, dual_bound=0.25)
    assert old.lower_bound == 0.25


def test_group_explanation_shares_names():
    pipe, _, rejected = compas()
    res = gcf.explain_group(rejected.head(8), pipe, Tmax=2)
    assert isinstance(res.status, gcf.Status) and isinstance(res.stats, Stats)
    assert res._repr_html_().startswith("<pre>")
    for name in ("lower_bound", "changed_features", "solve_time", "method", "solver", "stats"):
        assert hasattr(res, name) and hasattr(mace_result(), name)


# ---------------------------------------------------------------------- warnings, progress
def test_ignored_space_argument_warns():
    pipe, _, rejected = compas()
    from sklearn.base import clone
    other = clone(pipe[0]).fit(rejected)
    with pytest.warns(GroupCFWarning, match="space argument is ignored"):
        gcf.explain(rejected.iloc[0], pipe, space=other)


def test_progress_bar_is_silent_off_terminal():
    it = [1, 2, 3]
    assert progress_bar(it, enabled=False) is it
    assert progress_bar(it, enabled=True) is it        # pytest captures stderr: not a terminal
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pipe, _, rejected = compas()
        exp = gcf.explain(rejected.iloc[1], pipe, n=2, progress=True)
    assert exp.n_counterfactuals >= 1 and np.all(exp.probabilities >= 0.5)
