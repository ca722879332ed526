"""The metrics of Shekhar et al. 2023 (groupcf.metrics_hd) on hand-computed cases."""
from __future__ import annotations

import math

import pandas as pd
import pytest

import groupcf as gcf


def test_hd_metrics_hand_computed():
    m = gcf.metrics
    x = pd.Series({"a": 0.0, "b": 0.0, "c": "u"})
    cfs = pd.DataFrame({"a": [2.0, 0.0], "b": [0.0, 1.0], "c": ["u", "v"]})
    scale = pd.Series({"a": 2.0, "b": 1.0})
    assert m.continuous_proximity(x, cfs, scale, ["c"]) == pytest.approx(0.5)    # (1+0)/2, (0+1)/2
    assert m.categorical_proximity(x, cfs, ["c"]) == pytest.approx(0.5)         # 0, 1
    assert m.sparsity_hd(x, cfs) == pytest.approx(0.5)                          # 1/3, 2/3
    # d(c1, c2) = (2/2 + 1/1)/2 + 1 = 2
    assert m.diversity_hd(cfs, scale, ["c"]) == pytest.approx(2.0)
    # d(c1, x) = 0.5, d(c2, x) = 0.5 + 1 = 1.5 -> 2 / (0.5 + 1.5) = 1
    assert m.normalized_diversity(x, cfs, scale, ["c"]) == pytest.approx(1.0)
    assert m.diversity_over_proximity(x, cfs, scale, ["c"]) == pytest.approx(4.0)
    assert m.coverage_hd([True, False, True, True]) == pytest.approx(0.75)
    # two counterfactuals on the same side: d = |2-1|/2 / 2 = 0.25 over (0.5 + 0.25)
    same = pd.DataFrame({"a": [2.0, 1.0], "b": [0.0, 0.0], "c": ["u", "u"]})
    assert m.normalized_diversity(x, same, scale, ["c"]) == pytest.approx(0.25 / 0.75)
    assert math.isnan(m.diversity_hd(cfs.iloc[:1], scale, ["c"]))
    got = m.mad(pd.DataFrame({"a": [1.0, 2.0, 3.0, 10.0], "b": [5.0, 5.0, 5.0, 5.0]}))
    assert got["a"] == pytest.approx(1.0) and got["b"] == 1.0                   # zero MAD -> 1
