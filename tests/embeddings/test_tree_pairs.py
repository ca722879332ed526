"""Tree ensembles: the sweep over two columns equals scoring the rows, and the ensemble
pruned to the leaves within a distance scores every point within it exactly."""
from __future__ import annotations

from functools import partial

import numpy as np

from groupcf.embeddings import get_embedding
from groupcf.formulations.distances import box_distance, feature_distances, parse_distance
from tests.embeddings.test_tree_cuts import _pipe


def test_pair_scores_equal_row_scores():
    """On every tree type, with values exactly on, just above and around the thresholds."""
    from tests.embeddings.test_trees import DOMAIN, MODELS

    rng = np.random.default_rng(2)
    for name, model in MODELS.items():
        _, emb = get_embedding(model)
        for z in DOMAIN.sample(4, rng):
            for c1 in range(emb.n_inputs):
                for c2 in range(emb.n_inputs):
                    if c1 == c2:
                        continue
                    vals = []
                    for c in (c1, c2):
                        t = emb.threshold[emb.feature == c][:10]
                        vals.append(np.concatenate([rng.uniform(-0.2, 1.2, 6), t, np.nextafter(t, 2.0), [z[c]]]))
                    Z = np.repeat(z[None, :], len(vals[0]) * len(vals[1]), axis=0)
                    Z[:, c1] = np.repeat(vals[0], len(vals[1]))
                    Z[:, c2] = np.tile(vals[1], len(vals[0]))
                    got = emb.pair_scores(z, c1, vals[0], c2, vals[1])
                    assert got.shape == (len(vals[0]), len(vals[1]))
                    assert np.allclose(got.ravel(), emb.score(Z), rtol=0, atol=1e-9), (name, c1, c2)


def test_pruned_ensemble_is_exact_within_the_bound():
    """Points of the box within the bound get the full ensemble's score from the pruned
    one, which has fewer leaves; the instance's own leaves are kept."""
    for seed in range(4):
        X, pipe = _pipe(seed)
        space = pipe[0]
        _, emb = get_embedding(pipe[-1])
        dist = parse_distance({"l0": 0.1, "l1": 0.9})
        rng = np.random.default_rng(seed)
        x = X[pipe.predict(X) == 0].iloc[0]
        z0 = space.transform(x.to_frame().T)[0]
        lb, ub = np.zeros(len(z0)), np.ones(len(z0))
        can = np.ones(len(space), dtype=bool)
        P = X.sample(2000, random_state=seed, replace=True).reset_index(drop=True)
        for c in ("a", "k"):                 # many points near x
            near = rng.random(len(P)) < 0.7
            P.loc[near, c] = x[c]
        P["a"] = np.clip(P["a"] + rng.normal(0, 0.05, len(P)) * (rng.random(len(P)) < 0.5), X["a"].min(),
                         X["a"].max())
        Z = space.transform(P)
        true = dist.aggregate(feature_distances(space, x, P))
        bound = float(np.quantile(true, 0.3))
        pruned = emb.prune(lb, ub, partial(box_distance, space, dist, z0, can), bound)
        assert int(np.sum(pruned.feature < 0)) < int(np.sum(emb.restrict(lb, ub).feature < 0))
        inside = true <= bound
        assert inside.sum() > 10
        assert np.allclose(pruned.score(Z[inside]), emb.score(Z[inside]), rtol=0, atol=1e-12)
        assert np.isclose(pruned.score(z0[None, :])[0], emb.score(z0[None, :])[0])


def test_grid_scores_of_three_columns_equal_row_scores():
    from tests.embeddings.test_trees import DOMAIN, MODELS

    rng = np.random.default_rng(4)
    for name, model in MODELS.items():
        _, emb = get_embedding(model)
        for z in DOMAIN.sample(2, rng):
            cols = [int(c) for c in rng.choice(emb.n_inputs, 3, replace=False)]
            vals = []
            for c in cols:
                t = emb.threshold[emb.feature == c][:6]
                vals.append(np.concatenate([rng.uniform(-0.2, 1.2, 4), t, np.nextafter(t, 2.0)]))
            got = emb.grid_scores(z, cols, vals)
            grid = np.indices(got.shape).reshape(3, -1)
            Z = np.repeat(z[None, :], grid.shape[1], axis=0)
            for j, c in enumerate(cols):
                Z[:, c] = vals[j][grid[j]]
            assert np.allclose(got.ravel(), emb.score(Z), rtol=0, atol=1e-9), name


def test_values_between_the_same_grid_edges_score_alike():
    """Values of a column with no edge of ``grid_edges`` in ``[v, v')`` give the same score
    for every setting of the other varying columns (on every tree type, 2 and 3 columns,
    values on, just above and around the thresholds); the edges are thresholds of the
    ensemble on that column."""
    from tests.embeddings.test_trees import DOMAIN, MODELS

    rng = np.random.default_rng(5)
    for name, model in MODELS.items():
        _, emb = get_embedding(model)
        for z in DOMAIN.sample(3, rng):
            for k in (2, 3):
                cols = [int(c) for c in rng.choice(emb.n_inputs, k, replace=False)]
                edges = emb.grid_edges(z, cols)
                vals = []
                for j, c in enumerate(cols):
                    t = emb.threshold[emb.feature == c]
                    assert np.all(np.isin(edges[j], t)), name
                    vals.append(np.concatenate([rng.uniform(-0.2, 1.2, 12), t, np.nextafter(t, 2.0),
                                                np.nextafter(t, -2.0), [z[c]]]))
                got = emb.grid_scores(z, cols, vals)
                for j in range(k):
                    cls = np.searchsorted(edges[j], vals[j], side="left")
                    moved = np.moveaxis(got, j, 0).reshape(len(vals[j]), -1)
                    for c in np.unique(cls):
                        rows = moved[cls == c]
                        assert np.allclose(rows, rows[0], rtol=0, atol=1e-12), (name, cols, j)
