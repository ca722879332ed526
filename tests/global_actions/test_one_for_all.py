"""k = 1 asks first whether one action covers everyone coverable (``ActionMIP.cheapest`` over
every coverable type, rows added lazily) before the max-coverage MIP over every type, which
took minutes at 10,000 people (BENCHMARKS.md, "Scale")."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.global_actions.actions import ActionSpace
from groupcf.global_actions.pricing import ActionMIP
from groupcf.models import resolve_model
from groupcf.solvers.base import Status


def logit(X: pd.DataFrame) -> np.ndarray:
    """0.1 u - 1 + 0.5 [c = yes] + 0.3 [d = yes] + 0.01 v (``u`` immutable, ``v`` in 0 … 10)."""
    return (0.1 * X["u"].to_numpy(float) - 1.0 + 0.5 * (X["c"] == "yes").to_numpy()
            + 0.3 * (X["d"] == "yes").to_numpy() + 0.01 * X["v"].to_numpy(float))


@pytest.fixture(scope="module")
def pipe():
    X = pd.DataFrame(list(itertools.product(np.linspace(0, 10, 41), ("no", "yes"), ("no", "yes"), (0, 5, 10))),
                     columns=["u", "c", "d", "v"])
    fs = gcf.FeatureSpace(numeric="passthrough", immutable=["u"])
    p = make_pipeline(fs, LogisticRegression(max_iter=1000)).fit(X, (logit(X) > 0).astype(int))
    Z = np.asarray(p[0].transform(X), dtype=float)
    w = np.linalg.lstsq(np.column_stack([Z, np.ones(len(Z))]), logit(X), rcond=None)[0]
    p[-1].coef_, p[-1].intercept_ = w[None, :-1], w[-1:]
    np.testing.assert_allclose(p.decision_function(X), logit(X), atol=1e-12)
    return p


def cheapest(pipe, S):
    aspace = ActionSpace(resolve_model(pipe), S, Tmax=1)
    return aspace, ActionMIP(aspace).cheapest(np.arange(aspace.n_types))


def test_one_action_covering_everyone_is_found_and_is_the_cheapest(pipe):
    # u = 6, 7, 8 with v = 0: c -> yes (+0.5) covers all three; d -> yes (+0.3) only u = 8;
    # v + 10 (+0.1) nobody. The cheapest covering action is c -> yes (cost 1 each).
    S = pd.DataFrame({"u": [6.0, 7.0, 8.0], "c": "no", "d": "no", "v": 0}, index=["a", "b", "c"])
    aspace, res = cheapest(pipe, S)
    assert res.status == Status.OPTIMAL
    (act,) = res.actions
    Zp, valid = aspace.apply(act, aspace.Z, aspace.codes)
    assert valid.all() and (aspace.embedding.score(Zp) >= aspace.tau).all()
    assert "c" in aspace.describe(act) and "yes" in aspace.describe(act), aspace.describe(act)
    np.testing.assert_allclose(aspace.costs(act), 1.0)
    out = gcf.explain_global(S, pipe, Tmax=1, k=1, progress=False)
    assert out.n_covered == 3 and out.is_optimal and out.mean_cost == pytest.approx(1.0)


def test_no_single_action_covers_people_who_need_different_ones(pipe):
    # a (c = no, u = 6) needs c -> yes; b (c = yes already, u = 3) needs d -> yes: Tmax = 1
    S = pd.DataFrame({"u": [6.0, 3.0], "c": ["no", "yes"], "d": "no", "v": 0}, index=["a", "b"])
    _, res = cheapest(pipe, S)
    assert res.status == Status.INFEASIBLE and not res.actions
    out = gcf.explain_global(S, pipe, Tmax=1, k=1, progress=False)
    assert out.n_covered == 1 and out.curve["upper_bound"].tolist() == [1] and out.is_optimal
