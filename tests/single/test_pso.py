"""Mixed-discrete PSO counterfactuals (groupcf.single.pso) and the metrics of
Shekhar et al. 2023 (groupcf.metrics_hd)."""
from __future__ import annotations

import math

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
from groupcf.single.pso import explain_pso, information_value, rank_features
from groupcf.single.pso.box import Box


def _data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 6)), columns=[f"f{i}" for i in range(6)])
    X["color"] = pd.Categorical(rng.choice(["red", "green", "blue"], n))
    X["level"] = pd.Categorical(rng.choice(["low", "mid", "high"], n), categories=["low", "mid", "high"],
                                ordered=True)
    X["flag"] = rng.integers(0, 2, n)
    X["count"] = rng.integers(0, 12, n)
    y = ((X.f0 + X.f1 + (X.color == "red") + 0.5 * X.level.cat.codes + X["count"] / 6) > 1.5).astype(int)
    return X, y


@pytest.fixture(scope="module")
def rf():
    X, y = _data()
    space = gcf.FeatureSpace(numeric="passthrough", immutable=["f2", "color"], increase_only=["count", "level"])
    pipe = make_pipeline(space, RandomForestClassifier(n_estimators=30, random_state=0)).fit(X, y)
    rejected = X[pipe.predict(X) == 0]
    return X, y, pipe, rejected


# ----------------------------------------------------------------------------- IV
def test_information_value_hand_computed():
    # codes 0,0,1,1 with labels 1,0,1,1; smoothing 0.5:
    # positive counts (1, 2) + 0.5 -> p = (0.375, 0.625); negative (1, 0) + 0.5 -> q = (0.75, 0.25)
    iv = information_value(np.array([0, 0, 1, 1]), np.array([1, 0, 1, 1]), bins=None)
    expected = (0.375 - 0.75) * math.log(0.375 / 0.75) + (0.625 - 0.25) * math.log(0.625 / 0.25)
    assert iv == pytest.approx(expected, abs=1e-12)
    assert iv == pytest.approx(0.375 * math.log(2) + 0.375 * math.log(2.5), abs=1e-12)


def test_information_value_quantile_bins_and_independence():
    rng = np.random.default_rng(1)
    v = rng.normal(size=2000)
    assert information_value(v, v > 0, bins=10) > 2.0            # perfectly separating
    assert information_value(v, rng.integers(0, 2, 2000), bins=10) < 0.05   # unrelated


def test_rank_features_skips_immutable_and_ranks_groups_once(rf):
    X, y, pipe, _ = rf
    space = pipe[0]
    order, iv = rank_features(space, space.codes(X), y.to_numpy())
    names = [space.features_[l].name for l in order]
    assert "f2" not in names and "color" not in names          # immutable
    assert len(names) == len(set(names)) == len(space) - 2       # a one-hot group is one feature
    assert np.isnan(iv[[space.features_.index(space["f2"]), space.features_.index(space["color"])]]).all()
    assert names[0] in ("f0", "f1")                              # the strongest signals
    assert set(names[-3:]) & {"f3", "f4", "f5"}                  # noise last


# ----------------------------------------------------------------------------- box / snapping
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(row=st.integers(0, 399), eps=st.floats(0.01, 1.0), seed=st.integers(0, 10**6))
def test_snapping_keeps_encodings_valid_and_actionable(rf, row, eps, seed):
    X, _, pipe, _ = rf
    space = pipe[0]
    z0 = space.transform(X.iloc[[row]])[0]
    active = np.array([l for l, f in enumerate(space) if not f.immutable])
    box = Box(space, z0, active, eps, 1e-3)
    rng = np.random.default_rng(seed)
    P = box.snap(rng.uniform(-0.5, 1.5, size=(40, box.dim)))
    assert np.all(box.lo - 1e-12 <= P) and np.all(box.hi + 1e-12 >= P)
    Z = box.full(P)
    raw = space.inverse_transform(Z)
    for f in space:
        block = Z[:, f.columns]
        if f.encoding == "onehot":
            assert np.all(block.sum(axis=1) == 1) and set(np.unique(block)) <= {0.0, 1.0}
        elif f.encoding == "binary":
            assert set(np.unique(block)) <= {0.0, 1.0}
        elif f.integer:
            v = f.low + block[:, 0] * (f.high - f.low)
            assert np.allclose(v, np.round(v), atol=1e-9)
    # round trip: the decoded rows encode back to the same point
    assert np.allclose(space.transform(raw), Z, atol=1e-9)
    xc, C = space.codes(X.iloc[[row]])[0], space.codes(raw)
    for l, f in enumerate(space):
        if f.immutable:
            assert np.all(C[:, l] == xc[l])
        if f.increase_only:
            assert np.all(C[:, l] >= xc[l] - 1e-12)


