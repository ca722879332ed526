"""Tree ensembles: the bound of the score over a grid's cheap points (``grid_upper``) holds
at every such point, by brute force, and the kept walk of ``reachable_boxes`` answers
every column order as a fresh walk does."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from groupcf.embeddings import get_embedding
from groupcf.embeddings.tree_delta import _walk_boxes, reachable_boxes


def _groups(emb, z, rng, k, onehot):
    """``k`` groups over distinct columns, each ``(columns, value rows, costs)``: values on,
    just above and around the thresholds; with ``onehot`` the first group has two columns
    whose rows are the three settings of a two-column one-hot-like pair."""
    cols = [int(c) for c in rng.choice(emb.n_inputs, k + int(onehot), replace=False)]
    out = []
    if onehot:
        out.append((np.array(cols[:2]), np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), rng.random(3)))
        cols = cols[2:]
    for c in cols[:k - int(onehot)]:
        t = emb.threshold[emb.feature == c][:8]
        v = np.concatenate([rng.uniform(-0.2, 1.2, 5), t, np.nextafter(t, 2.0)])
        out.append((np.array([c]), v[:, None], rng.random(len(v))))
    return out


def _brute(emb, z, groups):
    """Scores and summed costs of every point of the grid."""
    rows, costs = [], []
    for pick in itertools.product(*[range(len(g[2])) for g in groups]):
        p = z.copy()
        for (cols, vals, _), i in zip(groups, pick):
            p[cols] = vals[i]
        rows.append(p)
        costs.append(sum(g[2][i] for g, i in zip(groups, pick)))
    return emb.score(np.array(rows)), np.array(costs)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("onehot", [False, True])
def test_grid_upper_holds_at_every_cheap_point(k, onehot):
    """On every tree type, at several budgets (from none of the points below it to all):
    the bound is at least the score of every grid point costing less than the budget,
    and ``-inf`` exactly when there is none."""
    from tests.embeddings.test_trees import DOMAIN, MODELS

    rng = np.random.default_rng(7 + k)
    checked = 0
    for name, model in MODELS.items():
        _, emb = get_embedding(model)
        for z in DOMAIN.sample(3, rng):
            groups = _groups(emb, z, rng, k, onehot)
            scores, costs = _brute(emb, z, groups)
            for budget in np.concatenate([np.quantile(costs, [0.0, 0.2, 0.5, 0.9]), [math.inf]]):
                ub = emb.grid_upper(z, groups, float(budget))
                cheap = costs < budget
                if not cheap.any():
                    assert ub == -math.inf, name
                    continue
                assert ub >= scores[cheap].max() - 1e-9, (name, budget)
                checked += 1
    assert checked > 20


def test_kept_walk_answers_every_column_order():
    """``reachable_boxes`` keeps its last walk; asked again with the columns in another
    order, on another point or another ensemble, it answers as a fresh walk."""
    from tests.embeddings.test_trees import DOMAIN, MODELS

    rng = np.random.default_rng(11)
    embs = [get_embedding(m)[1] for m in MODELS.values()]
    for emb, other in zip(embs, embs[1:] + embs[:1]):
        z = DOMAIN.sample(1, rng)[0]
        cols = [int(c) for c in rng.choice(emb.n_inputs, 3, replace=False)]
        for order in (cols, cols[::-1], [cols[1], cols[0], cols[2]], cols):
            leaves, B = reachable_boxes(emb, z, order)
            fresh_leaves, fresh_B = _walk_boxes(emb, z, order)
            assert np.array_equal(np.sort(leaves), np.sort(fresh_leaves))
            assert np.array_equal(B[np.argsort(leaves, kind="stable")],
                                  fresh_B[np.argsort(fresh_leaves, kind="stable")])
        z2 = z.copy()
        z2[[c for c in range(emb.n_inputs) if c not in cols][0]] += 0.37
        for e, p in ((emb, z2), (other, z)):
            got, fresh = reachable_boxes(e, p, cols), _walk_boxes(e, p, cols)
            assert np.array_equal(got[0], fresh[0]) and np.array_equal(got[1], fresh[1])


@pytest.mark.parametrize("shape", ["valley", "random", "flat"])
def test_range_min_is_the_minimum_of_every_range(shape):
    from groupcf.embeddings.tree_grid import _range_min

    rng = np.random.default_rng(3)
    for m in (1, 2, 7, 40):
        if shape == "valley":        # falls then rises (MACE's costs along sorted values)
            v = np.sort(rng.normal(size=m))
            cost = np.abs(v - rng.normal()) + rng.integers(0, 2)
        elif shape == "flat":
            cost = np.full(m, 0.5)
        else:
            cost = rng.random(m)
        start = rng.integers(0, m + 1, 200)
        stop = rng.integers(0, m + 1, 200)
        got = _range_min(cost, start, stop)
        want = [cost[a:b].min() if b > a else np.inf for a, b in zip(start, stop)]
        np.testing.assert_array_equal(got, want)
