"""Default of credit card clients, Taiwan 2005 (UCI, Yeh & Lien 2009).

30000 clients, index 0..29999 in the UCI order. Label ``no_default`` = 1 when the
client did **not** default on the next month's payment (UCI ``default payment next
month == 0``); positive rate 0.779.

Features (``variant="default"`` only), 23, UCI names: LIMIT_BAL (credit limit, NT$),
SEX (male / female), EDUCATION (graduate school, university, high school, other,
unknown — UCI's undocumented codes 0, 5, 6 are merged into "unknown"), MARRIAGE
(married, single, other, unknown — code 0), AGE, PAY_0 and PAY_2..PAY_6 (repayment
status of the six months, -2 .. 8, kept as integers), BILL_AMT1..6 and PAY_AMT1..6
(NT$).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._core import Dataset, binary_label, categorical, map_codes, provenance, read_bundled, register

BUNDLE = "credit.csv.gz"

SEX = {1: "male", 2: "female"}
EDUCATION = {1: "graduate school", 2: "university", 3: "high school", 4: "other",
             0: "unknown", 5: "unknown", 6: "unknown"}
EDUCATION_CATEGORIES = ["graduate school", "university", "high school", "other", "unknown"]
MARRIAGE = {1: "married", 2: "single", 3: "other", 0: "unknown"}
MARRIAGE_CATEGORIES = ["married", "single", "other", "unknown"]
TARGET = "default payment next month"

LABEL = "no_default"
DESCRIPTION = ("UCI default of credit card clients (Taiwan, 2005): 30000 card holders. "
               "y = 1: no default on the next month's payment.")


def _read(path) -> pd.DataFrame:
    return pd.read_csv(path)


@register("credit", variants=("default",), bundled=True,
          aliases=("taiwan", "default_credit", "credit_default", "uci_credit"),
          summary="UCI default of credit card clients (Taiwan), 30000 clients; y = 1: no default")
def load_credit(variant="default", data_home=None, download=True) -> Dataset:
    """Taiwan credit default; see the module docstring for features and provenance."""
    raw = read_bundled(BUNDLE, _read)
    X = pd.DataFrame(index=raw.index)
    for c in raw.columns:
        if c == TARGET:
            continue
        if c == "SEX":
            X[c] = categorical(map_codes(raw[c], SEX, c), list(SEX.values()), name=c)
        elif c == "EDUCATION":
            X[c] = categorical(map_codes(raw[c], EDUCATION, c), EDUCATION_CATEGORIES, name=c)
        elif c == "MARRIAGE":
            X[c] = categorical(map_codes(raw[c], MARRIAGE, c), MARRIAGE_CATEGORIES, name=c)
        else:
            X[c] = raw[c].astype(np.int64)
    y = binary_label(1 - raw[TARGET], LABEL)
    prov = provenance(BUNDLE)
    return Dataset(X=X, y=y, name="credit", variant="default",
                   sensitive=["SEX", "AGE", "MARRIAGE"], immutable=["SEX"],
                   increase_only=["AGE"], description=DESCRIPTION,
                   source=f"{prov['original']}; bundled copy groupcf/datasets/data/{BUNDLE} "
                          f"taken from {prov['distribution']} ({prov['path_in_distribution']}), "
                          "decoded back to the UCI coding")
