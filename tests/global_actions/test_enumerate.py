"""The enumeration pricing level (groupcf/global_actions/enumerate.py): on tiny random cases
the whole curve equals brute force and every point is certified; on a forest with a
continuous feature its split-interval shifts realise every cover a dense grid of shifts
finds; it declines (logged) on a continuous feature of an MLP and above the work cap."""
from __future__ import annotations

import itertools
import logging
import warnings

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.global_actions.actions import Action, ActionSpace
from groupcf.global_actions.enumerate import count_candidates, enumerate_actions
from groupcf.models import resolve_model
from tests.global_actions.test_brute_force import check_case
from tests.params import sweep


@pytest.mark.parametrize("model", sweep(["lr", "mlp", "forest"], fast="lr"))
def test_curve_equals_brute_force_and_every_point_is_certified(model):
    certified, enumerated = [], 0
    for seed in range(10):
        for Tmax in (1, 2):
            out = check_case(seed, model, Tmax)
            if out is not None:
                certified.extend(out)
                enumerated += 1
    assert enumerated >= 10
    assert all(certified), certified         # every curve point and the fewest actions: proven


@pytest.mark.parametrize("model", sweep(["lr", "mlp", "forest"], fast=("lr", "forest")))
def test_numeric_set_equals_brute_force_and_is_certified(model):
    certified = []
    for seed in range(4):
        certified.extend(check_case(seed, model, 1, numeric="set") or [])
    assert certified and all(certified), certified


@pytest.mark.parametrize("model", sweep(["lr", "mlp", "forest"], fast="lr"))
def test_the_curve_with_k_equals_brute_force_and_is_certified(model):
    from tests.reference.global_actions import best_coverage, brute_force, tiny_cases

    seen = 0
    for seed, _, (pipe, S, X, imm, inc) in tiny_cases(range(12), (model,)):
        for Tmax in (1, 2):
            _, C, _ = brute_force(pipe, S, X, imm, inc, Tmax)
            res = gcf.explain_global(S, pipe, Tmax=Tmax, k=3, progress=False)
            assert res.stats["enumeration"]["in_pool"]
            for _, p in res.curve.iterrows():
                want = best_coverage(C, int(p["k"]))
                assert p["n_covered"] == want == p["upper_bound"] and p["status"] == "optimal", (seed, model, Tmax)
            seen += 1
    assert seen >= 20


def _continuous_case(model: str, seed: int = 0):
    """A nominal and a continuous (non-integer) feature; the rejected rows."""
    rng = np.random.default_rng(seed)
    n = 300
    X = pd.DataFrame({"color": rng.choice(["red", "green", "blue"], n), "amount": rng.uniform(0, 10, n)})
    y = ((X["amount"] + 3 * (X["color"] == "blue") + rng.normal(scale=1.5, size=n)) > 6).astype(int)
    if model == "forest":
        from sklearn.ensemble import RandomForestClassifier
        clf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=seed)
    else:
        from sklearn.neural_network import MLPClassifier
        clf = MLPClassifier(hidden_layer_sizes=(4,), max_iter=800, random_state=seed)
    from sklearn.pipeline import make_pipeline
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), clf).fit(X, y)
    S = X[pipe.predict(X) == 0].sample(12, random_state=seed)
    return pipe, S


@pytest.mark.parametrize("Tmax", [1, 2])
def test_forest_split_intervals_realise_every_cover_of_a_dense_grid(Tmax):
    pipe, S = _continuous_case("forest")
    aspace = ActionSpace(resolve_model(pipe), S, Tmax)
    enum = enumerate_actions(aspace, 10**7)
    assert not isinstance(enum, str), enum
    l_amount = next(l for l, f in enumerate(aspace.feats) if f.name == "amount")
    l_color = next(l for l, f in enumerate(aspace.feats) if f.name == "color")
    grid = np.linspace(-1, 1, 4001)
    acts = [Action(((l_amount, float(d)),)) for d in grid if d != 0]
    if Tmax == 2:
        acts += [Action(tuple(sorted(((l_amount, float(d)), (l_color, c))))) for d in grid[::4] if d != 0
                 for c in range(3)]
    acts += [Action(((l_color, c),)) for c in range(3)]
    C = aspace.cover_many(acts)
    for row in np.unique(C[C.any(axis=1)], axis=0):     # inside some kept (maximal) cover
        assert (enum.C[:, row].all(axis=1)).any()
    assert (C.any(axis=0) <= enum.coverable).all()
    # and the curve is certified, at least what the grid's best single action covers
    res = gcf.explain_global(S, pipe, Tmax=Tmax, k=2, progress=False)
    assert (res.curve["status"] == "optimal").all()
    assert res.curve["n_covered"].iloc[0] >= (C.astype(float) @ aspace.m).max()


def test_declines_on_a_continuous_feature_of_an_mlp(caplog):
    pipe, S = _continuous_case("mlp")
    aspace = ActionSpace(resolve_model(pipe), S, 1)
    why = enumerate_actions(aspace, 10**7)
    assert isinstance(why, str) and "amount" in why
    with caplog.at_level(logging.INFO, logger="groupcf.global_actions.enumerate"):
        res = gcf.explain_global(S, pipe, Tmax=1, k=1, time_limit=60, progress=False)
    assert res.stats["enumeration"] == "declined"
    assert any("declines" in r.getMessage() for r in caplog.records)
    cov = res.covered.to_numpy()
    if cov.any():
        assert (pipe.predict(res.apply()[cov]) == 1).all()


def test_declines_above_the_work_cap_and_when_disabled():
    from tests.reference.global_actions import tiny_case

    pipe, S, *_ = tiny_case(0, "lr")
    aspace = ActionSpace(resolve_model(pipe), S, 2)
    assert "enumerate_work" in enumerate_actions(aspace, 10)
    assert "disabled" in enumerate_actions(aspace, 0)
    res = gcf.explain_global(S, pipe, Tmax=2, k=1, enumerate_work=0, progress=False)
    assert res.stats["enumeration"] == "declined"


def test_count_candidates_counts_every_action():
    sizes = [3, 1, 4, 2]
    for T in (1, 2, 3, 4):
        want = sum(int(np.prod([sizes[i] for i in F])) for r in range(1, T + 1)
                   for F in itertools.combinations(range(4), r))
        assert count_candidates(sizes, T) == want
