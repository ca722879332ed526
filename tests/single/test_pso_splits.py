"""The threshold-aware search (groupcf.single.pso.splits): crossings just past a split point
of a tree ensemble; nothing for black boxes."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf


def test_split_search_finds_the_smallest_crossing_just_past_a_threshold():
    """One actionable continuous feature: the nearest counterfactual is just past the
    forest's first split point (above the query) where the forest accepts; the
    threshold-aware search returns it (to the margin), the swarm alone need not."""
    rng = np.random.default_rng(7)
    X = pd.DataFrame({"a": rng.normal(size=400), "g": rng.normal(size=400)})
    y = (X.a > 0.3).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough", immutable=["g"]),
                         RandomForestClassifier(n_estimators=25, random_state=0)).fit(X, y)
    x = X[(pipe.predict(X) == 0) & (X.a < -0.5)].iloc[0]
    space, emb = pipe[0], gcf.embeddings.get_embedding(pipe)[1]
    z0 = space.transform(x.to_frame().T)[0]
    col = space.features_[0].columns[0]
    t = emb.split_points()[col]
    Z = np.repeat(z0[None, :], len(t), axis=0)
    Z[:, col] = t + 1e-9
    first = t[(t > z0[col]) & (emb.predict(Z, emb.score_threshold(0.5)) == 1) & (emb.score(Z) > 0.5)][0]
    f = space.features_[0]
    a_min = f.low + (first + 1e-9) * (f.high - f.low)           # raw value just past it
    e = gcf.explain(x, pipe, method="pso", data=X, n=1, random_state=0, progress=False, split_search=True)
    assert pipe.predict(e.counterfactuals)[0] == 1
    assert e.counterfactuals.a.iloc[0] == pytest.approx(a_min, abs=1e-6 * (f.high - f.low))
    assert e.stats["rounds"][-1]["crossings"] >= 1


def test_split_search_is_a_no_op_for_models_without_split_points_or_line_search(pso_rf):
    """A black box (no embedding: no split points, no exact line search): the swarm alone
    either way (networks get line crossings: ``test_pso_lines.py``)."""
    from sklearn.neighbors import KNeighborsClassifier

    X, y, _, _ = pso_rf
    space = gcf.FeatureSpace(numeric="passthrough", immutable=["f2", "color"], increase_only=["count", "level"])
    pipe = make_pipeline(space, KNeighborsClassifier(15)).fit(X, y)
    x = X[pipe.predict(X) == 0].iloc[0]
    a = gcf.explain(x, pipe, method="pso", data=X, n=2, random_state=0, progress=False, split_search=True)
    b = gcf.explain(x, pipe, method="pso", data=X, n=2, random_state=0, progress=False, split_search=False)
    pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)
    assert "crossings" not in a.stats["rounds"][-1]


def test_a_crossing_below_decodes_tolerance_is_decoded():
    """A feature whose range is ~40,000 times its MAD (one far value) and a query 0.005
    (0.02 MAD) below the tree's threshold: the crossing moves the scaled value by ~5e-7, below
    decode's own change tolerance (1e-6); it must still reach the raw row the real model
    re-checks (it used to be dropped: the query's value was put back)."""
    rng = np.random.default_rng(8)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 500), "g": rng.normal(size=500)})
    X.loc[0, "a"] = 1e4
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough", immutable=["g"]),
                         RandomForestClassifier(n_estimators=1, bootstrap=False, random_state=0))
    pipe.fit(X, (X.a > 0.5).astype(int))
    f = pipe[0].features_[0]
    t = f.low + gcf.embeddings.get_embedding(pipe)[1].split_points()[0] * (f.high - f.low)
    t = t[np.argmin(np.abs(t - 0.5))]
    x = pd.Series({"a": t - 0.005, "g": 0.0})
    assert pipe.predict(x.to_frame().T)[0] == 0
    e = gcf.explain(x, pipe, method="pso", data=X, n=1, random_state=0, progress=False)
    assert pipe.predict(e.counterfactuals).all()
    assert 0 < e.counterfactuals.a.iloc[0] - x.a < 0.006             # just past the threshold
