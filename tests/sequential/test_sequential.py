"""Sequential counterfactuals: action language, decoder, costs (paper Fig. 2), the GA's
Pareto set replayed, the certified bound against brute force, named errors."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import groupcf as gcf
from groupcf.embeddings import ReLUNetwork
from groupcf.exceptions import (
    CyclicConsequenceError,
    InvalidActionError,
    NoCounterfactualError,
    NotRejectedError,
    ValidationError,
)
from groupcf.models import resolve_encoded
from groupcf.sequential import AbsChange, Action, ActionSet, DependencyGraph
from groupcf.sequential.bound import proven, sequence_bound
from groupcf.sequential.engine import (
    Problem,
    StateView,
    decode_keys,
    decode_value,
    feature_ranges,
    rollout,
)
from groupcf.sequential.result import replay

FAST = {"population": 60, "offspring": 48, "mutants": 12, "generations": 25}


def _problem(x0, aset, model, graph=None, discounted=False):
    return Problem(np.asarray(x0, float), aset, resolve_encoded(model), graph, None, 1e-9, discounted,
                   feature_ranges(aset.features, None))


# --- paper Fig. 2 -------------------------------------------------------------------------
def _fig2():
    feats = ["f1", "f2", "f3"]
    acts = [Action(f"a{i + 1}", f, kind="set", values=[1.0], cost=c, pre=[f"{f} == 0"])
            for i, (f, c) in enumerate(zip(feats, [10.0, 5.0, 15.0]))]
    def done(k):
        return lambda x: np.where(x[k] >= 1, 0.5, 1.0)

    graph = DependencyGraph({("f1", "f2"): done("f1"), ("f2", "f3"): done("f2")}, feats)
    model = ReLUNetwork([(np.ones((1, 3)), np.array([-2.5]))])   # accepts when all three are done
    return _problem([0, 0, 0], ActionSet(acts, feats), model, graph, discounted=True)


def test_fig2_consequence_discounts():
    p = _fig2()
    cost, disc, _, _final = replay(p, [("a3", 1.0), ("a1", 1.0), ("a2", 1.0)])
    assert (cost, disc) == (30.0, 27.5)
    cost, disc, _, _ = replay(p, [("a2", 1.0), ("a3", 1.0), ("a1", 1.0)])
    assert (cost, disc) == (30.0, 22.5)
    # the vectorised rollout agrees: keys give the orders <a3, a1, a2> and <a2, a3, a1>
    G = np.array([[0.2, 0.3, 0.1, 0.5, 0.5, 0.5], [0.4, 0.1, 0.2, 0.5, 0.5, 0.5]])
    r = rollout(p, G)
    assert r.steps.tolist() == [[2, 0, 1], [1, 2, 0]]
    np.testing.assert_allclose(r.disc_cost, [27.5, 22.5])
    assert r.feasible.all()


def test_fig2_search_finds_the_cheapest_order():
    p = _fig2()
    e = gcf.explain_sequence(pd.Series([0.0, 0.0, 0.0], index=["f1", "f2", "f3"]), p.model.model,
                             p.actions, p.graph, random_state=3, **FAST)
    assert e.best(by="discounted_cost")["discounted_cost"] == pytest.approx(20.0)  # a1, a2, a3
    assert [n for n, _ in e.best(by="discounted_cost")["steps"]] == ["a1", "a2", "a3"]
    assert e.validate()


# --- decoder -------------------------------------------------------------------------------
def test_decode_keys_order_and_inactive():
    K = np.array([[0.3, 0.9, 0.1, 0.5], [0.6, 0.7, 0.8, 0.51], [0.0, 0.2, 0.1, 0.05]])
    assert decode_keys(K).tolist() == [[2, 0, 3, -1], [-1, -1, -1, -1], [0, 3, 2, 1]]


def test_decode_values_interpolate_and_clamp():
    aset = ActionSet([Action("add", "x", (-2.0, 6.0)), Action("cat", "c", kind="set", values=[7, 8, 9]),
                      Action("dep", "y", lambda s: (np.zeros_like(s["x"]), s["x"]))], ["x", "c", "y"])
    view = StateView(np.array([[1.0, 7.0, 0.0], [4.0, 7.0, 0.0]]), aset.index)
    np.testing.assert_allclose(decode_value(aset[0], np.array([0.0, 0.25]), view), [-2.0, 0.0])
    np.testing.assert_allclose(decode_value(aset[1], np.array([0.0, 0.34, 0.999, 1.0]),
                                            StateView(np.zeros((4, 3)), aset.index)), [7, 8, 9, 9])
    np.testing.assert_allclose(decode_value(aset[2], np.array([0.5, 0.5]), view), [0.5, 2.0])


# --- tiny problems: Pareto replays and the bound vs brute force ------------------------------
def _tiny(seed):
    rng = np.random.default_rng(seed)
    feats = ["x1", "x2", "c"]
    acts = [Action("up1", "x1", (-2.0, 2.0), cost="abs", consequences={"x2": 0.5}),
            Action("up2", "x2", (-1.5, 1.5), cost=AbsChange(2.0)),
            Action("set", "c", kind="set", values=[1.0], cost=1.5, pre=["c == 0"])]
    W1 = rng.normal(size=(8, 4))
    enc = gcf.sequential.OneHotEncoding(feats, {"c": [0.0, 1.0]})
    b1, W2 = rng.normal(size=8), rng.normal(size=(1, 8))
    s0 = ReLUNetwork([(W1, b1), (W2, [0.0])]).score(enc(np.zeros(3)))[0]
    net = ReLUNetwork([(W1, b1), (W2, [-s0 - 0.3])])      # the start point is rejected (score -0.3)
    return feats, ActionSet(acts, feats), net, enc


def _brute_force(p, grid=9):
    best = np.inf
    names = p.actions.names
    vals = {"up1": np.linspace(-2, 2, grid), "up2": np.linspace(-1.5, 1.5, grid), "set": [1.0]}
    for k in range(1, 4):
        for order in itertools.permutations(names, k):
            for v in itertools.product(*[vals[n] for n in order]):
                try:
                    cost, _, _, final = replay(p, list(zip(order, v)))
                except ValidationError:
                    continue
                if p.model.margin(final[None, :])[0] >= 0:
                    best = min(best, cost)
    return best


@pytest.mark.parametrize("seed", range(6))
def test_bound_never_exceeds_brute_force(seed):
    feats, aset, net, enc = _tiny(seed)
    x0 = np.zeros(3)
    p = Problem(x0, aset, resolve_encoded(net, enc), None, None, 1e-9, False, feature_ranges(feats, None))
    if p.model.margin(x0[None, :])[0] >= 0:
        pytest.skip("random net accepts the start point")
    bf = _brute_force(p)
    b = sequence_bound(p, enc)
    assert b is not None
    if np.isfinite(bf):
        assert b.value <= bf + 1e-6
        cap = sequence_bound(p, enc, cap=bf)      # the cap (a known cost) keeps it valid
        assert cap.value <= bf + 1e-6
    if b.steps is not None:                     # the MIP's own sequence replays: it is real
        cost, _, _, final = replay(p, b.steps)
        assert p.model.margin(final[None, :])[0] >= 0 and cost >= b.value - 1e-6


@pytest.mark.parametrize("seed", range(3))
def test_every_pareto_sequence_replays(seed):
    feats, aset, net, enc = _tiny(seed)
    x = pd.Series(np.zeros(3), index=feats)
    try:
        e = gcf.explain_sequence(x, net, aset, encode=enc, categorical=["c"], random_state=seed, **FAST)
    except (NotRejectedError, NoCounterfactualError):
        pytest.skip("random net: no instance to explain")
    assert e.validate()
    for _, row in e.pareto.iterrows():
        _, _, probs, final = replay(e.problem, row["steps"])
        assert probs[-1] >= 0.5 and row["proba"][-1] == pytest.approx(probs[-1])
        assert row["final_state"] == dict(zip(feats, final.tolist()))
    if e.lower_bound is not None:
        assert e.lower_bound <= e.pareto["cost"].min() + 1e-6


def test_seeded_search_is_reproducible():
    feats, aset, net, enc = _tiny(1)
    x = pd.Series(np.zeros(3), index=feats)
    a = gcf.explain_sequence(x, net, aset, encode=enc, random_state=5, bound=False, **FAST)
    b = gcf.explain_sequence(x, net, aset, encode=enc, random_state=5, bound=False, **FAST)
    pd.testing.assert_frame_equal(a.pareto, b.pareto)


# --- named errors ----------------------------------------------------------------------------
def test_bad_actions_raise_named_errors():
    feats = ["age", "edu", "sex"]
    with pytest.raises(InvalidActionError, match="unknown feature"):
        ActionSet([Action("a", "income", (0, 1))], feats)
    with pytest.raises(InvalidActionError, match="immutable"):
        ActionSet([Action("a", "sex", kind="set", values=[1])], feats, immutable=["sex"])
    with pytest.raises(InvalidActionError, match="empty range"):
        ActionSet([Action("a", "age", (3, 1))], feats)
    with pytest.raises(InvalidActionError, match="unknown feature"):
        ActionSet([Action("a", "age", (0, 1), post=["height' < 3"])], feats)
    with pytest.raises(CyclicConsequenceError):
        ActionSet([Action("study", "edu", (0, 4), consequences={"age": 2.0}),
                   Action("wait", "age", (0, 4), consequences={"edu": 0.1})], feats)


def test_accepted_start_and_unreachable_target():
    feats = ["x"]
    aset = ActionSet([Action("inc", "x", (0.0, 1.0), cost="abs")], feats)
    accepting = ReLUNetwork([(np.ones((1, 1)), np.array([1.0]))])
    with pytest.raises(NotRejectedError):
        gcf.explain_sequence(pd.Series([0.0], index=feats), accepting, aset, **FAST)
    far = ReLUNetwork([(np.ones((1, 1)), np.array([-5.0]))])     # needs x >= 5, range allows 1
    with pytest.raises(NoCounterfactualError):
        gcf.explain_sequence(pd.Series([0.0], index=feats), far, aset,
                             encode=gcf.sequential.OneHotEncoding(feats, {}), **FAST)


def test_any_predict_proba_model_and_its_replay():
    from sklearn.linear_model import LogisticRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2)) * 2
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    clf = LogisticRegression().fit(X, y)
    aset = ActionSet([Action("a", "u", (-3.0, 3.0), cost="abs"),
                      Action("b", "v", (-3.0, 3.0), cost=AbsChange(3.0))], ["u", "v"])
    e = gcf.explain_sequence(pd.Series([-1.0, -1.0], index=["u", "v"]), clf, aset, random_state=0, **FAST)
    assert e.lower_bound is None and e.validate()
    for state in e.pareto["final_state"]:
        assert clf.predict_proba([[state["u"], state["v"]]])[0, 1] >= 0.5
    # the cheapest uses mostly the cheap action a (cost |du|) rather than b (3 |dv|)
    assert e.best()["steps"][0][0] == "a"


def test_sequence_result_is_in_the_family():
    """summary() is text, to_frame() the table, JSON round trip, validate() a report, Tmax
    honoured (every Pareto sequence has at most Tmax actions)."""
    import matplotlib
    matplotlib.use("Agg")
    p = _fig2()
    x = pd.Series([0.0, 0.0, 0.0], index=["f1", "f2", "f3"])
    e = gcf.explain_sequence(x, p.model.model, p.actions, p.graph, random_state=3, progress=False, **FAST)
    assert isinstance(e, gcf.SequenceExplanation) and isinstance(e.summary(), str)
    assert "→" in e.summary() and len(e.to_frame()) == len(e.pareto)
    rep = e.validate()
    assert rep.ok and rep.n_items == len(e.pareto)
    back = gcf.SequenceExplanation.from_json(e.to_json())
    assert back.to_frame().equals(e.to_frame()) and back.is_optimal == e.is_optimal
    e.plot()
    with pytest.warns(FutureWarning, match="is_optimal"):
        assert e.optimal == e.is_optimal
    with pytest.warns(FutureWarning, match="'seed' is renamed 'random_state'"):
        gcf.explain_sequence(x, p.model.model, p.actions, p.graph, seed=3, bound=False, progress=False, **FAST)
    # Fig. 2's model accepts only after all three actions: Tmax = 2 leaves nothing, Tmax = 3 all
    with pytest.raises(NoCounterfactualError):
        gcf.explain_sequence(x, p.model.model, p.actions, p.graph, Tmax=2, random_state=3, progress=False, **FAST)
    three = gcf.explain_sequence(x, p.model.model, p.actions, p.graph, Tmax=3, random_state=3,
                                 progress=False, **FAST)
    assert (three.pareto["length"] <= 3).all() and three.validate().ok and three.Tmax == 3


def test_the_model_adapter_scores_like_the_model():
    """resolve_encoded: an embedding behind an encoding scores as the embedding does on the
    encoded rows; a predict_proba model by the chosen class's column; anything else is refused."""
    from sklearn.linear_model import LogisticRegression

    from groupcf.exceptions import UnsupportedModelError
    from groupcf.models import TrainedModel
    enc = gcf.sequential.OneHotEncoding(["u", "c"], {"c": [3.0, 7.0]})
    net = ReLUNetwork([(np.array([[1.0, 2.0, -1.0]]), np.array([-0.5]))])
    X = np.array([[0.0, 3.0], [1.0, 7.0], [0.2, 3.0]])
    tm = resolve_encoded(net, enc, threshold=0.7)
    np.testing.assert_allclose(tm.margin(X), net.score(enc(X)) - net.score_threshold(0.7))
    np.testing.assert_allclose(tm.proba(X), net.proba(enc(X)))
    assert tm.embedding is net and resolve_encoded(tm) is tm
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(60, 2))
    clf = LogisticRegression().fit(Z, (Z[:, 0] > 0).astype(int))
    bb = resolve_encoded(clf, positive_class=0, threshold=0.4)
    assert isinstance(bb, TrainedModel) and bb.embedding is None
    np.testing.assert_allclose(bb.margin(Z[:5]), clf.predict_proba(Z[:5])[:, 0] - 0.4)
    with pytest.raises(UnsupportedModelError):
        resolve_encoded(object())


