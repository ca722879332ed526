import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import InvalidInputError


@pytest.fixture
def raw():
    rng = np.random.default_rng(0)
    n = 300
    return pd.DataFrame({
        "color": rng.choice(["red", "green", "blue"], n),
        "size": pd.Categorical(rng.choice(["S", "M", "L", "XL"], n), categories=["S", "M", "L", "XL"], ordered=True),
        "smoker": rng.choice(["no", "yes"], n),
        "flag": rng.integers(0, 2, n),
        "age": rng.integers(18, 80, n),
        "income": rng.normal(50, 10, n),
    })


def test_kinds_and_columns(raw):
    fs = gcf.FeatureSpace(n_bins=4).fit(raw)
    kinds = {f.name: (f.kind, f.encoding, len(f.columns)) for f in fs}
    assert kinds == {
        "color": ("categorical", "onehot", 3), "size": ("ordinal", "onehot", 4),
        "smoker": ("binary", "binary", 1), "flag": ("binary", "binary", 1),
        "age": ("numeric", "onehot", 4), "income": ("numeric", "onehot", 4)}
    assert fs.n_features_out_ == 17
    assert [g.tolist() for g in fs.groups][:3] == [[0, 1, 2], [3, 4, 5, 6], [7]]
    assert len(fs.get_feature_names_out()) == 17
    assert fs["size"].categories == ["S", "M", "L", "XL"]


def test_transform_is_valid_onehot_and_roundtrips(raw):
    fs = gcf.FeatureSpace(numeric={"income": "passthrough"}).fit(raw)
    Z = fs.transform(raw)
    for f in fs:
        if f.is_onehot:
            np.testing.assert_array_equal(Z[:, f.columns].sum(axis=1), 1.0)
    assert set(np.unique(Z[:, fs["smoker"].columns[0]])) == {0.0, 1.0}
    inc = Z[:, fs["income"].columns[0]]
    assert inc.min() == pytest.approx(0.0) and inc.max() == pytest.approx(1.0)
    back = fs.inverse_transform(Z)
    for c in ["color", "size", "smoker", "flag"]:
        assert back[c].tolist() == raw[c].tolist(), c
    np.testing.assert_allclose(back["income"], raw["income"])
    # binned numeric decodes to the bin containing the value
    age = gcf.FeatureSpace().fit(raw).inverse_transform(gcf.FeatureSpace().fit(raw).transform(raw))["age"]
    assert all(v in iv for v, iv in zip(raw["age"], age))
    # decoded rows encode back to the same matrix
    np.testing.assert_allclose(fs.transform(back), Z)


def test_domain_matches_space(raw):
    fs = gcf.FeatureSpace(numeric={"income": "passthrough"}).fit(raw)
    dom = fs.domain()
    assert dom.n == fs.n_features_out_
    assert [g.tolist() for g in dom.onehot] == [f.columns.tolist() for f in fs if f.is_onehot]
    assert not dom.integer[fs["income"].columns[0]] and dom.integer[fs["smoker"].columns[0]]
    pts = dom.sample(200, rng=1)
    for g in dom.onehot:
        np.testing.assert_array_equal(pts[:, g].sum(axis=1), 1.0)


def test_interval_bounds_are_exact_on_tiny_domain():
    dom = gcf.InputDomain.box(5, onehot=[[0, 1, 2]])
    rng = np.random.default_rng(3)
    W, b = rng.normal(size=(4, 5)), rng.normal(size=4)
    lo, hi = dom.interval_bounds(W, b)
    pts = np.array([[*np.eye(3)[i], a, c] for i in range(3) for a in (0, 1) for c in (0, 1)])
    vals = pts @ W.T + b
    np.testing.assert_allclose(lo, vals.min(axis=0))
    np.testing.assert_allclose(hi, vals.max(axis=0))


def test_actionability(raw):
    fs = gcf.FeatureSpace(immutable=["color"], increase_only=["size"]).fit(raw)
    assert fs["color"].immutable and fs["size"].increase_only
    fs["age"].increase_only = True
    assert fs.summary().loc["age", "increase_only"]
    with pytest.raises(InvalidInputError, match="categorical"):
        fs["color"].increase_only = True
    with pytest.raises(InvalidInputError, match="not in the data"):
        gcf.FeatureSpace(immutable=["nope"]).fit(raw)


def test_errors_name_column_and_value(raw):
    fs = gcf.FeatureSpace().fit(raw)
    bad = raw.head(3).copy()
    bad.loc[bad.index[1], "color"] = "purple"
    with pytest.raises(InvalidInputError, match=r"'purple'.*'color'"):
        fs.transform(bad)
    nan = raw.head(3).copy()
    nan.loc[nan.index[2], "income"] = np.nan
    with pytest.raises(InvalidInputError, match=r"NaN.*'income'"):
        fs.transform(nan)
    with pytest.raises(InvalidInputError, match="missing"):
        fs.transform(raw.drop(columns="age"))
    with pytest.raises(InvalidInputError, match="DataFrame"):
        fs.transform(raw.to_numpy())


def test_works_in_a_pipeline(raw):
    y = (raw["age"] > 40).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(), LogisticRegression()).fit(raw, y)
    assert pipe.score(raw, y) > 0.9
    assert pipe[0].n_features_out_ == pipe[-1].coef_.shape[1]
    from sklearn.base import clone
    c = clone(pipe[0])
    assert c.get_params() == pipe[0].get_params()
