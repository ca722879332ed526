"""MACE on tree ensembles: the single-change scan as a proof (strong l0 weight) and
decoding of one-unit changes on integer columns with ranges above a million."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.formulations.distances import feature_distances, parse_distance
from groupcf.single.decode import decode as _decode


def _wide_pipe(seed=0):
    rng = np.random.default_rng(seed)
    n = 400
    X = pd.DataFrame({"amount": rng.integers(0, 3_000_000, n), "a": rng.normal(size=n).round(2)})
    y = ((X["amount"] > 1_500_000) | (X["a"] > 1.0)).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"),
                         RandomForestClassifier(5, max_depth=3, random_state=seed)).fit(X, y)
    return X, pipe


def test_decode_keeps_a_one_unit_change_on_a_wide_integer_column():
    X, pipe = _wide_pipe()
    space = pipe[0]
    x = X.iloc[0]
    z0 = space.transform(x.to_frame().T)[0]
    f = next(f for f in space if f.name == "amount")
    v = z0.copy()
    v[f.columns[0]] += 1.0 / (f.high - f.low)        # +1 in raw units: below 1e-6 scaled
    cf = _decode(space, x, v, z0)
    assert int(cf.at[0, "amount"]) == int(x["amount"]) + 1


@pytest.mark.parametrize("seed", range(3))
def test_single_change_scan_is_the_optimum(seed):
    """With an l0 weight so large that one change beats any two, MACE answers from the
    exact single-change scan (no MIP); its distance equals the best over every single
    change to a value on either side of every threshold and over the data's values."""
    X, pipe = _wide_pipe(seed)
    space = pipe[0]
    distance = {"l0": 0.9, "l1": 0.1}
    dist = parse_distance(distance)
    for _, x in X[pipe.predict(X) == 0].head(3).iterrows():
        exp = gcf.explain(x, pipe, method="mace", distance=distance)
        assert exp.is_optimal and pipe.predict(exp.counterfactuals.iloc[[0]])[0] == 1
        rows = []
        for c in X.columns:                          # every single change over the data's values
            for v in np.unique(np.concatenate([X[c].to_numpy(), exp.counterfactuals[c].to_numpy()])):
                r = x.copy()
                r[c] = v
                rows.append(r)
        P = pd.DataFrame(rows).astype(X.dtypes.to_dict())
        ok = pipe.predict(P) == 1
        if ok.any():
            assert exp.distances[0] <= dist.aggregate(feature_distances(space, x, P[ok])).min() + 1e-12


@pytest.mark.parametrize("max_cells", [None, 30])
@pytest.mark.parametrize("seed", range(4))
def test_pair_scan_equals_brute_force(seed, max_cells, monkeypatch):
    """The exact scans of single and two-feature changes (tree_bound.best_single,
    tree_pairs.best_pair) together equal enumerating every pair of features over every
    value of each (all integers of the integer column, every threshold and the value just
    above it of the real one, every category; a pair with a change that crosses no
    threshold costs more than the single change alone). With ``max_cells=30`` every grid
    of the two numeric features (8–35 candidates each) is scanned in slabs."""
    import math

    from groupcf.single import tree_pairs
    from groupcf.single.radius import deltas
    from groupcf.single.tree_bound import _scorer, best_single, single_changes
    from groupcf.single.tree_pairs import best_pair

    if max_cells is not None:
        monkeypatch.setattr(tree_pairs, "MAX_CELLS", max_cells)

    for space, emb, dist, lo_score, z0, lb, ub, can in _rejected(seed):
        options = _values(space, emb, z0, every_integer=True)
        best = math.inf
        for a in range(len(space)):
            for b in range(a + 1, len(space)):
                (ca, va), (cb, vb) = options[a], options[b]
                Z = np.repeat(z0[None, :], len(va) * len(vb), axis=0)
                Z[:, ca] = np.repeat(va, len(vb), axis=0)
                Z[:, cb] = np.tile(vb, (len(va), 1))
                D = deltas(space, z0, Z)
                ok = emb.score(Z) >= lo_score
                if ok.any():
                    best = min(best, float(dist.aggregate(D[ok]).min()))
        one = single_changes(space, emb, z0, lb, ub, can)
        point, obj, done = best_pair(space, emb, _scorer(emb, z0), z0, one[0], lb, ub, can, dist, lo_score, math.inf)
        assert done
        s_point, s_obj = best_single(space, emb, z0, lb, ub, can, dist, lo_score, single=one)
        if point is not None:
            assert emb.score(point[None, :])[0] >= lo_score
            assert int(np.sum(deltas(space, z0, point[None, :])[0] > 1e-9)) == 2
        assert min(obj, s_obj) == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("seed", range(2))
