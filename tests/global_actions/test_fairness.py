"""fair_by: the coverage gap between groups bounded in the master (brute force on tiny pools)."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.exceptions import InvalidInputError
from groupcf.global_actions.fairness import Fairness, fair_max_coverage


def _brute(C, m, active, k, tg, n_g, gap):
    best = 0.0
    for r in range(0, k + 1):
        for sel in itertools.combinations(range(len(C)), r):
            cov = (C[list(sel)].any(axis=0) & active) if sel else np.zeros(C.shape[1], bool)
            share = np.bincount(tg, weights=m * cov, minlength=len(n_g)) / n_g
            if share.max() - share.min() <= gap + 1e-9:
                best = max(best, float(m[cov].sum()))
    return best


@pytest.mark.parametrize("seed", range(25))
def test_fair_master_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n_cols, n_types = int(rng.integers(3, 8)), int(rng.integers(4, 9))
    C = rng.random((n_cols, n_types)) < 0.35
    m = rng.integers(1, 4, n_types).astype(float)
    tg = rng.integers(0, 2, n_types)
    tg[:2] = [0, 1]
    active = rng.random(n_types) < 0.9
    n_g = np.bincount(tg, weights=m, minlength=2) + rng.integers(0, 3, 2)   # some people never coverable
    k, gap = int(rng.integers(1, 4)), float(rng.choice([0.0, 0.1, 0.25, 1.0]))
    fair = Fairness("g", np.zeros(1, int), [0, 1], n_g, gap)
    chosen, status, _ = fair_max_coverage(C, m, active, k, tg, fair, "highs")
    assert status.value == "optimal"
    assert len(chosen) <= k
    cov = C[chosen].any(axis=0) & active if chosen else np.zeros(n_types, bool)
    share = np.bincount(tg, weights=m * cov, minlength=2) / n_g
    assert share.max() - share.min() <= gap + 1e-6              # the real coverages, not the u's
    assert m[cov].sum() == pytest.approx(_brute(C, m, active, k, tg, n_g, gap))


@pytest.fixture(scope="module")
def fair_setting(german_lr):
    pipe, S = german_lr
    sex = S["personal_status_sex"].astype(str).str.startswith("female").map({True: "female", False: "male"})
    return pipe, S, sex.rename("sex")


def test_explain_global_bounds_the_gap(fair_setting):
    pipe, S, sex = fair_setting
    free = gcf.explain_global(S, pipe, Tmax=1, k=1, progress=False)
    fair = gcf.explain_global(S, pipe, Tmax=1, k=1, fair_by=sex, max_gap=0.0, progress=False)
    cov = fair.stats["coverage_by_group"]
    assert set(cov) == set(sex.unique())
    real = fair.covered.groupby(sex).mean()          # recomputed from the assignment
    assert real.max() - real.min() <= 1e-9
    assert fair.stats["coverage_gap"] == pytest.approx(real.max() - real.min())
    assert fair.n_covered <= free.n_covered
    assert "Coverage by sex" in fair.summary()
    fair.validate()


def test_fair_by_errors(german_lr):
    pipe, S = german_lr
    with pytest.raises(InvalidInputError, match="pass k="):
        gcf.explain_global(S, pipe, Tmax=1, fair_by="personal_status_sex", progress=False)
    with pytest.raises(InvalidInputError, match="not a column"):
        gcf.explain_global(S, pipe, Tmax=1, k=1, fair_by="sex", progress=False)
    with pytest.raises(InvalidInputError, match="max_gap"):
        gcf.explain_global(S, pipe, Tmax=1, k=1, fair_by="personal_status_sex", max_gap=2, progress=False)
    with pytest.raises(InvalidInputError, match="single group"):
        gcf.explain_global(S, pipe, Tmax=1, k=1, fair_by=pd.Series("x", index=S.index), progress=False)


def test_a_gap_only_no_action_meets():
    """Audit of issue 23: when only the empty selection meets ``max_gap`` (one group can never
    be covered), the climb from no action raised ``argmax of an empty sequence``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    g = np.array(["F", "M"] * 20)
    x = np.tile(np.arange(10), 4)
    X = pd.DataFrame({"x": x, "g": pd.Categorical(g)})
    y = ((g == "M") & (x >= 5)).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough", immutable=["g"]),
                         LogisticRegression(C=100, max_iter=5000)).fit(X, y)
    S = X[pipe.predict(X) == 0]
    res = gcf.explain_global(S, pipe, Tmax=1, k=2, fair_by="g", max_gap=0.05, progress=False)
    assert res.stats["coverage_gap"] <= 0.05 + 1e-9
    assert res.n_covered == 0 and res.n_coverable > 0