def test_a_rounded_tweak_moves_its_consequences_by_the_rounded_change():
    """``decimals=0``: ``x1 += 0.3`` rounds to no change of x1, so its consequence
    ``x2 += 2 * change`` moves nothing (it used to move x2 by round(0.6) = 1 at cost 0, a
    free step the bound's model ``x0 + delta * d`` does not contain)."""
    feats = ["x1", "x2"]
    aset = ActionSet([Action("up", "x1", (0.0, 2.0), cost="abs", consequences={"x2": 2.0})], feats)
    net = ReLUNetwork([(np.array([[0.0, 1.0]]), np.array([-0.5]))])      # accepts x2 >= 0.5
    p = Problem(np.zeros(2), aset, resolve_encoded(net), None, 0, 1e-9, False, feature_ranges(feats, None))
    with pytest.raises(ValidationError, match="changes nothing"):
        replay(p, [("up", 0.3)])
    assert replay(p, [("up", 0.7)])[3].tolist() == [1.0, 2.0]
    e = gcf.explain_sequence(pd.Series([0.0, 0.0], index=feats), net, aset, decimals=0, random_state=0, **FAST)
    for fin, cost in zip(e.pareto["final_state"], e.pareto["cost"]):
        assert fin["x2"] == 2 * fin["x1"] and cost == fin["x1"] >= 1
    assert e.lower_bound is not None and e.lower_bound <= e.best_cost
    e.validate()


