"""assign="tree": the best depth-≤2 assignment tree equals brute force over every tree."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.global_actions.tree import fit_tree
from groupcf.results.subgroups import atoms


def _value(leaves, cover, cost, eps):
    """Leaves: list of (mask, action or -1): covered people, minus eps × their cost."""
    v = 0.0
    for mask, j in leaves:
        if j >= 0:
            ok = mask & cover[:, j]
            v += ok.sum() - eps * cost[ok, j].sum()
    return v


def _brute(X, cover, cost, depth, eps):
    A, _ = atoms(X, 4)
    n, k = cover.shape
    full = np.ones(n, bool)
    best_leaf = lambda m: max(_value([(m, j)], cover, cost, eps) for j in range(-1, k))  # noqa: E731
    best = best_leaf(full)
    if depth >= 1:
        for r in range(A.shape[1]):
            sides = []
            for m in (A[:, r], ~A[:, r]):
                opts = [best_leaf(m)]
                if depth == 2:
                    opts += [best_leaf(m & A[:, b]) + best_leaf(m & ~A[:, b]) for b in range(A.shape[1])]
                sides.append(max(opts))
            best = max(best, sum(sides))
    return best


@pytest.mark.parametrize("seed, depth", list(itertools.product(range(15), (0, 1, 2))))
def test_tree_is_the_best_by_brute_force(seed, depth):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(6, 20)), int(rng.integers(1, 4))
    X = pd.DataFrame({"a": rng.integers(0, 5, n), "c": rng.choice(["x", "y", "z"], n)})
    cover = rng.random((n, k)) < 0.5
    cost = rng.random((n, k))
    tree = fit_tree(X, cover, cost, max_depth=depth, n_thresholds=4)
    assert len(tree.rules) <= 2 ** depth
    j = tree.assignment()
    leaves = [(tree.leaf_of_row == lf, a) for lf, a in enumerate(tree.actions)]
    eps = 1e-6 / (1.0 + cost.max() * n)
    got = _value(leaves, cover, cost, eps)
    assert got == pytest.approx(_brute(X, cover, cost, depth, eps), abs=1e-9)
    assert j.shape == (n,)


def test_explain_global_tree(german_lr):
    pipe, S = german_lr
    free = gcf.explain_global(S, pipe, Tmax=2, k=3, progress=False)
    res = gcf.explain_global(S, pipe, Tmax=2, k=3, assign="tree", progress=False)
    assert res.tree is not None and 1 <= len(res.tree) <= 4
    assert res.stats["free_assignment_covered"] >= res.n_covered
    assert res.tree["n"].sum() == len(S)
    # everyone covered takes their leaf's action
    leaf_action = dict(zip(res.tree["rule"], res.tree["action_id"]))
    assert set(res.assignment.dropna().astype(int)) <= set(leaf_action.values())
    res.validate()
    assert "decision tree" in res.summary()
    back = type(res).from_json(res.to_json())
    pd.testing.assert_frame_equal(back.tree, res.tree, check_dtype=False)
    assert free.n_covered >= res.n_covered
