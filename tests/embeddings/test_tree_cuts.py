"""Tree ensembles in MACE's MIP: the distance cuts (per leaf: the distance to its cell; per
column: the split levels passed) hold at every point, the vectorised formulation's levels
match the scalar rule, and MACE gives the same optimum with every speed-up on or off."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.embeddings import get_embedding
from groupcf.embeddings.tree_mip import grid_thresholds
from groupcf.embeddings.trees import grid_threshold
from groupcf.formulations.distances import feature_distances, parse_distance
from groupcf.formulations.nearest import NearestCounterfactual
from groupcf.solvers import make_backend
from tests.params import sweep


def _pipe(seed):
    rng = np.random.default_rng(seed)
    n = 400
    X = pd.DataFrame({"a": rng.normal(size=n).round(3), "k": rng.integers(0, 3000, n),
                      "c": pd.Categorical(rng.choice(["u", "v", "w"], n)),
                      "o": pd.Categorical(rng.choice(["lo", "mid", "hi"], n), categories=["lo", "mid", "hi"],
                                          ordered=True),
                      "b": rng.integers(0, 2, n)})
    y = ((X["a"] + X["k"] / 1000 + (X["c"] == "w") * 1.0 + X["o"].cat.codes * 0.5 - X["b"]
          + rng.normal(0, 0.5, n)) > 2).astype(int)
    model = RandomForestClassifier(8, max_depth=4, random_state=seed) if seed % 2 else \
        GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=seed)
    return X, make_pipeline(gcf.FeatureSpace(numeric="passthrough"), model).fit(X, y)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("distance", ["l1", {"l0": 0.1, "l1": 0.9}, {"l0": 0.5, "linf": 0.5}])
def test_distance_cuts_hold_at_every_point(seed, distance):
    """At random points: each tree's leaf weighted by its cell's distance is at most the
    point's distance from the query, and each column moved at least what its levels say."""
    X, pipe = _pipe(seed)
    space = pipe[0]
    _, emb = get_embedding(pipe[-1])
    dist = parse_distance(distance)
    rng = np.random.default_rng(seed)
    for _, x in X[pipe.predict(X) == 0].head(3).iterrows():
        z0 = space.transform(x.to_frame().T)[0]
        mip = NearestCounterfactual(space, emb, z0, make_backend("highs"), distance=dist).build()
        cons = mip.constr
        P = X.sample(300, random_state=int(rng.integers(1 << 30)), replace=True).reset_index(drop=True)
        P["a"] = np.clip(P["a"].to_numpy() + rng.normal(0, 0.3, len(P)), X["a"].min(), X["a"].max())
        Z = space.transform(P)
        true = dist.aggregate(feature_distances(space, x, P))
        leaf = cons.folded.apply(Z)                               # (points, trees)
        pos = {int(n): i for i, n in enumerate(cons.leaf_nodes)}
        cuts = cons.distance_cuts(mip.cell_distance)
        assert cuts, "no cut with a positive weight"
        var_pos = {int(v): i for i, v in enumerate(cons.leaf_vars)}
        d_leaf = np.zeros(len(cons.leaf_vars))
        for idx, d in cuts:
            d_leaf[[var_pos[int(v)] for v in idx]] = d
        for t in range(leaf.shape[1]):
            reached = [pos.get(int(n)) for n in leaf[:, t]]
            if reached[0] is None:                               # a tree folded to a constant
                continue
            assert np.all(d_leaf[reached] <= true + 1e-12)
        y_of = {int(v): i for i, v in enumerate(cons.levels)}
        for c, idx, coefs, const in cons.move_cuts(z0):
            li = np.array([y_of[int(v)] for v in idx])
            y = (Z[:, cons.level_col[li]] <= cons.level_thr[li]).astype(float)
            assert np.all(np.abs(Z[:, c] - z0[c]) >= const + y @ coefs - 1e-12)


def test_grid_thresholds_match_the_scalar_rule():
    rng = np.random.default_rng(0)
    for low, high in ((0.0, 30.0), (-5.0, 2_000_000.0), (3.0, 4.0)):
        t = rng.uniform(-0.1, 1.1, 200)
        expected = np.array([grid_threshold(v, low, high) for v in t])
        assert np.array_equal(grid_thresholds(t, low, high), expected)


OPTION_SETS = [dict(), dict(distance_cuts=False), dict(radius=False), dict(upper_bound=False, radius=False),
               dict(upper_bound=False, radius=False, distance_cuts=False), dict(pair_scan=False),
               dict(prune_leaves=False), dict(pair_scan=False, prune_leaves=False)]


@pytest.mark.parametrize("seed", sweep(range(2), fast=0))
def test_mace_same_optimum_with_every_speed_up_on_or_off(seed):
    X, pipe = _pipe(seed)
    for _, x in X[pipe.predict(X) == 0].head(3).iterrows():
        for distance in ("l1", {"l0": 0.1, "l1": 0.9}, {"l0": 0.5, "linf": 0.5}):
            found = []
            for opts in OPTION_SETS:
                exp = gcf.explain(x, pipe, method="mace", distance=distance, **opts)
                assert exp.is_optimal
                assert pipe.predict(exp.counterfactuals.iloc[[0]])[0] == 1
                found.append(exp.distances[0])
            assert np.allclose(found, found[0], rtol=0, atol=1e-6), (distance, found)


def test_column_scores_equal_row_scores():
    """The sweep along one column equals scoring the rows, on every tree type, with values
    exactly on, just above and around the thresholds."""
    from tests.embeddings.test_trees import DOMAIN, MODELS

    rng = np.random.default_rng(1)
    for name, model in MODELS.items():
        _, emb = get_embedding(model)
        for z in DOMAIN.sample(10, rng):
            for c in range(emb.n_inputs):
                t = emb.threshold[emb.feature == c]
                vals = np.concatenate([rng.uniform(-0.2, 1.2, 30), t, np.nextafter(t, 2.0), [z[c]]])
                Z = np.repeat(z[None, :], len(vals), axis=0)
                Z[:, c] = vals
                assert np.allclose(emb.column_scores(z, c, vals), emb.score(Z), rtol=0, atol=1e-9), (name, c)
