"""GroupExplanation.summary() / to_frame() for people: bins with their real bounds,
explanations that would read alike told apart, one status, plain numbers."""
from __future__ import annotations

import re

import pytest

import groupcf as gcf


@pytest.fixture(scope="module")
def compas_group():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    ds = gcf.datasets.load("compas", variant="paper")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.5, random_state=0)
    pipe = make_pipeline(gcf.FeatureSpace(), LogisticRegression(C=10)).fit(X_tr, y_tr)
    S = X_te[pipe.predict(X_te) == 0].iloc[:30]
    return gcf.explain_group(S, pipe, Tmax=2, progress=False)


@pytest.fixture(scope="module")
def german_group(german_binned):
    """The group explanation of the first 12 rejected rows (every answer a bin)."""
    pipe, R, X_tr = german_binned
    return gcf.explain_group(R.iloc[:12], pipe, Tmax=2, progress=False, allow_partial=True), X_tr


def _explanation_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if re.match(r"\s+explanation \d+: ", ln)]


def test_explanations_that_read_alike_are_told_apart(compas_group):
    res = compas_group
    lines = _explanation_lines(res.summary())
    assert len(lines) == res.n_explanations
    what = [re.sub(r"^\s+explanation \d+: \d+ instance\(s\)", "", ln) for ln in lines]
    assert len(set(what)) == len(what), "two explanations print identically"
    # this answer has two explanations with the same changes (the case the test is about)
    changes = [tuple((c, str(res.counterfactuals.loc[k, c])) for c in res.changed_features[k])
               for k in range(res.n_explanations)]
    assert len(set(changes)) < len(changes)
    told = [ln for ln in lines if " with " in ln]
    assert len(told) >= 2
    for ln in told:   # the kept values are the members' own
        k = int(re.search(r"explanation (\d+):", ln).group(1))
        members = res.S[res.assignment == k]
        for feat, val in re.findall(r"(\w+) = ([^,]+?)(?:,| set)", ln.split(" with ", 1)[1]):
            assert (members[feat].astype(str) == val).all()


def test_bins_show_real_bounds_and_a_value(german_group):
    res, X_tr = german_group
    text = res.summary()
    assert res.n_explanations >= 1
    assert "inf" not in text and "(~" in text
    frame = res.to_frame()
    assert not frame["to"].str.contains("inf").any()
    for k in range(res.n_explanations):
        for c in res.changed_features[k]:
            assert c in ("duration", "credit_amount")
    found = re.findall(r"(duration|credit_amount) -> \[([\d.]+), ([\d.]+)([)\]]) \(~([\d.]+)\)", text)
    assert found
    for c, lo, hi, close, rep in found:    # inside the training range; the value inside the bin
        lo, hi, rep = float(lo), float(hi), float(rep)
        assert X_tr[c].min() <= lo < hi <= X_tr[c].max()
        assert lo <= rep and (rep <= hi if close == "]" else rep < hi)

def test_one_status_plain_numbers_no_stats(compas_group):
    res = compas_group
    head = repr(res)
    assert head.count("optimal") == 1 and "status=" not in head
    text = res.summary()
    assert "stats" not in text and "np." not in text
    assert res.stats["iterations"] >= 1       # the statistics stay in .stats
