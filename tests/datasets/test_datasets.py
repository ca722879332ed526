"""Tests of gcf.datasets: bundled data, checksums, paper encodings, students, split."""
from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import re
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import groupcf.datasets as gds
from groupcf.datasets import _core, students
from groupcf.exceptions import DatasetNotAvailableError, GroupCFError, InvalidInputError

REPO = Path(__file__).resolve().parents[2]
PAPER_DIR = Path(os.environ.get("GROUPCF_PAPER_DATA", REPO.parent / "shared" / "data" / "paper"))
HAS_PAPER = (PAPER_DIR / "compas_processed.csv").is_file()
needs_paper = pytest.mark.skipif(
    not HAS_PAPER, reason=f"the one-for-many paper's data files are not in {PAPER_DIR} "
                          "(set GROUPCF_PAPER_DATA to their folder)")
HAS_SPACE = importlib.util.find_spec("groupcf.features.space") is not None

BUNDLED = {"compas": (6172, 8, 0.545), "german": (1000, 20, 0.700),
           "adult": (45222, 12, 0.248), "credit": (30000, 23, 0.779)}
PAPER = {"compas": (6172, 5, 15), "german": (1000, 20, 59), "students": (395, 30, 85)}


def _no_download(url, dest, timeout=60.0):
    raise OSError("network disabled in tests")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """No $GROUPCF_DATA, an empty cache, and no network for every test."""
    monkeypatch.delenv("GROUPCF_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(_core, "download_file", _no_download)


def expanded_size(X: pd.DataFrame) -> int:
    """Expanded columns implied by the dtypes: 2 values -> 1, else number of categories."""
    total = 0
    for c in X.columns:
        col = X[c]
        n = len(col.cat.categories) if isinstance(col.dtype, pd.CategoricalDtype) else col.nunique()
        total += 1 if n == 2 else n
    return total


def uci_student_mat(path: Path) -> pd.DataFrame:
    """A file in UCI's student-mat.csv format built from the paper's file.

    G3 is synthetic but consistent with the paper's Class (Class = G3 >= 12); some
    failing students get 10 or 11 so that pass (G3 >= 10) differs from Class.
    """
    df = pd.read_csv(PAPER_DIR / "Students-Performance-MAT.csv")
    cls = df.pop("Class").to_numpy()
    i = np.arange(len(df))
    g3 = np.where(cls == 1, 12 + i % 9, np.array([0, 5, 8, 9, 10, 11])[i % 6])
    df["G1"], df["G2"], df["G3"] = g3, g3, g3
    df.to_csv(path, sep=";", index=False, quoting=csv.QUOTE_NONNUMERIC)
    return df


# ----------------------------------------------------------------------------- registry
def test_list_datasets():
    assert gds.list_datasets() == ["adult", "compas", "credit", "german", "students"]
    info = gds.describe_datasets()
    assert not info.loc["students", "bundled"] and info.loc["compas", "bundled"]


def test_unknown_name_and_variant():
    with pytest.raises(InvalidInputError, match="compas"):
        gds.load("compass")
    with pytest.raises(InvalidInputError, match="no 'paper' variant"):
        gds.load("adult", variant="paper")
    with pytest.raises(InvalidInputError, match="variant"):
        gds.load("german", variant="raw")
    assert gds.load("taiwan").name == "credit"


# ----------------------------------------------------------------------------- bundled
@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_default(name):
    rows, cols, rate = BUNDLED[name]
    ds = gds.load(name)
    assert ds.shape == (rows, cols) and ds.variant == "default" and ds.name == name
    assert ds.y.dtype == np.int64 and set(ds.y.unique()) == {0, 1}
    assert ds.positive_rate == pytest.approx(rate, abs=0.002)
    assert ds.X.index.equals(ds.y.index)
    assert not ds.X.isna().any().any()
    assert set(ds.immutable) <= set(ds.X.columns) and set(ds.sensitive) <= set(ds.X.columns)
    assert ds.source and ds.description
    r = repr(ds)
    assert f"name={name!r}" in r and "variant='default'" in r and f"{rate:.3f}" in r
    # numeric stays numeric, qualitative columns are Categoricals
    assert any(pd.api.types.is_integer_dtype(ds.X[c]) for c in ds.X.columns)
    assert any(isinstance(ds.X[c].dtype, pd.CategoricalDtype) for c in ds.X.columns)


def test_readable_values():
    german = gds.load("german").X
    assert "< 0 DM" in german["checking_account"].cat.categories
    for c in german.select_dtypes("category"):
        assert not any(re.fullmatch(r"A\d+", str(v)) for v in german[c].cat.categories), c
    assert german["employment_since"].cat.ordered
    assert pd.api.types.is_integer_dtype(german["duration"])
    compas = gds.load("compas").X
    assert set(compas["c_charge_degree"]) == {"Misdemeanor", "Felony"}
    assert set(compas["sex"]) == {"Male", "Female"}
    adult = gds.load("adult").X
    edu = adult["education"].cat
    assert edu.ordered and edu.categories[0] == "Preschool" and edu.categories[-1] == "Doctorate"
    credit = gds.load("credit").X
    assert set(credit["SEX"]) == {"male", "female"}
    assert credit["SEX"].value_counts()["female"] == 18112          # UCI: SEX == 2
    assert set(credit["EDUCATION"].cat.categories) >= {"university", "unknown"}


def test_bundle_sha256_and_size():
    prov = json.loads((gds.DATA_DIR / "provenance.json").read_text())["files"]
    assert set(prov) == {"compas.csv.gz", "german.data.gz", "adult.csv.gz", "credit.csv.gz"}
    md = (gds.DATA_DIR / "PROVENANCE.md").read_text()
    total = 0
    for fname, rec in prov.items():
        path = gds.DATA_DIR / fname
        assert _core.sha256_file(path) == rec["sha256"]
        assert rec["sha256"] in md and rec["licence"] and rec["original"] and rec["changes"]
        total += path.stat().st_size
    assert total < 3_000_000
    # german.data is bundled unchanged: same content as the UCI / paper file
    assert prov["german.data.gz"]["uncompressed_sha256"] == german_sha()


def german_sha():
    from groupcf.datasets import german
    return german.AUTHORS_SHA256


def test_checksum_mismatch(monkeypatch, tmp_path):
    fake = tmp_path / "data"
    shutil.copytree(gds.DATA_DIR, fake)
    with open(fake / "german.data.gz", "ab") as fh:
        fh.write(b"tampered")
    monkeypatch.setattr(_core, "DATA_DIR", fake)
    with pytest.raises(gds.DatasetChecksumError, match="sha256"):
        gds.load("german")
    assert issubclass(gds.DatasetChecksumError, GroupCFError)


# ----------------------------------------------------------------------------- paper
def _paper(name):
    return gds.load(name, variant="paper", data_home=PAPER_DIR if name == "students" else None)


@pytest.mark.parametrize("name", sorted(PAPER))
def test_paper_encoding_sizes(name):
    if name == "students" and not HAS_PAPER:
        pytest.skip(f"students data not in {PAPER_DIR}")
    rows, n_orig, n_exp = PAPER[name]
    ds = _paper(name)
    assert ds.shape == (rows, n_orig) and ds.variant == "paper"
    assert all(isinstance(ds.X[c].dtype, pd.CategoricalDtype) for c in ds.X.columns)
    assert not ds.X.isna().any().any()
    assert expanded_size(ds.X) == n_exp
    assert set(ds.y.unique()) == {0, 1}
    if HAS_SPACE:
        from groupcf.features.space import FeatureSpace
        assert FeatureSpace().fit(ds.X).n_features_out_ == n_exp
        # a small sample keeps the size: categories are declared, not observed
        assert FeatureSpace().fit(ds.X.iloc[:7]).n_features_out_ == n_exp


@pytest.mark.skipif(not HAS_SPACE, reason="groupcf.features.space (FeatureSpace) not available yet")
def test_paper_feature_space_kinds():
    from groupcf.features.space import FeatureSpace
    fs = FeatureSpace().fit(gds.load("compas", variant="paper").X)
    assert {f.name: f.kind for f in fs} == {
        "AgeGroup": "ordinal", "Sex": "binary", "PriorsCount": "ordinal",
        "ChargeDegree": "binary", "Race": "categorical"}


def test_compas_paper_bins():
    ds = gds.load("compas", variant="paper")
    X = ds.X
    assert list(X.columns) == ["AgeGroup", "Sex", "PriorsCount", "ChargeDegree", "Race"]
    assert list(X["PriorsCount"].cat.categories) == ["0", "1", "2-3", "> 3"]
    priors = gds.load("compas").X["priors_count"]
    assert (X["PriorsCount"][priors == 3] == "2-3").all() and (X["PriorsCount"][priors == 4] == "> 3").all()
    assert ds.positive_rate == pytest.approx(3363 / 6172)


def test_german_paper_bins():
    raw = gds.load("german").X
    X = gds.load("german", variant="paper").X
    assert (X["amount"].cat.codes == (raw["credit_amount"] > 2319.5)).all()
    assert (X["duration"].cat.codes == (raw["duration"] > 18)).all()
    assert (X["age"].cat.codes == (raw["age"] > 33)).all()
    assert (X["foreign"] == raw["foreign_worker"]).all()
    assert len(X["purpose"].cat.categories) == 10 and len(X["status_sex"].cat.categories) == 4


@needs_paper
@pytest.mark.parametrize("name", ["compas", "german"])
def test_paper_bundled_equals_authors_files(name):
    bundled = gds.load(name, variant="paper")
    authors = gds.load(name, variant="paper", data_home=PAPER_DIR)
    assert str(PAPER_DIR) in authors.source and str(PAPER_DIR) not in bundled.source
    pd.testing.assert_frame_equal(bundled.X, authors.X)
    pd.testing.assert_series_equal(bundled.y, authors.y)


@needs_paper
def test_env_var_data_home(monkeypatch):
    monkeypatch.setenv("GROUPCF_DATA", str(PAPER_DIR))
    assert "compas_processed.csv" in gds.load("compas", variant="paper").source
    assert gds.load("students", variant="paper").shape == (395, 30)


def test_missing_data_home(tmp_path):
    with pytest.raises(DatasetNotAvailableError, match="not an existing folder"):
        gds.load("compas", variant="paper", data_home=tmp_path / "nope")


# ----------------------------------------------------------------------------- students
@needs_paper
def test_students_paper_from_authors_file():
    ds = gds.load("students", variant="paper", data_home=PAPER_DIR)
    assert int(ds.y.sum()) == 162 and "Students-Performance-MAT.csv" in ds.source
    X = ds.X
    # slip 1 corrected: yes/no columns are not constant
    for c in students.YES_NO:
        assert X[c].nunique() == 2 and list(X[c].cat.categories) == ["no", "yes"]
    # slip 2 corrected: effective age bins {15,16} {17} {18..22}, non-overlapping labels
    assert list(X["age"].cat.categories) == ["15-16", "17", ">= 18"] and X["age"].cat.ordered
    assert X["age"].value_counts().to_dict() == {"15-16": 186, "17": 98, ">= 18": 111}
    assert X["absences"].value_counts().to_dict() == {"1-10": 214, "0": 115, "> 10": 66}


@needs_paper
def test_students_from_uci_format(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    raw = uci_student_mat(home / "student-mat.csv")
    paper_uci = gds.load("students", variant="paper", data_home=home)
    paper_authors = gds.load("students", variant="paper", data_home=PAPER_DIR)
    pd.testing.assert_frame_equal(paper_uci.X, paper_authors.X)
    pd.testing.assert_series_equal(paper_uci.y, paper_authors.y)
    default = gds.load("students", data_home=home)
    assert default.shape == (395, 30) and "G3" not in default.X.columns
    assert (default.y == (raw["G3"] >= 10)).all()
    assert pd.api.types.is_integer_dtype(default.X["absences"])
    assert set(default.X["school"]) == {"Gabriel Pereira", "Mousinho da Silveira"}


@needs_paper
def test_students_default_needs_g3():
    with pytest.raises(DatasetNotAvailableError, match="G3"):
        gds.load("students", data_home=PAPER_DIR)


def test_students_offline_error():
    with pytest.raises(DatasetNotAvailableError) as info:
        gds.load("students")
    msg = str(info.value)
    assert "GROUPCF_DATA" in msg and "student-mat.csv" in msg and "data_home" in msg
    assert isinstance(info.value, GroupCFError)
    with pytest.raises(DatasetNotAvailableError, match="download=False"):
        gds.load("students", variant="paper", download=False)


@needs_paper
def test_students_download_nested_zip(monkeypatch, tmp_path):
    src = tmp_path / "student-mat.csv"
    uci_student_mat(src)
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.write(src, "student-mat.csv")
    calls = []

    def fake_download(url, dest, timeout=60.0):
        calls.append(url)
        dest.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(dest, "w") as z:
            z.writestr("student.zip", inner.getvalue())
        return dest

    monkeypatch.setattr(_core, "download_file", fake_download)
    ds = gds.load("students", variant="paper")
    assert calls == [students.UCI_URL] and ds.shape == (395, 30)
    gds.load("students", variant="paper")           # second time: from the cache
    assert len(calls) == 1


# ----------------------------------------------------------------------------- split
def test_split_reproducible():
    ds = gds.load("german")
    a = ds.split(test_size=0.5, random_state=0)
    b = ds.split(test_size=0.5, random_state=0)
    for u, v in zip(a, b):
        assert u.index.equals(v.index)
    X_tr, X_te, y_tr, y_te = a
    assert len(X_tr) == len(X_te) == 500
    assert X_tr.index.equals(y_tr.index) and X_te.index.equals(y_te.index)
    assert X_tr.index.union(X_te.index).equals(ds.X.index)
    pd.testing.assert_frame_equal(X_tr, ds.X.loc[X_tr.index])
    c = ds.split(test_size=0.3, random_state=1, stratify=True)
    assert len(c[1]) == 300 and c[3].mean() == pytest.approx(0.7)
    assert not ds.split(random_state=1)[0].index.equals(X_tr.index)
