"""Batch calls fail once, before any work, on call-level mistakes; a row's own failure stays per row."""
from __future__ import annotations

import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import InvalidInputError, NotRejectedError, UnsupportedModelError


@pytest.fixture(scope="module")
def german():
    ds = gcf.datasets.load("german")
    X = ds.X[list(ds.X.columns[:8])]
    lr = make_pipeline(gcf.FeatureSpace(), LogisticRegression(max_iter=1000)).fit(X, ds.y)
    return X, ds.y, lr


def test_unsupported_model_raises_once(german):
    X, y, _ = german
    knn = make_pipeline(gcf.FeatureSpace(), KNeighborsClassifier()).fit(X, y)
    with pytest.raises(UnsupportedModelError):
        gcf.explain_many(X.iloc[:6], knn, progress=False)


def test_bad_option_value_raises_once(german):
    X, _, lr = german
    R = X[lr.predict(X) == 0].iloc[:4]
    with pytest.raises(InvalidInputError, match="Tmax"):
        gcf.explain_many(R, lr, Tmax=-1, progress=False)


def test_a_rows_own_failure_stays_in_the_table(german):
    X, _, lr = german
    acc, rej = X[lr.predict(X) == 1].iloc[:1], X[lr.predict(X) == 0].iloc[:3]
    import pandas as pd

    mixed = pd.concat([acc, rej])             # the first row is accepted: its own failure
    res = gcf.explain_many(mixed, lr, Tmax=2, progress=False)
    assert list(res.table.index) == list(mixed.index)
    assert res.table["status"].iloc[0] == "NotRejectedError" and not res.table["found"].iloc[0]
    assert res.table["found"].iloc[1:].all()


def test_explain_groups_fails_before_work(german):
    X, _, lr = german
    with pytest.raises(NotRejectedError, match="already accepted"):
        gcf.explain_groups(X.iloc[:20], lr, by="housing" if "housing" in X else X.columns[0], Tmax=2,
                           progress=False)
    R = X[lr.predict(X) == 0].iloc[:6]
    with pytest.raises(InvalidInputError, match="Tmax"):
        gcf.explain_groups(R, lr, by=R.columns[0], Tmax=0, progress=False)
    with pytest.raises(InvalidInputError, match="time_limit"):
        gcf.explain_groups(R, lr, by=R.columns[0], Tmax=2, time_limit=-3, progress=False)


NO_GUARD = """
import groupcf as gcf
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
d = gcf.datasets.load("compas")
X = d.X.iloc[:300]
pipe = make_pipeline(gcf.FeatureSpace(), LogisticRegression(max_iter=500)).fit(X, d.y.iloc[:300])
gcf.explain_many(X[pipe.predict(X) == 0].iloc[:3], pipe, backend="dask", n_jobs=1, progress=False)
"""


@pytest.mark.slow
def test_dask_script_without_main_guard_is_named(tmp_path):
    pytest.importorskip("dask.distributed")
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "noguard.py"
    script.write_text(NO_GUARD)
    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                       env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    assert r.returncode != 0
    assert 'if __name__ == "__main__":' in r.stderr.splitlines()[-1]
