"""GeCo (genetic counterfactuals): known optima, partial evaluation, black boxes,
actionability, determinism."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder

import groupcf as gcf
from groupcf import plaf as p
from groupcf.embeddings.base import Embedding
from groupcf.exceptions import InvalidInputError, NoCounterfactualError, NotRejectedError
from groupcf.single.geco import GeCo, _Scorer, decode, explain_geco, geco_distance


def conjunction(r: int, n_features: int = 16, seed: int = 0):
    """GeCo's synthetic conjunction classifier (paper §6.4): positive iff f0..f{r-1} all
    equal "b". A Pipeline(FeatureSpace, MLPClassifier) whose one hidden ReLU layer counts
    the satisfied literals k and whose logit interpolates p(k) = (k+1)/(2(r+1)) for k < r
    (< 0.5) and p(r) = 0.9."""
    rng = np.random.default_rng(seed)
    cats = list("abc")
    X = pd.DataFrame({f"f{i}": pd.Categorical(rng.choice(cats, 300), categories=cats)
                      for i in range(n_features)})
    space = gcf.FeatureSpace().fit(X)
    cols = [space[f"f{i}"].columns[1] for i in range(r)]
    W1 = np.zeros((r, space.n_features_out_))
    W1[:, cols] = 1.0
    b1 = -np.arange(r, dtype=float)                 # h_j = relu(k - j)
    probs = np.array([(k + 1) / (2 * (r + 1)) for k in range(r)] + [0.9])
    L = np.log(probs / (1 - probs))
    slopes = np.diff(L)
    c = np.r_[slopes[0], np.diff(slopes)]           # sum_j c_j relu(k - j) = L(k) - L(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = MLPClassifier(hidden_layer_sizes=(r,), max_iter=1).fit(
            space.transform(X)[:40], np.arange(40) % 2)
    mlp.coefs_ = [W1.T.copy(), c[:, None].copy()]
    mlp.intercepts_ = [b1, np.array([L[0]])]
    pipe = Pipeline([("space", space), ("clf", mlp)])
    x = pd.DataFrame({f"f{i}": pd.Categorical(["a"], categories=cats) for i in range(n_features)}).iloc[0]
    return X, pipe, x


# ====================================================================== known optimum
@pytest.mark.parametrize("r", range(1, 9))
def test_conjunction_classifier_optimum(r):
    X, pipe, x = conjunction(r)
    # the construction is right: p(k) below 0.5 until all r literals hold
    probe = pd.DataFrame([x] * (r + 1)).reset_index(drop=True).astype(X.dtypes.to_dict())
    for k in range(r + 1):
        for i in range(k):
            probe.loc[probe.index[k], f"f{i}"] = "b"
    assert (pipe.predict(probe) == ([0] * r + [1])).all()

    exp = GeCo(pipe, X).explain(x, random_state=r)
    best = exp.counterfactuals.iloc[0]
    assert sorted(exp.changes[0]) == sorted(f"f{i}" for i in range(r))
    assert all(best[f"f{i}"] == "b" for i in range(r))
    assert exp.stats["stopped_by"] == "converged"
    assert (pipe.predict(exp.counterfactuals) == 1).all()
    assert len(exp.counterfactuals) == 5
    assert exp.distances == sorted(exp.distances)


# ====================================================================== evaluation
def _random_candidates(geco, rng, m=300, p_change=0.4):
    dom = geco.domain
    M = rng.random((m, len(dom))) < p_change
    M[np.arange(m), rng.integers(len(dom), size=m)] = True
    V = np.full(M.shape, -1, dtype=np.int32)
    for l, f in enumerate(dom.features):
        r = np.flatnonzero(M[:, l])
        V[r, l] = rng.integers(f.size, size=len(r))
    return M, V


@pytest.mark.parametrize("kind", ["lr", "mlp"])
def test_partial_evaluation_equals_full_evaluation(geco_toy, kind):
    pipe = geco_toy.toy_pipe(kind)
    X, _ = geco_toy.toy()
    geco = GeCo(pipe, X)
    rng = np.random.default_rng(1)
    x = geco_toy.rejected(pipe).iloc[0]
    z0 = pipe[0].transform(x.to_frame().T)[0]
    sc = _Scorer(geco.domain, x, z0, geco.embedding, None, None, 0.5, "partial")
    M, V = _random_candidates(geco, rng)
    rows = decode(geco.domain, x, M, V)
    Z = pipe[0].transform(rows)
    assert np.array_equal(sc.encode(M, V), Z)              # Δ-tables == FeatureSpace
    partial = sc.partial_scores(M, V)
    full = geco.embedding.score(Z)
    np.testing.assert_allclose(partial, full, rtol=0, atol=1e-9)
    real = pipe.predict_proba(rows)[:, 1]
    np.testing.assert_allclose(sc(M, V)[0], real, rtol=0, atol=1e-9)
    if kind == "lr":
        np.testing.assert_allclose(partial, pipe.decision_function(rows), rtol=0, atol=1e-9)
    # the scorer's per-set delta evaluation is Embedding.partial over the changed columns
    feats = np.flatnonzero(M[0])
    cols = np.concatenate([geco.domain.features[l].cols for l in feats])
    fixed_idx = np.setdiff1d(np.arange(len(z0)), cols)
    Zc = Z[:5][:, cols]
    np.testing.assert_allclose(sc.delta.score(cols, Zc),
                               geco.embedding.partial(fixed_idx, z0[fixed_idx]).score(Zc), atol=1e-9)


class _Wrapped(Embedding):
    """An embedding that is not a ReLUNetwork (exercises the generic partial path)."""

    def __init__(self, inner):
        self.inner = inner

    @property
    def n_inputs(self):
        return self.inner.n_inputs

    def score(self, Z):
        return self.inner.score(Z)

    def partial(self, fixed_idx, fixed_values):
        return _Wrapped(self.inner.partial(fixed_idx, fixed_values))

    def add_to(self, *a, **k):  # pragma: no cover
        raise NotImplementedError


def test_generic_embedding_partial_path(geco_toy):
    pipe = geco_toy.toy_pipe("mlp")
    X, _ = geco_toy.toy()
    geco = GeCo(pipe, X)
    x = geco_toy.rejected(pipe).iloc[1]
    z0 = pipe[0].transform(x.to_frame().T)[0]
    M, V = _random_candidates(geco, np.random.default_rng(2))
    generic = _Scorer(geco.domain, x, z0, _Wrapped(geco.embedding), None, None, 0.5, "partial")
    s = generic.partial_scores(M, V)
    np.testing.assert_allclose(s, geco.embedding.score(generic.encode(M, V)), rtol=0, atol=1e-9)


@pytest.mark.parametrize("evaluation", ["partial", "full"])
def test_evaluation_modes_give_the_same_search(geco_toy, evaluation):
    pipe = geco_toy.toy_pipe("mlp")
    X, _ = geco_toy.toy()
    x = geco_toy.rejected(pipe).iloc[2]
    a = GeCo(pipe, X, evaluation=evaluation).explain(x, random_state=3)
    b = GeCo(pipe, X, evaluation="partial").explain(x, random_state=3)
    pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)


# ====================================================================== API behaviour
def _changed(x, row):
    return [c for c in row.index if str(row[c]) != str(x[c])]


def test_explanation_contents_and_distance(geco_toy):
    pipe = geco_toy.toy_pipe("lr")
    X, _ = geco_toy.toy()
    x = geco_toy.rejected(pipe).iloc[0]
    exp = explain_geco(x, pipe, data=X, k=3, random_state=0)
    assert exp.method == "geco" and not exp.is_optimal
    assert 1 <= len(exp.counterfactuals) <= 3
    assert (pipe.predict(exp.counterfactuals) == 1).all()
    np.testing.assert_allclose(exp.probabilities, pipe.predict_proba(exp.counterfactuals)[:, 1])
    names = list(X.columns)
    for i, (_, row) in enumerate(exp.counterfactuals.iterrows()):
        assert sorted(_changed(x, row)) == sorted(exp.changes[i])
        # the distance recomputed from raw values
        d = []
        for c in names:
            if c in ("age", "hours", "zip"):
                d.append(abs(float(row[c]) - float(x[c])) / (X[c].max() - X[c].min()))
            else:
                d.append(float(row[c] != x[c]))
        d = np.array(d)
        want = (d > 0).sum() / len(names) / 3 + d.sum() / len(names) / 3 + d.max() / 3
        assert exp.distances[i] == pytest.approx(want, abs=1e-12)
        for c in exp.changes[i]:                 # values from the active domain
            assert (X[c] == row[c]).any()
    assert exp.distances == sorted(exp.distances)
    assert exp.stats["generations"] >= 1 and exp.stats["stopped_by"] == "converged"
    assert exp.stats["rejected_by_model"] == 0


def test_geco_distance_formula():
    M = np.array([[True, False, True], [False, False, False]])
    D = np.array([[1.0, 0.0, 0.5], [0.0, 0.0, 0.0]])
    got = geco_distance(M, D, alpha=0.2, beta=0.3, gamma=0.5)
    np.testing.assert_allclose(got, [0.2 * 2 / 3 + 0.3 * 1.5 / 3 + 0.5 * 1.0, 0.0])


def test_determinism_with_random_state(geco_toy):
    pipe = geco_toy.toy_pipe("mlp")
    X, _ = geco_toy.toy()
    x = geco_toy.rejected(pipe).iloc[3]
    a = explain_geco(x, pipe, data=X, random_state=7)
    b = explain_geco(x, pipe, data=X, random_state=7)
    pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)
    assert a.distances == b.distances and a.stats["generations"] == b.stats["generations"]


def test_actionability_of_the_feature_space_is_honoured(geco_toy):
    pipe = geco_toy.toy_pipe("lr", immutable=("job", "married"), increase_only=("age", "edu"))
    X, _ = geco_toy.toy()
    for _, x in geco_toy.rejected(pipe, 8).iterrows():
        try:
            exp = explain_geco(x, pipe, data=X, random_state=0)
        except NoCounterfactualError:
            continue
        cfs = exp.counterfactuals
        assert (cfs["job"] == x["job"]).all() and (cfs["married"] == x["married"]).all()
        assert (cfs["age"] >= x["age"]).all()
        assert (cfs["edu"].cat.codes >= geco_toy.EDU.index(x["edu"])).all()


def test_group_is_sampled_jointly(geco_toy):
    pipe = geco_toy.toy_pipe("lr")
    X, _ = geco_toy.toy()
    seen = set(zip(X["age"], X["hours"]))
    n_changed = 0
    for _, x in geco_toy.rejected(pipe, 6).iterrows():
        exp = explain_geco(x, pipe, data=X, constraints=[p.group("age", "hours")], random_state=1)
        own = (x["age"], x["hours"])
        for _, row in exp.counterfactuals.iterrows():
            pair = (row["age"], row["hours"])
            assert pair in seen or pair == own          # a tuple of one data row
            n_changed += pair != own
    assert n_changed > 0


def test_black_box_random_forest_on_raw_rows(geco_toy):
    X, y = geco_toy.toy()
    cat = ["edu", "job", "city", "married"]
    rf = Pipeline([("enc", ColumnTransformer([("oh", OneHotEncoder(handle_unknown="ignore"), cat)],
                                             remainder="passthrough")),
                   ("rf", RandomForestClassifier(n_estimators=30, random_state=0))]).fit(X, y)
    xs = X[rf.predict(X) == 0].iloc[:3]
    for _, x in xs.iterrows():
        exp = explain_geco(x, rf, data=X, random_state=0, q=60)
        assert exp.stats["evaluation"] == "black-box/raw"
        assert (rf.predict(exp.counterfactuals) == 1).all()


def test_black_box_behind_a_feature_space(geco_toy):
    X, y = geco_toy.toy()
    from sklearn.neighbors import KNeighborsClassifier  # no embedding: a black box

    rf = make_pipeline(gcf.FeatureSpace(immutable=["city"]), KNeighborsClassifier(7)).fit(X, y)
    x = X[rf.predict(X) == 0].iloc[0]
    exp = explain_geco(x, rf, data=X, random_state=0)
    assert exp.stats["evaluation"] == "black-box/encoded"
    assert (rf.predict(exp.counterfactuals) == 1).all()
    assert (exp.counterfactuals["city"] == x["city"]).all()


def test_errors(geco_toy):
    pipe = geco_toy.toy_pipe("lr")
    X, _ = geco_toy.toy()
    accepted = X[pipe.predict(X) == 1].iloc[0]
    with pytest.raises(NotRejectedError):
        explain_geco(accepted, pipe, data=X)
    x = geco_toy.rejected(pipe).iloc[0]
    with pytest.raises(InvalidInputError, match="data"):
        explain_geco(x, pipe, data=None)
    with pytest.raises(InvalidInputError, match="does not take option.*population"):
        explain_geco(x, pipe, data=X, population=3)
    with pytest.raises(InvalidInputError):
        explain_geco(x, pipe, data=X, q=0)
    with pytest.raises(NoCounterfactualError):            # nothing may change
        explain_geco(x, pipe, data=X, constraints=[p.fixed(*X.columns)])


def test_generation_cap_is_reported(geco_toy):
    X, y = geco_toy.toy()
    space = gcf.FeatureSpace().fit(X)
    never = LogisticRegression().fit(space.transform(X), y)
    never.coef_[:] = 0.0
    never.intercept_[:] = -5.0                           # rejects everyone
    with pytest.raises(NoCounterfactualError, match="max_generations"):
        explain_geco(X.iloc[0], never, data=X, space=space, max_generations=3)
    pipe = geco_toy.toy_pipe("lr")
    exp = explain_geco(geco_toy.rejected(pipe).iloc[0], pipe, data=X, max_generations=1)
    assert exp.stats["generations"] == 1
    assert exp.stats["hit_generation_cap"] == (exp.stats["stopped_by"] == "max_generations")


def test_reusable_explainer_caches_the_domain(geco_toy):
    pipe = geco_toy.toy_pipe("lr")
    X, _ = geco_toy.toy()
    a = GeCo(pipe, X)
    b = GeCo(pipe, X)
    assert a.domain is b.domain
    assert GeCo(pipe, X.copy()).domain is not a.domain


def test_gcf_explain_dispatches_to_geco(geco_toy):
    pipe = geco_toy.toy_pipe("mlp")
    X, _ = geco_toy.toy()
    x = geco_toy.rejected(pipe).iloc[0]
    rules = [gcf.plaf.fixed("married"), gcf.plaf.increasing("age")]
    exp = gcf.explain(x, pipe, method="geco", data=X, constraints=rules, k=3, random_state=0, q=50)
    assert exp.method == "geco" and exp.stats["params"]["q"] == 50
    assert len(exp.counterfactuals) <= 3 and (pipe.predict(exp.counterfactuals) == 1).all()
    assert (exp.counterfactuals["married"] == x["married"]).all()
    assert (exp.counterfactuals["age"] >= x["age"]).all()
    again = gcf.explain(x, pipe, method="geco", data=X, constraints=rules, k=3, random_state=0, q=50)
    pd.testing.assert_frame_equal(exp.counterfactuals, again.counterfactuals)
    with pytest.raises(InvalidInputError):
        gcf.explain(x, pipe, method="geco")                     # no data


@pytest.mark.parametrize("Tmax", [1, 2])
def test_tmax_bounds_the_changed_features(geco_toy, Tmax):
    pipe = geco_toy.toy_pipe("mlp")
    X, _ = geco_toy.toy()
    xs = geco_toy.rejected(pipe, n=5)
    exceeded = False                      # without Tmax some counterfactual changes more
    for i in range(len(xs)):
        x = xs.iloc[i]
        free = explain_geco(x, pipe, data=X, k=10, random_state=0)
        exceeded |= any(len(_changed(x, r)) > Tmax for _, r in free.counterfactuals.iterrows())
        try:
            exp = gcf.explain(x, pipe, method="geco", data=X, k=10, random_state=0, Tmax=Tmax)
        except NoCounterfactualError:
            continue
        assert exp.stats["params"]["Tmax"] == Tmax
        assert (pipe.predict(exp.counterfactuals) == 1).all()
        for _, r in exp.counterfactuals.iterrows():
            assert 1 <= len(_changed(x, r)) <= Tmax
    assert exceeded
    with pytest.raises(InvalidInputError, match="Tmax"):
        explain_geco(xs.iloc[0], pipe, data=X, Tmax=0)
    with pytest.raises(InvalidInputError, match="solver"):
        explain_geco(xs.iloc[0], pipe, data=X, solver="highs")


def test_resolve_model_black_box(geco_toy):
    from groupcf.exceptions import UnsupportedModelError
    from groupcf.models import resolve_model

    X, y = geco_toy.toy()
    from sklearn.neighbors import KNeighborsClassifier

    pipe = make_pipeline(gcf.FeatureSpace(), KNeighborsClassifier(n_neighbors=3)).fit(X, y)
    with pytest.raises(UnsupportedModelError):
        resolve_model(pipe)
    tm = resolve_model(pipe, allow_black_box=True)
    assert tm.is_black_box and tm.space is pipe[0]
    np.testing.assert_array_equal(tm.proba(X), pipe.predict_proba(X)[:, 1])
    np.testing.assert_array_equal(tm.is_positive(X), pipe.predict(X) == 1)
    assert not resolve_model(geco_toy.toy_pipe("lr"), allow_black_box=True).is_black_box


@pytest.mark.parametrize("kind", ["lr", "mlp"])
def test_delta_evaluator_score_groups_equals_full_rows(geco_toy, kind):
    pipe = geco_toy.toy_pipe(kind)
    X, _ = geco_toy.toy()
    emb = GeCo(pipe, X).embedding
    z0 = pipe[0].transform(geco_toy.rejected(pipe).iloc[:1])[0]
    rng = np.random.default_rng(5)
    groups = []
    for size in (1, 2, 3):
        cols = np.sort(rng.choice(len(z0), size=size, replace=False))
        groups.append((cols, rng.integers(0, 2, size=(7, size)).astype(float)))
    for ev in (emb.delta_evaluator(z0), _Wrapped(emb).delta_evaluator(z0)):   # ReLU fold, generic
        for (cols, Zc), s in zip(groups, ev.score_groups(groups)):
            Z = np.repeat(z0[None, :], len(Zc), axis=0)
            Z[:, cols] = Zc
            np.testing.assert_allclose(s, emb.score(Z), rtol=0, atol=1e-9)
            np.testing.assert_allclose(ev.score(cols, Zc), s, rtol=0, atol=1e-12)


def test_forest_through_its_embedding(geco_toy):
    """A random forest has an embedding (score = mean probability, accepted from the
    probability threshold itself): GeCo uses it and every counterfactual is accepted."""
    X, y = geco_toy.toy()
    rf = make_pipeline(gcf.FeatureSpace(immutable=["city"]),
                       RandomForestClassifier(n_estimators=30, random_state=0)).fit(X, y)
    x = X[rf.predict(X) == 0].iloc[0]
    exp = explain_geco(x, rf, data=X, random_state=0)
    assert exp.stats["evaluation"] == "embedding/partial"
    assert (rf.predict(exp.counterfactuals) == 1).all()
    np.testing.assert_allclose(exp.probabilities, rf.predict_proba(exp.counterfactuals)[:, 1], atol=1e-9)


@pytest.mark.parametrize("model", ["rf", "gbt"])
def test_tree_partial_scores_equal_full_rows(geco_toy, model):
    """Trees take the candidates' full rows and changed columns at once
    (``DeltaEvaluator.score_rows``): the scores equal the embedding's and the real model's
    on full rows, and the default grouping path of ``score_rows`` gives the same."""
    from groupcf.embeddings.base import DeltaEvaluator

    pipe, geco = _tree_geco(geco_toy, model)
    rng = np.random.default_rng(2)
    for x in (geco_toy.rejected(pipe).iloc[i] for i in range(3)):
        z0 = pipe[0].transform(x.to_frame().T)[0]
        sc = _Scorer(geco.domain, x, z0, geco.embedding, None, None, 0.5, "partial")
        assert sc.delta.by_rows
        M, V = _random_candidates(geco, rng)
        Z = sc.encode(M, V)
        partial = sc.partial_scores(M, V)
        np.testing.assert_allclose(partial, geco.embedding.score(Z), rtol=0, atol=1e-12)
        real = pipe.predict_proba(decode(geco.domain, x, M, V))[:, 1]
        if model == "rf":
            np.testing.assert_allclose(partial, real, rtol=0, atol=1e-9)
        grouped = DeltaEvaluator(geco.embedding, z0).score_rows(Z, sc._changed_columns(M))
        np.testing.assert_allclose(grouped, partial, rtol=0, atol=1e-12)


@pytest.mark.parametrize("model", ["rf", "gbt"])
def test_tree_children_scored_from_their_parents(geco_toy, model, monkeypatch):
    """With a tree ensemble, a child with a ``parent`` in the population given to
    ``set_parents`` is walked from the parent's paths: its score equals the full-row score
    (the population changed between calls: kept members reuse their paths), and a whole
    GeCo run gives the same answers as with full evaluation."""
    pipe, geco = _tree_geco(geco_toy, model)
    rng = np.random.default_rng(4)
    x = geco_toy.rejected(pipe).iloc[0]
    z0 = pipe[0].transform(x.to_frame().T)[0]
    sc = _Scorer(geco.domain, x, z0, geco.embedding, None, None, 0.5, "partial")
    assert sc.delta.by_anchor
    sc.FROM_PARENT = 1                                            # off by default (speed only)
    M, V = _random_candidates(geco, rng)
    h = np.arange(len(M), dtype=np.int64)
    for members in (np.arange(0, 30), np.r_[10:40, 55:70]):       # the second keeps 10..29
        sc.set_parents(M[members], V[members], h[members])
        Mc, Vc = _random_candidates(geco, rng)
        parent = rng.integers(-1, len(members), size=len(Mc))
        Mk, Vk = M[members][np.maximum(parent, 0)], V[members][np.maximum(parent, 0)]
        half = rng.random(len(Mc)) < 0.5                          # children: the parent, half the features resampled
        take = (rng.random(Mc.shape) < 0.3) & (parent >= 0)[:, None] & half[:, None]
        Mc = np.where(take, Mc, np.where((parent >= 0)[:, None], Mk, Mc))
        Vc = np.where(take, Vc, np.where((parent >= 0)[:, None], Vk, Vc))
        s = sc.partial_scores(Mc, Vc, parent)
        np.testing.assert_allclose(s, geco.embedding.score(sc.encode(Mc, Vc)), rtol=0, atol=1e-12)
    for i in range(3):
        row = geco_toy.rejected(pipe).iloc[i]
        a = geco.explain(row, random_state=i)
        b = GeCo(pipe, geco_toy.toy()[0], evaluation="full").explain(row, random_state=i)
        monkeypatch.setattr(_Scorer, "FROM_PARENT", 2)
        c = geco.explain(row, random_state=i)
        monkeypatch.setattr(_Scorer, "FROM_PARENT", None)
        assert c.distances == pytest.approx(b.distances, abs=1e-12)
        pd.testing.assert_frame_equal(c.counterfactuals, b.counterfactuals)
        assert a.distances == pytest.approx(b.distances, abs=1e-12)
        pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)


def test_instance_check_deferred_to_the_final_pass(geco_toy, monkeypatch):
    """When the embedding rejects the instance, the real model's verdict on it comes in the
    same pass as the final re-check: an instance the real model accepts still raises
    NotRejectedError (here the embedding is made to disagree)."""
    X, y = geco_toy.toy()
    rf = make_pipeline(gcf.FeatureSpace(), RandomForestClassifier(n_estimators=20, random_state=0)).fit(X, y)
    geco = GeCo(rf, X)
    accepted = X[rf.predict(X) == 1].iloc[0]
    true_score = geco.embedding.score
    monkeypatch.setattr(geco.embedding, "score", lambda Z: np.minimum(true_score(Z), 0.0))
    with pytest.raises(NotRejectedError):
        geco.explain(accepted, random_state=0)
    monkeypatch.undo()
    x = X[rf.predict(X) == 0].iloc[0]
    exp = geco.explain(x, random_state=0)
    np.testing.assert_allclose(exp.probabilities, rf.predict_proba(exp.counterfactuals)[:, 1], atol=1e-12)


def _tree_geco(geco_toy, model):
    """The toy data's pipeline with a small forest (``"rf"``) or boosting, and its GeCo."""
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = geco_toy.toy()
    clf = RandomForestClassifier(n_estimators=25, max_depth=5, random_state=0) if model == "rf" else \
        GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0)
    pipe = make_pipeline(gcf.FeatureSpace(), clf).fit(X, y)
    return pipe, GeCo(pipe, X)
