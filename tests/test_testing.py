"""groupcf.testing.check_embedding: every registered model type passes it, a deliberately
wrong embedding fails it (numpy and MIP checks), and its errors are named."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression, Perceptron, RidgeClassifier, SGDClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

import groupcf as gcf
from groupcf.embeddings import register
from groupcf.embeddings.registry import _REGISTRY
from groupcf.embeddings.sklearn import logistic_regression
from groupcf.exceptions import InvalidInputError, UnsupportedModelError
from groupcf.testing import check_embedding, registered_model_types

SKLEARN = {
    "lr": lambda: LogisticRegression(C=10, max_iter=2000),
    "linear_svc": lambda: LinearSVC(),
    "sgd": lambda: SGDClassifier(random_state=0),
    "ridge": lambda: RidgeClassifier(),
    "perceptron": lambda: Perceptron(random_state=0),
    "mlp": lambda: MLPClassifier((6, 4), max_iter=600, random_state=0),
    "tree": lambda: DecisionTreeClassifier(max_depth=4, random_state=0),
    "forest": lambda: RandomForestClassifier(10, max_depth=4, random_state=0),
    "extra": lambda: ExtraTreesClassifier(10, max_depth=4, random_state=0),
    "gbt": lambda: GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0),
    "hgb": lambda: HistGradientBoostingClassifier(max_iter=15, max_depth=3, random_state=0),
}


def _optional():
    out = {}
    try:
        from xgboost import XGBClassifier
        out["xgboost"] = lambda: XGBClassifier(n_estimators=15, max_depth=3, random_state=0)
    except ImportError:  # pragma: no cover
        pass
    try:
        from lightgbm import LGBMClassifier
        out["lightgbm"] = lambda: LGBMClassifier(n_estimators=15, max_depth=3, random_state=0, verbose=-1)
    except ImportError:  # pragma: no cover
        pass
    return out


MODELS = {**SKLEARN, **_optional()}


@pytest.fixture(scope="module")
def data(mace_ref):
    return mace_ref.data(0)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_registered_model_type_passes(data, name):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), MODELS[name]()).fit(X, y)
    # every backend for one model of each kind; HiGHS alone for the others (the time goes to pyomo)
    every = name in ("lr", "mlp", "forest")
    rep = check_embedding(pipe, X, n_points=3, backends=None if every else ("highs",))
    assert rep.ok and any("MIP (highs)" in c for c in rep.checked) and rep.n_items == min(len(X), 200)
    if every:
        assert any("MIP (pyomo)" in c for c in rep.checked)


def test_torch_module_with_a_space_passes(data):
    torch = pytest.importorskip("torch")
    X, _ = data
    space = gcf.FeatureSpace(numeric="passthrough").fit(X)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(space.n_features_out_, 5), torch.nn.ReLU(), torch.nn.Linear(5, 1))
    assert check_embedding(net, X, space=space, n_points=3).ok


def test_the_tests_cover_every_registered_type():
    frameworks = {"sklearn", "torch", "xgboost", "lightgbm"}     # (other tests register their own types)
    names = {t.__name__ for t in registered_model_types() if t.__module__.split(".")[0] in frameworks}
    covered = {type(f()).__name__ for f in MODELS.values()} | {"Sequential", "Linear"}
    assert names <= covered, names - covered


class _Shifted(LogisticRegression):
    """A classifier whose registered embedding is deliberately wrong (score + 0.3)."""


def _wrong_embedding(model):
    emb = logistic_regression(model)
    good = emb.score
    emb.score = lambda Z: good(Z) + 0.3          # numpy path off by 0.3; the MIP stays right
    return emb


def test_a_wrong_embedding_fails(data):
    X, y = data
    register(_Shifted, _wrong_embedding)
    try:
        pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), _Shifted(C=10, max_iter=2000)).fit(X, y)
        with pytest.raises(AssertionError, match="numpy: .* differ from the model"):
            check_embedding(pipe, X, n_points=3)
        rep = check_embedding(pipe, X, n_points=3, raise_on_error=False)
        assert not rep.ok
        assert any(f.startswith("numpy") for f in rep.failures)
        assert any(f.startswith("MIP (highs)") for f in rep.failures)     # MIP disagrees with numpy
    finally:
        _REGISTRY.pop(_Shifted, None)


def test_errors_are_named(data):
    X, y = data
    with pytest.raises(InvalidInputError, match="DataFrame of raw rows"):
        check_embedding(None, X.to_numpy())
    with pytest.raises(UnsupportedModelError):
        check_embedding(object(), X, space=gcf.FeatureSpace().fit(X))
    assert np.isfinite(len(X))
