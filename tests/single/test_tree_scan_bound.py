"""MACE's pair / triple scans with the grid bound: dropping the (sub-)grids whose score
bound over the points below the incumbent misses the threshold keeps the optimum — the
same as the scan without the bound, and as brute force; with a time limit, MACE settles
sizes beyond three the same way, with the same optimum as without the scans."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from tests.single.test_tree_bound import _rejected, _values


@pytest.mark.parametrize("size", [2, 3, 4, 5])
@pytest.mark.parametrize("seed", range(4))
def test_scan_with_the_grid_bound_keeps_the_optimum(seed, size, monkeypatch):
    """Grids split down to single cells (``MIN_SPLIT = 1``) and each part bounded, against
    the scan with no bound (every grid scored) and against enumerating every combination
    of ``size`` features over the values on both sides of every threshold; some grids or
    parts are dropped by the bound (so the pruning is exercised), and the answer is
    accepted by the ensemble."""
    from groupcf.single import tree_pairs
    from groupcf.single.radius import deltas
    from groupcf.single.tree_bound import _scorer, best_single, single_changes

    dropped = []
    out_of_reach = tree_pairs._out_of_reach

    def counting(*args):
        out = out_of_reach(*args)
        dropped.append(out)
        return out

    for space, emb, dist, lo_score, z0, lb, ub, can in _rejected(seed):
        one = single_changes(space, emb, z0, lb, ub, can)
        args = (space, emb, _scorer(emb, z0), z0, one[0], lb, ub, can, dist, lo_score, math.inf, size)
        monkeypatch.setattr(tree_pairs, "_out_of_reach", lambda *a: False)
        _, every, done = tree_pairs.best_combination(*args)
        assert done
        monkeypatch.setattr(tree_pairs, "_out_of_reach", counting)
        for splits, min_split in ((0, 1), (tree_pairs.SPLITS, 1), (12, 1)):
            monkeypatch.setattr(tree_pairs, "SPLITS", splits)
            monkeypatch.setattr(tree_pairs, "MIN_SPLIT", min_split)
            point, obj, done = tree_pairs.best_combination(*args)
            assert done and obj == pytest.approx(every, abs=1e-12)
            if point is not None:
                assert emb.score(point[None, :])[0] >= lo_score
                assert int(np.sum(deltas(space, z0, point[None, :])[0] > 1e-9)) == size
        # brute force: every combination of ``size`` features over the values on both
        # sides of every threshold and the own value (so every point with <= size changes),
        # against the single-change scan and the bounded scans of 2 .. size features
        best = math.inf
        options = _values(space, emb, z0, every_integer=False)
        for combo in itertools.combinations(range(len(space)), size):
            Z = z0[None, :].copy()
            for l in combo:
                cols, vals = options[l]
                Z = np.repeat(Z, len(vals), axis=0)
                Z[:, cols] = np.tile(vals, (len(Z) // len(vals), 1))
            ok = emb.score(Z) >= lo_score
            if ok.any():
                best = min(best, float(dist.aggregate(deltas(space, z0, Z[ok])).min()))
        found = [best_single(space, emb, z0, lb, ub, can, dist, lo_score, single=one)[1]]
        for k in range(2, size + 1):
            found.append(tree_pairs.best_combination(*args[:-1], k)[1])
        assert min(found) == pytest.approx(best, abs=1e-12)
    assert any(dropped)



@pytest.mark.parametrize("seed", range(4))
def test_mace_scans_of_more_changes_keep_the_optimum(seed, monkeypatch):
    """With a (never reached) time limit, the scans go on past three changed features
    while the l0 weight allows better solutions with more; MACE's answer is the optimum
    found without any scan (``pair_scan=False``: the MIP alone), proven, accepted."""
    import groupcf as gcf
    from groupcf.single import tree_bound
    from tests.embeddings.test_tree_cuts import _pipe

    sizes = []
    scan = tree_bound.best_combination

    def counting(*args):
        sizes.append(args[-2])
        return scan(*args)

    monkeypatch.setattr(tree_bound, "best_combination", counting)
    X, pipe = _pipe(seed)
    for _, x in X[pipe.predict(X) == 0].head(3).iterrows():
        for distance in ({"l0": 0.02, "l1": 0.98}, {"l0": 0.1, "l1": 0.9}):
            exp = gcf.explain(x, pipe, method="mace", distance=distance, time_limit=600)
            ref = gcf.explain(x, pipe, method="mace", distance=distance, pair_scan=False)
            assert exp.is_optimal and ref.is_optimal
            assert pipe.predict(exp.counterfactuals.iloc[[0]])[0] == 1
            assert exp.distances[0] == pytest.approx(ref.distances[0], abs=1e-6)
    assert max(sizes) >= 4                     # sizes past three were scanned
