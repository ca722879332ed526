"""Tree ensembles: numpy evaluation against the models' own outputs (split rules, points
exactly on thresholds), partial evaluation, the MIP formulation with inputs fixed (every
backend), and MACE / explain_group against brute force on COMPAS (paper, 288 points)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.pipeline import make_pipeline
from sklearn.tree import DecisionTreeClassifier

import groupcf as gcf
from groupcf.embeddings import _tree_walk, add_predictor_constr, get_embedding
from groupcf.embeddings.tree_delta import TreeDelta
from groupcf.embeddings.trees import TreeConstr, TreeEnsemble, le_threshold_f32, lt_threshold_f32
from groupcf.exceptions import SolverNotInstalledError, UnsupportedModelError
from groupcf.features.domain import InputDomain
from groupcf.solvers.base import VarType

try:
    import xgboost as xgb
except ImportError:  # pragma: no cover
    xgb = None
try:
    import lightgbm as lgb
except ImportError:  # pragma: no cover
    lgb = None

# columns: one-hot group {0,1,2}, binaries 3, 4, continuous 5, 6 in [0, 1]
DOMAIN = InputDomain(np.zeros(7), np.ones(7), np.array([True] * 5 + [False] * 2), (np.array([0, 1, 2]),))
TOL = 1e-7


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = DOMAIN.sample(n, rng)
    X[: n // 4, 5] = np.round(X[: n // 4, 5], 1)      # repeated values: thresholds between them
    logit = 2 * X[:, 0] - X[:, 1] + 1.5 * X[:, 3] - X[:, 4] + 3 * (X[:, 5] - 0.5) - 2 * (X[:, 6] - 0.4) ** 2
    y = (logit + rng.normal(0, 0.7, n) > 0.5).astype(int)
    return X, y


def _models():
    X, y = _data()
    out = {
        "dt": DecisionTreeClassifier(max_depth=5, random_state=0),
        "rf": RandomForestClassifier(8, max_depth=4, random_state=0),
        "et": ExtraTreesClassifier(8, max_depth=4, random_state=0),
        "gb": GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=0),
        "hgb": HistGradientBoostingClassifier(max_iter=8, max_depth=3, random_state=0),
    }
    if xgb is not None:
        out["xgb"] = xgb.XGBClassifier(n_estimators=10, max_depth=3, random_state=0)
    if lgb is not None:
        out["lgbm"] = lgb.LGBMClassifier(n_estimators=10, num_leaves=6, verbose=-1, random_state=0)
    return {k: m.fit(X, y) for k, m in out.items()}


MODELS = _models()


def reference(model, X):
    """The model's own score: P(class 1) for averaging forests, else its raw margin."""
    X = np.asarray(X, dtype=float)
    if xgb is not None and isinstance(model, xgb.XGBClassifier):
        return model.predict(X, output_margin=True).astype(float)
    if lgb is not None and isinstance(model, lgb.LGBMClassifier):
        return model.predict(X, raw_score=True)
    if hasattr(model, "decision_function"):
        return model.decision_function(X)
    return model.predict_proba(X)[:, 1]


def score_tol(model):
    # XGBoost sums its leaves in float32
    return 1e-5 if xgb is not None and isinstance(model, xgb.XGBClassifier) else 1e-12


def _raw_thresholds(model, emb):
    """Every split value in the framework's own units (plus ours), with its column."""
    split = emb.feature >= 0
    cols, ours = emb.feature[split], emb.threshold[split]
    return cols, ours


def threshold_points(model, emb, rng):
    """Points with one continuous column exactly on / just around each threshold: ours
    (the largest value going left), the next float64 above it, and the float32 values
    next to it (sklearn / XGBoost compare in float32)."""
    cols, ours = _raw_thresholds(model, emb)
    keep = cols >= 5
    cols, ours = cols[keep], ours[keep]
    vals = [ours, np.nextafter(ours, np.inf), np.nextafter(ours, -np.inf)]
    f32 = ours.astype(np.float32)
    vals += [f32.astype(float), np.nextafter(f32, np.float32(np.inf)).astype(float),
             np.nextafter(f32, np.float32(-np.inf)).astype(float)]
    base = DOMAIN.sample(len(cols), rng)
    out = []
    for v in vals:
        Z = base.copy()
        Z[np.arange(len(cols)), cols] = np.clip(v, 0.0, 1.0)
        out.append(Z)
    return np.vstack(out)


# ---------------------------------------------------------------------------- numpy
@pytest.mark.parametrize("name", list(MODELS))
def test_score_matches_model(name):
    model = MODELS[name]
    _, emb = get_embedding(model)
    assert isinstance(emb, TreeEnsemble) and emb.n_inputs == 7
    rng = np.random.default_rng(1)
    Z = np.vstack([DOMAIN.sample(500, rng), threshold_points(model, emb, rng)])
    assert len(Z) > 500
    np.testing.assert_allclose(emb.score(Z), reference(model, Z), atol=score_tol(model), rtol=0)
    # predictions agree, with the probability threshold where the score is a probability
    p = model.predict_proba(Z)[:, 1]
    t = emb.score_threshold(0.5)
    if emb.averaging:
        np.testing.assert_allclose(emb.proba(Z), p, atol=1e-12)
        assert t == 0.5
    else:
        assert t == 0.0
        np.testing.assert_allclose(emb.proba(Z), p, atol=1e-6)
    decided = np.abs(emb.score(Z) - t) > 1e-5
    assert np.array_equal(emb.predict(Z)[decided], model.predict(Z)[decided])


