"""Student performance, mathematics (UCI, Cortez & Silva 2008), 395 students.

**Not bundled.** The loader reads, from the data home (``data_home=`` or
``$GROUPCF_DATA``), UCI's ``student-mat.csv`` (``;``-separated, 33 columns) or — for
``variant="paper"`` — the one-for-many paper's ``Students-Performance-MAT.csv`` (the
same 395 rows, 30 features and ``Class``). Otherwise it looks in the cache
(``~/.cache/groupcf/students``) and, if allowed, downloads UCI's zip into it. Offline it
raises :class:`~groupcf.exceptions.DatasetNotAvailableError` saying where to put the file.

Features: the 30 UCI attributes (the grades G1, G2, G3 are not features).

Labels (1 = favourable):

* ``variant="default"``: ``pass`` = final grade ``G3 >= 10`` (the pass mark of the
  Portuguese 0-20 scale used by Cortez & Silva); positive rate 0.671. Needs a file with
  ``G3`` (``student-mat.csv``).
* ``variant="paper"``: the authors' ``Class``, which is ``G3 >= 12`` — not ``G3 >= 10``
  (checked row by row: 162 of 395 = 0.410 positive). It is rebuilt from ``G3`` when
  reading ``student-mat.csv``.

``variant="default"`` keeps the 13 numeric attributes (age, Medu, Fedu, traveltime,
studytime, failures, famrel, freetime, goout, Dalc, Walc, health, absences) as integers;
the others are Categoricals with readable labels.

``variant="paper"`` (30 original / 85 expanded features, Lodi & Ramírez-Ayerbe), UCI
order, all Categorical:

* 14 binary (1 column each; the second category is the one the authors coded 1):
  school (Gabriel Pereira / Mousinho da Silveira), sex (male / female), address
  (rural / urban), famsize (<= 3 / > 3), Pstatus (together / apart), failures (0 / >= 1),
  and the yes/no columns schoolsup, famsup, paid, activities, nursery, higher, internet,
  romantic (no / yes);
* 16 one-hot (71 columns): age (ordered 15-16 < 17 < >= 18), Medu, Fedu (5 ordered
  levels each), Mjob, Fjob (5), reason (4), guardian (3), traveltime, studytime (4
  ordered), famrel, freetime, goout, Dalc, Walc, health (5 ordered) and absences
  (ordered 0 < 1-10 < > 10).

Slips of the authors' preprocessing corrected here (see PAPER_NOTES.md):

1. ``lambda x: 1 if 'yes' else 0`` maps the 8 yes/no columns to a constant 1; here they
   are 1 exactly when the answer is "yes".
2. The age bins are labelled "15-16", "16-18", "More18", but the code assigns 15-16 to
   "15-16", then 17 only to "16-18" (16 was already relabelled, 18 already "More18"):
   effective bins {15, 16}, {17}, {18..22}. Kept with non-overlapping labels
   "15-16", "17", ">= 18".
3. The authors group one-hot columns by substring match, so ``health``'s group also
   holds ``Mjob_health`` and ``Fjob_health`` (7 columns, breaking its one-hot row and the
   feature-change count). Here each original feature is its own column group.
"""
from __future__ import annotations

import io
import logging
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import GroupCFWarning
from . import _core
from ._core import (
    Dataset,
    DatasetNotAvailableError,
    binary_label,
    cache_dir,
    categorical,
    check_known_file,
    data_home_dir,
    find_file,
    map_codes,
    register,
)

log = logging.getLogger(__name__)

UCI_FILE = "student-mat.csv"
AUTHORS_FILE = "Students-Performance-MAT.csv"
AUTHORS_SHA256 = "1a1fb70ee73933bd3e979065f368796872fc59e9818937703d6d4cc35cbf307d"
UCI_URL = "https://archive.ics.uci.edu/static/public/320/student+performance.zip"
UCI_ZIP = "student+performance.zip"
N_ROWS = 395
PASS_MARK = 10          # default variant: G3 >= 10
PAPER_CLASS_MARK = 12   # the authors' Class: G3 >= 12

FEATURES = ["school", "sex", "age", "address", "famsize", "Pstatus", "Medu", "Fedu", "Mjob",
            "Fjob", "reason", "guardian", "traveltime", "studytime", "failures", "schoolsup",
            "famsup", "paid", "activities", "nursery", "higher", "internet", "romantic",
            "famrel", "freetime", "goout", "Dalc", "Walc", "health", "absences"]
NUMERIC = ["age", "Medu", "Fedu", "traveltime", "studytime", "failures", "famrel",
           "freetime", "goout", "Dalc", "Walc", "health", "absences"]
YES_NO = ["schoolsup", "famsup", "paid", "activities", "nursery", "higher", "internet",
          "romantic"]

