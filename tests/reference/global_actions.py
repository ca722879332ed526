"""Reference for the global-actions tests: tiny random cases and an independent brute force over every
action (raw rows, the real model, the rules checked in raw terms)."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

import groupcf as gcf

ORD = pd.CategoricalDtype(["low", "mid", "high"], ordered=True)


def tiny_case(seed: int, model: str = "lr", n_S: int = 7):
    """A fitted pipeline on 4 raw features (nominal, ordinal, binary, integer 0..3) with
    random actionability, and up to ``n_S`` rejected rows; ``None`` when too few are rejected."""
    rng = np.random.default_rng(seed)
    n = 240
    X = pd.DataFrame({
        "color": rng.choice(["red", "green", "blue"], n),
        "level": pd.Categorical(rng.choice(ORD.categories, n), dtype=ORD),
        "flag": rng.choice(["no", "yes"], n),
        "count": rng.integers(0, 4, n),
    })
    w = rng.normal(size=4) * 1.5
    logit = (w[0] * (X["color"] == "blue") + w[1] * X["level"].cat.codes + w[2] * (X["flag"] == "yes")
             + w[3] * X["count"] - rng.normal(1.5, 0.5) + rng.normal(scale=0.7, size=n))
    y = (logit > 0).astype(int)
    if y.nunique() < 2:
        return None
    imm = [c for c in ("color", "flag") if rng.random() < 0.2]
    inc = [c for c in ("level", "count") if rng.random() < 0.3]
    fs = gcf.FeatureSpace(numeric="passthrough", immutable=imm, increase_only=inc)
    if model == "lr":
        from sklearn.linear_model import LogisticRegression
        clf = LogisticRegression(C=10, max_iter=1000)
    elif model == "mlp":
        from sklearn.neural_network import MLPClassifier
        clf = MLPClassifier(hidden_layer_sizes=(4,), max_iter=600, random_state=seed)
    elif model == "gbt":
        from sklearn.ensemble import GradientBoostingClassifier
        clf = GradientBoostingClassifier(n_estimators=6, max_depth=2, random_state=seed)
    else:
        from sklearn.ensemble import RandomForestClassifier
        clf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=seed)
    import warnings

    from sklearn.pipeline import make_pipeline
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_pipeline(fs, clf).fit(X, y)
    rej = X[pipe.predict(X) == 0]
    if len(rej) < 2:
        return None
    S = rej.sample(min(n_S, len(rej)), random_state=seed)
    return pipe, S, X, imm, inc


def tiny_cases(seeds, models=("lr",), n_S: int = 7):
    """``(seed, model, case)`` for every seed × model whose :func:`tiny_case` exists
    (cases with too few rejected are skipped)."""
    for seed, model in itertools.product(seeds, models):
        case = tiny_case(seed, model, n_S)
        if case is not None:
            yield seed, model, case


def all_actions(X: pd.DataFrame, imm, inc, Tmax, numeric="shift"):
    """Every action in raw terms: ``{feature: ("set", value) | ("shift", amount)}``."""
    choices = {
        "color": [("set", v) for v in ["red", "green", "blue"]],
        "level": [("set", v) for v in ORD.categories],
        "flag": [("set", v) for v in ["no", "yes"]],
        "count": [("shift", d) for d in range(-3, 4) if d != 0] if numeric == "shift"
        else [("set", v) for v in range(X["count"].min(), X["count"].max() + 1)],
    }
    feats = [f for f in choices if f not in imm]
    T = len(feats) if Tmax is None else min(Tmax, len(feats))
    out = []
    for r in range(1, T + 1):
        for F in itertools.combinations(feats, r):
            for vals in itertools.product(*[choices[f] for f in F]):
                out.append(dict(zip(F, vals)))
    return out


def brute_force(pipe, S, X, imm, inc, Tmax, numeric="shift"):
    """(cover matrix actions × people, cost matrix) by the real model and raw rules."""
    acts = all_actions(X, imm, inc, Tmax, numeric)
    lo, hi = X["count"].min(), X["count"].max()
    rows, valid = [], []
    for a in acts:
        R = S.copy()
        ok = np.ones(len(S), bool)
        for f, (op, v) in a.items():
            if op == "set" and f == "count":
                if f in inc:
                    ok &= v >= S[f].to_numpy()
                R[f] = v
            elif op == "set":
                if f == "level":
                    if "level" in inc:
                        ok &= ORD.categories.get_loc(v) >= S["level"].cat.codes.to_numpy()
                    R[f] = pd.Categorical([v] * len(S), dtype=ORD)
                else:
                    if f == "flag" and "flag" in inc:
                        ok &= (v == "yes") | (S["flag"] == "no").to_numpy()
                    R[f] = v
            else:
                new = S[f].to_numpy() + v
                ok &= (new >= lo) & (new <= hi)
                if f in inc:
                    ok &= v >= 0
                R[f] = new
        rows.append(R)
        valid.append(ok)
    big = pd.concat(rows, ignore_index=True)
    acc = (pipe.predict(big) == 1).reshape(len(acts), len(S))
    C = acc & np.array(valid)
    D = np.zeros(C.shape)
    for j, a in enumerate(acts):
        for f, (op, v) in a.items():
            if f == "count" and op == "set":
                D[j] += np.abs(S[f].to_numpy() - v) / (hi - lo)
            elif f == "color" or f == "flag":
                D[j] += (S[f].to_numpy() != v)
            elif f == "level":
                D[j] += np.abs(S[f].cat.codes.to_numpy() - ORD.categories.get_loc(v)) / 2
            else:
                D[j] += abs(v) / (hi - lo)
    return acts, C, D


def best_coverage(C, k):
    """Most people ``k`` actions cover (over the distinct, non-dominated covers)."""
    U = np.unique(C[C.any(axis=1)], axis=0)
    keep = [i for i in range(len(U)) if not any(j != i and (U[j] >= U[i]).all() and (U[j] > U[i]).any()
                                                 for j in range(len(U)))]
    U = U[keep]
    if len(U) == 0:
        return 0
    best = 0
    for sub in itertools.combinations(range(len(U)), min(k, len(U))):
        best = max(best, int(U[list(sub)].any(axis=0).sum()))
    return best