def test_split_rules_exact():
    """float32(x) <= t  <=>  x <= le_threshold_f32(t);  float32(x) < s  <=>  x <= lt(s)."""
    rng = np.random.default_rng(0)
    f32 = rng.random(2000).astype(np.float32)
    t = np.concatenate([(f32[:1000].astype(float) + np.nextafter(f32[:1000], np.float32(2)).astype(float)) / 2,
                        f32[1000:].astype(float), rng.random(500)])
    le = le_threshold_f32(t)
    assert np.all(le.astype(np.float32) <= t)
    assert np.all(np.nextafter(le, np.inf).astype(np.float32) > t)
    s = rng.random(1000).astype(np.float32)
    lt = lt_threshold_f32(s.astype(float))
    assert np.all(lt.astype(np.float32) < s)
    assert np.all(np.nextafter(lt, np.inf).astype(np.float32) >= s)


def test_framework_split_rules_on_raw_thresholds():
    """Inputs equal to the frameworks' own split values go where each framework says."""
    rng = np.random.default_rng(3)
    for name, model in MODELS.items():
        _, emb = get_embedding(model)
        if name in ("dt", "rf", "et", "gb"):
            trees = [model.tree_] if name == "dt" else [e.tree_ for e in np.ravel(model.estimators_)]
            raw = [(t.feature[t.feature >= 0], t.threshold[t.feature >= 0]) for t in trees]
        else:
            continue
        for cols, thr in raw:
            keep = cols >= 5
            Z = DOMAIN.sample(int(keep.sum()), rng)
            Z[np.arange(keep.sum()), cols[keep]] = thr[keep]
            np.testing.assert_allclose(emb.score(Z), reference(model, Z), atol=1e-12)
    if xgb is not None:
        model = MODELS["xgb"]
        _, emb = get_embedding(model)
        import json
        trees = json.loads(bytes(model.get_booster().save_raw("json")))["learner"]["gradient_booster"]["model"]["trees"]
        vals = np.array([c for t in trees for c, i, lc in zip(t["split_conditions"], t["split_indices"],
                                                              t["left_children"]) if lc >= 0 and i >= 5])
        cols = np.array([i for t in trees for i, lc in zip(t["split_indices"], t["left_children"])
                         if lc >= 0 and i >= 5])
        assert len(vals)
        for v in (vals, np.nextafter(vals.astype(np.float32), np.float32(-1)).astype(float)):
            Z = DOMAIN.sample(len(vals), rng)
            Z[np.arange(len(vals)), cols] = v       # x == split value goes right (x < s fails)
            np.testing.assert_allclose(emb.score(Z), reference(model, Z), atol=1e-5)


@pytest.mark.parametrize("name", list(MODELS))
def test_partial_matches_full(name):
    _, emb = get_embedding(MODELS[name])
    rng = np.random.default_rng(2)
    X = DOMAIN.sample(200, rng)
    for _ in range(10):
        fixed = np.sort(rng.choice(7, size=rng.integers(1, 7), replace=False))
        values = X[rng.integers(len(X)), fixed]
        Xf = X.copy()
        Xf[:, fixed] = values
        free = np.setdiff1d(np.arange(7), fixed)
        part = emb.partial(fixed, values)
        assert part.n_inputs == len(free)
        assert np.sum(part.feature < 0) <= np.sum(emb.feature < 0)
        np.testing.assert_allclose(part.score(Xf[:, free]), emb.score(Xf), atol=1e-12)
    allfixed = emb.partial(np.arange(7), X[0])
    assert np.all(allfixed.feature < 0)
    np.testing.assert_allclose(allfixed.score(np.zeros((1, 0))), emb.score(X[:1]), atol=1e-12)


@pytest.mark.parametrize("name", list(MODELS))
def test_score_bounds_contain_scores(name):
    _, emb = get_embedding(MODELS[name])
    X = DOMAIN.sample(2000, 4)
    lo, hi = emb.score_bounds(DOMAIN.lb, DOMAIN.ub)
    s = emb.score(X)
    assert lo <= s.min() + 1e-12 and s.max() <= hi + 1e-12
    # a box fixing column 3 to 1: bounds of the folded model, still valid
    lb = DOMAIN.lb.copy()
    lb[3] = 1.0
    lo2, hi2 = emb.score_bounds(lb, DOMAIN.ub)
    X[:, 3] = 1.0
    s = emb.score(X)
    assert lo <= lo2 <= s.min() + 1e-12 and s.max() <= hi2 + 1e-12 <= hi + 2e-12


# ---------------------------------------------------------------------------- MIP, fixed inputs
def new_backend(name, **options):
    from groupcf.solvers import make_backend

    try:
        return make_backend(name, **options)
    except SolverNotInstalledError as exc:
        pytest.skip(f"backend {name!r} not installed: {exc}")