def test_an_embedding_without_encode_gets_the_bound():
    """An embedding over the state itself (``encode=None``) is bounded as with the identity
    encoding (the bound used to be silently ``None``)."""
    feats = ["x1", "x2"]
    aset = ActionSet([Action("a", "x1", (-3.0, 3.0), cost="abs"),
                      Action("b", "x2", (-3.0, 3.0), cost=AbsChange(2.0))], feats)
    net = ReLUNetwork([(np.array([[1.0, 1.0], [1.0, -1.0]]), np.array([-1.0, 0.0])),
                       (np.array([[1.0, 0.5]]), np.array([-0.5]))])
    x = pd.Series([-1.0, -1.0], index=feats)
    plain = gcf.explain_sequence(x, net, aset, random_state=0, **FAST)
    identity = gcf.explain_sequence(x, net, aset, encode=gcf.sequential.OneHotEncoding(feats, {}),
                                    random_state=0, **FAST)
    assert plain.lower_bound is not None
    assert plain.lower_bound == pytest.approx(identity.lower_bound)
    assert plain.lower_bound <= plain.best_cost + 1e-9


def test_set_actions_only_are_bounded():
    """Only ``set`` actions (paper Fig. 2) under an encoding the bound reads: the branch and
    bound has no tweak value to branch on (it crashed on the empty array) and proves 30."""
    p = _fig2()
    feats = ["f1", "f2", "f3"]
    e = gcf.explain_sequence(pd.Series([0.0, 0.0, 0.0], index=feats), p.model.model, p.actions, p.graph,
                             encode=gcf.sequential.OneHotEncoding(feats, {}), random_state=3, **FAST)
    assert e.lower_bound == pytest.approx(30.0) and e.is_optimal and e.best_cost == pytest.approx(30.0)


