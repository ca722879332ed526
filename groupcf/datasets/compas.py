"""COMPAS recidivism data (ProPublica, Broward County, 2013-2014).

Rows: the 6172 defendants kept by ProPublica's analysis of
``compas-scores-two-years.csv`` (|days_b_screening_arrest| <= 30, is_recid != -1,
c_charge_degree != "O", score_text != "N/A"); the order of the file is kept, index
0..6171. Label ``no_recid`` = 1 when the person did **not** reoffend within two years
(``two_year_recid == 0``), the favourable outcome; positive rate 0.545.

``variant="default"`` (8 features): sex, age, race, juv_fel_count, juv_misd_count,
juv_other_count, priors_count, c_charge_degree (numbers stay integers). COMPAS's own
scores are not features.

``variant="paper"`` (5 original / 15 expanded features, Lodi & Ramírez-Ayerbe), columns
and order of the authors' ``compas_processed.csv``:

==============  ==================================================  ==========
AgeGroup        ordered: Less than 25 < 25 - 45 < Greater than 45   3 columns
Sex             Male / Female (binary, 1 = Female)                  1 column
PriorsCount     ordered: 0 < 1 < 2-3 < > 3                          4 columns
ChargeDegree    Misdemeanor / Felony (binary, 1 = Felony)           1 column
Race            6 categories (unordered)                            6 columns
==============  ==================================================  ==========

PriorsCount is binned as in the authors' ``datos('compas')`` (0 / 1 / 2-3 / more than 3);
AgeGroup is ProPublica's ``age_cat``. Without a data home the paper variant is derived
from the bundled raw file; with ``compas_processed.csv`` in the data home that file is
read instead (both give identical ``X`` and ``y``). No slips to correct here.
"""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ._core import (
    Dataset,
    binary_label,
    categorical,
    check_known_file,
    data_home_dir,
    find_file,
    provenance,
    read_bundled,
    register,
)

log = logging.getLogger(__name__)

BUNDLE = "compas.csv.gz"
AUTHORS_FILE = "compas_processed.csv"
AUTHORS_SHA256 = "0654f749330cc26eeb791fea1fabb221da40e99d6af03d551aff0e1e79ebf9b3"

RACES = ["African-American", "Asian", "Caucasian", "Hispanic", "Native American", "Other"]
SEXES = ["Male", "Female"]
CHARGES = ["Misdemeanor", "Felony"]
AGE_GROUPS = ["Less than 25", "25 - 45", "Greater than 45"]
PRIORS_GROUPS = ["0", "1", "2-3", "> 3"]
PRIORS_EDGES = [-np.inf, 0, 1, 3, np.inf]          # right-closed: 0 | 1 | 2-3 | >3

LABEL = "no_recid"
DESCRIPTION = ("ProPublica COMPAS data (Broward County, FL): defendants screened in "
               "2013-2014, ProPublica's 6172-row filter. y = 1: no new offence within two "
               "years (two_year_recid == 0).")


def _read(path) -> pd.DataFrame:
    return pd.read_csv(path)


def raw_filtered() -> pd.DataFrame:
    """Bundled rows after ProPublica's filter, index 0..n-1 (kept columns only)."""
    raw = read_bundled(BUNDLE, _read)
    keep = ((raw["days_b_screening_arrest"].abs() <= 30) & (raw["is_recid"] != -1)
            & (raw["c_charge_degree"] != "O") & (raw["score_text"] != "N/A"))
    return raw[keep].reset_index(drop=True)


def _priors_groups(counts: pd.Series) -> pd.Categorical:
    return pd.cut(counts, PRIORS_EDGES, right=True, labels=PRIORS_GROUPS, ordered=True).array


def _paper_frame(age_group, sex, priors, charge, race) -> pd.DataFrame:
    return pd.DataFrame({
        "AgeGroup": categorical(age_group, AGE_GROUPS, ordered=True, name="AgeGroup"),
        "Sex": categorical(sex, SEXES, name="Sex"),
        "PriorsCount": _priors_groups(pd.Series(priors)),
        "ChargeDegree": categorical(charge, CHARGES, ordered=True, name="ChargeDegree"),
        "Race": categorical(race, RACES, name="Race"),
    })


def _paper_from_bundle() -> tuple[pd.DataFrame, pd.Series]:
    r = raw_filtered()
    X = _paper_frame(r["age_cat"], r["sex"], r["priors_count"],
                     r["c_charge_degree"].map({"M": "Misdemeanor", "F": "Felony"}), r["race"])
    return X, binary_label(1 - r["two_year_recid"], LABEL)


def _paper_from_authors(path) -> tuple[pd.DataFrame, pd.Series]:
    check_known_file(path, AUTHORS_SHA256, "compas_processed.csv of the one-for-many paper")
    c = pd.read_csv(path, sep=";", encoding="utf-8-sig")
    X = _paper_frame(
        c["AgeGroup"].map({"Less25": "Less than 25", "25-45": "25 - 45", "More45": "Greater than 45"}),
        c["Sex"].map({0: "Male", 1: "Female"}),
        c["PriorsCount"],
        c["ChargeDegree"].map({0: "Misdemeanor", 1: "Felony"}),
        c["Race"])
    return X, binary_label(1 - c["TwoYearRecid"], LABEL)


def _default() -> tuple[pd.DataFrame, pd.Series]:
    r = raw_filtered()
    X = pd.DataFrame({
        "sex": categorical(r["sex"], SEXES, name="sex"),
        "age": r["age"].astype(np.int64),
        "race": categorical(r["race"], RACES, name="race"),
        "juv_fel_count": r["juv_fel_count"].astype(np.int64),
        "juv_misd_count": r["juv_misd_count"].astype(np.int64),
        "juv_other_count": r["juv_other_count"].astype(np.int64),
        "priors_count": r["priors_count"].astype(np.int64),
        "c_charge_degree": categorical(r["c_charge_degree"].map({"M": "Misdemeanor", "F": "Felony"}),
                                       CHARGES, ordered=True, name="c_charge_degree"),
    })
    return X, binary_label(1 - r["two_year_recid"], LABEL)


@register("compas", variants=("default", "paper"), bundled=True, aliases=("propublica",),
          summary="ProPublica COMPAS, 6172 defendants; y = 1: no recidivism in two years")
def load_compas(variant="default", data_home=None, download=True) -> Dataset:
    """COMPAS; see the module docstring for features, bins and provenance."""
    prov = provenance(BUNDLE)
    bundled_source = (f"{prov['original']}; bundled copy groupcf/datasets/data/{BUNDLE} "
                      f"taken from {prov['distribution']} ({prov['path_in_distribution']})")
    if variant == "paper":
        authors = find_file(data_home_dir(data_home), [AUTHORS_FILE])
        if authors is not None:
            X, y = _paper_from_authors(authors)
            source = f"one-for-many paper's file {authors} (jasoneramirez/OneForManyCE)"
        else:
            X, y = _paper_from_bundle()
            source = bundled_source + "; paper encoding derived by groupcf"
        return Dataset(X=X, y=y, name="compas", variant="paper",
                       sensitive=["Race", "Sex", "AgeGroup"], immutable=["Race", "Sex"],
                       increase_only=["AgeGroup", "PriorsCount"],
                       description=DESCRIPTION + " Paper encoding: 5 features, 15 columns.",
                       source=source)
    X, y = _default()
    return Dataset(X=X, y=y, name="compas", variant="default",
                   sensitive=["race", "sex", "age"], immutable=["race", "sex"],
                   increase_only=["age", "priors_count"], description=DESCRIPTION,
                   source=bundled_source)
