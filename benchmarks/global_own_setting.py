"""GLOBE-CE's own setting, reproduced (``global_actions.py --own FILE``).

``FILE`` is the JSON written by ``globece_own.py`` (run in the peers' venv: their German
credit, their pickled logistic regression, the 180 training rows it rejects, AReS and
GLOBE-CE exactly as in their notebook). :func:`own_model` rebuilds the same model as a
groupcf pipeline (a ``LogisticRegression`` with their coefficients mapped to
``FeatureSpace``'s columns; the decision values are checked equal); :func:`own` scores
GLOBE-CE's and AReS's actions with the scorer and runs groupcf on the same people for each
``Tmax`` and ``k``. Their setting has no immutable or increase-only features; the scorer
then checks the domain only.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import global_scorer as gs  # noqa: E402
from global_actions import _opts, _print, _row, run_groupcf  # noqa: E402

import groupcf as gcf  # noqa: E402


def _own_frames(d):
    numeric = [f for f, cols in d["tree"].items() if not cols]

    def frame(raw):
        X = pd.DataFrame(raw)
        for f in X.columns:
            if f not in numeric:
                cats = sorted({c.split(" = ", 1)[1] for c in d["tree"][f]})
                X[f] = pd.Categorical(X[f].astype(str), categories=cats)
        return X
    return frame(d["train_raw"]), frame(d["people_raw"]), numeric


def own_model(d, X_tr, numeric):
    """Their logistic regression as ``predict`` over raw rows, and the same model as a
    groupcf pipeline (coefficients solved onto FeatureSpace's columns, checked equal)."""
    from global_peers import OneHot
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    oh = OneHot(X_tr, numeric)
    if oh.columns != d["columns"]:
        raise RuntimeError("one-hot columns differ from GLOBE-CE's")
    w, b = np.asarray(d["coef"]), float(d["intercept"])

    def decision(X):
        return oh.encode(X).to_numpy() @ w + b

    def predict(X):
        return (decision(X) > 0).astype(int)

    space = gcf.FeatureSpace(numeric="passthrough").fit(X_tr)
    Z = space.transform(X_tr)
    A = np.column_stack([Z, np.ones(len(Z))])
    sol = np.linalg.lstsq(A, decision(X_tr), rcond=None)[0]
    lr = LogisticRegression()
    lr.coef_, lr.intercept_ = sol[:-1].reshape(1, -1), np.array([sol[-1]])
    lr.classes_, lr.n_features_in_ = np.array([0, 1]), Z.shape[1]
    pipe = make_pipeline(space, lr)
    gap = np.abs(lr.decision_function(Z) - decision(X_tr)).max()
    if gap > 1e-6 or (pipe.predict(X_tr) != predict(X_tr)).any():
        raise RuntimeError(f"rebuilt model differs from GLOBE-CE's (max decision gap {gap:.2e})")
    return predict, pipe


def own(args) -> list:
    d = json.loads(Path(args.own).read_text())
    X_tr, S, numeric = _own_frames(d)
    predict, pipe = own_model(d, X_tr, numeric)
    rules = gs.Rules.from_training(X_tr, numeric=numeric)
    for f, w in d["globece"]["bin_widths"].items():
        if abs(w - rules.width[f]) > 1e-6 * max(1.0, w):
            raise RuntimeError(f"bin width of {f}: GLOBE-CE {w}, scorer {rules.width[f]}")
    base = {"dataset": "german_credit (GLOBE-CE)", "model": "lr", "n_people": len(S)}
    print(f"GLOBE-CE's setting: {len(S)} rejected training rows (their figure: 180)", flush=True)
    rows = []
    if "ares" in d:
        a = d["ares"]
        sc = gs.score(S, a["actions"], predict, rules)
        rows.append(_row(dict(base, Tmax="None"), "ares", len(a["actions"]), a["actions"], sc, a["time_s"],
                         own_coverage=a["accuracy"] / 100, own_mean_cost=a["average_cost"]))
        _print(rows[-1])
    g = d["globece"]
    for k, c in sorted(g["clusters"].items(), key=lambda kv: int(kv[0])):
        sc = gs.score(S, c["actions"], predict, rules)
        cov = c["coverage"][-1] / 100 if c["coverage"] else math.nan
        rows.append(_row(dict(base, Tmax="None"), "globece", int(k), c["actions"], sc, g["time_s"],
                         own_coverage=cov, own_mean_cost=c["mean_cost"][-1] if c["mean_cost"] else math.nan))
        _print(rows[-1])
    # their figure: the cumulative actions of the 5-bin clustering, one prefix at a time
    c5 = g["clusters"].get("5")
    if c5:
        kept = [(a, cv, co) for a, cv, co in zip(c5["actions"], c5["coverage"], c5["mean_cost"], strict=True) if a]
        acts = [a for a, _, _ in kept]                  # a scalar too small to change anything: no action
        for j in range(1, len(kept) + 1):
            sc = gs.score(S, acts[:j], predict, rules)
            rows.append(_row(dict(base, Tmax="None"), "globece-5bins", j, acts[:j], sc, g["time_s"],
                             own_coverage=kept[j - 1][1] / 100, own_mean_cost=kept[j - 1][2]))
            _print(rows[-1])
    if "groupcf" in args.methods:
        for Tmax in args.tmax:
            for k in args.k:
                specs, dt, o = run_groupcf(S, pipe, rules, Tmax, k, args.time_limit, **_opts(args))
                sc = gs.score(S, specs, predict, rules)
                rows.append(_row(dict(base, Tmax="None" if Tmax is None else Tmax), "groupcf", k, specs, sc, dt, **o))
                _print(rows[-1])
    return rows
