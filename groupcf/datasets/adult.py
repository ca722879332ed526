"""Adult census income (UCI, Becker & Kohavi 1996).

Rows: ``adult.data`` then ``adult.test`` (48842 rows), minus the 3620 rows with a
missing value (``?``) -> 45222 rows, index 0..45221 in that order. Label
``income_gt_50k`` = 1 when the yearly income exceeds 50K USD; positive rate 0.248.

Features (``variant="default"`` only), 12: age, workclass, education (ordered
Categorical, from Preschool to Doctorate in the order of UCI's ``education-num``, which
is dropped as a duplicate), marital_status, occupation, relationship, race, sex,
capital_gain, capital_loss, hours_per_week, native_country. ``fnlwgt`` (a census
sampling weight, not a property of the person) is dropped. Categories are those
observed in the 45222 rows.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._core import Dataset, binary_label, categorical, provenance, read_bundled, register

BUNDLE = "adult.csv.gz"

#: Education levels in the order of UCI's education-num (1..16).
EDUCATION = ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th",
             "HS-grad", "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters",
             "Prof-school", "Doctorate"]
NUMERIC = ["age", "capital_gain", "capital_loss", "hours_per_week"]
NOMINAL = ["workclass", "marital_status", "occupation", "relationship", "race",
           "native_country"]
ORDER = ["age", "workclass", "education", "marital_status", "occupation", "relationship",
         "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country"]

LABEL = "income_gt_50k"
DESCRIPTION = ("UCI Adult (1994 US census extract): 45222 adults without missing values. "
               "y = 1: income above 50K USD a year.")


def _read(path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@register("adult", variants=("default",), bundled=True, aliases=("census", "census_income"),
          summary="UCI Adult census income, 45222 adults; y = 1: income > 50K")
def load_adult(variant="default", data_home=None, download=True) -> Dataset:
    """Adult; see the module docstring for rows, features and provenance."""
    raw = read_bundled(BUNDLE, _read)
    raw.columns = [c.replace("-", "_") for c in raw.columns]
    raw = raw[~(raw == "?").any(axis=1)].reset_index(drop=True)
    X = pd.DataFrame(index=raw.index)
    for c in ORDER:
        if c in NUMERIC:
            X[c] = raw[c].astype(np.int64)
        elif c == "education":
            X[c] = categorical(raw[c], EDUCATION, ordered=True, name=c)
        elif c == "sex":
            X[c] = categorical(raw[c], ["Male", "Female"], name=c)
        else:
            X[c] = categorical(raw[c], sorted(raw[c].unique()), name=c)
    income = raw["income"]
    if not income.isin(["<=50K", ">50K"]).all():
        raise ValueError("unexpected income labels in the Adult bundle")
    y = binary_label((income == ">50K").astype(np.int64), LABEL)
    prov = provenance(BUNDLE)
    return Dataset(X=X, y=y, name="adult", variant="default",
                   sensitive=["race", "sex", "age", "native_country"],
                   immutable=["race", "sex", "native_country", "relationship"],  # relationship encodes sex (Husband/Wife)
                   increase_only=["age", "education"], description=DESCRIPTION,
                   source=f"{prov['original']}; bundled copy groupcf/datasets/data/{BUNDLE} "
                          f"taken from {prov['distribution']} ({prov['path_in_distribution']})")
