"""One result family: every result class shares ResultBase's interface, and on real results
each method does what it says (text summary without internals, JSON round trip, a frame,
a plot, validate() returning a report that lists the checks and the failures)."""
from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.exceptions import ValidationError
from groupcf.results.base import RESULT_API, ResultBase, ValidationReport

matplotlib.use("Agg")

FAMILY = [gcf.Explanation, gcf.GroupExplanation, gcf.ExplanationSet, gcf.GroupExplanationSet]


def _more_family():
    out = []
    for name in ("SequenceExplanation", "GlobalExplanation"):
        if hasattr(gcf, name):
            out.append(getattr(gcf, name))
    return out


@pytest.mark.parametrize("cls", FAMILY + _more_family(), ids=lambda c: c.__name__)
def test_every_result_class_has_the_family_interface(cls):
    assert issubclass(cls, ResultBase)
    missing = [a for a in RESULT_API if not hasattr(cls, a) and a not in getattr(cls, "__dataclass_fields__", {})]
    assert not missing, f"{cls.__name__} lacks {missing}"


@pytest.fixture(scope="module")
def fitted():
    ds = gcf.datasets.load("german")
    X, y = ds.X, ds.y
    cols = list(X.columns[:7])
    X = X[cols]
    pipe = make_pipeline(gcf.FeatureSpace(), LogisticRegression(max_iter=2000)).fit(X, y)
    rejected = X[pipe.predict(X) == 0]
    return pipe, X, rejected


@pytest.fixture(scope="module")
def results(fitted):
    pipe, X, rejected = fitted
    exp = gcf.explain(rejected.iloc[0], pipe, Tmax=2, n=2, progress=False)
    grp = gcf.explain_group(rejected.iloc[:8], pipe, Tmax=2, progress=False)
    many = gcf.explain_many(rejected.iloc[:4], pipe, Tmax=2, progress=False)
    by = pd.Series(np.arange(8) % 2, index=rejected.index[:8], name="half")
    sets = gcf.explain_groups(rejected.iloc[:8], pipe, by=by, Tmax=2, progress=False)
    glob = gcf.explain_global(rejected.iloc[:8], pipe, Tmax=2, k=2, progress=False)
    return {"explanation": exp, "group": grp, "set": many, "groups": sets, "global": glob}


@pytest.mark.parametrize("key", ["explanation", "group", "set", "groups", "global"])
def test_family_methods_on_real_results(results, key):
    import matplotlib.pyplot as plt

    r = results[key]
    assert isinstance(r.status, gcf.Status) and isinstance(r.is_optimal, bool)
    assert r.lower_bound is None or np.isfinite(r.lower_bound)
    assert r.solve_time >= 0
    text = r.summary()
    assert isinstance(text, str) and text and "stats:" not in text and "status=optimal" not in text
    assert r._repr_html_().startswith("<pre>")
    back = type(r).from_json(r.to_json())
    assert type(back) is type(r) and back.to_dict()["kind"] == r.to_dict()["kind"] == r.kind
    assert back.to_frame().shape == r.to_frame().shape
    assert isinstance(r.to_frame(), pd.DataFrame) and len(r.to_frame())
    ax = r.plot()
    assert ax is not None
    plt.close("all")
    rep = r.validate()
    assert isinstance(rep, ValidationReport) and rep.ok and rep.checked and rep.n_items > 0
    assert "validation passed" in rep.summary()


def test_validate_reports_and_raises_with_the_report(results, fitted):
    pipe = fitted[0]
    exp = results["explanation"]
    bad = gcf.Explanation.from_dict(exp.to_dict())
    bad.changes[0] = []               # a wrong claim
    rep = bad.validate(pipe, raise_on_error=False)
    assert not rep.ok and any("reported" in f for f in rep.failures) and "FAILED" in rep.summary()
    with pytest.raises(ValidationError) as e:
        bad.validate(pipe)
    assert e.value.report is not None and e.value.report.failures == rep.failures


def test_global_validate_catches_wrong_claims(results, fitted):
    pipe, X, rejected = fitted
    res = results["global"]
    assert res.n_covered > 0
    bad = type(res).from_dict(res.to_dict())
    person = bad.assignment.index[bad.covered.to_numpy()][0]
    feat = rejected.columns[0]
    bad.specs[int(bad.assignment[person])] = [{"feature": feat, "op": "set", "value": rejected.loc[person, feat]}]
    rep = bad.validate(pipe, raise_on_error=False)
    assert any("rejected by the model" in f for f in rep.failures), rep.summary()
    bad2 = type(res).from_dict(res.to_dict())
    bad2.n_covered += 1
    assert any("people are assigned" in f for f in bad2.validate(pipe, raise_on_error=False).failures)


def test_explanation_frame_and_deprecated_distance(results):
    exp = results["explanation"]
    df = exp.to_frame()
    assert {"distance", "probability", "n_changed", "changed"} <= set(df.columns)
    assert list(df["distance"]) == pytest.approx(list(exp.distances))
    with pytest.warns(FutureWarning, match="distance_name"):
        assert exp.distance == exp.distance_name


def test_group_frame_is_per_instance(results):
    g = results["group"]
    df = g.to_frame()
    assert df.index.equals(g.S.index) and (df["explanation"] == g.assignment).all()
