"""Independent reference for single counterfactuals (MACE): brute force over every point of
tiny mixed spaces (binary, categorical, ordinal, integer numerics) with loop-based
per-feature distances (the definition in the docs), and the toy data those spaces come from.
Exposed to tests through the ``mace_ref`` fixture (tests/conftest.py)."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import NoCounterfactualError
from groupcf.models import resolve_model

MARGIN = 1e-6
TOL = 1e-6
DISTANCES = ["l0", "l1", "linf", {"l0": 0.3, "l1": 0.5, "linf": 0.2}]
ORD = ["low", "mid", "high", "top"]


# --------------------------------------------------------------------------- fixtures
def data(seed: int, n_rows: int = 300) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "smoker": rng.choice(["no", "yes"], n_rows),
        "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n_rows)),
        "level": pd.Categorical(rng.choice(ORD, n_rows), categories=ORD, ordered=True),
        "kids": rng.integers(0, 5, n_rows),          # integer 0..4
        "cars": rng.integers(0, 4, n_rows),          # integer 0..3
    })
    X.loc[0, ["kids", "cars"]] = [0, 0]
    X.loc[1, ["kids", "cars"]] = [4, 3]
    Z = gcf.FeatureSpace(numeric="passthrough").fit(X).transform(X)
    w = rng.normal(size=Z.shape[1]) * 3
    s = Z @ w + rng.normal(size=n_rows) * 0.5
    return X, (s > np.quantile(s, 0.6)).astype(int)


#: fitted pipelines by (data, kind, rules, seed): the sweeps ask for a handful of models dozens of times
_FITTED: dict = {}


def pipe(X, y, kind, immutable=(), increase_only=(), seed=0):
    """A fitted ``FeatureSpace`` + LR or small MLP pipeline. Fitted once per test process for the
    same rows, labels, kind, rules and seed (deterministic fits, so the same model): read-only."""
    key = (kind, tuple(immutable), tuple(increase_only), seed, tuple(X.columns), tuple(map(str, X.dtypes)),
           int(pd.util.hash_pandas_object(X, index=True).sum()), np.asarray(y).tobytes())
    if key not in _FITTED:
        clf = (LogisticRegression(C=10) if kind == "lr"
               else MLPClassifier((8, 6), max_iter=800, random_state=seed))
        space = gcf.FeatureSpace(numeric="passthrough", immutable=list(immutable), increase_only=list(increase_only))
        _FITTED[key] = make_pipeline(space, clf).fit(X, y)
    return _FITTED[key]


def all_points(space) -> pd.DataFrame:
    """Every point of the space: categories x every integer of each numeric range."""
    values = []
    for f in space:
        if f.encoding == "continuous":
            assert f.integer
            values.append(list(range(int(f.low), int(f.high) + 1)))
        else:
            values.append(list(f.categories))
    P = pd.DataFrame(list(itertools.product(*values)), columns=[f.name for f in space])
    for f in space:
        if isinstance(f.dtype, pd.CategoricalDtype):
            P[f.name] = pd.Categorical(P[f.name], dtype=f.dtype)
        else:
            P[f.name] = P[f.name].astype(f.dtype)
    return P


def _ref_feature_distances(space, x, P) -> np.ndarray:
    """Independent, loop-based per-feature distances (the definition in the docs)."""
    out = np.zeros((len(P), len(space)))
    for l, f in enumerate(space):
        col = P[f.name].tolist()
        if f.encoding == "continuous":
            out[:, l] = [abs(float(v) - float(x[f.name])) / (f.high - f.low) for v in col]
        elif f.kind == "categorical" or f.encoding == "binary":
            out[:, l] = [float(v != x[f.name]) for v in col]
        else:
            cats = list(f.categories)
            out[:, l] = [abs(cats.index(v) - cats.index(x[f.name])) / (len(cats) - 1) for v in col]
    return out


def _ref_distance(D: np.ndarray, weights) -> np.ndarray:
    w = {weights: 1.0} if isinstance(weights, str) else weights
    n = D.shape[1]
    return (w.get("l0", 0) * (D > 0).sum(1) / n + w.get("l1", 0) * D.sum(1) / n
            + w.get("linf", 0) * D.max(1))


def allowed(space, x, P) -> np.ndarray:
    ok = np.ones(len(P), dtype=bool)
    for f in space:
        if f.immutable:
            ok &= (P[f.name] == x[f.name]).to_numpy()
        if f.increase_only:
            if f.encoding == "continuous":
                ok &= (P[f.name].astype(float) >= float(x[f.name])).to_numpy()
            else:
                cats = list(f.categories)
                ok &= np.array([cats.index(v) >= cats.index(x[f.name]) for v in P[f.name]])
    return ok


def brute_force(pipe, x, weights, Tmax=None):
    """Sorted distances of every admissible counterfactual (empty if none)."""
    space = pipe[0]
    P = all_points(space)
    tm = resolve_model(pipe)
    score = tm.embedding.score(space.transform(P))
    D = _ref_feature_distances(space, x, P)
    ok = (score >= tm.logit_threshold + MARGIN) & allowed(space, x, P)
    if Tmax is not None:
        ok &= (D > 0).sum(1) <= Tmax
    return np.sort(_ref_distance(D[ok], weights)), P[ok]


def check_cf(pipe, x, exp, k=0):
    """The k-th counterfactual is accepted by the real model, plausible and actionable."""
    space = pipe[0]
    cf = exp.counterfactuals.iloc[[k]]
    assert pipe.predict(cf)[0] == 1
    for f in space:
        v = cf.iloc[0][f.name]
        if f.encoding == "continuous":
            assert float(v) == int(v) and f.low <= v <= f.high, (f.name, v)
        if f.immutable:
            assert v == x[f.name]
        if f.increase_only and f.encoding == "continuous":
            assert v >= x[f.name]
    assert allowed(space, x, cf).all()
    changed = [f.name for f in space if cf.iloc[0][f.name] != x[f.name]]
    assert sorted(changed) == sorted(exp.changes[k])


def matches_brute_force(pipe, rejected, distance, **options):
    """MACE on each row of ``rejected`` against :func:`brute_force`: no counterfactual
    raises when brute force finds none, else proven optimal at the brute-force distance,
    the lower bound below it, the point checked (:func:`_check_cf`). Returns
    ``(x, explanation, brute-force distances)`` of the rows explained (at least one)."""
    found = []
    for _, x in rejected.iterrows():
        ref, _ = brute_force(pipe, x, distance)
        if len(ref) == 0:
            with pytest.raises(NoCounterfactualError):
                gcf.explain(x, pipe, method="mace", distance=distance, **options)
            continue
        exp = gcf.explain(x, pipe, method="mace", distance=distance, **options)
        assert exp.is_optimal and exp.status == gcf.Status.OPTIMAL
        assert exp.distances[0] == pytest.approx(ref[0], abs=TOL)
        assert exp.lower_bound is None or exp.lower_bound <= ref[0] + TOL
        check_cf(pipe, x, exp)
        found.append((x, exp, ref))
    assert found
    return found