def add_inputs(backend, domain):
    vtype = [VarType.BINARY if i else VarType.CONTINUOUS for i in domain.integer]
    return np.asarray(backend.add_vars(domain.n, lb=domain.lb, ub=domain.ub, vtype=vtype))


def _fixed_inputs(backend_name, model, n_points=50, max_size=1500, seed=11):
    X = DOMAIN.sample(n_points, seed)
    ref = reference(model, X)
    _, emb = get_embedding(model)
    i = 0
    while i < len(X):
        be = new_backend(backend_name)
        copies = []
        while i < len(X):
            x = add_inputs(be, DOMAIN)
            be.set_bounds(x, X[i], X[i])
            copies.append((i, add_predictor_constr(be, model, x, DOMAIN)))
            i += 1
            per_copy = max(be.num_vars, be.num_rows) / len(copies)
            if max(be.num_vars, be.num_rows) + 1.5 * per_copy > max_size:
                break
        sol = be.solve()
        assert sol.status.has_solution, sol
        for k, c in copies:
            assert isinstance(c, TreeConstr)
            assert sol.x[c.score] == pytest.approx(ref[k], abs=max(TOL, score_tol(model)))
            assert c.get_error(sol) <= 1e-6
            # the start values of the record reproduce the solution's leaves and levels
            idx, vals = c.start_values(X[k])
            np.testing.assert_allclose(np.round(sol.x[idx[1:]]), vals[1:], atol=1e-9)


@pytest.mark.parametrize("name", list(MODELS))
def test_fixed_inputs_highs(name):
    _fixed_inputs("highs", MODELS[name])


@pytest.mark.parametrize("backend_name", ["pyomo", "gurobi"])
def test_fixed_inputs_other_backends(backend_name):
    _fixed_inputs(backend_name, MODELS["gb"])


def test_max_score_and_margin_row():
    """Maximising the score over the domain equals brute force over a fine grid of
    the discrete columns and the thresholds' sides; ``lo`` excludes everything below."""
    model = MODELS["rf"]
    _, emb = get_embedding(model)
    be = new_backend("highs", mip_gap=0.0)
    x = add_inputs(be, DOMAIN)
    be.add_row(x[:3], np.ones(3), 1.0, 1.0)
    c = emb.add_to(be, x, DOMAIN)
    be.set_objective([c.score], [1.0], sense="max")
    sol = be.solve()
    # brute force: every one-hot/binary combination x candidate values of the continuous
    thr = np.unique(emb.threshold[emb.feature >= 5])
    cand = np.unique(np.concatenate([[0.0, 1.0], np.clip(thr, 0, 1), np.clip(np.nextafter(thr, 2), 0, 1)]))
    import itertools
    pts = [list(np.eye(3)[g]) + [b3, b4, v5, v6] for g in range(3) for b3 in (0, 1) for b4 in (0, 1)
           for v5, v6 in itertools.product(cand, cand)]
    best = emb.score(np.array(pts)).max()
    assert sol.objective == pytest.approx(best, abs=1e-7)
    assert emb.score(sol.x[x])[0] == pytest.approx(best, abs=1e-7)


def test_unsupported_models_raise():
    rng = np.random.default_rng(0)
    X = rng.random((90, 3))
    y3 = np.arange(90) % 3
    for m in [RandomForestClassifier(3).fit(X, y3), GradientBoostingClassifier(n_estimators=3).fit(X, y3),
              HistGradientBoostingClassifier(max_iter=3).fit(X, y3)]:
        with pytest.raises(UnsupportedModelError):
            get_embedding(m)
    with pytest.raises(UnsupportedModelError, match="exponential"):
        get_embedding(GradientBoostingClassifier(loss="exponential", n_estimators=3).fit(X, y3 > 0))
    Xc = np.c_[X[:, :2], rng.integers(0, 4, 90)]
    hgb = HistGradientBoostingClassifier(max_iter=5, categorical_features=[2], min_samples_leaf=2)
    hgb.fit(Xc, (Xc[:, 2] % 2 == 0).astype(int))
    with pytest.raises(UnsupportedModelError, match="categorical"):
        get_embedding(hgb)
    if xgb is not None:
        with pytest.raises(UnsupportedModelError):
            get_embedding(xgb.XGBClassifier(n_estimators=3).fit(X, y3))
    if lgb is not None:
        with pytest.raises(UnsupportedModelError):
            get_embedding(lgb.LGBMClassifier(n_estimators=3, verbose=-1).fit(X, y3))


# ---------------------------------------------------------------------------- COMPAS
COMPAS_MODELS = {
    "dt": lambda: DecisionTreeClassifier(max_depth=6, random_state=0),
    "rf": lambda: RandomForestClassifier(50, max_depth=6, random_state=0),
    "gb": lambda: GradientBoostingClassifier(n_estimators=50, max_depth=3, random_state=0),
    "xgb": lambda: xgb.XGBClassifier(n_estimators=50, max_depth=3, random_state=0),
    "lgbm": lambda: lgb.LGBMClassifier(n_estimators=50, num_leaves=8, verbose=-1, random_state=0),
}


