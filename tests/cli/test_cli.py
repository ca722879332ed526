"""python -m groupcf explain / audit end to end, and user errors (exit 2, no traceback).

The commands run in this process (``groupcf.cli.main(argv)`` in the files' folder, output
captured at the file-descriptor level, so a solver's own log would show too); one test runs
the real ``python -m groupcf`` in a subprocess (entry point, exit codes, stderr)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import joblib
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _subprocess(*args, cwd=None):
    """The real ``python -m groupcf ARGS`` (this checkout first on the path)."""
    return subprocess.run([sys.executable, "-m", "groupcf", *map(str, args)], check=False, cwd=cwd,
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                          timeout=300)


@pytest.fixture
def cli(capfd):
    """``run(*args, cwd=folder)``: ``groupcf.cli.main(args)`` in ``folder``, as
    ``(returncode, stdout, stderr)`` like ``subprocess.run`` (argparse's exits included)."""

    def run(*args, cwd):
        capfd.readouterr()                        # drop what came before
        old = os.getcwd()
        os.chdir(cwd)
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:                 # argparse: --help, --version, usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        finally:
            os.chdir(old)
        out, err = capfd.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return run


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = gcf.datasets.load("compas")
    tmp = tmp_path_factory.mktemp("cli")
    pipe = make_pipeline(gcf.FeatureSpace(immutable=list(d.immutable)), LogisticRegression(max_iter=500)).fit(d.X, d.y)
    rej = d.X[pipe.predict(d.X) == 0].iloc[:12].reset_index(drop=True)
    rej.to_csv(tmp / "rejected.csv", index=False)
    joblib.dump(pipe, tmp / "model.joblib")
    joblib.dump({"not": "a model"}, tmp / "bad.joblib")
    gcf.explain_many(rej.iloc[:3], pipe, "mace").to_parquet(tmp / "prev.parquet")
    return tmp, pipe, rej


def test_explain_then_audit(cli, files):
    tmp, pipe, rej = files
    r = cli("explain", "--data", "rejected.csv", "--model", "model.joblib", "--method", "mace",
             "--jobs", "1", "--checkpoint", "ck", "--out", "run.parquet", cwd=tmp)
    assert r.returncode == 0, r.stderr
    t = pd.read_parquet(tmp / "run.parquet")
    assert len(t) == len(rej) and t["found"].all()
    direct = gcf.explain_many(pd.read_csv(tmp / "rejected.csv"), pipe, "mace")
    pd.testing.assert_series_equal(t["distance"], direct.table["distance"])
    r = cli("audit", "run.parquet", "--data", "rejected.csv", "--by", "race", "--report", "audit.html",
             "--n-boot", "100", cwd=tmp)
    assert r.returncode == 0, r.stderr
    assert "share_found" in r.stdout
    assert "<table" in (tmp / "audit.html").read_text()
    # without --data: the input rows recorded beside the run by `explain`
    r2 = cli("audit", "run.parquet", "--by", "race", "--boot", "100", cwd=tmp)
    assert r2.returncode == 0, r2.stderr
    assert r2.stdout.splitlines()[:3] == r.stdout.splitlines()[:3]   # the same groups table


@pytest.mark.parametrize("args, msg", [
    (["explain", "--data", "nope.csv", "--model", "model.joblib", "--out", "o.parquet"], "data file not found"),
    (["explain", "--data", "rejected.csv", "--model", "nope.joblib", "--out", "o.parquet"], "model file not found"),
    (["explain", "--data", "rejected.csv", "--model", "bad.joblib", "--out", "o.parquet"], "not a Pipeline"),
    (["audit", "prev.parquet", "--data", "rejected.csv", "--by", "colour"], "unknown column"),
    (["audit", "missing.parquet", "--data", "rejected.csv", "--by", "race"], "no such file"),
    (["audit", "prev.parquet", "--by", "race"], "--data is needed"),
])
def test_user_errors(cli, files, args, msg):
    tmp, _, _ = files
    r = cli(*args, cwd=tmp)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert msg in r.stderr and "Traceback" not in r.stderr


def test_help(cli, tmp_path):
    r = cli("explain", "--help", cwd=tmp_path)
    assert r.returncode == 0 and "--checkpoint" in r.stdout


def test_global(cli, files):
    tmp, pipe, rej = files
    r = cli("global", "--data", "rejected.csv", "--model", "model.joblib", "--tmax", "2", "--k", "2",
             "--by", "sex", "--out", "global.json", "--report", "global.html", cwd=tmp)
    assert r.returncode == 0, r.stderr
    page = (tmp / "global.html").read_text()
    assert "id=\"global-actions\"" in page and "id=\"global-groups\"" in page and "data:image/png" in page
    assert "action(s) cover" in r.stdout and "coverage_gap" in r.stdout
    back = gcf.GlobalExplanation.from_json((tmp / "global.json").read_text())
    assert back.n_actions <= 2 and len(back.curve) == 2
    cf = back.apply()
    assert (pipe.predict(cf[back.covered.to_numpy()]) == 1).all()
    bad = cli("global", "--data", "rejected.csv", "--model", "model.joblib", "--by", "nosuch", cwd=tmp)
    assert bad.returncode == 2 and "nosuch" in bad.stderr
    # the audit of an explain run with the shared actions of the same people as a section
    r = cli("audit", "prev.parquet", "--data", "rejected.csv", "--by", "race", "--n-boot", "50",
             "--global", "global.json", "--report", "audit_global.html", cwd=tmp)
    assert r.returncode == 0, r.stderr
    page = (tmp / "audit_global.html").read_text()
    for table in ("groups", "differences", "features", "global-actions", "global-curve", "global-groups"):
        assert f'id="{table}"' in page
    assert "Shared actions" in page and "Coverage and cost by race" in page


def test_version_and_help_name_the_files(cli, tmp_path):
    v = cli("--version", cwd=tmp_path)
    assert v.returncode == 0 and v.stdout.startswith("groupcf ")
    h = cli("explain", "--help", cwd=tmp_path)
    for flag in ("--reference", "--distance", "--solver", "--time-limit", "--tmax", ".cf.", ".input.parquet"):
        assert flag in h.stdout, flag
    for cmd in ("group", "global", "audit"):
        r = cli(cmd, "--help", cwd=tmp_path)
        assert r.returncode == 0


def test_python_m_groupcf_runs_in_a_subprocess(files):
    """The real entry point: ``python -m groupcf`` in a fresh interpreter (the exit status of
    ``main`` reaches the shell; a user error is one line on stderr, no traceback): a user error,
    then a whole ``explain`` run."""
    tmp, pipe, rej = files
    bad = _subprocess("explain", "--data", "nope.csv", "--model", "model.joblib", "--out", "o.parquet", cwd=tmp)
    assert bad.returncode == 2 and "data file not found" in bad.stderr and "Traceback" not in bad.stderr
    r = _subprocess("explain", "--data", "rejected.csv", "--model", "model.joblib", "--tmax", "2",
                    "--out", "smoke.parquet", cwd=tmp)
    assert r.returncode == 0, r.stderr
    t = pd.read_parquet(tmp / "smoke.parquet")
    assert len(t) == len(rej) and t["found"].all()


def test_explain_csv_numbers_stay_numbers(cli, files):
    tmp, pipe, rej = files
    r = cli("explain", "--data", "rejected.csv", "--model", "model.joblib", "--tmax", "2", "--distance", "l1",
             "--time-limit", "30", "--out", "run.csv", cwd=tmp)
    assert r.returncode == 0, r.stderr
    t = pd.read_csv(tmp / "run.csv", index_col=0)
    cf = pd.read_csv(tmp / "run.cf.csv")
    assert len(t) == len(rej) and t["found"].all()
    assert pd.api.types.is_numeric_dtype(cf["distance"]) and pd.api.types.is_numeric_dtype(t["distance"])
    # binned numeric features: a changed value is its bin, so the column is text throughout
    assert cf["age"].map(type).nunique() == 1
    back = gcf.ExplanationSet.load(tmp / "run.csv")
    assert back.table["found"].all() and len(back.counterfactuals) == len(cf)


def test_explain_geco_needs_reference(cli, files):
    tmp, pipe, rej = files
    r = cli("explain", "--data", "rejected.csv", "--model", "model.joblib", "--method", "geco",
             "--out", "g.parquet", cwd=tmp)
    assert r.returncode == 2 and "--reference" in r.stderr
    gcf.datasets.load("compas").X.iloc[:400].to_csv(tmp / "train.csv", index=False)
    r = cli("explain", "--data", "rejected.csv", "--model", "model.joblib", "--method", "geco",
             "--reference", "train.csv", "--out", "g.parquet", cwd=tmp)
    assert r.returncode == 0, r.stderr
    t = pd.read_parquet(tmp / "g.parquet")
    assert t["found"].sum() >= len(t) - 1


def test_group_command(cli, files):
    tmp, pipe, rej = files
    r = cli("group", "--data", "rejected.csv", "--model", "model.joblib", "--tmax", "2", "--out", "grp.json",
             cwd=tmp)
    assert r.returncode == 0, r.stderr
    assert "rejected by the model" in r.stdout and "HiGHS" not in r.stdout
    back = gcf.GroupExplanation.from_json((tmp / "grp.json").read_text())
    assert back.n_explanations >= 1 and len(back.assignment) == len(rej)
    r = cli("group", "--data", "rejected.csv", "--model", "model.joblib", "--tmax", "2", "--by", "sex", cwd=tmp)
    assert r.returncode == 0, r.stderr
    assert "subgroup" in r.stdout


def test_explain_a_column_transformer_pipeline(cli, files, tmp_path):
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    _, _, rej = files
    d = gcf.datasets.load("compas")
    cats = ["sex", "race", "c_charge_degree"]
    ct = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), cats),
                                 (StandardScaler(), [c for c in d.X.columns if c not in cats]))
    pipe = make_pipeline(ct, LogisticRegression(max_iter=500)).fit(d.X, d.y)
    joblib.dump(pipe, tmp_path / "ct.joblib")
    rows = d.X[pipe.predict(d.X) == 0].iloc[:3].reset_index(drop=True)
    rows.to_csv(tmp_path / "rows.csv", index=False)
    r = cli("explain", "--data", "rows.csv", "--model", "ct.joblib", "--method", "mace", "--out", "o.parquet",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    t = pd.read_parquet(tmp_path / "o.parquet")
    assert len(t) == 3 and t["found"].all()


def test_index_col_is_a_name_or_a_position(tmp_path):
    from groupcf.cli import read_table
    from groupcf.exceptions import InvalidInputError

    pd.DataFrame({"a": [1, 2]}, index=pd.Index(["p", "q"])).to_csv(tmp_path / "t.csv")   # header ",a"
    t = read_table(tmp_path / "t.csv", "0")               # pandas' own convention: a position
    assert t.index.tolist() == ["p", "q"] and t.index.name is None and list(t.columns) == ["a"]
    assert read_table(tmp_path / "t.csv", "a").index.tolist() == [1, 2]
    with pytest.raises(InvalidInputError, match=r"unknown column 'b'.*position 0 … 1"):
        read_table(tmp_path / "t.csv", "b")
