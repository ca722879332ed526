"""scikit-learn linear classifiers (LinearSVC, SGDClassifier, RidgeClassifier, Perceptron):
one embedding module (groupcf/embeddings/linear.py) plus registry entries, checked against
the models' own decision functions and brute force over the paper's COMPAS space."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Perceptron, RidgeClassifier, SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

import groupcf as gcf
from groupcf.embeddings import LinearModel, get_embedding
from groupcf.exceptions import InvalidInputError, NoCounterfactualError
from tests.params import PAPER_DATA

pytestmark = pytest.mark.skipif(not (PAPER_DATA / "compas_processed.csv").is_file(),
                                reason="the paper's COMPAS file is not available (GROUPCF_DATA)")

CLASSIFIERS = {
    "LinearSVC": lambda: LinearSVC(random_state=0),
    "SGDClassifier": lambda: SGDClassifier(random_state=0),
    "RidgeClassifier": lambda: RidgeClassifier(),
    "Perceptron": lambda: Perceptron(random_state=0),
}


@pytest.fixture(scope="module")
def compas_split():
    d = gcf.datasets.load("compas", variant="paper")
    return train_test_split(d.X, d.y, test_size=0.5, random_state=0)


@pytest.fixture(scope="module")
def fitted(compas_split):
    X_tr, X_te, y_tr, _ = compas_split
    out = {}
    for name, make in CLASSIFIERS.items():
        pipe = make_pipeline(gcf.FeatureSpace(), make()).fit(X_tr, y_tr)
        rejected = X_te[pipe.predict(X_te) == 0]
        out[name] = (pipe, rejected)
    return out


def decision(pipe):
    return lambda P: np.asarray(pipe.decision_function(P), dtype=float)


@pytest.mark.parametrize("name", list(CLASSIFIERS))
def test_score_equals_decision_function(group_ref, fitted, name):
    pipe, _ = fitted[name]
    space, emb = get_embedding(pipe)
    assert isinstance(emb, LinearModel) and emb.additive() is not None
    P = group_ref.all_points(space)
    rng = np.random.default_rng(0)
    rows = P.iloc[rng.choice(len(P), size=60, replace=False)]
    Z = space.transform(rows)
    np.testing.assert_allclose(emb.score(Z), pipe.decision_function(rows), rtol=0, atol=1e-9)
    # partial evaluation and delta evaluation agree with the full score
    fixed = np.arange(0, emb.n_inputs, 2)
    part = emb.partial(fixed, Z[0, fixed])
    keep = np.setdiff1d(np.arange(emb.n_inputs), fixed)
    Zp = np.repeat(Z[:1], len(Z), axis=0)
    Zp[:, keep] = Z[:, keep]
    np.testing.assert_allclose(part.score(Z[:, keep]), emb.score(Zp), atol=1e-9)
    delta = emb.delta_evaluator(Z[0])
    np.testing.assert_allclose(delta.score(keep, Z[:, keep]), emb.score(Zp), atol=1e-9)
    lo, hi = emb.score_bounds(np.zeros(emb.n_inputs), np.ones(emb.n_inputs))
    assert lo <= emb.score(Z).min() and emb.score(Z).max() <= hi


def test_mace_l0_equals_brute_force(group_ref, fitted):
    pipe, rejected = fitted["LinearSVC"]
    space = pipe[0]
    score_fn = lambda Z: np.asarray(pipe[-1].decision_function(Z), dtype=float)  # noqa: E731
    n_feat = len(space)
    for _, x in rejected.head(20).iterrows():
        ref, _ = group_ref.brute_force_nearest_l0(space, score_fn, x, margin=1e-6)
        exp = gcf.explain(x, pipe, method="mace", distance="l0")
        assert exp.is_optimal
        assert round(exp.distances[0] * n_feat) == ref
        cf = exp.counterfactuals.iloc[[0]]
        assert pipe.predict(cf)[0] == pipe[-1].classes_[1]
        assert pipe.decision_function(cf)[0] > 0


@pytest.mark.parametrize("size,Tmax,methods", [(20, 2, ("colgen", "compact")), (20, 3, ("colgen", "compact")),
                                                (50, 2, ("colgen",)), (50, 3, ("colgen",))])
def test_group_optimum_equals_brute_force(group_ref, fitted, size, Tmax, methods):
    pipe, rejected = fitted["LinearSVC"]
    S = rejected.head(size)
    best, _, explainable = group_ref.brute_force_group(pipe[0], decision(pipe), S, Tmax)
    for method in methods:
        res = gcf.explain_group(S, pipe, Tmax=Tmax, method=method, progress=False,
                                allow_partial=not explainable.all())
        assert res.is_optimal, (method, res)
        assert res.n_explanations == best, (method, res.n_explanations, best)
        res.validate()
        assert (pipe.decision_function(res.counterfactuals) > 0).all()


@pytest.mark.parametrize("name", list(CLASSIFIERS))
def test_every_classifier_end_to_end(group_ref, fitted, name):
    pipe, rejected = fitted[name]
    S = rejected.head(10)
    x = S.iloc[0]
    mace = gcf.explain(x, pipe, method="mace")
    assert pipe.predict(mace.counterfactuals)[0] == pipe[-1].classes_[1]
    d = gcf.datasets.load("compas", variant="paper")
    geco = gcf.explain(x, pipe, method="geco", data=d.X, random_state=0, k=1)
    assert (pipe.predict(geco.counterfactuals) == pipe[-1].classes_[1]).all()
    try:                                                  # GeCo honours Tmax, never ignores it
        capped = gcf.explain(x, pipe, method="geco", data=d.X, random_state=0, k=3, Tmax=2)
    except NoCounterfactualError:
        capped = None
    if capped is not None:
        assert capped.stats["params"]["Tmax"] == 2
        for _, r in capped.counterfactuals.iterrows():
            assert 1 <= sum(r[f] != x[f] for f in x.index) <= 2
    # the Perceptron's weights are integers, so its scores are integers and a score of
    # exactly 0 (negative) lies within the solvers' tolerance of the default margin: the
    # compact MIP re-solves with a larger margin when the real model rejects a point
    best, _, explainable = group_ref.brute_force_group(pipe[0], decision(pipe), S, 2)
    for method in ("colgen", "compact"):
        res = gcf.explain_group(S, pipe, Tmax=2, method=method, progress=False, allow_partial=not explainable.all())
        assert res.is_optimal and res.n_explanations == best
        res.validate()
        assert (pipe.predict(res.counterfactuals) == pipe[-1].classes_[1]).all()


def test_margin_classifier_needs_the_default_threshold(fitted):
    pipe, rejected = fitted["LinearSVC"]
    with pytest.raises(InvalidInputError, match="threshold"):
        gcf.explain(rejected.iloc[0], pipe, threshold=0.7)


def test_group_options_are_checked(fitted):
    pipe, rejected = fitted["LinearSVC"]
    S = rejected.head(5)
    with pytest.raises(InvalidInputError, match="n_solutions") as err:
        gcf.explain_group(S, pipe, Tmax=2, method="compact", n_solutions=3)
    assert "colgen" in str(err.value)           # names the method that has the option
    with pytest.raises(InvalidInputError, match="bogus.*accepted.*max_change_sets"):
        gcf.explain_group(S, pipe, Tmax=2, bogus=1)
    with pytest.raises(InvalidInputError, match="pricing"):
        gcf.explain_group(S, pipe, Tmax=2, pricing="magic")