def test_discounted_search_keeps_the_cheapest_undiscounted_sequence():
    """cscf: ``x`` (cost 5, discounted 3.75, two features changed) is dominated in the
    discounted objectives by ``y`` (cost 6, discounted 3, one feature). The bound is on the
    undiscounted cost (5); the table keeps ``x`` so the answer is proven (it reported best
    cost 6, "not proven", with ``x`` known)."""
    feats = ["f2", "f3", "f4"]
    acts = ActionSet([Action("x", "f2", kind="set", values=[1.0], cost=5, consequences={"f3": 1.0}),
                      Action("y", "f2", kind="set", values=[1.0], cost=6)], feats)
    deps = DependencyGraph({("f4", "f2"): 0.5, ("f4", "f3"): 1.0}, feats)
    net = ReLUNetwork([(np.array([[1.0, 0.0, 0.0]]), np.array([-0.5]))])
    e = gcf.explain_sequence(pd.Series([0.0, 0.0, 0.0], index=feats), net, acts, deps, random_state=0, **FAST)
    assert e.best_cost == pytest.approx(5.0) and e.lower_bound == pytest.approx(5.0) and e.is_optimal
    assert e.best(by="discounted_cost")["steps"][0][0] == "y"
    assert e.validate().ok


def test_proven_means_within_a_relative_tenth_of_a_percent():
    """Costs of 0.001 (German's are 0.01-0.5): a bound of 0.0005 against a cost of 0.001 is a
    50 % gap, not a proof (an absolute tolerance of 1e-3 called it "proven optimal")."""
    assert not proven(0.001, 0.0005)
    assert proven(0.001, 0.001 * (1 - 5e-4)) and not proven(0.001, 0.001 * (1 - 2e-3))


def test_the_bound_knows_the_rounding():
    """``decimals=0``: ``x`` moves by whole units, so the cheapest accepted change (``x >= 0.5``)
    is one unit (cost 0.001). The bound used to stop at the continuous 0.0005 and search to its
    time limit (10 s, a 50 % gap); its tweak boxes now hold only multiples of the unit, and it
    proves the optimum."""
    feats = ["x", "y"]
    aset = ActionSet([Action("up", "x", (0.0, 3.0), cost=AbsChange(0.001))], feats)
    net = ReLUNetwork([(np.array([[1.0, 0.0]]), np.array([-0.5]))])
    e = gcf.explain_sequence(pd.Series([0.0, 0.0], index=feats), net, aset, decimals=0, random_state=0, **FAST)
    assert e.best_cost == pytest.approx(0.001) and 0.001 * (1 - 1e-5) <= e.lower_bound <= 0.001
    assert e.is_optimal and e.stats["bound_status"] == "optimal"       # closed, not stopped by its limit
