"""scikit-learn preprocessing (ColumnTransformer of encoders and scalers) before a classifier:
the translated FeatureSpace + affine map reproduce the transformer column for column, the
embedding reproduces the pipeline, MACE equals brute force over the real pipeline, the
answers equal those of the equivalent FeatureSpace pipeline, every method's counterfactuals
are accepted by the user's pipeline itself, and unsupported steps are named."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    RobustScaler,
    StandardScaler,
)
from sklearn.svm import LinearSVC

import groupcf as gcf
from groupcf.exceptions import GroupCFWarning, UnsupportedModelError
from groupcf.features.preprocessing import translate_preprocessing
from groupcf.models import resolve_model
from groupcf.testing import check_embedding

CATS = ["smoker", "colour"]
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def toy(mace_ref):
    X, y = mace_ref.data(3, n_rows=200)
    X["colour"] = X["colour"].astype(str)                    # plain strings, as most users have
    return X, y


def _ct(X, kind):
    ordinal = OrdinalEncoder(categories=[["low", "mid", "high", "top"]])
    return {
        "std": make_column_transformer((OneHotEncoder(), CATS + ["level"]), (StandardScaler(), ["kids", "cars"])),
        "drop": make_column_transformer((OneHotEncoder(drop="if_binary"), CATS), (ordinal, ["level"]),
                                        (StandardScaler(), ["kids"]), (MinMaxScaler(), ["cars"])),
        "first": make_column_transformer((OneHotEncoder(drop="first", handle_unknown="ignore"), CATS),
                                         (RobustScaler(), ["kids"]), ("drop", ["level"]),
                                         (MaxAbsScaler(), ["cars"])),
        "array": make_column_transformer((OneHotEncoder(drop=["yes", "green"], sparse_output=False), CATS),
                                         (make_pipeline(SimpleImputer(), StandardScaler()), ["kids"]),
                                         ("drop", ["level"]), remainder="passthrough"),
    }[kind]


@pytest.mark.parametrize("kind", ["std", "drop", "first", "array"])
def test_translation_equals_the_transformer_column_for_column(toy, kind):
    X, y = toy
    ct = _ct(X, kind).fit(X)
    ref = gcf.FeatureSpace(numeric="passthrough").fit(X)
    pre = translate_preprocessing([ct], reference=ref)
    Y = ct.transform(X)
    Y = Y.toarray() if hasattr(Y, "toarray") else Y
    np.testing.assert_allclose(pre.space.transform(X) @ pre.matrix.T + pre.offset, Y, atol=1e-12)
    for f in pre.space:               # ranges and integrality from the training rows
        if f.encoding == "continuous":
            assert (f.low, f.high, f.integer) == (X[f.name].min(), X[f.name].max(), True)


def test_chained_scalers_and_a_bare_scaler_step():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(3, 2, 80), "b": rng.uniform(-1, 5, 80)})
    y = (X.a + X.b > 4).astype(int)
    for pipe in (make_pipeline(StandardScaler(), LogisticRegression()),
                 make_pipeline(MinMaxScaler(), StandardScaler(), LogisticRegression())):
        pipe.fit(X, y)
        tm = resolve_model(pipe)
        np.testing.assert_allclose(tm.embedding.proba(tm.space.transform(X)), pipe.predict_proba(X)[:, 1],
                                   atol=1e-12)
    lo, hi = tm.space["a"].low, tm.space["a"].high      # MinMaxScaler: the exact training range
    assert (lo, hi) == (X.a.min(), X.a.max())


@pytest.mark.parametrize("clf", [LogisticRegression(C=10), MLPClassifier((6,), max_iter=600, random_state=0),
                                 LinearSVC(), RandomForestClassifier(5, max_depth=3, random_state=0)],
                         ids=["lr", "mlp", "linearsvc", "forest"])
def test_the_embedding_reproduces_the_pipeline(toy, clf):
    X, y = toy
    kind = "first" if isinstance(clf, RandomForestClassifier) else "drop"
    pipe = make_pipeline(_ct(X, kind), clf).fit(X, y)
    check_embedding(pipe, X, n_points=3, backends=["highs"])


def _equivalent_pipelines(X, y):
    """A FeatureSpace pipeline and a ColumnTransformer pipeline computing the same function:
    the ColumnTransformer's logistic regression gets the FeatureSpace's coefficients mapped
    through the scalers by hand."""
    space = gcf.FeatureSpace(numeric="passthrough", kinds={"smoker": "categorical"}).fit(X)
    fs_pipe = make_pipeline(space, LogisticRegression(C=10)).fit(X, y)
    ct = make_column_transformer((OneHotEncoder(), ["smoker", "colour", "level"]),
                                 (StandardScaler(), ["kids"]), (MinMaxScaler(), ["cars"])).fit(X)
    w = dict(zip(space.get_feature_names_out(), fs_pipe[-1].coef_[0]))
    b = float(fs_pipe[-1].intercept_[0])
    coef = []
    for name in ct.get_feature_names_out():
        scope, col = name.split("__")
        if scope == "onehotencoder":
            feat, _, cat = col.partition("_")
            coef.append(w[f"{feat}={cat}"])
        elif col == "kids":       # y = (v - m)/s, z = (v - lo)/(hi - lo): w_z z = w_y y + const
            f, sc = space["kids"], ct.named_transformers_["standardscaler"]
            w_y = w["kids"] * sc.scale_[0] / (f.high - f.low)
            b += w_y * (sc.mean_[0] - f.low) / sc.scale_[0]
            coef.append(w_y)
        else:                     # MinMaxScaler on the same data: the same column
            coef.append(w[col])
    lr = LogisticRegression().fit(ct.transform(X), y)
    lr.coef_, lr.intercept_ = np.array([coef]), np.array([b])
    ct_pipe = make_pipeline(ct, lr)
    np.testing.assert_allclose(ct_pipe.predict_proba(X), fs_pipe.predict_proba(X), atol=1e-9)
    return fs_pipe, ct_pipe, space


@pytest.mark.parametrize("distance", ["l0", "l1"])
def test_same_distances_as_the_equivalent_featurespace_pipeline(toy, distance):
    X, y = toy
    fs_pipe, ct_pipe, space = _equivalent_pipelines(X, y)
    rejected = X[fs_pipe.predict(X) == 0].iloc[:4]
    for _, x in rejected.iterrows():
        a = gcf.explain(x, fs_pipe, distance=distance)
        b = gcf.explain(x, ct_pipe, distance=distance, space=space)   # space=: training ranges
        assert b.is_optimal
        assert b.distances[0] == pytest.approx(a.distances[0], abs=1e-6)
        assert ct_pipe.predict_proba(b.counterfactuals)[0, 1] >= 0.5


def test_mace_equals_brute_force_over_the_real_pipeline(toy, mace_ref):
    X, y = toy
    ref = gcf.FeatureSpace(numeric="passthrough").fit(X)
    pipe = make_pipeline(_ct(X, "drop"), LogisticRegression(C=10)).fit(X, y)
    tm = resolve_model(pipe, space=ref)
    P = mace_ref.all_points(tm.space)
    accepted = pipe.predict_proba(P)[:, 1] >= 0.5 + 1e-6                 # the pipeline itself
    for _, x in X[pipe.predict(X) == 0].iloc[:4].iterrows():
        D = mace_ref._ref_feature_distances(tm.space, x, P)
        for distance in ("l0", "l1"):
            best = mace_ref._ref_distance(D[accepted], distance).min()
            exp = gcf.explain(x, pipe, distance=distance, space=ref)
            assert exp.is_optimal and exp.distances[0] == pytest.approx(best, abs=1e-6)


def test_every_method_returns_rows_the_pipeline_accepts(toy):
    X, y = toy
    pipe = make_pipeline(_ct(X, "std"), MLPClassifier((6,), max_iter=600, random_state=0)).fit(X, y)
    R = X[pipe.predict(X) == 0]
    x = R.iloc[0]

    def accepted(rows):
        assert len(rows)
        assert (pipe.predict_proba(rows[X.columns])[:, 1] >= 0.5).all()

    accepted(gcf.explain(x, pipe).counterfactuals)
    accepted(gcf.explain(x, pipe, method="geco", data=X, random_state=0).counterfactuals)
    accepted(gcf.explain(x, pipe, method="pso", data=X, random_state=0, progress=False).counterfactuals)
    g = gcf.explain_group(R.iloc[:8], pipe, Tmax=2, progress=False)
    accepted(g.counterfactuals)
    g.validate()
    gl = gcf.explain_global(R.iloc[:8], pipe, progress=False)
    assert gl.n_covered > 0
    accepted(gl.apply()[gl.covered.to_numpy()])
    many = gcf.explain_many(R.iloc[:3], pipe, progress=False)
    assert many.table["found"].all()
    accepted(many.counterfactuals)


def test_unsupported_steps_are_named_with_what_works(toy):
    X, y = toy
    num = ["kids", "cars"]
    poly = make_pipeline(make_column_transformer((PolynomialFeatures(), num)), LogisticRegression()).fit(X[num], y)
    with pytest.raises(UnsupportedModelError, match=r"PolynomialFeatures.*FeatureSpace.*data="):
        gcf.explain(X[num].iloc[0], poly)
    raw = make_pipeline(make_column_transformer(("passthrough", num)), LogisticRegression()).fit(X[num], y)
    with pytest.raises(UnsupportedModelError, match=r"'kids'.*space=gcf.FeatureSpace"):
        resolve_model(raw)
    assert resolve_model(raw, space=gcf.FeatureSpace(numeric="passthrough").fit(X)).space["kids"].integer
    ordinal_tree = make_pipeline(_ct(X, "drop"), RandomForestClassifier(3, random_state=0)).fit(X, y)
    with pytest.raises(UnsupportedModelError, match=r"ordinalencoder__level.*OneHotEncoder"):
        resolve_model(ordinal_tree)
    numpy_fit = make_pipeline(StandardScaler(), LogisticRegression()).fit(X[num].to_numpy(), y)
    with pytest.raises(UnsupportedModelError, match="DataFrame"):
        resolve_model(numpy_fit)


def test_ranges_from_scalers_are_named_and_data_gives_the_training_ranges(toy):
    X, y = toy
    num = ["kids", "cars"]
    pipe = make_pipeline(make_column_transformer((OneHotEncoder(), CATS), (StandardScaler(), num)),
                         LogisticRegression(C=10)).fit(X, y)
    with pytest.warns(GroupCFWarning, match=r"estimated from the scalers' statistics: kids in \["):
        tm = resolve_model(pipe)
    assert not tm.space["kids"].integer and tm.space["kids"].low < 0       # mean - 3 std: not the data's
    x = X[pipe.predict(X) == 0].iloc[0]
    for method in ("geco", "pso"):           # data=: the reference rows give ranges and integrality
        cf = gcf.explain(x, pipe, method=method, data=X, random_state=0).counterfactuals
        assert (pipe.predict_proba(cf)[:, 1] >= 0.5).all()
        for c in num:
            v = cf[c].astype(float)
            assert ((v % 1 == 0) & (v >= X[c].min()) & (v <= X[c].max())).all(), (method, c, v.tolist())