#: Readable labels of the qualitative attributes; the dict order is the category order
#: (for binary features the second label is the authors' 1).
LABELS: dict[str, dict] = {
    "school": {"GP": "Gabriel Pereira", "MS": "Mousinho da Silveira"},
    "sex": {"M": "male", "F": "female"},
    "address": {"R": "rural", "U": "urban"},
    "famsize": {"LE3": "<= 3", "GT3": "> 3"},
    "Pstatus": {"T": "together", "A": "apart"},
    "Mjob": {"teacher": "teacher", "health": "health care", "services": "services",
             "at_home": "at home", "other": "other"},
    "reason": {"home": "close to home", "reputation": "school reputation",
               "course": "course preference", "other": "other"},
    "guardian": {"mother": "mother", "father": "father", "other": "other"},
    **{c: {"no": "no", "yes": "yes"} for c in YES_NO},
}
LABELS["Fjob"] = LABELS["Mjob"]

_EDU = {0: "none", 1: "primary (4th grade)", 2: "5th-9th grade", 3: "secondary", 4: "higher"}
_LOW_HIGH = {1: "1 (very low)", 2: "2 (low)", 3: "3 (medium)", 4: "4 (high)", 5: "5 (very high)"}
_BAD_GOOD = {1: "1 (very bad)", 2: "2 (bad)", 3: "3 (fair)", 4: "4 (good)"}
#: Paper encoding of the numeric attributes as ordered categories: value -> label.
PAPER_LEVELS: dict[str, dict] = {
    "Medu": _EDU, "Fedu": _EDU,
    "traveltime": {1: "< 15 min", 2: "15-30 min", 3: "30-60 min", 4: "> 1 hour"},
    "studytime": {1: "< 2 hours", 2: "2-5 hours", 3: "5-10 hours", 4: "> 10 hours"},
    "famrel": {**_BAD_GOOD, 5: "5 (excellent)"},
    "freetime": _LOW_HIGH, "goout": _LOW_HIGH, "Dalc": _LOW_HIGH, "Walc": _LOW_HIGH,
    "health": {**_BAD_GOOD, 5: "5 (very good)"},
}
#: Paper bins of age, failures, absences: (upper edges, labels), value <= edge[i] -> label[i].
PAPER_BINS: dict[str, tuple[list[float], list[str]]] = {
    "age": ([16, 17, np.inf], ["15-16", "17", ">= 18"]),
    "failures": ([0, np.inf], ["0", ">= 1"]),
    "absences": ([0, 10, np.inf], ["0", "1-10", "> 10"]),
}

DESCRIPTION = ("UCI student performance in mathematics: 395 students of two Portuguese "
               "secondary schools, 30 demographic, social and school attributes.")


# ----------------------------------------------------------------------------- files
def _missing_message(variant: str, home: Path | None, cache: Path, reason: str) -> str:
    where = f"the data home {home}" if home is not None else "no data home (GROUPCF_DATA unset)"
    extra = ""
    if variant == "default" and find_file(home, [AUTHORS_FILE]) is not None:
        extra = (f" {AUTHORS_FILE} was found, but it has no G3 grade, which the default "
                 "variant's label (G3 >= 10) needs; use variant='paper' with it.")
    return (
        "the students performance data is not bundled with groupcf (UCI, CC BY 4.0) and "
        f"could not be found: looked in {where} and in the cache {cache}; {reason}.{extra} "
        f"Download {UCI_URL}, unzip {UCI_FILE} (inside the inner student.zip) "
        + (f"or take the paper's {AUTHORS_FILE} " if variant == "paper" else "")
        + "into a folder, then pass data_home='that/folder' or set the environment variable "
        "GROUPCF_DATA to it.")


def _extract_student_mat(zip_path: Path, dest: Path) -> Path:
    """Find ``student-mat.csv`` in UCI's zip (possibly inside a nested zip) and write it."""
    def search(zf: zipfile.ZipFile):
        for name in zf.namelist():
            if name.rsplit("/", 1)[-1] == UCI_FILE:
                return zf.read(name)
        for name in zf.namelist():
            if name.lower().endswith(".zip"):
                with zipfile.ZipFile(io.BytesIO(zf.read(name))) as inner:
                    found = search(inner)
                    if found is not None:
                        return found
        return None

    with zipfile.ZipFile(zip_path) as zf:
        data = search(zf)
    if data is None:
        raise ValueError(f"{UCI_FILE} not found in {zip_path}")
    out = dest / UCI_FILE
    out.write_bytes(data)
    return out


def locate(variant: str = "default", data_home=None, download: bool = True) -> Path:
    """Path of the file :func:`load_students` reads (downloading it if needed and allowed)."""
    home = data_home_dir(data_home)
    names = [AUTHORS_FILE, UCI_FILE] if variant == "paper" else [UCI_FILE]
    path = find_file(home, names)
    if path is not None:
        return path
    cache = cache_dir() / "students"
    path = find_file(cache, [UCI_FILE])
    if path is not None:
        return path
    if not download:
        raise DatasetNotAvailableError(_missing_message(variant, home, cache, "download=False"))
    try:
        zip_path = _core.download_file(UCI_URL, cache / UCI_ZIP)
        path = _extract_student_mat(zip_path, cache)
    except (OSError, ValueError, zipfile.BadZipFile) as err:
        raise DatasetNotAvailableError(
            _missing_message(variant, home, cache, f"downloading failed ({err})")) from err
    log.info("students data downloaded to %s", path)
    return path


