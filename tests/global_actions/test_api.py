"""explain_global on German credit (the issue's setting), the result's interface, bad input."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.exceptions import InvalidInputError, NotRejectedError


def test_german_curve_certified_and_rechecked(german_lr):
    pipe, S = german_lr
    res = gcf.explain_global(S, pipe, Tmax=2, k=3, progress=False)
    assert list(res.curve["k"]) == [1, 2, 3]
    assert (np.diff(res.curve["n_covered"]) >= 0).all()
    assert (res.curve["n_covered"] <= res.curve["upper_bound"]).all()
    assert res.n_actions <= 3
    cf = res.apply()
    cov = res.covered.to_numpy()
    assert (pipe.predict(cf[cov]) == 1).all()
    for f in ("age", "personal_status_sex", "foreign_worker"):
        assert (cf[f].astype(object) == S[f].astype(object)).all()
    assert all(len(s) <= 2 for s in res.specs)
    assert res.coverage == pytest.approx(cov.mean())
    assert res.mean_cost == pytest.approx(res.cost[cov].mean())
    text = res.summary()
    assert "action" in text and "Curve" in text
    frame = res.to_frame()
    assert list(frame.index) == list(S.index)
    back = gcf.GlobalExplanation.from_json(res.to_json())
    assert back.to_dict() == res.to_dict()


def test_german_fewest_actions(german_lr):
    pipe, S = german_lr
    res = gcf.explain_global(S, pipe, Tmax=2, progress=False)
    assert res.n_covered == res.n_coverable
    assert res.lower_bound is not None and res.lower_bound <= res.n_actions
    assert len(res.curve) == res.n_actions


@pytest.mark.slow            # 20 s: a k = 2 descent MIP on German (tiny cases: test_cheapest.py)
def test_min_coverage_cheapest(german_lr):
    pipe, S = german_lr
    full = gcf.explain_global(S, pipe, Tmax=2, k=2, progress=False)
    share = full.curve["coverage"].iloc[0]          # what one action reaches
    res = gcf.explain_global(S, pipe, Tmax=2, k=2, min_coverage=share, progress=False)
    assert res.coverage >= share - 1e-9
    assert res.mean_cost * res.n_covered <= full.curve["mean_cost"].iloc[0] * full.curve["n_covered"].iloc[0] + 1e-6


def test_cost_weights_change_the_choice(german_lr):
    pipe, S = german_lr
    base = gcf.explain_global(S, pipe, Tmax=1, k=1, progress=False)
    f = base.specs[0][0]["feature"]
    res = gcf.explain_global(S, pipe, Tmax=1, k=1, cost={f: 0.0}, progress=False)
    assert res.n_covered == base.n_covered        # same coverage (a weight changes costs only)
    assert math.isclose(res.mean_cost, 0.0) or res.specs[0][0]["feature"] != f


def test_bad_input(german_lr):
    pipe, S = german_lr
    with pytest.raises(InvalidInputError):
        gcf.explain_global(S, pipe, Tmax=0)
    with pytest.raises(InvalidInputError):
        gcf.explain_global(S, pipe, Tmax=2, k=0)
    with pytest.raises(InvalidInputError, match="nosuch"):
        gcf.explain_global(S, pipe, Tmax=2, cost={"nosuch": 1})
    with pytest.raises(InvalidInputError, match="n_solution"):
        gcf.explain_global(S, pipe, Tmax=2, n_solution=3)
    with pytest.raises(InvalidInputError):
        gcf.explain_global(S, pipe, Tmax=2, numeric="clip")
    ds = gcf.datasets.load("german")
    acc = ds.X[pipe.predict(ds.X) == 1].iloc[:2]
    with pytest.raises(NotRejectedError):
        gcf.explain_global(pd.concat([S.iloc[:3], acc]), pipe, Tmax=2)


def test_k_is_accepted_as_the_old_name_of_n(german_lr):
    pipe, S = german_lr
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # k is the name (the and the literature's)
        res = gcf.explain_global(S.iloc[:10], pipe, Tmax=1, k=1, progress=False)
    assert res.k == 1 and len(res.curve) == 1
    alias = gcf.explain_global(S.iloc[:10], pipe, Tmax=1, n=1, progress=False)   # the vocabulary's count
    assert alias.k == 1 and alias.coverage == res.coverage
    with pytest.raises(InvalidInputError):
        gcf.explain_global(S.iloc[:10], pipe, Tmax=1, k=1, n=1, progress=False)
    with pytest.raises(InvalidInputError, match="did you mean 'polish'"):
        gcf.explain_global(S.iloc[:10], pipe, Tmax=1, polsh=False)
    opts = gcf.GlobalOptions(polish=False)
    assert gcf.explain_global(S.iloc[:10], pipe, Tmax=1, k=1, options=opts, progress=False).n_actions == 1


def test_who_and_gaps_by_group(german_lr):
    pipe, S = german_lr
    res = gcf.explain_global(S, pipe, Tmax=2, k=2, progress=False)
    assert {"for_whom", "precision", "recall"} <= set(res.actions.columns)
    sub = res.subgroups()
    assert ((sub["precision"] >= 0) & (sub["precision"] <= 1) & (sub["recall"] <= 1)).all()
    gaps = res.by_group("personal_status_sex", n_boot=200, random_state=0)
    assert gaps["n"].sum() == len(S)
    for g, r in gaps.iterrows():
        members = (S["personal_status_sex"] == g).to_numpy()
        assert r["coverage"] == pytest.approx(res.covered.to_numpy()[members].mean())
    shares = res.actions_by_group(S["personal_status_sex"])
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    assert "for " in res.summary() or res.actions["for_whom"].eq("everyone").all()


@pytest.mark.parametrize("solver", [s for s in ("pyomo", "gurobi")])
def test_backends_agree(solver):
    from groupcf.solvers import available_backends
    from tests.reference.global_actions import tiny_case

    if solver not in available_backends():
        pytest.skip(f"{solver} not installed")
    for seed in range(3):
        pipe, S, *_ = tiny_case(seed, "lr")
        a = gcf.explain_global(S, pipe, Tmax=2, k=2, progress=False)
        b = gcf.explain_global(S, pipe, Tmax=2, k=2, solver=solver, progress=False)
        for (_, p), (_, q) in zip(a.curve.iterrows(), b.curve.iterrows()):
            if p["status"] == q["status"] == "optimal":
                assert p["n_covered"] == q["n_covered"]
        assert a.n_covered == b.n_covered or not (a.is_optimal and b.is_optimal)


def test_plot_curve(german_lr):
    import matplotlib

    matplotlib.use("Agg")
    pipe, S = german_lr
    res = gcf.explain_global(S.iloc[:12], pipe, Tmax=1, k=2, progress=False)
    ax = res.plot()
    xs = ax.lines[0].get_xdata()
    assert list(xs) == [1, 2]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), 100 * res.curve["coverage"].to_numpy())


def test_json_round_trip_keeps_the_columns_dtypes(german_global):
    """Audit of issue 23: from_json gave S (and so apply()) string columns instead of the
    categorical ones (with their order) the model was fitted on."""
    res = german_global
    back = gcf.GlobalExplanation.from_json(res.to_json())
    assert back.S.dtypes.to_dict() == res.S.dtypes.to_dict()
    pd.testing.assert_frame_equal(back.apply(), res.apply())
    assert back.validate(model=res.model).ok


def test_by_group_shows_no_float_noise(german_global):
    """Equal costs in every group: every cost gap is exactly 0 (the bootstrap means of equal
    floats differ in the last bit: 5.6e-17 was printed)."""
    import copy

    res = copy.deepcopy(german_global)
    res.cost[res.covered.to_numpy()] = 0.3077
    groups = pd.Series(np.arange(len(res.S)) % 3, index=res.S.index).map({0: "a", 1: "b", 2: "c"})
    gaps = res.by_group(groups, n_boot=200, random_state=0)
    for c in ("cost_gap", "cost_gap_lo", "cost_gap_hi"):
        assert (gaps[c].dropna() == 0.0).all(), gaps[c].tolist()