# ----------------------------------------------------------------------------- explain
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(i=st.integers(0, 10**6), seed=st.integers(0, 1000), n=st.integers(1, 5))
def test_every_counterfactual_is_accepted_and_actionable(rf, i, seed, n):
    X, _, pipe, rejected = rf
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


def test_seeded_runs_are_reproducible(rf):
    X, _, pipe, rejected = rf
    a = explain_pso(rejected.iloc[0], pipe, data=X, random_state=3)
    b = explain_pso(rejected.iloc[0], pipe, data=X, random_state=3)
    pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)


def test_explain_dispatches_pso_and_bare_classifier_with_space(rf):
    X, _, pipe, rejected = rf
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


def test_input_errors(rf):
    X, _, pipe, rejected = rf
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


# ----------------------------------------------------------------------------- diverse set
@pytest.fixture(scope="module")
def wide():
    """120 features (10 informative), a random forest; two immutable, eight increase-only."""
    from sklearn.datasets import make_classification

    Xa, y = make_classification(n_samples=600, n_features=120, n_informative=10, random_state=0)
    X = pd.DataFrame(Xa, columns=[f"f{i:03d}" for i in range(120)])
    inc = [f"f{i:03d}" for i in range(2, 10)]
    space = gcf.FeatureSpace(numeric="passthrough", immutable=["f000", "f001"], increase_only=inc)
    pipe = make_pipeline(space, RandomForestClassifier(n_estimators=40, random_state=0)).fit(X[:400], y[:400])
    test = X[400:]
    return X[:400], pipe, test[pipe.predict(test) == 0], inc


def _linf(space, cfs):
    Z = space.transform(cfs)
    return [np.abs(Z[a] - Z[b]).max() for a in range(len(Z)) for b in range(a + 1, len(Z))]


@pytest.mark.parametrize("row", [0, 1, 2])
def test_high_dimensional_counterfactuals_are_distinct_valid_and_actionable(wide, row):
    X, pipe, rejected, inc = wide
    x = rejected.iloc[row]
    exp = explain_pso(x, pipe, data=X, n=5, random_state=row, scale="range")   # separation in ranges
    cfs = exp.counterfactuals
    assert len(cfs) == 5
    assert np.all(pipe.predict(cfs) == 1)
    tol = exp.stats["params"]["min_separation"]
    assert min(_linf(pipe[0], cfs)) > tol                           # pairwise distinct beyond the tolerance
    assert np.all(cfs[["f000", "f001"]].to_numpy() == x[["f000", "f001"]].to_numpy())
    assert np.all(cfs[inc].to_numpy() >= x[inc].to_numpy(dtype=float) - 1e-9)


def test_diversity_weight_spreads_the_selection(wide):
    # the selection alone, from the swarm's pool (the polish then pulls each point toward
    # the boundary, which shrinks the spread, down to min_separation at the least; the
    # split search adds near-identical one-threshold crossings to the pool)
    X, pipe, rejected, _ = wide
    scale = gcf.metrics.mad(X)
    div = {w: [] for w in (0.0, 0.75)}
    for row in range(3):
        x = rejected.iloc[row]
        for w in div:
            cfs = explain_pso(x, pipe, data=X, n=5, random_state=row, w_diversity=w,
                               polish=False, split_search=False).counterfactuals
            div[w].append(gcf.metrics.diversity_hd(cfs, scale))
    assert np.mean(div[0.75]) > 2 * np.mean(div[0.0])


