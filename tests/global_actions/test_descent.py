"""The cost descent: every action it returns covers the people it was given (re-checked with
the real model and the rules), never costs more, and finds the categorical change a large
shift hides."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from groupcf.global_actions.actions import Action, ActionSpace
from groupcf.global_actions.descent import descend
from groupcf.models import resolve_model
from tests.reference.global_actions import tiny_case


def _actions(aspace: ActionSpace, Tmax: int) -> list[Action]:
    """Every action of at most ``Tmax`` changes over the mutable features (each category;
    every integer shift of a continuous feature)."""
    values = {}
    for l in aspace.mutable:
        f = aspace.feats[l]
        if f.encoding == "onehot":
            values[l] = list(range(len(f.columns)))
        elif f.encoding == "binary":
            values[l] = [0, 1]
        else:
            R = f.high - f.low
            values[l] = [s / R for s in range(-int(R), int(R) + 1) if s]
    out = []
    for r in range(1, Tmax + 1):
        for feats in itertools.combinations(values, r):
            for vals in itertools.product(*(values[l] for l in feats)):
                out.append(Action(tuple(zip(feats, vals))))
    return out


def _check(pipe, aspace, S, new, types, inc):
    rows = np.flatnonzero(np.isin(aspace.type_of_row, types))
    X = S.iloc[rows]
    cf = aspace.apply_raw(new, X)
    assert (pipe.predict(cf) == 1).all()
    for f in inc:
        if f == "count":
            assert (cf[f].to_numpy() >= X[f].to_numpy()).all()
        else:
            assert (cf[f].cat.codes.to_numpy() >= X[f].cat.codes.to_numpy()).all()
    assert cf["count"].between(0, 3).all()


@pytest.mark.parametrize("seed,model", [(s, m) for s in range(5) for m in ("lr", "mlp", "forest")])
def test_descent_keeps_coverage_and_never_costs_more(seed, model):
    case = tiny_case(seed, model, n_S=12)
    if case is None:
        pytest.skip("too few rejected")
    pipe, S, X, imm, inc = case
    aspace = ActionSpace(resolve_model(pipe), S, Tmax=2)
    acts = _actions(aspace, 2)
    C = aspace.cover_many(acts)
    tried = 0
    for j in np.flatnonzero(C.any(axis=1))[:25]:
        types = np.flatnonzero(C[j])
        new = descend(aspace, acts[j], types)
        assert len(new) <= 2
        assert aspace.cover(new)[types].all()
        m = aspace.m[types]
        assert m @ aspace.costs(new)[types] <= m @ aspace.costs(acts[j])[types] + 1e-9
        _check(pipe, aspace, S, new, types, inc)
        tried += 1
    if not tried:
        pytest.skip("no action covers anyone")


@pytest.fixture(scope="module")
def shift_or_set():
    """An LR where moving ``x`` by 80 % of its range or setting ``c`` to ``b`` both accept
    everyone in ``S``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    import groupcf as gcf

    rng = np.random.default_rng(0)
    n = 4000
    X = pd.DataFrame({"x": rng.uniform(0, 100, n), "c": rng.choice(["a", "b"], n)})
    y = (0.05 * X["x"] + 5 * (X["c"] == "b") - 4 > 0).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), LogisticRegression(C=1e4, max_iter=5000)).fit(X, y)
    S = pd.DataFrame({"x": np.linspace(1, 15, 8), "c": ["a"] * 8})
    assert (pipe.predict(S) == 0).all()
    return pipe, S


def test_descent_finds_the_cheap_category_behind_a_large_shift(shift_or_set):
    pipe, S = shift_or_set
    aspace = ActionSpace(resolve_model(pipe), S, Tmax=2, cost={"x": 10.0})
    lx = [f.name for f in aspace.feats].index("x")
    lc = [f.name for f in aspace.feats].index("c")
    big = Action(((lx, 0.84),))                    # x + 84: everyone accepted, 8.4 each
    types = np.arange(aspace.n_types)
    assert aspace.cover(big).all()
    new = descend(aspace, big, types)
    assert aspace.cover(new).all()
    assert (pipe.predict(aspace.apply_raw(new, S)) == 1).all()
    assert dict(new.changes).get(lc) == aspace.feats[lc].categories.index("b")
    assert aspace.costs(new).max() <= 1.0 + 1e-9      # the category alone (its shift shrunk away)


def test_descent_shrinks_a_shift_to_the_least_that_covers(shift_or_set):
    pipe, S = shift_or_set
    aspace = ActionSpace(resolve_model(pipe), S, Tmax=1)     # unweighted: the shift (~0.8) beats c -> b (1)
    lx = [f.name for f in aspace.feats].index("x")
    new = descend(aspace, Action(((lx, 0.84),)), np.arange(aspace.n_types))
    assert aspace.cover(new).all()
    assert len(new.changes) == 1 and new.changes[0][0] == lx
    v = new.changes[0][1]
    assert v < 0.84
    assert not aspace.cover(Action(((lx, v * 0.99),))).all()     # the least shift, to the bisection's step
