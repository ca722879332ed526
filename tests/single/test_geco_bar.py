"""GeCo drops, unscored, the candidates whose distance is above the selection's bar
(``_Run.bar``): the search must give exactly what it gives when every candidate is scored."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.single.geco import GeCo
from groupcf.single.geco.search import _Run


def _pipe(geco_toy, model):
    X, y = geco_toy.toy()
    if model in ("lr", "mlp"):
        return X, geco_toy.toy_pipe(model)
    clf = RandomForestClassifier(n_estimators=25, max_depth=5, random_state=0) if model == "rf" else \
        GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0)
    return X, make_pipeline(gcf.FeatureSpace(), clf).fit(X, y)


def _assert_same_search(a, b):
    """Two explanations of one search: the same counterfactuals, distances, fitnesses and
    number of generations."""
    pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)
    assert a.distances == b.distances
    assert a.stats["fitness"] == b.stats["fitness"]
    assert a.stats["generations"] == b.stats["generations"]


def _with_and_without(geco_toy, pipe, geco, monkeypatch, patches):
    """Per rejected instance (4), ``(a, b)``: the search as it is and with ``_Run``'s
    methods ``patches`` replaced, checked to give the same search."""
    for i in range(4):
        x = geco_toy.rejected(pipe).iloc[i]
        a = geco.explain(x, random_state=i)
        with monkeypatch.context() as m:
            for name, f in patches.items():
                m.setattr(_Run, name, f)
            b = geco.explain(x, random_state=i)
        _assert_same_search(a, b)
        yield a, b


@pytest.mark.parametrize("model", ["mlp", "rf", "gbt"])
@pytest.mark.parametrize("params", [{}, {"q": 12, "m_mut": 3}, {"q": 12, "max_per_set": None},
                                    {"q": 8, "max_per_set": 1, "refine": True, "distance": {"l0": 0.1, "l1": 0.9}}])
def test_the_bar_changes_no_answer(geco_toy, model, params, monkeypatch):
    """Same counterfactuals, distances, fitnesses and number of generations with the bar as
    with every candidate scored (the bar patched to +inf); and the bar does drop candidates."""
    X, pipe = _pipe(geco_toy, model)
    geco = GeCo(pipe, X, **params)
    barred = 0
    every = {"bar": lambda self, pop: math.inf, "set_bars": lambda self, pop: None}
    for a, b in _with_and_without(geco_toy, pipe, geco, monkeypatch, every):
        assert b.stats["n_barred"] == 0
        barred += a.stats["n_barred"]
        assert a.stats["n_scored"] <= b.stats["n_scored"]
    assert barred > 0


@pytest.mark.parametrize("model", ["mlp", "rf", "gbt"])
def test_candidates_scored_before_are_looked_up(geco_toy, model, monkeypatch):
    """A candidate scored earlier in the run is looked up (``_Run.score``): the same answers
    as scoring every candidate each time it is proposed, with fewer candidates scored."""
    X, pipe = _pipe(geco_toy, model)
    geco = GeCo(pipe, X, q=20)

    def every_time(self, M, V, h, parent):
        return self.scorer(M, V, parent)

    fewer = False
    for a, b in _with_and_without(geco_toy, pipe, geco, monkeypatch, {"score": every_time}):
        fewer |= a.stats["n_scored"] < b.stats["n_scored"]
    assert fewer


def _calls(monkeypatch, name, run):
    """``(run, population's M, fitness, result)`` of each call of ``_Run.<name>`` during ``run()``."""
    seen = []
    orig = getattr(_Run, name)

    def spy(self, pop):
        out = orig(self, pop)
        seen.append((self, pop.M.copy(), pop.fit.copy(), out))
        return out

    with monkeypatch.context() as m:
        m.setattr(_Run, name, spy)
        run()
    return seen


def test_the_bar_is_the_q_th_fitness_below_the_cap(geco_toy, monkeypatch):
    """``bar``: the ``q``-th smallest fitness among members ranked below ``max_per_set`` in
    their changed-feature set; ``inf`` when there are fewer than ``q`` such members."""
    X, pipe = _pipe(geco_toy, "mlp")
    x = geco_toy.rejected(pipe).iloc[0]
    geco = GeCo(pipe, X, q=3, max_per_set=1)
    seen = _calls(monkeypatch, "bar", lambda: geco.explain(x, random_state=0))
    assert seen
    for _, M, fit, out in seen:
        best: dict[bytes, float] = {}
        for m, f in zip(M, fit):
            key = np.packbits(m).tobytes()
            best[key] = min(best.get(key, math.inf), f)
        firsts = sorted(best.values())
        assert out == (firsts[2] if len(firsts) >= 3 and len(M) >= 3 else math.inf)


@pytest.mark.parametrize("model", ["mlp", "rf", "gbt"])
@pytest.mark.parametrize("params", [{"q": 12, "m_mut": 3}, {"q": 8, "max_per_set": 1, "refine": True},
                                    {"q": 20, "max_per_set": 2}])
def test_the_set_bars_change_no_answer(geco_toy, model, params, monkeypatch):
    """The per-set bars (``_Run.set_bars``) on top of the global bar: the same answers,
    fitnesses and generations as with the global bar alone, never fewer candidates dropped,
    and more with a small cap (where sets fill up)."""
    X, pipe = _pipe(geco_toy, model)
    geco = GeCo(pipe, X, **params)
    more = 0
    for a, b in _with_and_without(geco_toy, pipe, geco, monkeypatch, {"set_bars": lambda self, pop: None}):
        assert a.stats["n_barred"] >= b.stats["n_barred"]
        more += a.stats["n_barred"] - b.stats["n_barred"]
    assert more > 0 or params.get("max_per_set", 5) == 5


def test_the_set_bars_are_each_sets_cap_th_fitness(geco_toy, monkeypatch):
    """``set_bars``: per changed-feature set with at least ``max_per_set`` members, its
    ``max_per_set``-th smallest fitness; None when fewer than ``q`` members rank below the
    cap in their set."""
    X, pipe = _pipe(geco_toy, "mlp")
    x = geco_toy.rejected(pipe).iloc[0]
    geco = GeCo(pipe, X, q=6, max_per_set=2)
    seen = _calls(monkeypatch, "set_bars", lambda: geco.explain(x, random_state=0))
    assert any(out is not None for *_, out in seen)
    for run, M, fit, out in seen:
        codes = run.scorer.set_codes(M)
        per_set: dict[int, list[float]] = {}
        for c, f in zip(codes.tolist(), fit.tolist()):
            per_set.setdefault(c, []).append(f)
        first_tier = sum(min(2, len(v)) for v in per_set.values())
        if len(M) < 6 or first_tier < 6:
            assert out is None
            continue
        want = {c: sorted(v)[1] for c, v in per_set.items() if len(v) >= 2}
        assert out is not None and dict(zip(out[0].tolist(), out[1].tolist())) == want
