"""German credit data (UCI Statlog, Hofmann 1994), 1000 applicants.

Label ``good_credit`` = 1 for a good credit risk (UCI class 1), 0 for bad (class 2);
positive rate 0.70. The A-codes of ``german.data`` are replaced by readable labels
(e.g. ``A11`` -> ``"< 0 DM"``) through :data:`VALUES`. Two codes documented by UCI never
occur in the data and are not declared as categories: purpose ``A47`` (vacation) and
personal status ``A95`` (female, single).

``variant="default"``: the 20 attributes under readable names; the 7 numeric ones
(duration, credit_amount, installment_rate, residence_since, age, existing_credits,
people_liable) stay integers.

``variant="paper"`` (20 original / 59 expanded features, Lodi & Ramírez-Ayerbe): the
authors' column names and UCI order; the 11 qualitative attributes one-hot with their
observed categories (4+5+10+5+5+4+3+4+3+3+4 = 50 columns) and 9 binary features
(9 columns), binarised exactly as in the authors' ``datos('german')``:

=====================  ===========================  (UCI attribute)
duration               <= 18 months / > 18 months   (A2, months)
amount                 <= 2319 DM / > 2319 DM       (A5, threshold 2319.5 = median)
installment_rate       1-3 / 4                      (A8)
residence_since        1-3 / 4                      (A11)
age                    <= 33 years / > 33 years     (A13, 33 = median)
number_credits         1 / >= 2                     (A16)
maintenance_obligors   1 / 2                        (A18, already two-valued)
tel                    no / yes                     (A19, yes = A192)
foreign                no / yes                     (A20, yes = A201)
=====================  ===========================

The second category of each binary feature is the one the authors coded 1. No slips to
correct in this encoding. Without a data home the paper variant is derived from the
bundled ``german.data``; with ``german.data`` in the data home that file is read instead.
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
    map_codes,
    provenance,
    read_bundled,
    register,
)

log = logging.getLogger(__name__)

BUNDLE = "german.data.gz"
AUTHORS_FILE = "german.data"
AUTHORS_SHA256 = "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871"

#: (readable name, paper name) of the 20 UCI attributes, in UCI order.
COLUMNS = [
    ("checking_account", "status_account"), ("duration", "duration"),
    ("credit_history", "credit_history"), ("purpose", "purpose"),
    ("credit_amount", "amount"), ("savings", "savings"), ("employment_since", "employment"),
    ("installment_rate", "installment_rate"), ("personal_status_sex", "status_sex"),
    ("other_debtors", "guarantors"), ("residence_since", "residence_since"),
    ("property", "property"), ("age", "age"), ("other_installment_plans", "installment_plans"),
    ("housing", "housing"), ("existing_credits", "number_credits"), ("job", "job"),
    ("people_liable", "maintenance_obligors"), ("telephone", "tel"),
    ("foreign_worker", "foreign"),
]
NUMERIC = ["duration", "credit_amount", "installment_rate", "residence_since", "age",
           "existing_credits", "people_liable"]

#: Readable labels of the UCI codes, per qualitative attribute (readable names), and
#: whether the categories are naturally ordered. Codes in ABSENT never occur.
VALUES: dict[str, tuple[dict[str, str], bool]] = {
    "checking_account": ({
        "A11": "< 0 DM", "A12": "0-200 DM", "A13": ">= 200 DM or salary assignment",
        "A14": "no checking account"}, False),
    "credit_history": ({
        "A30": "no credits taken / all paid back duly",
        "A31": "all credits at this bank paid back duly",
        "A32": "existing credits paid back duly till now",
        "A33": "delay in paying off in the past",
        "A34": "critical account / other credits elsewhere"}, False),
    "purpose": ({
        "A40": "car (new)", "A41": "car (used)", "A42": "furniture/equipment",
        "A43": "radio/television", "A44": "domestic appliances", "A45": "repairs",
        "A46": "education", "A47": "vacation", "A48": "retraining", "A49": "business",
        "A410": "others"}, False),
    "savings": ({
        "A61": "< 100 DM", "A62": "100-500 DM", "A63": "500-1000 DM", "A64": ">= 1000 DM",
        "A65": "unknown / no savings account"}, False),
    "employment_since": ({
        "A71": "unemployed", "A72": "< 1 year", "A73": "1-4 years", "A74": "4-7 years",
        "A75": ">= 7 years"}, True),
    "personal_status_sex": ({
        "A91": "male: divorced/separated", "A92": "female: divorced/separated/married",
        "A93": "male: single", "A94": "male: married/widowed", "A95": "female: single"}, False),
    "other_debtors": ({"A101": "none", "A102": "co-applicant", "A103": "guarantor"}, False),
    "property": ({
        "A121": "real estate", "A122": "building society savings / life insurance",
        "A123": "car or other", "A124": "unknown / no property"}, False),
    "other_installment_plans": ({"A141": "bank", "A142": "stores", "A143": "none"}, False),
    "housing": ({"A151": "rent", "A152": "own", "A153": "for free"}, False),
    "job": ({
        "A171": "unemployed / unskilled non-resident", "A172": "unskilled resident",
        "A173": "skilled employee / official",
        "A174": "management / self-employed / highly qualified"}, True),
    "telephone": ({"A191": "no", "A192": "yes"}, False),
    "foreign_worker": ({"A202": "no", "A201": "yes"}, False),
}
ABSENT = {"A47", "A95"}

#: Paper binarisation of the numeric attributes: (threshold, labels); value <= threshold
#: gets labels[0] (coded 0 by the authors), else labels[1].
PAPER_BINS: dict[str, tuple[float, tuple[str, str]]] = {
    "duration": (18, ("<= 18 months", "> 18 months")),
    "credit_amount": (2319.5, ("<= 2319 DM", "> 2319 DM")),
    "installment_rate": (3, ("1-3", "4")),
    "residence_since": (3, ("1-3", "4")),
    "age": (33, ("<= 33 years", "> 33 years")),
    "existing_credits": (1, ("1", ">= 2")),
    "people_liable": (1, ("1", "2")),
}

LABEL = "good_credit"
DESCRIPTION = ("UCI Statlog German credit: 1000 loan applicants described by 20 "
               "attributes. y = 1: good credit risk.")


def categories(col: str) -> list[str]:
    """Declared categories (readable) of a qualitative attribute, codes never seen left out."""
    mapping, _ = VALUES[col]
    return [label for code, label in mapping.items() if code not in ABSENT]


def _read_raw(path) -> pd.DataFrame:
    names = [c for c, _ in COLUMNS] + ["class"]
    df = pd.read_csv(path, sep=" ", header=None, names=names, index_col=False, dtype=str)
    for c in NUMERIC + ["class"]:
        df[c] = df[c].astype(np.int64)
    return df


def _decode(raw: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """Readable default-variant frame (UCI order) and the label."""
    if len(raw.columns) != 21:
        raise ValueError("german.data must have 21 columns")
    X = pd.DataFrame(index=raw.index)
    for col, _ in COLUMNS:
        if col in NUMERIC:
            X[col] = raw[col].astype(np.int64)
        else:
            mapping, ordered = VALUES[col]
            X[col] = categorical(map_codes(raw[col], mapping, col), categories(col),
                                 ordered=ordered, name=col)
    if not raw["class"].isin([1, 2]).all():
        raise ValueError("german.data class column must be 1 (good) or 2 (bad)")
    return X, binary_label((raw["class"] == 1).astype(np.int64), LABEL)


def _paper(X: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(index=X.index)
    for col, paper_name in COLUMNS:
        if col in PAPER_BINS:
            thr, labels = PAPER_BINS[col]
            values = np.where(X[col] <= thr, labels[0], labels[1])
            out[paper_name] = categorical(values, labels, ordered=True, name=paper_name)
        else:
            out[paper_name] = X[col]
    return out


@register("german", variants=("default", "paper"), bundled=True,
          aliases=("german_credit", "statlog"),
          summary="UCI Statlog German credit, 1000 applicants; y = 1: good credit risk")
def load_german(variant="default", data_home=None, download=True) -> Dataset:
    """German credit; see the module docstring for features, bins and provenance."""
    prov = provenance(BUNDLE)
    source = (f"{prov['original']}; bundled copy groupcf/datasets/data/{BUNDLE} taken from "
              f"{prov['distribution']} ({prov['path_in_distribution']})")
    authors = None
    if variant == "paper":
        authors = find_file(data_home_dir(data_home), [AUTHORS_FILE])
    if authors is not None:
        check_known_file(authors, AUTHORS_SHA256, "german.data (UCI / one-for-many paper)")
        raw = _read_raw(authors)
        source = f"{authors} (UCI german.data as used by the one-for-many paper)"
    else:
        raw = read_bundled(BUNDLE, _read_raw)
    X, y = _decode(raw)
    if variant == "paper":
        return Dataset(X=_paper(X), y=y, name="german", variant="paper",
                       sensitive=["status_sex", "age", "foreign"],
                       immutable=["status_sex", "foreign"], increase_only=["age"],
                       description=DESCRIPTION + " Paper encoding: 20 features, 59 columns.",
                       source=source + ("" if authors else "; paper encoding derived by groupcf"))
    return Dataset(X=X, y=y, name="german", variant="default",
                   sensitive=["personal_status_sex", "age", "foreign_worker"],
                   immutable=["personal_status_sex", "foreign_worker"], increase_only=["age"],
                   description=DESCRIPTION, source=source)
