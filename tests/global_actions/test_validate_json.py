"""Issue 23's closing gap: a result read back from JSON validates exactly as the original —
the search's ``space=`` (training ranges, immutable / increase-only features) and
``threshold`` are kept in the JSON, and ``validate`` takes the same keywords as the search."""
from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.results.global_rules import rules_of


@pytest.fixture(scope="module")
def compas_ct():
    """COMPAS, a ColumnTransformer (OneHotEncoder + StandardScaler) pipeline, its training
    rules, and a search with both at threshold 0.6."""
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    ds = gcf.datasets.load("compas")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.5, random_state=0)
    categorical = ["sex", "race", "c_charge_degree"]
    numeric = [c for c in X_tr.columns if c not in categorical]
    pipe = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"), categorical),
                                                 (StandardScaler(), numeric)),
                         LogisticRegression()).fit(X_tr, y_tr)
    rules = ds.space(numeric="passthrough").fit(X_tr)
    S = X_te[pipe.predict_proba(X_te)[:, 1] < 0.6].sample(30, random_state=0)
    res = gcf.explain_global(S, pipe, Tmax=2, k=3, space=rules, threshold=0.6, progress=False)
    return pipe, rules, res


def _same(a, b):
    assert a.checked == b.checked and a.failures == b.failures and a.n_items == b.n_items


def test_json_round_trip_validates_as_the_original(compas_ct):
    """Before: validate(model=pipe) on the read-back result took the StandardScaler's mean ± 3 sd
    as the domain (false "outside" failures on age) and threshold 0.5."""
    pipe, rules, res = compas_ct
    assert res.threshold == 0.6 and res.rules is not None
    back = gcf.GlobalExplanation.from_json(res.to_json())
    assert back.threshold == 0.6 and back.rules == res.rules
    original = res.validate(raise_on_error=False)
    assert original.ok, original.failures
    _same(back.validate(model=pipe, raise_on_error=False), original)
    # the search's own keywords are accepted too, with the same meaning
    _same(back.validate(model=pipe, space=rules, threshold=0.6, raise_on_error=False), original)


def test_a_broken_result_fails_the_same_way_after_json(compas_ct):
    """An immutable feature changed, an age outside the training range, an increase-only
    feature lowered: the same failures before and after the round trip."""
    pipe, _, res = compas_ct
    bad = copy.deepcopy(res)
    j = int(bad.assignment.dropna().iloc[0])
    bad.specs[j] = [*bad.specs[j], {"feature": "race", "op": "set", "value": "Other"},
                    {"feature": "age", "op": "shift", "value": 200.0},
                    {"feature": "priors_count", "op": "shift", "value": -1.0}]
    original = bad.validate(raise_on_error=False)
    text = " | ".join(original.failures)
    assert "immutable feature 'race'" in text and "age=" in text and "outside [18, 96]" in text
    assert "increase-only feature 'priors_count' decreases" in text
    back = gcf.GlobalExplanation.from_json(bad.to_json())
    _same(back.validate(model=pipe, raise_on_error=False), original)


def test_threshold_and_space_keywords_override_the_kept_ones(compas_ct):
    pipe, rules, res = compas_ct
    back = gcf.GlobalExplanation.from_json(res.to_json())
    strict = back.validate(model=pipe, threshold=0.999, raise_on_error=False)
    assert not strict.ok and all("rejected by the model" in f for f in strict.failures)
    _same(res.validate(threshold=0.999, raise_on_error=False), strict)
    loose = copy.deepcopy(rules)
    loose["race"].immutable = False
    assert not back.validate(model=pipe, space=loose).failures


def test_json_written_before_the_rules_were_kept_still_reads(compas_ct):
    pipe, rules, res = compas_ct
    d = json.loads(res.to_json())
    del d["rules"], d["threshold"]
    old = gcf.GlobalExplanation.from_dict(d)
    assert old.rules is None and old.threshold == 0.5
    assert old.validate(model=pipe, space=rules, threshold=0.6).ok


def test_rule_order_matches_the_space_codes(german_binned):
    """Rule.order (kept in the JSON) ranks values as the FeatureSpace's codes do: ordinal
    categories and bins (numbers and the bins themselves)."""
    pipe, S, _ = german_binned
    space = copy.deepcopy(pipe[0])
    for f in space:
        if f.kind in ("ordinal", "numeric", "binary"):
            f.increase_only = True
    rules = rules_of(space)
    back = {r["name"]: r for r in json.loads(json.dumps([r.__dict__ for r in rules.values()]))}
    codes = space.codes(S)
    for l, f in enumerate(space):
        if not f.increase_only:
            continue
        r = rules[f.name]
        assert r == type(r)(**back[f.name])
        np.testing.assert_array_equal(r.order(S[f.name]), codes[:, l])
        if f.edges is not None:       # a decoded counterfactual carries the bin itself
            bins = pd.Series([f.categories[int(c)] for c in codes[:, l]], index=S.index)
            np.testing.assert_array_equal(r.order(bins), codes[:, l])
