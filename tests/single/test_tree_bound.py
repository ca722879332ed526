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
