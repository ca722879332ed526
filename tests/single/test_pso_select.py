"""The diverse selection and the polish (groupcf.single.pso.select): separated, valid
counterfactuals that trade cost against spread."""
from __future__ import annotations

import numpy as np
import pytest

import groupcf as gcf
from groupcf.single.pso import explain_pso
from groupcf.single.pso.box import Box


def _linf(space, cfs):
    Z = space.transform(cfs)
    return [np.abs(Z[a] - Z[b]).max() for a in range(len(Z)) for b in range(a + 1, len(Z))]


@pytest.mark.parametrize("row", [0, 1, 2])
def test_high_dimensional_counterfactuals_are_distinct_valid_and_actionable(pso_wide, row):
    X, pipe, rejected, inc = pso_wide
    x = rejected.iloc[row]
    exp = explain_pso(x, pipe, data=X, n=5, random_state=row, scale="range")   # separation in ranges
    cfs = exp.counterfactuals
    assert len(cfs) == 5
    assert np.all(pipe.predict(cfs) == 1)
    tol = exp.stats["params"]["min_separation"]
    assert min(_linf(pipe[0], cfs)) > tol                           # pairwise distinct beyond the tolerance
    assert np.all(cfs[["f000", "f001"]].to_numpy() == x[["f000", "f001"]].to_numpy())
    assert np.all(cfs[inc].to_numpy() >= x[inc].to_numpy(dtype=float) - 1e-9)


def test_diversity_weight_spreads_the_selection(pso_wide):
    # the selection alone, from the swarm's pool (the polish then pulls each point toward
    # the boundary, which shrinks the spread, down to min_separation at the least; the
    # split search adds near-identical one-threshold crossings to the pool)
    X, pipe, rejected, _ = pso_wide
    scale = gcf.metrics.mad(X)
    div = {w: [] for w in (0.0, 0.75)}
    for row in range(3):
        x = rejected.iloc[row]
        for w in div:
            cfs = explain_pso(x, pipe, data=X, n=5, random_state=row, w_diversity=w,
                               polish=False, split_search=False).counterfactuals
            div[w].append(gcf.metrics.diversity_hd(cfs, scale))
    assert np.mean(div[0.75]) > 2 * np.mean(div[0.0])


def test_selection_trades_cost_against_spread_and_skips_near_duplicates(pso_line):
    from groupcf.single.pso.params import PSOOptions
    from groupcf.single.pso.select import select_diverse

    space = pso_line[0]
    box = Box(space, np.array([0.2, 0.5, 0.5]), np.arange(3), 1.0, 1e-3)
    P = np.array([[0.7, 0.5, 0.5],        # the cheapest
                  [0.705, 0.5, 0.5],      # within 0.01 of it: never picked
                  [0.72, 0.5, 0.5],       # cheap, but close to the first
                  [0.8, 0.9, 0.1]])       # far from the first, dearer
    cost = np.array([0.30, 0.302, 0.31, 0.60])
    near = select_diverse(box, P, cost, 3, PSOOptions(w_diversity=0.0, w_sparsity=0.1, scale="range"))
    assert list(near) == [0, 2, 3]
    far = select_diverse(box, P, cost, 2, PSOOptions(w_diversity=0.9, w_sparsity=0.1, scale="range"))
    assert list(far) == [0, 3]
    assert list(select_diverse(box, P[:2], cost[:2], 5, PSOOptions(scale="range"))) == [0]   # only one separated point


def test_polish_keeps_counterfactuals_apart(pso_line):
    from groupcf.single.pso.model import SwarmModel
    from groupcf.single.pso.params import PSOOptions
    from groupcf.single.pso.select import polish

    pipe = pso_line
    bb = SwarmModel(pipe, None, 0.5)
    z0 = np.array([0.2, 0.5, 0.5])
    box = Box(bb.space, z0, np.arange(3), 1.0, 1e-3)
    # same move on a, different irrelevant extra changes: undoing them alone would make them equal
    Z = box.full(np.array([[0.9, 0.8, 0.5], [0.9, 0.5, 0.2]]))
    assert np.all(bb.accepts(bb.score(Z)))
    for w in (0.0, 0.75):
        out = polish(box, bb, Z, PSOOptions(w_diversity=w))
        assert np.all(bb.accepts(bb.score(out)))
        assert np.abs(out[0] - out[1]).max() > 0.01                             # not collapsed
        assert np.abs(out - z0).sum() < np.abs(Z - z0).sum()                    # but polished


@pytest.mark.parametrize("row", [0, 1])
def test_default_counterfactuals_are_separated_in_mads(pso_wide, row):
    X, pipe, rejected, _ = pso_wide
    exp = explain_pso(rejected.iloc[row], pipe, data=X, n=5, random_state=row)
    assert exp.distance_name == "mad" and exp.stats["params"]["scale"] == "mad"
    cfs = exp.counterfactuals
    mad = gcf.metrics.mad(X).to_numpy()
    diffs = [np.max(np.abs(cfs.iloc[a].to_numpy() - cfs.iloc[b].to_numpy()) / mad)
             for a in range(len(cfs)) for b in range(a + 1, len(cfs))]
    assert len(cfs) == 5 and min(diffs) > exp.stats["params"]["min_separation"] - 1e-9
    assert np.all(pipe.predict(cfs) == 1)
