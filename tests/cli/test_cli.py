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


def _same_answer(cli_json, py):
    """The CLI's JSON and the Python call's result: the same actions, assignment, costs, curve."""
    back = gcf.GlobalExplanation.from_json(cli_json)
    assert back.specs == py.specs and back.stats.get("assign") == py.stats.get("assign")
    assert back.assignment.tolist() == py.assignment.tolist()
    pd.testing.assert_series_equal(back.cost.reset_index(drop=True), py.cost.reset_index(drop=True), check_names=False)
    assert (back.n_covered, back.mean_cost, back.k, back.Tmax) == (py.n_covered, py.mean_cost, py.k, py.Tmax)
    pd.testing.assert_frame_equal(back.curve, py.curve, check_dtype=False)
    return back


@pytest.mark.parametrize("flags, kwargs", [
    (["--cost", "age=2,priors_count=0.5", "--cost", "c_charge_degree=3"],
     {"cost": {"age": 2.0, "priors_count": 0.5, "c_charge_degree": 3.0}}),
    (["--fair-by", "race", "--max-gap", "0.2"], {"fair_by": "race", "max_gap": 0.2}),
    (["--fair-by", "race"], {"fair_by": "race", "max_gap": 0.05}),
    (["--assign", "tree"], {"assign": "tree"}),
    (["--assign", "tree", "--tree-depth", "1"], {"assign": "tree", "tree_depth": 1}),
], ids=["cost", "fair-by", "fair-by-default-gap", "assign-tree", "tree-depth"])
def test_global_options_match_the_python_call(cli, files, flags, kwargs):
    """Issue 23's gap: --cost, --fair-by / --max-gap and --assign are explain_global's cost=,
    fair_by= / max_gap= and assign= (same defaults); the CLI's answer is the Python call's."""
    from groupcf.cli import read_table

    tmp, pipe, _ = files
    r = cli("global", "--data", "rejected.csv", "--model", "model.joblib", "--tmax", "2", "--k", "2", *flags,
            "--out", "opts.json", cwd=tmp)
    assert r.returncode == 0, r.stderr
    S = read_table(tmp / "rejected.csv")
    names = [f.name for f in pipe[0]]
    if "fair_by" in kwargs:
        kwargs = {**kwargs, "fair_by": S[kwargs["fair_by"]]}
    py = gcf.explain_global(S[names], pipe, Tmax=2, k=2, progress=False, **kwargs)
    back = _same_answer((tmp / "opts.json").read_text(), py)
    if "fair_by" in kwargs:
        assert back.stats["max_gap"] == kwargs["max_gap"] and "Coverage by" in r.stdout
        assert "coverage_gap" in r.stdout          # --by defaults to --fair-by's column: the gaps table
    if "assign" in kwargs:
        assert back.tree is not None and "Assigned by a decision tree" in r.stdout


def test_global_option_errors(cli, files):
    tmp, _, _ = files
    base = ["global", "--data", "rejected.csv", "--model", "model.joblib", "--tmax", "1"]
    for flags, msg in [(["--cost", "age"], "FEATURE=WEIGHT"), (["--cost", "age=x"], "FEATURE=WEIGHT"),
                       (["--cost", "nosuch=2"], "nosuch"), (["--fair-by", "nosuch", "--k", "2"], "nosuch"),
                       (["--fair-by", "sex"], "give --k"), (["--space", "model.joblib"], "not a fitted FeatureSpace"),
                       (["--space", "none.joblib"], "space file not found"),
                       (["--max-gap", "0.1", "--k", "2"], "give --fair-by"), (["--min-coverage", "80"], "--min-coverage"),
                       (["--k", "0"], "--k must be"), (["--fair-by", "race", "--k", "2", "--assign", "tree"], "--assign"),
                       (["--tree-depth", "1"], "give --assign tree")]:
        r = cli(*base, *flags, cwd=tmp)
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr, (flags, r.stderr)
    pipe = joblib.load(tmp / "model.joblib")
    X = gcf.datasets.load("compas").X
    X[pipe.predict(X) == 1].iloc[:3].to_csv(tmp / "accepted.csv", index=False)
    r = cli("global", "--data", "accepted.csv", "--model", "model.joblib", cwd=tmp)
    assert r.returncode == 2 and "no row of accepted.csv is rejected" in r.stderr, r.stderr
    r = cli("global", "--help", cwd=tmp)
    for flag in ("--cost", "FEATURE=WEIGHT", "--fair-by", "--max-gap", "default 0.05", "--assign", "--space"):
        assert flag in r.stdout, flag


