"""k = 1 asks first whether one action covers everyone coverable (``ActionMIP.cheapest`` over
every coverable type, rows added lazily) before the max-coverage MIP over every type, which
took minutes at 10,000 people (BENCHMARKS.md, "Scale"). The pipeline ``placed``
(conftest.py) scores 0.1 u - 1 + 0.5 [c = yes] + 0.3 [d = yes] + 0.01 (v - 5)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.global_actions.actions import ActionSpace
from groupcf.global_actions.pricing import ActionMIP
from groupcf.models import resolve_model
from groupcf.solvers.base import Status


def cheapest(pipe, S):
    aspace = ActionSpace(resolve_model(pipe), S, Tmax=1)
    return aspace, ActionMIP(aspace).cheapest(np.arange(aspace.n_types))


def test_one_action_covering_everyone_is_found_and_is_the_cheapest(placed):
    # u = 6.5, 7.5, 8.5: c -> yes (+0.5) covers all three; d -> yes (+0.3) only the last two;
    # v + 5 (+0.05) nobody. The cheapest covering action is c -> yes (cost 1 each).
    S = pd.DataFrame({"u": [6.5, 7.5, 8.5], "c": "no", "d": "no", "v": 5}, index=["a", "b", "c"])
    aspace, res = cheapest(placed, S)
    assert res.status == Status.OPTIMAL
    (act,) = res.actions
    Zp, valid = aspace.apply(act, aspace.Z, aspace.codes)
    assert valid.all() and (aspace.embedding.score(Zp) >= aspace.tau).all()
    assert "c" in aspace.describe(act) and "yes" in aspace.describe(act), aspace.describe(act)
    np.testing.assert_allclose(aspace.costs(act), 1.0)
    out = gcf.explain_global(S, placed, Tmax=1, k=1, progress=False)
    assert out.n_covered == 3 and out.is_optimal and out.mean_cost == pytest.approx(1.0)


def test_no_single_action_covers_people_who_need_different_ones(placed):
    # a (c = no, u = 6) needs c -> yes; b (c = yes already, u = 3) needs d -> yes: Tmax = 1
    S = pd.DataFrame({"u": [6.0, 3.0], "c": ["no", "yes"], "d": "no", "v": 5}, index=["a", "b"])
    _, res = cheapest(placed, S)
    assert res.status == Status.INFEASIBLE and not res.actions
    out = gcf.explain_global(S, placed, Tmax=1, k=1, progress=False)
    assert out.n_covered == 1 and out.curve["upper_bound"].tolist() == [1] and out.is_optimal



def test_k_above_what_covers_everyone_leaves_out_actions_nobody_needs():
    # COMPAS, LR, 60 rejected, Tmax 2: four actions cover all 22 coverable people, so at k = 5
    # the master's fifth column is assigned to no one; it is left out, and the summary says why
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    ds = gcf.datasets.load("compas")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.3, random_state=0)
    pipe = make_pipeline(ds.space(), LogisticRegression(max_iter=2000)).fit(X_tr, y_tr)
    S = X_te[pipe.predict(X_te) == 0].iloc[:60]
    out = gcf.explain_global(S, pipe, Tmax=2, k=5, progress=False)
    assert out.n_covered == out.n_coverable and out.k == 5
    assert out.n_actions == len(out.actions) == len(out.specs) < 5
    assert (out.actions["n_covered"] > 0).all()
    assert set(out.assignment.dropna().astype(int)) == set(range(out.n_actions))
    assert out.stats["unused_actions"] >= 1
    text = out.summary()
    assert "k = 5 was asked" in text and "no 5 action(s) cover more" in text
    cf = out.apply()
    assert (pipe.predict(cf[out.covered.to_numpy()]) == 1).all()


def test_a_bin_set_by_an_action_keeps_the_values_already_inside_it():
    from groupcf.results.global_actions import apply_spec

    S = pd.DataFrame({"age": [34, 55, 23], "charge": pd.Categorical(["F", "F", "M"], categories=["F", "M"])},
                     index=[7, 8, 9])
    spec = [{"feature": "age", "op": "set", "value": pd.Interval(42.0, np.inf, closed="left")},
            {"feature": "charge", "op": "set", "value": "M"}]
    cf = apply_spec(S, spec)
    assert cf.at[7, "age"] == spec[0]["value"] and cf.at[9, "age"] == spec[0]["value"]
    assert cf.at[8, "age"] == 55                      # already in [42, inf): unchanged
    assert list(cf["charge"]) == ["M", "M", "M"] and isinstance(cf["charge"].dtype, pd.CategoricalDtype)
    assert list(cf.index) == [7, 8, 9]
