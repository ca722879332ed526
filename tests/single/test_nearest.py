"""gcf.explain(method="mace", distance="l0") equals brute force over every point."""
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import InvalidInputError, NoCounterfactualError, NotRejectedError, UnsupportedModelError
from tests.params import backend_params


def _decision(pipe):
    clf = pipe[-1]
    if isinstance(clf, LogisticRegression):
        return clf.decision_function
    emb = gcf.embeddings.get_embedding(clf)[1]
    return emb.score


def _check(exp, pipe, x, best, Tmax=None):
    space = pipe[0]
    assert exp.is_optimal
    cf = exp.counterfactuals.iloc[[0]]
    assert pipe.predict(cf)[0] == 1, "counterfactual must be accepted by the real model"
    changed = [f.name for f in space if str(cf.iloc[0][f.name]) != str(x[f.name])]
    assert sorted(changed) == sorted(exp.changed_features[0])
    assert len(changed) == best
    for f in space:
        if f.immutable:
            assert f.name not in changed
        if f.increase_only:
            codes = space.codes(cf)[0], space.codes(x.to_frame().T)[0]
            i = list(space.feature_names_in_).index(f.name)
            assert codes[0][i] >= codes[1][i]
    if Tmax is not None:
        assert len(changed) <= Tmax


def _random_space(rng, n_rows=400):
    sizes = rng.integers(2, 5, size=rng.integers(3, 6))
    cols = {}
    for j, k in enumerate(sizes):
        cats = [f"c{j}_{i}" for i in range(k)]
        cols[f"f{j}"] = pd.Categorical(rng.choice(cats, n_rows), categories=cats, ordered=bool(rng.integers(2)))
    X = pd.DataFrame(cols)
    Z = gcf.FeatureSpace().fit(X).transform(X)
    w = rng.normal(size=Z.shape[1]) * 2
    y = (Z @ w + rng.normal(size=n_rows) > np.median(Z @ w)).astype(int)
    return X, y


@pytest.mark.parametrize("seed", range(12))
def test_tiny_random_spaces_match_brute_force(group_ref, seed):
    rng = np.random.default_rng(seed)
    X, y = _random_space(rng)
    names = list(X.columns)
    imm = [names[0]] if seed % 3 == 0 else []
    inc = [c for c in names[1:] if X[c].cat.ordered][:1] if seed % 2 == 0 else []
    clf = LogisticRegression(C=10) if seed % 2 else MLPClassifier((6, 6), max_iter=600, random_state=seed)
    pipe = make_pipeline(gcf.FeatureSpace(immutable=imm, increase_only=inc), clf).fit(X, y)
    rejected = X[pipe.predict(X) == 0].drop_duplicates().head(6)
    for _, x in rejected.iterrows():
        best, _ = group_ref.brute_force_nearest_l0(pipe[0], _decision(pipe), x, margin=1e-6)
        if best is None:
            with pytest.raises(NoCounterfactualError):
                gcf.explain(x, pipe)
            continue
        _check(gcf.explain(x, pipe), pipe, x, best)
        # with Tmax below the optimum there is no counterfactual
        if best > 1:
            with pytest.raises(NoCounterfactualError, match="Tmax"):
                gcf.explain(x, pipe, Tmax=best - 1)


@pytest.fixture(scope="module")
def compas_models(compas_paper):
    X_tr, X_te, y_tr, y_te = compas_paper.split(test_size=0.5, random_state=0)
    lr = make_pipeline(gcf.FeatureSpace(), LogisticRegression(C=10)).fit(X_tr, y_tr)
    nn = make_pipeline(gcf.FeatureSpace(), MLPClassifier((10, 10), max_iter=500, random_state=0)).fit(X_tr, y_tr)
    return X_te, {"lr": lr, "nn": nn}


@pytest.mark.parametrize("solver", backend_params())
@pytest.mark.parametrize("kind", ["lr", "nn"])
def test_compas_paper_matches_brute_force(group_ref, compas_models, kind, solver):
    X_te, models = compas_models
    pipe = models[kind]
    assert pipe[0].n_features_out_ == 15
    S = X_te[pipe.predict(X_te) == 0].drop_duplicates().head(10)
    assert len(S) >= 5
    for _, x in S.iterrows():
        best, _ = group_ref.brute_force_nearest_l0(pipe[0], _decision(pipe), x, margin=1e-6)
        _check(gcf.explain(x, pipe, solver=solver), pipe, x, best)


def test_compas_immutable_and_increase_only(group_ref, compas_paper, compas_models):
    X_te, models = compas_models
    X_tr, _, y_tr, _ = compas_paper.split(test_size=0.5, random_state=0)
    ordered = [c for c in X_tr.columns if isinstance(X_tr[c].dtype, pd.CategoricalDtype) and X_tr[c].cat.ordered]
    space = gcf.FeatureSpace(immutable=["Race", "Sex"], increase_only=ordered[:1])
    pipe = make_pipeline(space, LogisticRegression(C=10)).fit(X_tr, y_tr)
    S = X_te[pipe.predict(X_te) == 0].drop_duplicates().head(15)
    n_none = 0
    for _, x in S.iterrows():
        best, _ = group_ref.brute_force_nearest_l0(pipe[0], pipe[-1].decision_function, x, margin=1e-6)
        if best is None:
            n_none += 1
            with pytest.raises(NoCounterfactualError):
                gcf.explain(x, pipe)
        else:
            _check(gcf.explain(x, pipe), pipe, x, best)
    assert n_none < len(S)


def test_diversity_returns_distinct_best_first(compas_models):
    X_te, models = compas_models
    pipe = models["lr"]
    x = X_te[pipe.predict(X_te) == 0].iloc[0]
    exp = gcf.explain(x, pipe, n=3)
    cfs = exp.counterfactuals
    assert len(cfs) >= 2
    assert len(cfs.astype(str).drop_duplicates()) == len(cfs)
    assert exp.distances == sorted(exp.distances)
    assert all(pipe.predict(cfs) == 1)
    assert "->" in repr(exp)


def test_errors(compas_models):
    X_te, models = compas_models
    pipe = models["lr"]
    accepted = X_te[pipe.predict(X_te) == 1].iloc[0]
    with pytest.raises(NotRejectedError):
        gcf.explain(accepted, pipe)
    x = X_te[pipe.predict(X_te) == 0].iloc[[0]]
    with pytest.raises(InvalidInputError, match="Tmax"):
        gcf.explain(x, pipe, Tmax=0)
    bad = x.astype(object).copy()
    bad.iloc[0, bad.columns.get_loc("Race")] = "Martian"
    with pytest.raises(InvalidInputError, match="Martian"):
        gcf.explain(bad, pipe)
    with pytest.raises(InvalidInputError, match="method"):
        gcf.explain(x, pipe, method="nope")
    with pytest.raises(UnsupportedModelError):
        gcf.explain(x, object(), space=pipe[0])
    with pytest.raises(InvalidInputError, match="space"):
        gcf.explain(x, pipe[-1])
    with pytest.raises(InvalidInputError, match="one instance"):
        gcf.explain(X_te.head(2), pipe)