def read_file(path: Path) -> pd.DataFrame:
    """Read ``student-mat.csv`` (``;``) or ``Students-Performance-MAT.csv`` (``,``)."""
    with open(path, encoding="utf-8-sig") as fh:
        header = fh.readline()
    df = pd.read_csv(path, sep=";" if header.count(";") > header.count(",") else ",",
                     encoding="utf-8-sig")
    label = "G3" if "G3" in df.columns else "Class" if "Class" in df.columns else None
    missing = [c for c in FEATURES if c not in df.columns]
    if missing or label is None:
        raise DatasetNotAvailableError(
            f"{path} is not UCI's student-mat.csv nor the paper's {AUTHORS_FILE}: "
            f"missing columns {missing + ([] if label else ['G3 or Class'])}")
    if len(df) != N_ROWS:
        warnings.warn(f"{path} has {len(df)} rows; UCI's student-mat.csv has {N_ROWS}", GroupCFWarning, stacklevel=3)
    if df[FEATURES + [label]].isna().any().any():
        raise DatasetNotAvailableError(f"{path} has missing values; expected UCI's file")
    if path.name == AUTHORS_FILE:
        check_known_file(path, AUTHORS_SHA256, f"{AUTHORS_FILE} of the one-for-many paper")
    return df


# ----------------------------------------------------------------------------- encodings
def _qualitative(df: pd.DataFrame, col: str) -> pd.Categorical:
    labels = LABELS[col]
    return categorical(map_codes(df[col].astype(str).str.strip(), labels, col),
                       list(labels.values()), name=col)


def _default_frame(df: pd.DataFrame) -> pd.DataFrame:
    X = pd.DataFrame(index=df.index)
    for c in FEATURES:
        X[c] = df[c].astype(np.int64) if c in NUMERIC else _qualitative(df, c)
    return X


def _paper_frame(df: pd.DataFrame) -> pd.DataFrame:
    X = pd.DataFrame(index=df.index)
    for c in FEATURES:
        if c in PAPER_BINS:
            edges, labels = PAPER_BINS[c]
            values = df[c].astype(np.int64).to_numpy()
            idx = np.searchsorted(np.asarray(edges, dtype=float), values, side="left")
            X[c] = categorical(np.asarray(labels, dtype=object)[idx], labels, ordered=True, name=c)
        elif c in PAPER_LEVELS:
            levels = PAPER_LEVELS[c]
            X[c] = categorical(map_codes(df[c].astype(np.int64), levels, c), list(levels.values()),
                               ordered=True, name=c)
        else:
            X[c] = _qualitative(df, c)
    return X


@register("students", variants=("default", "paper"), bundled=False,
          aliases=("student", "student_performance", "students_mat", "student-mat"),
          summary="UCI student performance (maths), 395 students; y = 1: pass (not bundled)")
def load_students(variant="default", data_home=None, download=True) -> Dataset:
    """Students performance; see the module docstring for files, labels and encodings."""
    path = locate(variant, data_home, download)
    df = read_file(path)
    if variant == "default":
        if "G3" not in df.columns:
            raise DatasetNotAvailableError(_missing_message(
                variant, data_home_dir(data_home), cache_dir() / "students",
                f"{path} has no G3 column"))
        X = _default_frame(df)
        y = binary_label((df["G3"] >= PASS_MARK).astype(np.int64), "pass")
        desc = DESCRIPTION + f" y = 1: pass, final grade G3 >= {PASS_MARK} (0-20 scale)."
    else:
        X = _paper_frame(df)
        if "Class" in df.columns:
            y = binary_label(df["Class"], "pass")
        else:
            y = binary_label((df["G3"] >= PAPER_CLASS_MARK).astype(np.int64), "pass")
        desc = (DESCRIPTION + f" y = 1: the paper's Class, final grade G3 >= "
                f"{PAPER_CLASS_MARK}. Paper encoding: 30 features, 85 columns.")
    source = (f"{path} ("
              + ("one-for-many paper's file, jasoneramirez/OneForManyCE" if path.name == AUTHORS_FILE
                 else "UCI Student Performance, P. Cortez (2008), https://doi.org/10.24432/C5TG7T, "
                      "CC BY 4.0") + ")")
    return Dataset(X=X, y=y, name="students", variant=variant,
                   sensitive=["sex", "age", "address"], immutable=["sex"],
                   increase_only=["age", "failures"], description=desc, source=source)
