"""GeCo timing on Adult / German / Credit with LR and MLP(20, 20) (opt-in benchmark).

Run: ``GROUPCF_BENCH=1 python -m pytest -q -s tests/single/test_geco_bench.py``. Per dataset and
model: train on a 50/50 split (FeatureSpace with the dataset's immutable / increase-only
features), explain the first 50 rejected test rows with ``gcf.explain(method="geco")``
(data = the training rows; the active domain is prepared on the first call and cached),
print median / p95 wall time per explanation, mean number of changed features, coverage.
"""
import os
import time
import warnings

import numpy as np
import pytest

import groupcf as gcf

pytestmark = pytest.mark.skipif(not os.environ.get("GROUPCF_BENCH"),
                                reason="benchmark: set GROUPCF_BENCH=1 to run")


@pytest.mark.parametrize("dataset", ["adult", "german", "credit"])
@pytest.mark.parametrize("kind", ["lr", "mlp"])
def test_geco_speed(dataset, kind):
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline

    ds = gcf.datasets.load(dataset)
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.5, random_state=0)
    clf = LogisticRegression(C=10, max_iter=3000) if kind == "lr" else \
        MLPClassifier((20, 20), max_iter=300, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_pipeline(gcf.FeatureSpace(immutable=ds.immutable, increase_only=ds.increase_only),
                             clf).fit(X_tr, y_tr)
    S = X_te[pipe.predict(X_te) == 0].iloc[:50]
    t = time.perf_counter()
    gcf.explain(S.iloc[0], pipe, method="geco", data=X_tr, random_state=0)   # warm-up: domain
    prep = time.perf_counter() - t
    times, changed, found = [], [], 0
    for i in range(len(S)):
        t = time.perf_counter()
        try:
            exp = gcf.explain(S.iloc[i], pipe, method="geco", data=X_tr, random_state=i)
            found += 1
            changed.append(len(exp.changes[0]))
        except gcf.exceptions.NoCounterfactualError:
            pass
        times.append(time.perf_counter() - t)
    ms = np.array(times) * 1e3
    print(f"\n{dataset:7s} {kind:4s} n={len(S)} first call {prep * 1e3:.0f} ms | median {np.median(ms):.1f} ms "
          f"p95 {np.percentile(ms, 95):.1f} ms | changed {np.mean(changed):.2f} | coverage {found}/{len(S)}")
    assert found == len(S)
