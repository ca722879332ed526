"""explain_many's counterfactual table: a changed binned feature is a number (the bin's
representative value) with its bin, real bounds, in a "<feature> bin" column."""
from __future__ import annotations

import re

import pandas as pd

import groupcf as gcf


def test_binned_columns_stay_numeric():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    ds = gcf.datasets.load("german")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.3, random_state=0)
    fixed = [c for c in X_tr.columns if c not in ("duration", "credit_amount", "purpose")]
    pipe = make_pipeline(gcf.FeatureSpace(immutable=fixed), LogisticRegression(max_iter=2000)).fit(X_tr, y_tr)
    R = X_te[pipe.predict(X_te) == 0].iloc[:6]
    r = gcf.explain_many(R, pipe, progress=False)
    cf = r.counterfactuals
    for c in ("duration", "credit_amount"):
        assert pd.api.types.is_numeric_dtype(cf[c].dtype)
    bins = [c for c in cf.columns if c.endswith(" bin")]
    assert bins
    for b in bins:
        feat = b[: -len(" bin")]
        for value, label in cf[[feat, b]].dropna().itertuples(index=False):
            lo, hi, close = re.fullmatch(r"\[([\d.]+), ([\d.]+)([)\]])", label).groups()
            assert X_tr[feat].min() <= float(lo) <= value and (value <= float(hi) if close == "]"
                                                                else value < float(hi))
            assert float(hi) <= X_tr[feat].max()
    assert r.validate(pipe).ok      # the numbers re-encode to the same bins