def test_global_with_space_validates_like_python(cli, tmp_path):
    """--space (Python's space=) for a ColumnTransformer pipeline: the training ranges and rules,
    kept in the JSON, so the result read back validates with the pipeline alone."""
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    d = gcf.datasets.load("compas")
    cats = ["sex", "race", "c_charge_degree"]
    ct = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), cats),
                                 (StandardScaler(), [c for c in d.X.columns if c not in cats]))
    pipe = make_pipeline(ct, LogisticRegression(max_iter=500)).fit(d.X, d.y)
    rules = d.space(numeric="passthrough").fit(d.X)
    joblib.dump(pipe, tmp_path / "ct.joblib")
    joblib.dump(rules, tmp_path / "rules.joblib")
    rows = d.X[pipe.predict(d.X) == 0].sample(15, random_state=1).reset_index(drop=True)
    rows.to_csv(tmp_path / "rows.csv", index=False)
    import warnings

    for cmd in (["explain", "--out", "e.parquet"], ["group", "--allow-partial"]):   # --space on every command
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            r = cli(*cmd, "--data", "rows.csv", "--model", "ct.joblib", "--space", "rules.joblib", "--tmax", "2",
                    cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert not [w for w in seen if "estimated" in str(w.message)], cmd     # the training ranges, not the scaler's
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        r = cli("global", "--data", "rows.csv", "--model", "ct.joblib", "--space", "rules.joblib", "--tmax", "2",
                "--k", "2", "--threshold", "0.55", "--out", "g.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not [w for w in seen if "estimated" in str(w.message)]
    with warnings.catch_warnings(record=True) as seen:      # without it: said once, in the CLI's words
        warnings.simplefilter("always")
        r = cli("global", "--data", "rows.csv", "--model", "ct.joblib", "--tmax", "1", "--k", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    said = [str(w.message) for w in seen if "estimated" in str(w.message)]
    assert len(said) == 1 and "--space FILE" in said[0], said
    from groupcf.cli import read_table

    S = read_table(tmp_path / "rows.csv")
    S = S[pipe.predict_proba(S)[:, 1] < 0.55]
    py = gcf.explain_global(S, pipe, Tmax=2, k=2, space=rules, threshold=0.55, progress=False)
    back = _same_answer((tmp_path / "g.json").read_text(), py)
    assert back.rules == py.rules and back.threshold == 0.55
    assert back.validate(model=pipe).ok


def test_global_by_prints_the_reports_intervals(cli, files):
    """--by's table is seeded as the report's and audit's (random_state=0): the same numbers on
    every run and in the HTML (it was unseeded: each run printed other intervals)."""
    from groupcf.cli import read_table

    tmp, pipe, _ = files
    runs = [cli("global", "--data", "rejected.csv", "--model", "model.joblib", "--tmax", "1", "--k", "1", "--by",
                "race", "--out", f"by{i}.json", cwd=tmp) for i in range(2)]
    assert all(r.returncode == 0 for r in runs)
    assert runs[0].stdout.replace("by0.json", "") == runs[1].stdout.replace("by1.json", "")
    back = gcf.GlobalExplanation.from_json((tmp / "by0.json").read_text())
    S = read_table(tmp / "rejected.csv")
    table = back.by_group(S["race"], random_state=0).to_string(float_format="%.4g")
    assert table in runs[0].stdout
