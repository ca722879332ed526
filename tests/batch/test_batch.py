"""gcf.explain_many: backends agree row for row, failures recorded, kill-and-resume."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.batch import explain_many
from groupcf.exceptions import InvalidInputError, UnsupportedModelError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compas():
    d = gcf.datasets.load("compas")
    pipe = make_pipeline(gcf.FeatureSpace(immutable=list(d.immutable)),
                         LogisticRegression(max_iter=500)).fit(d.X, d.y)
    pred = pipe.predict(d.X)
    rej = d.X[pred == 0].iloc[:30]
    acc = d.X[pred == 1].iloc[:2]
    return d, pipe, rej, acc


def _cmp(a, b):
    pd.testing.assert_frame_equal(a.table.drop(columns="time"), b.table.drop(columns="time"))
    pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)


def test_one_row_matches_explain_and_model(compas):
    _, pipe, rej, _ = compas
    r = explain_many(rej.iloc[:5], pipe, "mace")
    assert list(r.table.index) == list(rej.index[:5])
    for i, x in rej.iloc[:5].iterrows():
        e = gcf.explain(x.to_frame().T, pipe, method="mace")
        assert r.table.loc[i, "distance"] == pytest.approx(e.distances[0])
        assert r.table.loc[i, "changed"] == ";".join(e.changes[0])
        assert r.table.loc[i, "probability"] == pytest.approx(pipe.predict_proba(e.counterfactuals.iloc[[0]])[0, 1])
        assert r.table.loc[i, "probability"] >= 0.5


def test_backends_agree(compas):
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client, LocalCluster
    _, pipe, rej, _ = compas
    r1 = explain_many(rej, pipe, "mace", n_jobs=1)
    r2 = explain_many(rej, pipe, "mace", n_jobs=2, chunk_size=4)
    _cmp(r1, r2)
    # dask through a Client (threads, processes=False: process start-up is slow on a busy CI box)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as lc, Client(lc) as c:
        r3 = explain_many(rej, pipe, "mace", backend=c, chunk_size=4)
    _cmp(r1, r3)
    assert r1.table["found"].all()


def test_failing_rows_recorded(compas):
    _, pipe, rej, acc = compas
    X = pd.concat([rej.iloc[:3], acc, rej.iloc[3:5]])
    r = explain_many(X, pipe, "mace", n_jobs=1, chunk_size=2)
    assert list(r.table.index) == list(X.index)
    assert set(r.failed.index) == set(acc.index)
    assert r.failed["error"].str.startswith("NotRejectedError").all()
    assert not r.failed["found"].any()
    assert r.table.loc[rej.index[:5], "found"].all()
    assert set(r.counterfactuals["row"]) == set(rej.index[:5])


def test_typo_fails_fast(compas):
    _, pipe, rej, _ = compas
    with pytest.raises(InvalidInputError):
        explain_many(rej, pipe, "mace", Tmaxx=2)
    with pytest.raises(InvalidInputError):
        explain_many(rej, pipe, "nope")
    with pytest.raises(InvalidInputError):
        explain_many(rej, pipe, "mace", backend="spark")


def test_parquet_roundtrip(compas, tmp_path):
    _, pipe, rej, _ = compas
    r = explain_many(rej.iloc[:4], pipe, "mace", n=2)
    r.to_parquet(tmp_path / "run.parquet")
    back = gcf.ExplanationSet.read_parquet(tmp_path / "run.parquet")
    _cmp(r, back)
    assert (r.counterfactuals.groupby("row").size() == 2).all()


SCRIPT = """
import os, sys, joblib
import groupcf.batch as b
from groupcf.batch import explain_many
pipe, X = joblib.load(sys.argv[1])
orig, calls = b._explain_chunk, [0]
def dying(*a, **k):          # the process dies (like a kill -9) when its third chunk starts
    calls[0] += 1
    if calls[0] == 3:
        os._exit(9)
    return orig(*a, **k)
b._explain_chunk = dying
explain_many(X, pipe, "mace", n_jobs=1, chunk_size=3, checkpoint=sys.argv[2])
"""


def test_killed_run_resumes(compas, tmp_path):
    _, pipe, rej, _ = compas
    X = rej.iloc[:15]
    joblib.dump((pipe, X), tmp_path / "in.joblib")
    ck = tmp_path / "ck"
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    p = subprocess.run([sys.executable, str(script), str(tmp_path / "in.joblib"), str(ck)], env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 9, p.stderr[-2000:]
    parts = [q for q in ck.glob("part-*.parquet") if not q.name.endswith(".cf.parquet")]
    assert 1 <= len(parts) < 5, "the run must be killed after its first chunk and before its last"
    resumed = explain_many(X, pipe, "mace", checkpoint=ck, chunk_size=3)
    full = explain_many(X, pipe, "mace", chunk_size=3)
    _cmp(resumed, full)
    # the done rows were not recomputed: their times are the checkpointed ones
    first = pd.read_parquet(min(parts))
    np.testing.assert_array_equal(resumed.table.loc[first.index, "time"], first["time"])


def test_explain_groups(compas):
    _d, pipe, rej, _ = compas
    S = rej.iloc[:24]
    out = gcf.explain_groups(S, pipe, by="sex", Tmax=2, n_jobs=2)
    assert isinstance(out, gcf.GroupExplanationSet) and not out.errors
    res, table = out.results, out.table
    assert set(res) == set(S["sex"].astype(str).unique()) or set(res) == set(S["sex"].unique())
    assert out.validate().ok and out.is_optimal == all(g.is_optimal for g in res.values())
    assert out.lower_bound == sum(g.lower_bound for g in res.values())
    back = gcf.GroupExplanationSet.from_json(out.to_json())
    assert back.table.equals(out.table) or back.table.shape == out.table.shape
    assert "people" in out.summary() or "subgroup" in out.summary()
    with pytest.warns(FutureWarning, match="unpacking"):
        old_res, _ = out
    assert old_res is res
    for k, g in res.items():
        members = S[S["sex"] == k]
        direct = gcf.explain_group(members, pipe, Tmax=2, progress=False)
        assert g.n_explanations == direct.n_explanations
        assert table.loc[k, "people"] == len(members)
        assert table.loc[k, "per_100"] == pytest.approx(100 * g.n_explanations / len(members))
        # every member is explained by a counterfactual the model accepts
        assert (pipe.predict(g.counterfactuals) == 1).all()


def test_explain_groups_fails_once_before_any_work(compas):
    """A typo, an unsupported model or a wrong argument raises before any subgroup runs
    (progress=False used to be passed twice and hidden as a TypeError in every row)."""
    _d, pipe, rej, _ = compas
    S = rej.iloc[:12]
    out = gcf.explain_groups(S, pipe, by="sex", Tmax=2, progress=False)
    assert not out.errors and all(g is not None for g in out.results.values())
    with pytest.raises(InvalidInputError, match="did you mean 'max_iterations'"):
        gcf.explain_groups(S, pipe, by="sex", Tmax=2, max_iteration=3)
    with pytest.raises(UnsupportedModelError):
        gcf.explain_groups(S, object(), by="sex", Tmax=2)
    with pytest.warns(FutureWarning, match="pass Tmax as a keyword"):
        old = gcf.explain_groups(S, pipe, 2, "sex", progress=False)
    assert set(old.results) == set(out.results)
