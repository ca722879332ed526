"""Independent references for group counterfactuals and nearest-l0 searches: brute force over
every point of tiny discrete spaces, the real model's logit, and small random cases.
Exposed to tests through the ``group_ref`` fixture (tests/conftest.py).

``brute_force_group``: enumerate every change set F (|F| <= Tmax, mutable features only) and
every point v of the space the *real model* accepts; the types v covers with F are those
equal to v outside F (and not above v on increase-only features). The set cover is then
solved exactly by dynamic programming over subsets of types.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf


def all_points(space) -> pd.DataFrame:
    """Every combination of categories of a (discrete) fitted FeatureSpace, as raw rows."""
    cats = []
    for f in space:
        if f.encoding == "continuous":
            raise ValueError("all_points needs a discrete space")
        cats.append(f.categories)
    rows = list(itertools.product(*cats))
    df = pd.DataFrame(rows, columns=[f.name for f in space])
    for f in space:
        if isinstance(f.dtype, pd.CategoricalDtype):
            df[f.name] = pd.Categorical(df[f.name], dtype=f.dtype)
    return df


def brute_force_nearest_l0(space, score_fn, x: pd.Series, Tmax=None, margin=0.0):
    """Minimum number of changed original features over every point of the space that
    ``score_fn`` (expanded rows -> logit) accepts, honouring immutable / increase-only.
    Returns (best distance or None, list of optimal raw rows)."""
    P = all_points(space)
    codes = space.codes(P)
    x_codes = space.codes(x.to_frame().T)[0]
    ok = score_fn(space.transform(P)) >= margin
    dist = (codes != x_codes).sum(axis=1)
    for l, f in enumerate(space):
        if f.immutable:
            ok &= codes[:, l] == x_codes[l]
        if f.increase_only:
            ok &= codes[:, l] >= x_codes[l]
    if Tmax is not None:
        ok &= dist <= Tmax
    if not ok.any():
        return None, []
    best = dist[ok].min()
    return int(best), P[ok & (dist == best)]


def coverable_sets(space, logit_fn, S, Tmax, margin=1e-6):
    """Distinct maximal covered sets (as bitmasks over the distinct rows of ``S``)."""
    types = S.drop_duplicates()
    X = space.codes(types)
    P = all_points(space)
    positive = logit_fn(P) >= margin
    V = space.codes(P)[positive]
    names = [f.name for f in space]
    mutable = [l for l, f in enumerate(space) if not f.immutable]
    inc = np.array([f.increase_only for f in space])
    masks = set()
    for k in range(1, Tmax + 1):
        for F in itertools.combinations(mutable, k):
            outside = np.ones(len(names), dtype=bool)
            outside[list(F)] = False
            eq = (X[None, :, :] == V[:, None, :])                      # points x types x features
            ok = eq[:, :, outside].all(axis=2)
            ok &= ~((X[None, :, :] > V[:, None, :]) & inc).any(axis=2)
            for row in ok:
                m = int(sum(1 << i for i in np.flatnonzero(row)))
                if m:
                    masks.add(m)
    return types, masks


def min_set_cover(masks, n) -> int | None:
    """Fewest masks whose union is ``(1 << n) - 1`` (BFS over unions)."""
    full = (1 << n) - 1
    if n == 0:
        return 0
    frontier, seen = {0}, {0}
    for depth in range(1, n + 1):
        nxt = set()
        for u in frontier:
            for m in masks:
                w = u | m
                if w == full:
                    return depth
                if w not in seen:
                    seen.add(w)
                    nxt.add(w)
        frontier = nxt
        if not frontier:
            return None
    return None


def brute_force_group(space, logit_fn, S, Tmax, margin=1e-6):
    """``(optimum over the explainable types, bool per distinct type: explainable)``."""
    types, masks = coverable_sets(space, logit_fn, S, Tmax, margin)
    n = len(types)
    union = 0
    for m in masks:
        union |= m
    explainable = np.array([(union >> i) & 1 for i in range(n)], dtype=bool)
    idx = np.flatnonzero(explainable)
    remap = {int(i): j for j, i in enumerate(idx)}
    sub = set()
    for m in masks:
        sub.add(int(sum(1 << remap[i] for i in range(n) if (m >> i) & 1 and i in remap)))
    return min_set_cover(sub, len(idx)), types, explainable


def real_logit(pipe):
    """Logit of the positive class from the real model's predict_proba (raw rows)."""
    def f(P):
        p = np.clip(pipe.predict_proba(P)[:, 1], 1e-300, 1 - 1e-16)
        return np.log(p) - np.log1p(-p)
    return f


