"""Single-instance options added for the benchmark: GeCo minimising MACE's distance
(``distance=``), GeCo's final polish (``refine=True``), exports, and the benchmark script
itself on a tiny run."""
from __future__ import annotations

import functools
import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import InvalidInputError
from groupcf.single.geco import GeCo

W = {"l0": 0.1, "l1": 0.9}
EDU = ["none", "school", "college", "bachelor", "master"]


@functools.cache
def data(n: int = 800, seed: int = 1):
    """Numeric features with many rare values (gain), an ordinal (edu), a nominal (job)."""
    rng = np.random.default_rng(seed)
    gain = np.where(rng.random(n) < 0.8, 0, rng.integers(1, 400, n) * 37)
    edu = rng.integers(0, len(EDU), n)
    X = pd.DataFrame({
        "age": rng.integers(18, 70, n),
        "gain": gain,
        "edu": pd.Categorical(np.array(EDU)[edu], categories=EDU, ordered=True),
        "job": pd.Categorical(rng.choice(["a", "b", "c"], n)),
        "sex": pd.Categorical(rng.choice(["f", "m"], n), categories=["f", "m"]),
    })
    s = 0.03 * (X["age"] - 45) + gain / 4000 + 0.5 * edu - 1.5 + (X["job"] == "c") + rng.normal(0, 0.3, n)
    return X, (s > 0).astype(int).to_numpy()


@functools.cache
def pipe(kind="lr"):
    X, y = data()
    clf = LogisticRegression(C=10, max_iter=3000) if kind == "lr" else \
        MLPClassifier((10,), max_iter=500, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_pipeline(gcf.FeatureSpace(immutable=["sex"], increase_only=["age"],
                                              numeric="passthrough"), clf).fit(X, y)


def rejected(p, n=8):
    X, _ = data()
    return X[p.predict(X) == 0].iloc[:n]


@pytest.mark.parametrize("kind", ["lr", "mlp"])
def test_geco_with_mace_distance_reports_the_metric(kind):
    p = pipe(kind)
    X, _ = data()
    for i, (_, x) in enumerate(rejected(p, 4).iterrows()):
        exp = gcf.explain(x, p, method="geco", data=X, distance=W, random_state=i)
        assert exp.distance_name == "0.1*l0+0.9*l1"
        want = gcf.metrics.proximity(x, exp.counterfactuals, p[0], "mace", W)
        np.testing.assert_allclose(exp.distances, want, atol=1e-12)
        assert exp.distances == sorted(exp.distances)
        assert (p.predict(exp.counterfactuals) == 1).all()


def test_geco_default_distance_label_is_gecos():
    p = pipe()
    X, _ = data()
    exp = gcf.explain(rejected(p).iloc[0], p, method="geco", data=X, random_state=0)
    assert exp.distance_name.startswith("geco:")


@pytest.mark.parametrize("kind", ["lr", "mlp"])
@pytest.mark.parametrize("distance", [None, W])
def test_refine_never_worse_and_stays_valid(kind, distance):
    """The search is the same with or without refine (same random_state): the polish can
    only lower the best fitness, and its counterfactuals are valid and actionable."""
    p = pipe(kind)
    X, _ = data()
    opts = {} if distance is None else {"distance": distance}
    plain, polished = GeCo(p, X, **opts), GeCo(p, X, refine=True, **opts)
    gained = 0
    for i, (_, x) in enumerate(rejected(p).iterrows()):
        a, b = plain.explain(x, random_state=i), polished.explain(x, random_state=i)
        assert b.distances[0] <= a.distances[0] + 1e-12
        gained += b.distances[0] < a.distances[0] - 1e-12
        assert (p.predict(b.counterfactuals) == 1).all()
        assert (b.counterfactuals["sex"] == x["sex"]).all()
        assert (b.counterfactuals["age"] >= x["age"]).all()
        for k, (_, row) in enumerate(b.counterfactuals.iterrows()):
            for c in b.changes[k]:                   # real changes, to active-domain values
                assert row[c] != x[c] and (X[c] == row[c]).any()
        assert b.stats["refine_passes"] >= 1
    assert gained >= 1                               # rare gain values: the polish helps


def test_refine_respects_plaf_rules():
    p = pipe()
    X, _ = data()
    P = gcf.plaf
    rules = [P.rule(P.If(P.cf("edu") > P.x("edu")), P.Then(P.cf("age") >= P.x("age") + 4))]
    g = GeCo(p, X, constraints=rules, distance=W, refine=True)
    for i, (_, x) in enumerate(rejected(p).iterrows()):
        exp = g.explain(x, random_state=i)
        assert g.constraints.check_rows(x, exp.counterfactuals).all()


def test_mace_distance_needs_a_feature_space():
    X, y = data()
    raw = X.assign(edu=X["edu"].cat.codes, job=X["job"].cat.codes, sex=X["sex"].cat.codes)
    rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(raw, y)
    with pytest.raises(InvalidInputError, match="FeatureSpace"):
        GeCo(rf, raw, distance=W)
    with pytest.raises(InvalidInputError):
        GeCo(pipe(), X, distance={"l3": 1.0})


def test_mace_default_distance_is_still_l0():
    p = pipe()
    exp = gcf.explain(rejected(p).iloc[0], p)
    assert exp.distance_name == "l0"


def test_exports():
    assert gcf.plaf.cf is not None and gcf.metrics.proximity is not None
    assert "plaf" in gcf.__all__ and "metrics" in gcf.__all__


def test_pipeline_proba_does_not_encode(monkeypatch):
    from groupcf.models import resolve_model

    tm = resolve_model(pipe())
    X, _ = data()
    want = pipe().predict_proba(X.iloc[:5])[:, 1]

    def boom(X):
        raise AssertionError("encoded rows for a pipeline")
    monkeypatch.setattr(tm, "encode", boom)
    np.testing.assert_allclose(tm.proba(X.iloc[:5]), want)


def test_benchmark_script_tiny_run(tmp_path, monkeypatch):
    """benchmarks/single.py end to end on German / LR, 2 instances (DiCE if installed)."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "single.py"
    spec = importlib.util.spec_from_file_location("bench_single", path)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, mod)     # dataclasses look the module up
    monkeypatch.setenv("TQDM_DISABLE", "1")              # (the script sets it; undone after)
    spec.loader.exec_module(mod)
    methods = ["mace", "geco", "geco+"]
    if importlib.util.find_spec("dice_ml") is not None:
        methods.append("dice-random")
    assert mod.main(["--n", "2", "--datasets", "german", "--models", "lr", "--methods", *methods,
                     "--out", str(tmp_path)]) == 0
    summary = pd.read_csv(tmp_path / "single.csv")
    assert list(summary.method) == methods
    assert (summary.coverage == 1.0).all()
    mace = summary.set_index("method").loc["mace"]
    assert mace.distance_vs_mace == pytest.approx(1.0)
    assert (summary.distance_vs_mace >= 1.0 - 1e-9).all()    # MACE is optimal
    assert "| german | lr | mace |" in (tmp_path / "single.md").read_text()
