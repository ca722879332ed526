"""Toy data of the GeCo and PLAF tests: mixed raw data (numeric, ordinal, categorical, binary,
a zip code tied to a city) and fitted pipelines on it. Exposed to tests through the
``geco_toy`` fixture (tests/conftest.py)."""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf

EDU = ["primary", "secondary", "bachelor", "master", "phd"]
JOBS = ["clerk", "sales", "tech", "manager"]


@functools.cache
def toy(n: int = 600, seed: int = 0):
    """Mixed raw data: numeric (age, hours, zip), ordinal (edu), categorical (job, city),
    binary (married); zip is tied to city. y favours age, hours, education, managers."""
    rng = np.random.default_rng(seed)
    city = rng.choice(["north", "south", "east"], n)
    zipc = np.array([{"north": 100, "south": 200, "east": 300}[c] for c in city]) + rng.integers(0, 3, n)
    edu = rng.integers(0, len(EDU), n)
    job = rng.choice(JOBS, n)
    X = pd.DataFrame({
        "age": rng.integers(18, 70, n),
        "hours": rng.integers(10, 61, n),
        "edu": pd.Categorical(np.array(EDU)[edu], categories=EDU, ordered=True),
        "job": pd.Categorical(job, categories=JOBS),
        "city": pd.Categorical(city),
        "zip": zipc,
        "married": pd.Categorical(rng.choice(["no", "yes"], n), categories=["no", "yes"]),
    })
    s = (0.04 * (X["age"] - 40) + 0.05 * (X["hours"] - 35) + 0.9 * edu - 2.0
         + 1.5 * (job == "manager") + rng.normal(0, 0.5, n))
    return X, (s > 0).astype(int).to_numpy()


@functools.cache
def toy_pipe(kind: str = "lr", **space_kw):
    X, y = toy()
    clf = {"lr": LogisticRegression(C=10, max_iter=2000),
           "mlp": MLPClassifier((20, 20), max_iter=400, random_state=0)}[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_pipeline(gcf.FeatureSpace(**space_kw), clf).fit(X, y)


def rejected(pipe, n=5):
    X, _ = toy()
    return X[pipe.predict(X) == 0].iloc[:n]