def test_triple_scan_equals_brute_force(seed):
    """The exact scans of one, two and three changed features together equal enumerating
    every triple of features over the values on both sides of every threshold (integers
    rounded to the grid), every category and the instance's own value."""
    import itertools
    import math

    from groupcf.single.radius import deltas
    from groupcf.single.tree_bound import _scorer, best_single, single_changes
    from groupcf.single.tree_pairs import best_combination

    for space, emb, dist, lo_score, z0, lb, ub, can in _rejected(seed):
        options = _values(space, emb, z0, every_integer=False)
        best = math.inf
        for trio in itertools.combinations(range(len(space)), 3):
            Z = z0[None, :].copy()
            for l in trio:
                cols, vals = options[l]
                Z = np.repeat(Z, len(vals), axis=0)
                Z[:, cols] = np.tile(vals, (len(Z) // len(vals), 1))
            D = deltas(space, z0, Z)
            ok = emb.score(Z) >= lo_score
            if ok.any():
                best = min(best, float(dist.aggregate(D[ok]).min()))
        one = single_changes(space, emb, z0, lb, ub, can)
        found = [best_single(space, emb, z0, lb, ub, can, dist, lo_score, single=one)[1]]
        for size in (2, 3):
            point, obj, done = best_combination(space, emb, _scorer(emb, z0), z0, one[0], lb, ub, can, dist,
                                                lo_score, math.inf, size)
            assert done
            if point is not None:
                assert int(np.sum(deltas(space, z0, point[None, :])[0] > 1e-9)) == size
            found.append(obj)
        assert min(found) == pytest.approx(best, abs=1e-12)


def _rejected(seed):
    """The first two rejected rows of the tiny forest ``seed``: ``(space, embedding,
    distance, score threshold, z0, lb, ub, can)`` each."""
    from groupcf.embeddings import get_embedding
    from groupcf.formulations.nearest import actionable_bounds
    from tests.embeddings.test_tree_cuts import _pipe

    X, pipe = _pipe(seed)
    space = pipe[0]
    _, emb = get_embedding(pipe[-1])
    dist = parse_distance({"l0": 0.1, "l1": 0.9})
    lo_score = emb.score_threshold(0.5)
    for _, x in X[pipe.predict(X) == 0].head(2).iterrows():
        z0 = space.transform(x.to_frame().T)[0]
        yield (space, emb, dist, lo_score, z0, *actionable_bounds(space, z0))


def _values(space, emb, z0, every_integer: bool) -> list:
    """Per feature ``(columns, candidate values)`` for brute force: every category; a
    continuous column's thresholds, the values just above them and its own value (an
    integer column: every integer with ``every_integer``, else those values rounded both
    ways to the grid)."""
    import math

    options = []
    for f in space:
        cols = np.asarray(f.columns)
        if f.encoding == "onehot":
            vals = np.eye(len(cols))
        elif f.encoding == "binary":
            vals = np.array([[0.0], [1.0]])
        elif f.integer and every_integer:
            raw = np.arange(math.ceil(f.low), math.floor(f.high) + 1)
            vals = ((raw - f.low) / (f.high - f.low))[:, None]
        else:
            t = emb.threshold[emb.feature == cols[0]]
            v = np.concatenate([t, np.nextafter(t, 2.0), [z0[cols[0]]]])
            if f.integer:
                raw = f.low + v * (f.high - f.low)
                v = (np.concatenate([np.floor(raw), np.ceil(raw)]) - f.low) / (f.high - f.low)
            vals = np.unique(np.clip(v, 0, 1))[:, None]
        options.append((cols, vals))
    return options


@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_one_candidate_per_score_class_keeps_the_optimum(seed, size, monkeypatch):
    """The pair / triple scan over one candidate per class of equal scores (the values of a
    column between two consecutive edges of the leaves reachable when the combination
    varies, the nearest one kept) finds the same optimum as the scan over every candidate,
    and, for pairs, the classes are fewer than the candidates on some combination (so the
    reduction is exercised); pairs with ``MAX_CELLS = 30`` too (the reduced grids scanned in slabs)."""
    import math

    from groupcf.single import tree_pairs
    from groupcf.single.tree_bound import _scorer, single_changes

    reduced = []
    representatives = tree_pairs._representatives

    def counting(emb, z0, combo, keep, opts):
        out = representatives(emb, z0, combo, keep, opts)
        reduced.append(sum(len(k) for k in out) < sum(len(k) for k in keep))
        return out

    for space, emb, dist, lo_score, z0, lb, ub, can in _rejected(seed):
        one = single_changes(space, emb, z0, lb, ub, can)
        args = (space, emb, _scorer(emb, z0), z0, one[0], lb, ub, can, dist, lo_score, math.inf, size)
        monkeypatch.setattr(tree_pairs, "_representatives", lambda emb, z0, combo, keep, opts: keep)
        _, every, done = tree_pairs.best_combination(*args)
        assert done
        monkeypatch.setattr(tree_pairs, "_representatives", counting)
        for cap in (None, 30) if size == 2 else (None,):
            if cap is not None:
                monkeypatch.setattr(tree_pairs, "MAX_CELLS", cap)
            point, obj, done = tree_pairs.best_combination(*args)
            assert done and obj == pytest.approx(every, abs=1e-12)
            if point is not None:
                assert emb.score(point[None, :])[0] >= lo_score
    assert any(reduced) or size == 3


def test_an_integer_crossing_of_a_threshold_a_hair_above_an_integer():
    """LightGBM's thresholds are bin bounds that can sit a hair above an integer (German
    credit_amount: raw 1588.0000000000007). The single-change candidate past it is 1589,
    not 1588 (which encodes at or below the threshold and crosses nothing: the scan then
    proved 1600, the next threshold's crossing, while 1589 is accepted and nearer)."""
    lightgbm = pytest.importorskip("lightgbm")
    ds = gcf.datasets.load("german")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.3, random_state=3)
    pipe = make_pipeline(ds.space(numeric="passthrough"),
                         lightgbm.LGBMClassifier(n_estimators=500, max_depth=6, learning_rate=0.2, random_state=3,
                                                 n_jobs=1, verbose=-1)).fit(X_tr, y_tr)
    x = X_te.loc[755]
    assert pipe.predict(x.to_frame().T.astype(X_tr.dtypes.to_dict()))[0] == 0
    exp = gcf.explain(x, pipe, method="mace", distance={"l0": 0.1, "l1": 0.9}, time_limit=10)
    cf = exp.counterfactuals.iloc[0]
    grid = np.arange(int(x["credit_amount"]), int(cf["credit_amount"]) + 1)
    rows = pd.DataFrame([x] * len(grid)).astype(X_tr.dtypes.to_dict())
    rows["credit_amount"] = grid
    nearest = grid[pipe.predict(rows) == 1].min()        # every value between x and the answer
    assert exp.is_optimal and exp.changed_features[0] == ["credit_amount"]
    assert cf["credit_amount"] == nearest


def test_integer_candidates_cross_their_threshold():
    """Every single-change candidate of an integer column lies strictly on the other side
    of its threshold, also when the threshold's raw value is within 1e-9 of an integer."""
    from types import SimpleNamespace

    from groupcf.single.decode import integer_past
    f = SimpleNamespace(low=250.0, high=18424.0)
    rng = f.high - f.low
    for raw_t in (1588.0, 1599.5, 40.0, 17000.0):
        for ulps in range(-3, 4):
            t = (raw_t - f.low) / rng
            t = float(np.nextafter(t, np.inf if ulps > 0 else -np.inf)) if ulps else t
            for _ in range(abs(ulps) - 1):
                t = float(np.nextafter(t, np.inf if ulps > 0 else -np.inf))
            up, down = integer_past(f, t, rng, True), integer_past(f, t, rng, False)
            assert up > t and down <= t
            assert (up - down) * rng == pytest.approx(1.0)         # the two integers around t
