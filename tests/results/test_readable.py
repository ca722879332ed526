"""Output a person reads (single-instance and global results): plain numbers, bins with
their real bounds and a representative value, one status, no float noise in tables."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.results.base import denoise


def _first_explained(pipe, R):
    for i in range(len(R)):
        try:
            return gcf.explain(R.iloc[i], pipe, progress=False)      # .iloc: a numpy label
        except gcf.exceptions.NoCounterfactualError:
            continue
    pytest.fail("no rejected row has a counterfactual")


def test_single_summary_bins_and_plain_label(german_binned):
    pipe, R, X_tr = german_binned
    exp = _first_explained(pipe, R)
    text, head = exp.summary(), repr(exp)
    assert "np." not in text and "np." not in head
    assert re.search(r"of instance \d+\b", text)
    assert "inf" not in text and "(~" in text
    for c, lo, hi in re.findall(r"(duration|credit_amount): \S+ -> \[([\d.]+), ([\d.]+)[)\]]", text):
        assert X_tr[c].min() <= float(lo) < float(hi) <= X_tr[c].max()
    frame = exp.to_frame()
    for c in exp.changes[0]:
        assert "inf" not in str(frame.loc[0, c]) and "(~" in str(frame.loc[0, c])
    assert head.count("optimal") <= 1 and "stats" not in text


def test_errors_name_rows_as_plain_numbers(german_binned):
    pipe, _, _ = german_binned
    X = gcf.datasets.load("german").X
    ok = X[pipe.predict(X) == 1]
    with pytest.raises(gcf.exceptions.NotRejectedError) as err:
        gcf.explain(ok.iloc[0], pipe, progress=False)
    assert "np." not in str(err.value) and f"instance {ok.index[0]} " in str(err.value)


def test_global_actions_show_bins(german_binned):
    pipe, R, X_tr = german_binned
    res = gcf.explain_global(R.iloc[:15], pipe, Tmax=2, k=1, progress=False)
    text = res.summary()
    assert "inf" not in text.split("Curve:")[0]
    assert "np." not in text


def test_denoise_tables():
    df = pd.DataFrame({"a": [-8.3e-17, 0.5, np.nan], "b": ["x", "y", "z"], "c": [1, 2, 3]})
    out = denoise(df)
    assert out["a"].tolist()[:2] == [0.0, 0.5] and np.isnan(out["a"].iloc[2])
    assert out["b"].tolist() == ["x", "y", "z"] and out["c"].tolist() == [1, 2, 3]
    assert df["a"].iloc[0] == -8.3e-17         # a copy