@pytest.fixture(scope="module")
def compas_pipes(compas_paper):
    X_tr, X_te, y_tr, _ = compas_paper.split(test_size=0.5, random_state=0)
    pipes = {}
    for name, make in COMPAS_MODELS.items():
        if (name == "xgb" and xgb is None) or (name == "lgbm" and lgb is None):
            continue
        pipes[name] = make_pipeline(gcf.FeatureSpace(), make()).fit(X_tr, y_tr)
    return X_te, pipes


def real_margin(pipe):
    """Expanded rows -> the real model's 'accepted' margin: P(1) - 0.5 for averaging
    forests, else the raw margin, and below 0 wherever ``predict`` says rejected (brute
    force never uses our embedding)."""
    clf = pipe[-1]
    averaging = isinstance(clf, (DecisionTreeClassifier, RandomForestClassifier, ExtraTreesClassifier))

    def fn(Z):
        Z = np.asarray(Z, dtype=float)
        out = clf.predict_proba(Z)[:, 1] - 0.5 if averaging else reference(clf, Z)
        accepted = clf.predict(Z) == clf.classes_[1]
        return np.where(accepted, out, np.minimum(out, -1.0))
    return fn


@pytest.mark.parametrize("name", list(COMPAS_MODELS))
def test_compas_mace_matches_brute_force(group_ref, compas_pipes, name):
    X_te, pipes = compas_pipes
    if name not in pipes:
        pytest.skip(f"{name} not installed")
    pipe = pipes[name]
    assert pipe[0].n_features_out_ == 15
    S = X_te[pipe.predict(X_te) == 0].drop_duplicates().head(10)
    assert len(S) == 10
    fn = real_margin(pipe)
    for _, x in S.iterrows():
        best, _ = group_ref.brute_force_nearest_l0(pipe[0], fn, x, margin=1e-6)
        exp = gcf.explain(x, pipe, method="mace", distance="l0")
        assert exp.is_optimal
        cf = exp.counterfactuals.iloc[[0]]
        assert pipe.predict(cf)[0] == 1
        changed = [f.name for f in pipe[0] if str(cf.iloc[0][f.name]) != str(x[f.name])]
        assert len(changed) == best, (x.to_dict(), changed, best)


# colgen at |S| = 20, 50 and Tmax = 2, 3; the compact MIP at |S| = 20
# (the costliest, |S| = 50 with Tmax = 2 and the compact MIP on forests, run in make test-all)
GROUP_CASES = [("colgen", n, t) for n in (20, 50) for t in (2, 3)] + [("compact", 20, 2), ("compact", 20, 3)]
SLOW_GROUP_CASES = {("gb", "colgen", 50, 2), ("rf", "compact", 20, 2), ("rf", "compact", 20, 3)}


def _group_params():
    return [pytest.param(name, *case, marks=[pytest.mark.slow] if (name, *case) in SLOW_GROUP_CASES else [],
                         id=f"{name}-{'-'.join(map(str, case))}")
            for name in ["dt", "rf", "gb", "xgb", "lgbm"] for case in GROUP_CASES]


@pytest.mark.parametrize("name,method,size,tmax", _group_params())
def test_compas_group_matches_brute_force(group_ref, compas_pipes, name, method, size, tmax):
    X_te, pipes = compas_pipes
    if name not in pipes:
        pytest.skip(f"{name} not installed")
    pipe = pipes[name]
    space = pipe[0]
    rejected = X_te[pipe.predict(X_te) == 0]
    assert len(rejected) >= size
    S = rejected.sample(size, random_state=0)
    fn = real_margin(pipe)
    opt, types, explainable = group_ref.brute_force_group(space, lambda P: fn(space.transform(P)), S, tmax)
    res = gcf.explain_group(S, pipe, Tmax=tmax, method=method, progress=False,
                            allow_partial=not explainable.all())
    assert res.is_optimal
    assert res.n_explanations == opt
    res.validate()
    assert all(pipe.predict(res.counterfactuals) == 1)


@pytest.mark.parametrize("name", ["rf", "gb"])
@pytest.mark.parametrize("distance", ["l1", {"l0": 0.5, "linf": 0.5}])
def test_compas_mace_other_distances_and_actionability(group_ref, compas_paper, name, distance):
    """l1 and l0+linf with immutable and increase-only features: the MIP (with the numpy
    upper bound as start and radius) equals brute force over the 288 points."""
    from groupcf.formulations.distances import feature_distances, parse_distance

    X_tr, X_te, y_tr, _ = compas_paper.split(test_size=0.5, random_state=0)
    ordered = [c for c in X_tr.columns if getattr(X_tr[c].dtype, "ordered", False)]
    space = gcf.FeatureSpace(immutable=["Race"], increase_only=ordered[:1])
    pipe = make_pipeline(space, COMPAS_MODELS[name]()).fit(X_tr, y_tr)
    P = group_ref.all_points(space)
    ok = real_margin(pipe)(space.transform(P)) >= 1e-6
    codes_P = space.codes(P)
    dist = parse_distance(distance)
    inc = [list(space.feature_names_in_).index(c) for c in ordered[:1]]
    race = list(space.feature_names_in_).index("Race")
    S = X_te[pipe.predict(X_te) == 0].drop_duplicates().head(6)
    for _, x in S.iterrows():
        xc = space.codes(x.to_frame().T)[0]
        allowed = ok & (codes_P[:, race] == xc[race])
        for i in inc:
            allowed &= codes_P[:, i] >= xc[i]
        d = dist.aggregate(feature_distances(space, x, P))
        if not allowed.any():
            continue
        exp = gcf.explain(x, pipe, method="mace", distance=distance)
        assert exp.is_optimal and pipe.predict(exp.counterfactuals.iloc[[0]])[0] == 1
        assert exp.distances[0] == pytest.approx(d[allowed].min(), abs=1e-9)


