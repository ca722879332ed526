"""Information-value ranking of the actionable features (groupcf.single.pso.iv)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from groupcf.single.pso import information_value, rank_features


def test_information_value_hand_computed():
    # codes 0,0,1,1 with labels 1,0,1,1; smoothing 0.5:
    # positive counts (1, 2) + 0.5 -> p = (0.375, 0.625); negative (1, 0) + 0.5 -> q = (0.75, 0.25)
    iv = information_value(np.array([0, 0, 1, 1]), np.array([1, 0, 1, 1]), bins=None)
    expected = (0.375 - 0.75) * math.log(0.375 / 0.75) + (0.625 - 0.25) * math.log(0.625 / 0.25)
    assert iv == pytest.approx(expected, abs=1e-12)
    assert iv == pytest.approx(0.375 * math.log(2) + 0.375 * math.log(2.5), abs=1e-12)


def test_information_value_quantile_bins_and_independence():
    rng = np.random.default_rng(1)
    v = rng.normal(size=2000)
    assert information_value(v, v > 0, bins=10) > 2.0            # perfectly separating
    assert information_value(v, rng.integers(0, 2, 2000), bins=10) < 0.05   # unrelated


def test_rank_features_skips_immutable_and_ranks_groups_once(pso_rf):
    X, y, pipe, _ = pso_rf
    space = pipe[0]
    order, iv = rank_features(space, space.codes(X), y.to_numpy())
    names = [space.features_[l].name for l in order]
    assert "f2" not in names and "color" not in names          # immutable
    assert len(names) == len(set(names)) == len(space) - 2       # a one-hot group is one feature
    assert np.isnan(iv[[space.features_.index(space["f2"]), space.features_.index(space["color"])]]).all()
    assert names[0] in ("f0", "f1")                              # the strongest signals
    assert set(names[-3:]) & {"f3", "f4", "f5"}                  # noise last
