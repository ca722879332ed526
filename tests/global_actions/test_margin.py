"""The certified bound holds at the threshold itself, whatever the margin.

The MIPs that build actions ask each score to clear ``threshold + margin``; those whose
value bounds coverage ask only ``threshold - margin`` (coverage is counted at the
threshold). A logistic regression with hand-set coefficients places people's best scores
exactly: inside the band above the threshold (covered, and counted by the bound), inside
the band below it (undecided: counted in every bound, with a warning) and below the band
(proven uncoverable). A person may also keep a value outside the data's range on a feature
the action does not change: the bound's MIPs must allow it, as the numpy cover does.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.colgen.levels import PricingContext
from groupcf.colgen.masters import Duals
from groupcf.colgen.pool import ColumnPool
from groupcf.exceptions import GroupCFWarning
from groupcf.global_actions.actions import ActionSpace
from groupcf.global_actions.pricing import ActionMIP
from groupcf.global_actions.search import ExactLevel
from groupcf.models import resolve_model
from groupcf.utils import Deadline

MARGIN = 1e-3


def people(*us, c="no", d="no", v=5):
    return pd.DataFrame({"u": list(us), "c": c, "d": d, "v": v}, index=[f"p{j}" for j in range(len(us))])


def explain(S, pipe, **kw):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        res = gcf.explain_global(S, pipe, Tmax=1, margin=MARGIN, progress=False, **kw)
    return res, [str(w.message) for w in got if issubclass(w.category, GroupCFWarning)]


def assert_bound_holds(res):
    assert (res.curve["upper_bound"] >= res.curve["n_covered"]).all(), res.curve
    assert res.upper_bound >= res.n_covered
    assert res.validate().ok


@pytest.mark.parametrize("k", [1, None])
def test_a_cover_inside_the_band_above_the_threshold_is_counted_by_the_bound(placed, k):
    # c -> yes takes p2 to 0.0005 (inside [τ, τ + margin)): covered at τ, invisible to a τ + margin bound
    S = people(6.0, 8.0, 5.005)
    res, warned = explain(S, placed, k=k)
    assert not warned
    assert res.n_covered == 3 and res.n_coverable == 3
    assert res.covered["p2"]
    assert_bound_holds(res)
    assert (res.curve["status"] == "optimal").all()
    assert res.stats["undecided"] == 0


def test_a_person_just_below_the_threshold_is_undecided_and_counted_in_every_bound(placed):
    # c -> yes takes p2 to -0.0005 (inside [τ - margin, τ)): no MIP at solver tolerance can decide it
    S = people(6.0, 8.0, 4.995)
    res, warned = explain(S, placed, k=2, enumerate_work=0)         # the MIP levels (no enumeration)
    assert any("1 person(s)" in w and "cannot be decided" in w for w in warned), warned
    assert res.stats["undecided"] == 1 and res.stats["undecided_types"] == 1
    assert res.n_covered == 2 and res.n_coverable == 2
    assert not res.covered["p2"]
    assert_bound_holds(res)
    assert (res.curve["upper_bound"] == 3).all()
    assert not (res.curve["status"] == "optimal").any()
    assert not res.is_optimal


def test_the_enumeration_decides_a_person_just_below_the_threshold(placed):
    # the same person, every action enumerated and scored by numpy at τ: proven uncoverable
    S = people(6.0, 8.0, 4.995)
    res, warned = explain(S, placed, k=2)
    assert not warned and res.stats["enumeration"]["in_pool"]
    assert res.stats["undecided"] == 0 and res.n_covered == 2 and res.n_coverable == 2
    assert (res.curve["upper_bound"] == 2).all() and (res.curve["status"] == "optimal").all()


def test_a_person_below_the_band_is_proven_uncoverable(placed):
    S = people(6.0, 8.0, 4.95)                      # best score -0.005 < τ - margin
    res, warned = explain(S, placed, k=1)
    assert not warned
    assert res.stats["undecided"] == 0 and res.n_coverable == 2
    assert res.curve["upper_bound"].tolist() == [2]
    assert res.is_optimal


@pytest.mark.parametrize("k", [1, None])
def test_a_value_outside_the_data_range_on_an_unchanged_feature_is_counted_by_the_bound(placed, k):
    # p2 keeps v = 50 (trained on 0 … 10): c -> yes takes it to 0.05; over v's range alone its best is -0.05
    S = people(6.0, 8.0, 1.0, v=[5, 5, 50])
    res, warned = explain(S, placed, k=k)
    assert not warned
    assert res.n_covered == 3 and res.n_coverable == 3
    assert (res.curve["upper_bound"] >= res.curve["n_covered"]).all(), res.curve
    assert (res.curve["status"] == "optimal").all()
    cf = res.apply()
    assert cf.loc["p2", "v"] == 50 and (placed.predict(cf) == 1).all()
    assert res.validate(placed).ok          # a person's own value is theirs: only changed values must be in range


def test_pricing_resolves_at_the_strict_target_when_relaxed_columns_do_not_improve(placed):
    # A reaches only the band (c -> yes: -0.0005); B is really covered by d -> yes (0.1)
    S = pd.DataFrame({"u": [1.995, 3.0], "c": ["no", "yes"], "d": ["yes", "no"], "v": 5}, index=["A", "B"])
    aspace = ActionSpace(resolve_model(placed), S, Tmax=1, margin=MARGIN)
    tA, tB = aspace.type_of_row
    pi = np.zeros(aspace.n_types)
    pi[tA], pi[tB] = 10.0, 1.0
    level = ExactLevel(ActionMIP(aspace), n_solutions=1)
    duals = Duals(pi, 0.5)
    res = level(duals, PricingContext(ColumnPool(aspace.n_types), Deadline(None)))
    assert res.dual_bound == pytest.approx(10.0)      # the relaxed bound counts A
    assert not res.proof
    assert level.resolves == 1
    improving = [c for c in res.columns if duals.reduced(c) > 1e-6]
    assert improving and all(c.cover[tB] and not c.cover[tA] for c in improving)


def test_the_default_margin_certifies(german_lr):
    pipe, S = german_lr
    res = gcf.explain_global(S, pipe, Tmax=1, k=2, progress=False)
    assert_bound_holds(res)
    assert (res.curve["status"] == "optimal").all()