def _side_values(f, thresholds):
    """Raw values just on each side of each scaled threshold (as the model sees them
    after encoding), plus nothing else: the candidates a nearest point can take."""
    rng = f.high - f.low
    def enc(r):
        return (r - f.low) / rng

    out = set()
    for t in thresholds:
        r = f.low + t * rng
        if f.integer:
            out.update({math.floor(r), math.floor(r) + 1})
            continue
        lo, hi = r, r
        while enc(lo) > t:
            lo = np.nextafter(lo, -np.inf)
        while enc(hi) <= t:
            hi = np.nextafter(hi, np.inf)
        out.update({float(lo), float(hi)})
    return sorted(v for v in out if f.low <= v <= f.high)


@pytest.mark.parametrize("seed", range(4))
def test_mace_continuous_features_match_brute_force(seed):
    """Numeric passthrough features (one real, one integer): MACE l1 and l0+l1 equal the
    best point over every combination of categories and values on either side of every
    threshold (the nearest point sits at a cell boundary), and the real model accepts it."""
    import itertools

    import pandas as pd

    from groupcf.formulations.distances import feature_distances, parse_distance

    rng = np.random.default_rng(seed)
    n = 400
    X = pd.DataFrame({"a": rng.normal(size=n).round(3), "k": rng.integers(0, 30, n),
                      "c": pd.Categorical(rng.choice(["u", "v", "w"], n))})
    y = ((X["a"] + X["k"] / 10 + (X["c"] == "w") * 1.0 + rng.normal(0, 0.5, n)) > 2).astype(int)
    model = RandomForestClassifier(6, max_depth=3, random_state=seed) if seed % 2 else \
        GradientBoostingClassifier(n_estimators=8, max_depth=2, random_state=seed)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), model).fit(X, y)
    space = pipe[0]
    _, emb = get_embedding(pipe[-1])
    grids = []
    for f in space:
        if f.encoding == "continuous":
            grids.append(_side_values(f, emb.threshold[emb.feature == f.columns[0]]))
        else:
            grids.append(list(f.categories))
    for _, x in X[pipe.predict(X) == 0].head(4).iterrows():
        vals = [sorted(set(g) | {x[f.name]}) for g, f in zip(grids, space)]
        P = pd.DataFrame(list(itertools.product(*vals)), columns=[f.name for f in space])
        P["c"] = pd.Categorical(P["c"], categories=X["c"].cat.categories)
        ok = pipe.predict(P) == 1
        if not ok.any():
            continue
        for distance in ("l1", {"l0": 0.5, "l1": 0.5}, {"l0": 0.9, "l1": 0.1}):   # the last: single-change scan
            d = parse_distance(distance).aggregate(feature_distances(space, x, P))
            exp = gcf.explain(x, pipe, method="mace", distance=distance)
            assert exp.is_optimal
            assert pipe.predict(exp.counterfactuals.iloc[[0]])[0] == 1
            assert exp.distances[0] == pytest.approx(d[ok].min(), abs=1e-6), (x.to_dict(), distance)


@pytest.mark.parametrize("name", list(MODELS))
def test_delta_evaluator_partial_walks_match_full_rows(name, walk):
    """Only the trees whose path of z0 tests a changed column are walked, from the first
    such node: the scores equal full-row scores for random column sets (values on, above
    and below the thresholds included), one call with many groups and per group."""
    _, emb = get_embedding(MODELS[name])
    rng = np.random.default_rng(3)
    points = np.vstack([DOMAIN.sample(40, rng), threshold_points(MODELS[name], emb, rng)])
    for z0 in DOMAIN.sample(4, rng):
        ev = emb.delta_evaluator(z0)
        groups = []
        for _ in range(25):
            cols = np.sort(rng.choice(7, size=int(rng.integers(0, 4)), replace=False))
            groups.append((cols, points[rng.choice(len(points), int(rng.integers(0, 30)))][:, cols]))
        out = ev.score_groups(groups)
        assert len(out) == len(groups)
        for (cols, Zc), s in zip(groups, out):
            Z = np.repeat(z0[None, :], len(Zc), axis=0)
            Z[:, cols] = Zc
            np.testing.assert_allclose(s, emb.score(Z), atol=1e-12, rtol=0)
            np.testing.assert_allclose(ev.score(cols, Zc), s, atol=1e-12, rtol=0)


@pytest.mark.parametrize("name", ["rf", "gb"])
def test_delta_evaluator_matches_score(name):
    _, emb = get_embedding(MODELS[name])
    X = DOMAIN.sample(50, 5)
    ev = emb.delta_evaluator(X[0])
    groups = [(np.array([5]), X[:10, [5]]), (np.array([3, 6]), X[10:30, [3, 6]]), (np.array([], dtype=int), np.zeros((2, 0)))]
    out = ev.score_groups(groups)
    for (cols, Zc), s in zip(groups, out):
        Z = np.repeat(X[:1], len(Zc), axis=0)
        Z[:, cols] = Zc
        np.testing.assert_allclose(s, emb.score(Z), atol=1e-12)


