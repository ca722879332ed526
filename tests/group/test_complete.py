"""Complete columns of an additive model with increase-only features (group/complete.py):
every cover is a real column, every coverable set lies inside one, and the set cover over
them is the brute-force optimum."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.group.complete import complete_columns
from groupcf.group.heuristics import maximal_change_sets
from groupcf.group.problem import GroupProblem
from groupcf.models import resolve_model
from groupcf.utils import Deadline
from tests.params import sweep


def lr_case(seed: int, n_inc: int):
    """A tiny space of ordered categorical features, ``n_inc`` of them increase-only, a
    logistic regression, and a random S of rejected rows (``None`` when none is rejected)."""
    rng = np.random.default_rng(seed)
    n_feat = int(rng.integers(n_inc + 1, 6))
    cols = {}
    for j in range(n_feat):
        k = int(rng.choice([3, 4, 5])) if j < n_inc else int(rng.choice([2, 3]))
        cats = [f"v{c}" for c in range(k)]
        cols[f"f{j}"] = pd.Categorical(rng.choice(cats, 300), categories=cats, ordered=True)
    X = pd.DataFrame(cols)
    space = gcf.FeatureSpace(increase_only=[f"f{j}" for j in range(n_inc)])
    Z = gcf.FeatureSpace().fit(X).transform(X)
    s = Z @ (rng.normal(size=Z.shape[1]) * 2) + rng.normal(size=len(X))
    y = (s > np.quantile(s, rng.uniform(0.3, 0.7))).astype(int)
    pipe = make_pipeline(space, LogisticRegression(C=10)).fit(X, y)
    rejected = X[pipe.predict(X) == 0]
    if len(rejected) < 3:
        return None
    S = rejected.sample(n=min(int(rng.integers(4, 10)), len(rejected)), random_state=seed, replace=False)
    return pipe, S, int(rng.integers(n_inc, min(4, n_feat) + 1))


def cases(n: int, n_inc: int):
    out = []
    for seed in range(1000):
        case = lr_case(seed, n_inc)
        if case is not None:
            out.append(case)
            if len(out) == n:
                return out
    raise AssertionError("not enough cases")


def type_index(p: GroupProblem, space, types: pd.DataFrame) -> np.ndarray:
    """Problem type of each row of ``types`` (matched by feature codes)."""
    codes = space.codes(types)
    return np.array([int(np.flatnonzero((np.abs(p.codes - r) < 1e-9).all(axis=1))[0]) for r in codes])


@pytest.mark.parametrize("n_inc", sweep([1, 2, 3], fast=1))
def test_complete_columns_are_exact(group_ref, n_inc):
    """For 25 cases each: every enumerated cover is covered by an accepted point, every
    brute-force coverable set lies inside an enumerated cover, and explain_group (which
    uses them) equals the brute-force optimum."""
    checked = 0
    for pipe, S, Tmax in cases(25, n_inc):
        p = GroupProblem(S, resolve_model(pipe), Tmax)
        sets, _ = maximal_change_sets(p, 10**6)
        full = complete_columns(p, p.completions(), sets, Deadline(None))
        assert full is not None
        for j in range(len(full)):
            col = full.column(j)                       # raises if it misses a member
            assert p.is_positive(col.v)
            assert len(col.F) <= Tmax
        types, masks = group_ref.coverable_sets(pipe[0], group_ref.real_logit(pipe), S, Tmax)
        idx = type_index(p, pipe[0], types)
        covers = full.covers
        for m in masks:
            members = idx[[i for i in range(len(idx)) if (m >> i) & 1]]
            assert covers[:, members].all(axis=1).any(), (Tmax, members)
        best, _, explainable = group_ref.brute_force_group(pipe[0], group_ref.real_logit(pipe), S, Tmax)
        active = np.zeros(p.n_types, dtype=bool)
        active[idx[explainable]] = True
        # the exact set cover per component, alone and with a greedy cover as the start
        left, greedy = active.copy(), []
        while left.any():
            j = int(np.argmax((covers & left).sum(axis=1)))
            greedy.append(full.column(j))
            left &= ~covers[j]
        for incumbent in ([], greedy):
            lower, cols = full.solve(active, "highs", Deadline(None), incumbent)
            assert lower == best and len(cols) == best
            assert (np.any([c.cover for c in cols], axis=0) >= active).all()
            assert all(p.is_positive(c.v) for c in cols)
        res = gcf.explain_group(S, pipe, Tmax=Tmax, progress=False, allow_partial=not explainable.all())
        assert res.is_optimal and res.n_explanations == best
        assert res.stats.get("complete_columns") == len(full)
        res.validate()
        checked += 1
    assert checked == 25


def test_staircase_over_its_cap_gives_up():
    """A class whose staircase exceeds ``max_staircase`` combinations: ``None`` (the caller
    then prices by seeds), never a partial column set."""
    for pipe, S, Tmax in cases(25, 2):
        p = GroupProblem(S, resolve_model(pipe), Tmax)
        sets, _ = maximal_change_sets(p, 10**6)
        full = complete_columns(p, p.completions(), sets, Deadline(None), max_staircase=1)
        big = any(len(np.unique(p.codes[np.isin(p.outside_keys(sorted(F)), k), 0])) > 1
                  for F in sets if {0, 1} <= set(F) for k in np.unique(p.outside_keys(sorted(F))))
        if big:
            assert full is None
            return
    pytest.fail("no case with a class of two codes on the first increase-only feature")