def random_case(seed: int):
    """A tiny random discrete space, a fitted model, and a random S of rejected rows."""
    rng = np.random.default_rng(seed)
    n_feat = int(rng.integers(3, 6))
    cols = {}
    for j in range(n_feat):
        k = int(rng.choice([2, 2, 3, 4]))
        cats = [f"v{c}" for c in range(k)]
        cols[f"f{j}"] = pd.Categorical(rng.choice(cats, 300), categories=cats, ordered=bool(rng.integers(2)))
    X = pd.DataFrame(cols)
    names = list(X.columns)
    imm = [names[int(rng.integers(n_feat))]] if rng.random() < 0.4 else []
    ordered = [c for c in names if c not in imm and X[c].cat.ordered and len(X[c].cat.categories) > 2]
    inc = ordered[:1] if (ordered and rng.random() < 0.5) else []
    space = gcf.FeatureSpace(immutable=imm, increase_only=inc)
    Z = gcf.FeatureSpace().fit(X).transform(X)
    w = rng.normal(size=Z.shape[1]) * 2
    s = Z @ w + rng.normal(size=len(X))
    y = (s > np.quantile(s, rng.uniform(0.3, 0.7))).astype(int)
    clf = LogisticRegression(C=10) if seed % 3 else MLPClassifier((5,), max_iter=800, random_state=seed)
    pipe = make_pipeline(space, clf).fit(X, y)
    rejected = X[pipe.predict(X) == 0]
    if len(rejected) == 0:
        return None
    n = int(rng.integers(3, 9))
    S = rejected.sample(n=min(n, len(rejected)), random_state=seed, replace=False)
    Tmax = int(rng.integers(1, min(3, n_feat) + 1))
    return pipe, S, Tmax


#: :func:`random_case` fitted once per seed and process: the group tests that ask for the
#: same seeds (test_enumeration, test_closed_classes) share the fits (read only)
cached_case = functools.cache(random_case)


N = 8   # binary features x0..x7; accepted iff x0..x5 are all 1 (x6, x7 play no role)


def two_triangles():
    rows = []
    for miss in range(3):       # triangle A: one of x0..x2 is 0, (x6, x7) = (0, 0)
        r = [1] * 6 + [0, 0]
        r[miss] = 0
        rows.append(r)
    for miss in range(3, 6):    # triangle B: one of x3..x5 is 0, (x6, x7) = (1, 1)
        r = [1] * 6 + [1, 1]
        r[miss] = 0
        rows.append(r)
    cat = lambda col: pd.Categorical(col, categories=[0, 1])  # noqa: E731
    S = pd.DataFrame({f"x{j}": cat([r[j] for r in rows]) for j in range(N)})
    rng = np.random.default_rng(0)
    X = pd.DataFrame({f"x{j}": cat(rng.integers(0, 2, 200)) for j in range(N)})
    y = (X.iloc[:, :6].astype(int).sum(axis=1) == 6).astype(int)
    y.iloc[:2] = [0, 1]
    return S, X, y


def fixed_models(X, y):
    """Logistic regression and a one-neuron ReLU MLP with hand-set weights: accepted iff
    x0 + ... + x5 = 6."""
    lr = make_pipeline(gcf.FeatureSpace(), LogisticRegression()).fit(X, y)
    lr[-1].coef_ = np.array([[10.0] * 6 + [0.0, 0.0]])
    lr[-1].intercept_ = np.array([-55.0])
    nn = make_pipeline(gcf.FeatureSpace(), MLPClassifier((1,), max_iter=50, random_state=0)).fit(X, y)
    mlp = nn[-1]
    mlp.coefs_ = [np.array([[1.0]] * 6 + [[0.0], [0.0]]), np.array([[10.0]])]
    mlp.intercepts_ = [np.array([-5.0]), np.array([-5.0])]
    return {"lr": lr, "nn": nn}