def test_grid_threshold_keeps_the_test_on_the_grid():
    """On an integer grid (raw integers scaled to [0, 1]) the snapped threshold sends
    every grid value the same way as the original, and sits half a step from them."""
    from groupcf.embeddings.trees import grid_threshold

    rng = np.random.default_rng(0)
    for low, high in [(0.0, 30.0), (17.0, 90.0), (0.0, 99999.0), (-5.0, 5.0)]:
        step = 1.0 / (high - low)
        grid = (np.arange(low, high + 1) - low) / (high - low)
        ts = np.concatenate([le_threshold_f32(rng.choice(grid, 20).astype(np.float32).astype(float)),
                             le_threshold_f32(rng.random(20))])
        for t in ts:
            t2 = grid_threshold(t, low, high)
            assert np.array_equal(grid <= t, grid <= t2)
            assert np.min(np.abs(grid - t2)) >= 0.5 * step * (1 - 1e-9)


def test_query_a_hair_below_a_threshold():
    """scikit-learn splits two training values 2e-7 apart: the threshold sits 1e-7 above
    the query, inside the solver's tolerance. The MIP must count that move as a change
    (l0) and the decoding must keep it (it is far below the change tolerance); before the
    fix the move was dropped and MACE raised ValidationError."""
    a = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.5 + 2e-7, 0.6, 0.7, 0.8, 0.9, 1.0])
    X = pd.DataFrame({"a": a})
    y = (a > 0.5).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"),
                         DecisionTreeClassifier(random_state=0)).fit(X, y)
    t = pipe[-1].tree_.threshold[pipe[-1].tree_.feature == 0]
    x = X.iloc[5]
    assert np.any(np.abs(t - 0.5) < 2e-7)                       # the threshold is that close
    for dist in ("l0", "l1"):
        e = gcf.explain(x, pipe, method="mace", distance=dist)
        cf = e.counterfactuals.iloc[[0]]
        assert e.is_optimal and pipe.predict(cf)[0] == 1
        assert e.changes[0] == ["a"]
        assert 0 < cf.iloc[0]["a"] - 0.5 < 2e-7
    res = gcf.explain_group(X.iloc[[5]], pipe, Tmax=1, progress=False)
    assert res.is_optimal and res.n_explanations == 1
    res.validate()


def test_snap_to_cells_when_a_raw_float_is_much_finer_than_a_scaled_one():
    """An LSVT feature (range 2118, the threshold at raw -14.4): one float of the raw value
    moves the scaled value by ~1e-18, far below one of its floats, so stepping one raw
    float at a time (64 steps) never re-entered the cell after rounding the solver's value
    to 9 decimals put it 1e-10 past the threshold (MACE raised ValidationError); the
    bisection does."""
    from groupcf.single.snap import snap_to_cells

    low, high = -2116.7358554548264, 1.4016187324506195
    space = gcf.FeatureSpace(numeric="passthrough").fit(pd.DataFrame({"a": [low, -14.0, high]}))
    hi = 0.9925529658794402                           # the tree's threshold (scaled)
    v = np.array([0.992552966])                       # the solver's value rounded to 9 decimals
    out = snap_to_cells(space, v, np.array([0.0]), np.array([hi]))
    raw = space.inverse_transform(out[None, :]).iloc[0]["a"]
    assert space.transform(pd.DataFrame({"a": [raw]}))[0, 0] <= hi
    assert hi - out[0] < 1e-12


