"""Readable subgroups (depth-2 rules vs brute force over atom pairs) and recourse gaps by
group (bootstrap intervals contain the point estimate; gaps are differences to the largest group)."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from groupcf.results.subgroups import atoms, best_rule, bootstrap_gaps


@pytest.mark.parametrize("seed", range(10))
def test_best_rule_is_the_best_pair(seed):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 60), "b": rng.integers(0, 10, 60), "c": rng.choice([0, 1], 60)})
    y = ((X["a"] == "x") & (X["b"] >= 5)).to_numpy() ^ (rng.random(60) < 0.1)
    r = best_rule(X, y)
    A, names = atoms(X)
    best = 0.0
    for i, j in itertools.combinations_with_replacement(range(A.shape[1]), 2):
        m = A[:, i] & A[:, j]
        if m.any():
            best = max(best, 2 * (m & y).sum() / (m.sum() + y.sum()))
    assert r["f1"] == pytest.approx(max(best, 2 * y.sum() / (60 + y.sum())))
    if r["rule"] != "everyone":
        sel = np.ones(60, bool)
        for atom in r["rule"].split(" and "):
            sel &= A[:, names.index(atom)]
        assert r["precision"] == pytest.approx((sel & y).sum() / sel.sum())
        assert r["recall"] == pytest.approx((sel & y).sum() / y.sum())


def test_bootstrap_gaps():
    rng = np.random.default_rng(0)
    g = np.array(["a"] * 60 + ["b"] * 40)
    covered = np.r_[rng.random(60) < 0.9, rng.random(40) < 0.5]
    cost = np.where(covered, rng.random(100), np.nan)
    t = bootstrap_gaps(covered, cost, g, n_boot=300, random_state=0)
    assert list(t.index) == ["a", "b"]
    for lab in ("a", "b"):
        r = t.loc[lab]
        assert r["coverage_lo"] <= r["coverage"] <= r["coverage_hi"]
        assert r["mean_cost_lo"] <= r["mean_cost"] <= r["mean_cost_hi"]
    assert t.loc["a", "coverage_gap"] == 0
    assert t.loc["b", "coverage_gap"] == pytest.approx(covered[60:].mean() - covered[:60].mean())
    assert t.loc["b", "coverage_gap_hi"] < 0          # a clear gap is detected