def _line_model():
    """Accepts a > 0.6 (a forest on a noiseless rule); b and c are irrelevant."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0, 1, size=(2000, 3)), columns=["a", "b", "c"])
    X.iloc[0], X.iloc[1] = [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]                 # ranges exactly [0, 1]
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"),
                         RandomForestClassifier(n_estimators=20, random_state=0)).fit(X, (X.a > 0.6).astype(int))
    return pipe


def test_selection_trades_cost_against_spread_and_skips_near_duplicates():
    from groupcf.single.pso.params import PSOOptions
    from groupcf.single.pso.select import select_diverse

    space = _line_model()[0]
    box = Box(space, np.array([0.2, 0.5, 0.5]), np.arange(3), 1.0, 1e-3)
    P = np.array([[0.7, 0.5, 0.5],        # the cheapest
                  [0.705, 0.5, 0.5],      # within 0.01 of it: never picked
                  [0.72, 0.5, 0.5],       # cheap, but close to the first
                  [0.8, 0.9, 0.1]])       # far from the first, dearer
    cost = np.array([0.30, 0.302, 0.31, 0.60])
    near = select_diverse(box, P, cost, 3, PSOOptions(w_diversity=0.0, scale="range"))
    assert list(near) == [0, 2, 3]
    far = select_diverse(box, P, cost, 2, PSOOptions(w_diversity=0.9, scale="range"))
    assert list(far) == [0, 3]
    assert list(select_diverse(box, P[:2], cost[:2], 5, PSOOptions(scale="range"))) == [0]   # only one separated point


def test_mad_scale_measures_tolerance_and_separation_in_mads():
    """With scale="mad", change_tol and min_separation are in MADs: on a feature whose MAD
    is 1/500 of its range, a change of 0.2 MAD survives snapping (it is 4e-4 of the
    range, below the range-scaled change_tol 1e-3) and two points 0.5 MAD apart are
    separated (0.001 of the range, below the range-scaled min_separation 0.01)."""
    from groupcf.single.pso.params import PSOOptions
    from groupcf.single.pso.select import distances

    space = _line_model()[0]
    z0 = np.array([0.2, 0.5, 0.5])
    mad = 1.0 / 500
    scale = np.full(3, 1.0 / mad)                   # _mad_scale's form: range / MAD (z units)
    prm_r, prm_m = PSOOptions(scale="range"), PSOOptions().validate()        # "mad" is the default
    assert (prm_r.change_tol, prm_r.min_separation) == (1e-3, 0.01)
    assert (prm_m.change_tol, prm_m.min_separation) == (0.01, 0.1)
    moved = np.array([[0.2 + 0.2 * mad, 0.5, 0.5]])
    rng_box = Box(space, z0, np.arange(3), 0.25, prm_r.change_tol)
    mad_box = Box(space, z0, np.arange(3), 0.25, prm_m.change_tol, scale, mad_units=True)
    assert rng_box.snap(moved)[0, 0] == pytest.approx(0.2)                  # snapped back
    assert mad_box.snap(moved)[0, 0] == pytest.approx(0.2 + 0.2 * mad)      # kept
    a, b = np.array([[0.3, 0.5, 0.5]]), np.array([0.3 + 0.5 * mad, 0.5, 0.5])
    _, sep_r = distances(rng_box, a, b, 1.0, 1.0)
    _, sep_m = distances(mad_box, a, b, 1.0, 1.0)
    assert sep_r[0] < prm_r.min_separation and sep_m[0] == pytest.approx(0.5)
    assert sep_m[0] > prm_m.min_separation
    with pytest.raises(gcf.exceptions.InvalidInputError, match="scale"):
        PSOOptions(scale="z").validate()


def test_polish_keeps_counterfactuals_apart():
    from groupcf.single.pso.model import SwarmModel
    from groupcf.single.pso.params import PSOOptions
    from groupcf.single.pso.select import polish

    pipe = _line_model()
    bb = SwarmModel(pipe, None, 0.5)
    z0 = np.array([0.2, 0.5, 0.5])
    box = Box(bb.space, z0, np.arange(3), 1.0, 1e-3)
    # same move on a, different irrelevant extra changes: undoing them alone would make them equal
    Z = box.full(np.array([[0.9, 0.8, 0.5], [0.9, 0.5, 0.2]]))
    assert np.all(bb.accepts(bb.score(Z)))
    for w in (0.0, 0.75):
        out = polish(box, bb, Z, PSOOptions(w_diversity=w))
        assert np.all(bb.accepts(bb.score(out)))
        assert np.abs(out[0] - out[1]).max() > 0.01                             # not collapsed
        assert np.abs(out - z0).sum() < np.abs(Z - z0).sum()                    # but polished


# ----------------------------------------------------------------------------- metrics
def test_hd_metrics_hand_computed():
    m = gcf.metrics
    x = pd.Series({"a": 0.0, "b": 0.0, "c": "u"})
    cfs = pd.DataFrame({"a": [2.0, 0.0], "b": [0.0, 1.0], "c": ["u", "v"]})
    scale = pd.Series({"a": 2.0, "b": 1.0})
    assert m.continuous_proximity(x, cfs, scale, ["c"]) == pytest.approx(0.5)    # (1+0)/2, (0+1)/2
    assert m.categorical_proximity(x, cfs, ["c"]) == pytest.approx(0.5)         # 0, 1
    assert m.sparsity_hd(x, cfs) == pytest.approx(0.5)                          # 1/3, 2/3
    # d(c1, c2) = (2/2 + 1/1)/2 + 1 = 2
    assert m.diversity_hd(cfs, scale, ["c"]) == pytest.approx(2.0)
    # d(c1, x) = 0.5, d(c2, x) = 0.5 + 1 = 1.5 -> 2 / (0.5 + 1.5) = 1
    assert m.normalized_diversity(x, cfs, scale, ["c"]) == pytest.approx(1.0)
    assert m.diversity_over_proximity(x, cfs, scale, ["c"]) == pytest.approx(4.0)
    assert m.coverage_hd([True, False, True, True]) == pytest.approx(0.75)
    # two counterfactuals on the same side: d = |2-1|/2 / 2 = 0.25 over (0.5 + 0.25)
    same = pd.DataFrame({"a": [2.0, 1.0], "b": [0.0, 0.0], "c": ["u", "u"]})
    assert m.normalized_diversity(x, same, scale, ["c"]) == pytest.approx(0.25 / 0.75)
    assert math.isnan(m.diversity_hd(cfs.iloc[:1], scale, ["c"]))
    got = m.mad(pd.DataFrame({"a": [1.0, 2.0, 3.0, 10.0], "b": [5.0, 5.0, 5.0, 5.0]}))
    assert got["a"] == pytest.approx(1.0) and got["b"] == 1.0                   # zero MAD -> 1


@pytest.mark.parametrize("Tmax", [1, 2])
def test_tmax_bounds_the_changed_features(rf, Tmax):
    X, _, pipe, rejected = rf
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


def test_note_is_empty_when_n_are_found(rf):
    X, _, pipe, rejected = rf
    e = gcf.explain(rejected.iloc[0], pipe, method="pso", data=X, n=2, random_state=0, progress=False)
    assert len(e.counterfactuals) < 2 or e.stats["note"] == ""


@pytest.mark.parametrize("row", [0, 1])
def test_default_counterfactuals_are_separated_in_mads(wide, row):
    X, pipe, rejected, _ = wide
    exp = explain_pso(rejected.iloc[row], pipe, data=X, n=5, random_state=row)
    assert exp.distance == "mad" and exp.stats["params"]["scale"] == "mad"
    cfs = exp.counterfactuals
    mad = gcf.metrics.mad(X).to_numpy()
    diffs = [np.max(np.abs(cfs.iloc[a].to_numpy() - cfs.iloc[b].to_numpy()) / mad)
             for a in range(len(cfs)) for b in range(a + 1, len(cfs))]
    assert len(cfs) == 5 and min(diffs) > exp.stats["params"]["min_separation"] - 1e-9
    assert np.all(pipe.predict(cfs) == 1)


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


def test_split_search_finds_the_smallest_crossing_just_past_a_threshold():
    """One actionable continuous feature: the nearest counterfactual is just past the
    forest's first split point (above the query) where the forest accepts; the
    threshold-aware search returns it (to the margin), the swarm alone need not."""
    rng = np.random.default_rng(7)
    X = pd.DataFrame({"a": rng.normal(size=400), "g": rng.normal(size=400)})
    y = (X.a > 0.3).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough", immutable=["g"]),
                         RandomForestClassifier(n_estimators=25, random_state=0)).fit(X, y)
    x = X[(pipe.predict(X) == 0) & (X.a < -0.5)].iloc[0]
    space, emb = pipe[0], gcf.embeddings.get_embedding(pipe)[1]
    z0 = space.transform(x.to_frame().T)[0]
    col = space.features_[0].columns[0]
    t = emb.split_points()[col]
    Z = np.repeat(z0[None, :], len(t), axis=0)
    Z[:, col] = t + 1e-9
    first = t[(t > z0[col]) & (emb.predict(Z, emb.score_threshold(0.5)) == 1) & (emb.score(Z) > 0.5)][0]
    f = space.features_[0]
    a_min = f.low + (first + 1e-9) * (f.high - f.low)           # raw value just past it
    e = gcf.explain(x, pipe, method="pso", data=X, n=1, random_state=0, progress=False, split_search=True)
    assert pipe.predict(e.counterfactuals)[0] == 1
    assert e.counterfactuals.a.iloc[0] == pytest.approx(a_min, abs=1e-6 * (f.high - f.low))
    assert e.stats["rounds"][-1]["crossings"] >= 1


def test_split_search_is_a_no_op_for_models_without_split_points():
    from sklearn.neural_network import MLPClassifier

    X, y = _data()
    space = gcf.FeatureSpace(numeric="passthrough", immutable=["f2", "color"], increase_only=["count", "level"])
    pipe = make_pipeline(space, MLPClassifier((8,), max_iter=300, random_state=0)).fit(X, y)
    x = X[pipe.predict(X) == 0].iloc[0]
    a = gcf.explain(x, pipe, method="pso", data=X, n=2, random_state=0, progress=False, split_search=True)
    b = gcf.explain(x, pipe, method="pso", data=X, n=2, random_state=0, progress=False, split_search=False)
    pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)
    assert "crossings" not in a.stats["rounds"][-1]