@pytest.mark.parametrize("kind", ["tree", "logistic"])
def test_mace_keeps_a_value_outside_the_training_range(kind):
    """A test row above the training maximum on an irrelevant feature: MACE must not force
    that feature back into the range (which cost distance, and with trees made the numpy
    upper bound's radius cut off every MIP point: NoCounterfactualError on an Arrhythmia
    forest although PSO found counterfactuals)."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 200), "b": rng.uniform(0, 1, 200)})
    y = (X.a > 0.6).astype(int)
    clf = DecisionTreeClassifier(max_depth=3, random_state=0) if kind == "tree" else LogisticRegression(C=100)
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), clf).fit(X, y)
    x = pd.Series({"a": 0.3, "b": 1.5}, name="q")                 # b far above its range
    for dist in ("l1", "l0"):
        e = gcf.explain(x, pipe, method="mace", distance=dist)
        cf = e.counterfactuals.iloc[0]
        assert e.is_optimal and pipe.predict(e.counterfactuals)[0] == 1
        assert e.changes[0] == ["a"] and cf["b"] == 1.5


@pytest.mark.parametrize("name", list(MODELS))
def test_check_reads_predict_from_predict_proba(name):
    """Tree converters state that the model's ``predict`` follows ``predict_proba``'s argmax,
    so ``TrainedModel.check`` makes one pass: its verdict is the two-call verdict
    (probability >= 0.5 and ``predict`` positive) on every row, thresholds and exact ties
    of a forest included, and it never accepts a row ``predict`` rejects."""
    from groupcf.models import TrainedModel
    model = MODELS[name]
    _, emb = get_embedding(model)
    assert emb.predict_follows_proba
    rng = np.random.default_rng(7)
    X = np.vstack([DOMAIN.sample(400, rng), threshold_points(model, emb, rng)])
    p, ok = TrainedModel(model, None, emb).check(X)
    p2 = model.predict_proba(X)[:, 1]
    two_calls = (p2 >= 0.5) & (model.predict(X) == model.classes_[1])
    np.testing.assert_array_equal(p, p2)
    assert not (ok & ~two_calls).any()
    decided = np.abs(p2 - 0.5) > 1e-12
    np.testing.assert_array_equal(ok[decided], two_calls[decided])
    if name in ("rf", "et", "xgb", "lgbm", "hgb"):          # predict is that argmax exactly
        np.testing.assert_array_equal(ok, two_calls)


#: the walks of ``TreeDelta.score_rows``: numpy, and the compiled loop when numba is installed
WALKS = ["numpy"] + (["compiled"] if _tree_walk.COMPILED else [])


@pytest.fixture(params=WALKS)
def walk(request, monkeypatch):
    """Runs a test once per walk of ``TreeDelta.score_rows``."""
    monkeypatch.setattr(TreeDelta, "compiled", request.param == "compiled")
    return request.param


@pytest.mark.parametrize("name", list(MODELS))
def test_delta_score_rows_mixed_masks_match_full_rows(name, walk):
    """``TreeDelta.score_rows`` with a different changed-column mask per row in one call
    (GeCo's batches): empty masks, masks that mark unchanged columns too, and rows sharing
    a mask; the start level per tree is the least over the mask's columns. Scores equal
    the full-row scores on every tree type (up to summation order)."""
    _, emb = get_embedding(MODELS[name])
    rng = np.random.default_rng(11)
    points = np.vstack([DOMAIN.sample(60, rng), threshold_points(MODELS[name], emb, rng)])
    for z0 in DOMAIN.sample(3, rng):
        ev = emb.delta_evaluator(z0)
        m = 300
        changed = rng.random((m, 7)) < rng.choice([0.0, 0.15, 0.4, 0.8], size=(m, 1))
        changed[1::2] = changed[::2]                          # rows sharing a mask
        moved = changed & (rng.random((m, 7)) < 0.8)          # some marked columns keep z0's value
        Z = np.where(moved, points[rng.integers(len(points), size=m)], z0[None, :])
        np.testing.assert_allclose(ev.score_rows(Z, changed), emb.score(Z), atol=1e-12, rtol=0)


def test_delta_score_rows_leaves_marked_below_minus_one(walk):
    """A leaf may be marked by any negative feature (scikit-learn writes -2): the scores
    stay exact whichever columns are marked changed."""
    # one stump on column 1 and one bare leaf (feature -2), two inputs
    ens = TreeEnsemble(2, feature=[1, -2, -2, -2], threshold=[0.5, 0, 0, 0], left=[1, -1, -1, -1],
                       right=[2, -1, -1, -1], value=[0.0, 1.0, 3.0, 7.0], roots=[0, 3])
    z0 = np.array([0.2, 0.2])
    ev = ens.delta_evaluator(z0)
    Z = np.array([[0.2, 0.9], [0.9, 0.2], [0.9, 0.9]])
    for changed in ([[False, True], [True, False], [True, True]], [[True, True]] * 3):
        np.testing.assert_allclose(ev.score_rows(Z, np.array(changed)), ens.score(Z), atol=1e-12, rtol=0)


def _tree_by_tree_delta(ens, z0, Z, changed):
    """Reference for ``TreeDelta.score_rows``: per row, every tree whose path of ``z0`` tests a
    changed column walked in full from its root, the leaf-value differences summed in tree
    order (the sum the evaluator must reproduce bit for bit)."""
    def leaf(k, z):
        n = ens.roots[k]
        while ens.feature[n] >= 0:
            n = ens.left[n] if z[ens.feature[n]] <= ens.threshold[n] else ens.right[n]
        return n

    def tested(k, z):
        n, cols = ens.roots[k], set()
        while ens.feature[n] >= 0:
            cols.add(int(ens.feature[n]))
            n = ens.left[n] if z[ens.feature[n]] <= ens.threshold[n] else ens.right[n]
        return cols

    paths = [tested(k, z0) for k in range(ens.n_trees)]
    v0 = np.array([ens.value[leaf(k, z0)] for k in range(ens.n_trees)])
    s0 = float(ens.base + ens.scale * v0.sum())
    out = np.empty(len(Z))
    for i, (z, ch) in enumerate(zip(Z, changed)):
        cols, acc = set(np.flatnonzero(ch).tolist()), 0.0
        for k in range(ens.n_trees):
            if paths[k] & cols:
                acc += ens.value[leaf(k, z)] - v0[k]
        out[i] = s0 + ens.scale * acc
    return out


@pytest.mark.parametrize("name", ["rf", "gb"])
def test_delta_score_rows_equals_tree_by_tree_sum_bit_for_bit(name, walk):
    """The pairs (row, affected tree) are walked sorted by start level (each only from its
    own level down); the scores are still each row's differences summed in tree order,
    equal bit for bit to a tree-by-tree walk, with start levels mixed in one call."""
    _, emb = get_embedding(MODELS[name])
    rng = np.random.default_rng(17)
    points = np.vstack([DOMAIN.sample(40, rng), threshold_points(MODELS[name], emb, rng)])
    z0 = DOMAIN.sample(1, rng)[0]
    m = 60
    changed = rng.random((m, 7)) < rng.choice([0.0, 0.15, 0.4, 0.8], size=(m, 1))
    Z = np.where(changed, points[rng.integers(len(points), size=m)], z0[None, :])
    got = emb.delta_evaluator(z0).score_rows(Z, changed)
    assert np.array_equal(got, _tree_by_tree_delta(emb, z0, Z, changed))


def test_delta_score_rows_deeper_than_an_int8_level(walk):
    """Start levels past 127 (a chain of 300 splits, on column 0 down to level 199 and on
    column 1 below, next to a stump on column 1): the levels are kept in a wide enough
    integer type and the scores stay exact."""
    d = 300
    feature = [0] * 200 + [1] * (d - 200) + [-2] * (d + 1) + [1, -2, -2]
    threshold = [(j + 1) / (d + 1) for j in range(d)] + [0.0] * (d + 1) + [0.5, 0.0, 0.0]
    left = [d + j for j in range(d)] + [-1] * (d + 1) + [2 * d + 2, -1, -1]
    right = [j + 1 for j in range(d - 1)] + [2 * d] + [-1] * (d + 1) + [2 * d + 3, -1, -1]
    value = [0.0] * d + [float(j) for j in range(d + 1)] + [0.0, 0.25, 0.5]
    ens = TreeEnsemble(2, feature=feature, threshold=threshold, left=left, right=right, value=value,
                       roots=[0, 2 * d + 1])
    assert ens.depth == d
    z0 = np.array([0.999, 0.999])                     # column 1 first tested at level 200
    Z = np.array([[0.999, 0.8], [0.5, 0.999], [0.998, 0.7], [0.0, 0.2], [0.999, 0.999], [0.999, 0.1]])
    changed = np.array([[False, True], [True, False], [True, True], [True, True], [True, True], [False, True]])
    ev = ens.delta_evaluator(z0)
    assert ev._first[1, 0] == 200
    got = ev.score_rows(Z, changed)
    np.testing.assert_allclose(got, ens.score(Z), atol=1e-12, rtol=0)
    assert np.array_equal(got, _tree_by_tree_delta(ens, z0, Z, changed))


@pytest.mark.parametrize("name", list(MODELS))
def test_delta_score_from_anchors_matches_full_rows(name):
    """``TreeDelta.score_from``: rows walked from other reference rows than ``z0`` (GeCo's
    parents; each row differs from its anchor in a few columns, on / around thresholds
    included, or not at all) score exactly as full rows on every tree type; the anchors'
    own scores too, and ``take`` / ``join`` keep them."""
    _, emb = get_embedding(MODELS[name])
    rng = np.random.default_rng(5)
    points = np.vstack([DOMAIN.sample(60, rng), threshold_points(MODELS[name], emb, rng)])
    ev = emb.delta_evaluator(DOMAIN.sample(1, rng)[0])
    A = points[rng.choice(len(points), 6, replace=False)]
    anchors = ev.anchors(A[:4]).join(ev.anchors(A[4:])).take([5, 0, 3, 1, 2, 4])
    A = A[[5, 0, 3, 1, 2, 4]]
    np.testing.assert_allclose(anchors.score, emb.score(A), atol=1e-12, rtol=0)
    m = 400
    ids = rng.integers(len(A), size=m)
    moved = rng.random((m, 7)) < rng.choice([0.0, 0.15, 0.5], size=(m, 1))
    Z = np.where(moved, points[rng.integers(len(points), size=m)], A[ids])
    np.testing.assert_allclose(ev.score_from(Z, anchors, ids), emb.score(Z), atol=1e-12, rtol=0)


def test_tree_nodes_must_be_one_block_per_tree():
    """Leaf cells and pruning tell a node's tree by its index: a tree reaching into another
    tree's block, or roots out of order, is refused with the tree named."""
    kw = dict(threshold=[0.5, 0, 0, 0.5, 0, 0], value=[0.0, 1.0, 2.0, 0.0, 3.0, 4.0])
    ok = TreeEnsemble(1, feature=[0, -1, -1, 0, -1, -1], left=[1, -1, -1, 4, -1, -1],
                      right=[2, -1, -1, 5, -1, -1], roots=[0, 3], **kw)
    assert ok.depth == 1
    with pytest.raises(ValueError, match="tree 0 reaches a node outside its block"):
        TreeEnsemble(1, feature=[0, -1, -1, 0, -1, -1], left=[4, -1, -1, 1, -1, -1],
                     right=[2, -1, -1, 5, -1, -1], roots=[0, 3], **kw)
    with pytest.raises(ValueError, match="roots must be increasing"):
        TreeEnsemble(1, feature=[0, -1, -1, 0, -1, -1], left=[1, -1, -1, 4, -1, -1],
                     right=[2, -1, -1, 5, -1, -1], roots=[3, 0], **kw)
