"""PLAF: the constraint language, its acyclicity check, the action cascade, and that
GeCo never returns a counterfactual violating a rule (property tests)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupcf import plaf as p
from groupcf.exceptions import NoCounterfactualError
from groupcf.plaf import BoundConstraints, Candidates, Constraints, PLAFCycleError, PLAFError
from groupcf.single.geco import GeCo, decode
from tests.reference import geco as geco_toy  # also used at collection time

FEATURES = ["age", "hours", "edu", "job", "city", "zip", "married"]   # acyclic order below
KIND = {"age": "num", "hours": "num", "zip": "num", "edu": "ord", "job": "cat", "city": "cat",
        "married": "bin"}
VALUES = {"edu": geco_toy.EDU, "job": geco_toy.JOBS, "city": ["east", "north", "south"], "married": ["no", "yes"]}
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def _domain():
    X, _ = geco_toy.toy()
    return GeCo(geco_toy.toy_pipe("lr"), X).domain


# ====================================================================== the language
def test_readable_program_and_repr():
    rules = Constraints([
        p.group("age", "hours"),
        p.fixed("city"),
        p.increasing("age"),
        p.rule(p.If(p.cf("edu") > p.x("edu")), p.Then(p.cf("age") >= p.x("age") + 4)),
        p.cf("hours") <= 60,
        p.x("zip") == p.cf("zip"),                       # flipped to cf(zip) == x(zip)
    ])
    assert len(rules.groups) == 1 and len(rules.rules) == 5
    text = repr(rules)
    assert "IF cf('edu') > x('edu') THEN cf('age') >= (x('age') + 4)" in text
    assert "fixed('city')" in text and "group('age', 'hours')" in text
    assert rules.rules[-1].targets == ["zip"]
    assert rules.order.index("edu") < rules.order.index("age")


def test_language_errors():
    with pytest.raises(PLAFError, match="truth value"):
        bool(p.cf("age") > 3)
    with pytest.raises(PLAFError, match="truth value"):
        if p.cf("age") > 3 and p.cf("hours") > 3:     # noqa: SIM102 - the mistake under test
            pass
    with pytest.raises(PLAFError, match="THEN part must constrain"):
        p.rule(p.If(p.cf("age") > 3), p.Then(p.x("age") > 3))
    with pytest.raises(PLAFError, match="two groups"):
        Constraints([p.group("age", "hours"), p.group("hours", "zip")])
    with pytest.raises(PLAFError, match="not a PLAF constraint"):
        Constraints([42])
    dom = _domain()
    bad = {
        "not in the data": p.cf("salary") >= 3,
        "unordered categorical": p.rule(p.If(p.cf("job") > p.x("job")), p.Then(p.cf("age") >= 30)),
        "not a value": p.cf("job") == "pilot",
        "numeric features": p.cf("age") >= p.x("edu") + 1,
        "with each other": p.cf("job") == p.x("city"),
    }
    for msg, c in bad.items():
        with pytest.raises(PLAFError, match=msg):
            BoundConstraints(Constraints([c]), dom)


def test_cycle_is_named():
    rules = [p.rule(p.If(p.cf("age") > p.x("age")), p.Then(p.cf("hours") >= p.x("hours"))),
             p.rule(p.If(p.cf("hours") > p.x("hours")), p.Then(p.cf("edu") >= p.x("edu"))),
             p.rule(p.If(p.cf("edu") > p.x("edu")), p.Then(p.cf("age") >= p.x("age") + 4))]
    with pytest.raises(PLAFCycleError) as err:
        Constraints(rules)
    cyc = err.value.cycle
    assert cyc[0] == cyc[-1] and set(cyc) == {"age", "hours", "edu"}
    assert " -> ".join(cyc) in str(err.value)
    Constraints(rules[:2])                                    # a chain is fine
    # a rule reading its own target is not a cycle (the final check settles it)
    Constraints([p.rule(p.If(p.cf("age") > p.x("age")), p.Then(p.cf("age") >= p.x("age") + 4))])


@SETTINGS
@given(st.data())
def test_random_cycles_are_rejected_and_forward_rules_accepted(data):
    names = [f"f{i}" for i in range(8)]
    forward = []
    for _ in range(data.draw(st.integers(0, 8))):
        i, j = sorted(data.draw(st.lists(st.integers(0, 7), min_size=2, max_size=2, unique=True)))
        forward.append(p.rule(p.If(p.cf(names[i]) > p.x(names[i])), p.Then(p.cf(names[j]) >= 1)))
    prog = Constraints(forward)                                # acyclic: never raises
    deps = prog.dependencies()
    pos = {n: k for k, n in enumerate(prog.order)}
    assert all(pos[s] < pos[t] for t, srcs in deps.items() for s in srcs)
    ring = data.draw(st.permutations(names))[: data.draw(st.integers(2, 5))]
    back = [p.rule(p.Then(p.cf(ring[(k + 1) % len(ring)]) <= p.cf(ring[k]) + 1)) for k in range(len(ring))]
    with pytest.raises(PLAFCycleError) as err:
        Constraints(forward + back)
    cyc = err.value.cycle
    deps = {}
    for r in forward + back:
        for t in r.targets:
            deps.setdefault(t, set()).update(r.reads() - {t})
    assert cyc[0] == cyc[-1]
    assert all(a in deps.get(b, ()) for a, b in zip(cyc, cyc[1:]))   # every step is a real edge


# ====================================================================== the cascade
def _cands(dom, x, changes: list[dict]):
    """Candidates from raw changes ``[{feature: value}]``."""
    M = np.zeros((len(changes), len(dom)), dtype=bool)
    V = np.full(M.shape, -1, dtype=np.int32)
    for i, ch in enumerate(changes):
        for name, v in ch.items():
            l = dom.index(name)
            f = dom.features[l]
            M[i, l] = True
            V[i, l] = int(np.searchsorted(f.keys, f.key_of(v)))
            assert f.keys[V[i, l]] == f.key_of(v)
    return M, V


def test_action_cascade_repairs_in_dependency_order():
    dom = _domain()
    X, _ = geco_toy.toy()
    x = X.iloc[0].copy()
    x["age"], x["edu"], x["hours"], x["job"] = 30, "secondary", 40, "clerk"
    prog = Constraints([
        p.rule(p.If(p.cf("hours") > p.x("hours")), p.Then(p.cf("job") != "clerk")),  # read by the next
        p.rule(p.If(p.cf("job") == "manager"), p.Then(p.cf("edu") >= "bachelor")),
        p.rule(p.If(p.cf("edu") > p.x("edu")), p.Then(p.cf("age") >= p.x("age") + 4)),
    ])
    bound = BoundConstraints(prog, dom)
    xkeys = dom.instance_keys(x)
    M, V = _cands(dom, x, [{"edu": "master"}, {"edu": "primary"}, {"edu": "phd", "age": 50},
                           {"job": "manager"}, {"hours": 50}])
    cand = Candidates(M, V, dom.keys, xkeys)
    bound.cascade(cand, bound.allowed(xkeys))
    rows = decode(dom, x, M, V)
    ages = np.sort(X["age"].unique())
    assert rows.loc[0, "age"] == ages[ages >= 34][0]          # closest observed value >= 34
    assert rows.loc[1, "age"] == 30 and not M[1, dom.index("age")]
    assert rows.loc[2, "age"] == 50
    # manager -> edu repaired up to bachelor -> age repaired: one pass in order
    assert rows.loc[3, "edu"] == "bachelor" and rows.loc[3, "age"] == ages[ages >= 34][0]
    # more hours -> job repaired to the most frequent job that is not clerk
    counts = X["job"].value_counts()
    assert rows.loc[4, "job"] == counts.drop("clerk").idxmax()
    assert bound.check(cand).all()
    assert prog.check_rows(x, rows).all()


def test_unrepairable_candidates_are_dropped():
    dom = _domain()
    X, _ = geco_toy.toy()
    x = X.iloc[1].copy()
    x["edu"] = "secondary"
    prog = Constraints([p.fixed("age"),
                        p.rule(p.If(p.cf("edu") > p.x("edu")), p.Then(p.cf("age") >= p.x("age") + 4))])
    bound = BoundConstraints(prog, dom)
    xkeys = dom.instance_keys(x)
    M, V = _cands(dom, x, [{"edu": "master"}, {"edu": "primary"}])
    cand = Candidates(M, V, dom.keys, xkeys)
    allowed = bound.allowed(xkeys)
    assert allowed[dom.index("age")].sum() == 1               # fixed: only x's own age
    bound.cascade(cand, allowed)
    assert list(bound.check(cand)) == [False, True]


# ====================================================================== random rule sets
def _value(data, name):
    if KIND[name] == "num":
        X, _ = geco_toy.toy()
        return int(data.draw(st.sampled_from(sorted(X[name].unique()))))
    return data.draw(st.sampled_from(VALUES[name]))


def _condition(data, s):
    cs, xs = p.cf(s), p.x(s)
    k = KIND[s]
    options = {
        "num": [lambda: cs > xs, lambda: cs < xs + data.draw(st.integers(-3, 10)), lambda: cs != xs],
        "ord": [lambda: cs > xs, lambda: cs == _value(data, s), lambda: cs <= xs],
        "cat": [lambda: cs != xs, lambda: cs.isin(data.draw(st.lists(st.sampled_from(VALUES[s]), min_size=1, unique=True)))],
        "bin": [lambda: cs != xs, lambda: cs == _value(data, s)],
    }[k]
    c = data.draw(st.sampled_from(options))()
    return ~c if data.draw(st.booleans()) and data.draw(st.booleans()) else c


def _consequence(data, t, earlier):
    ct, xt = p.cf(t), p.x(t)
    k = KIND[t]
    nums = [s for s in earlier if KIND[s] == "num"]
    options = {
        "num": [lambda: ct >= xt + data.draw(st.integers(0, 10)), lambda: ct <= xt + data.draw(st.integers(-5, 10)),
                lambda: ct >= _value(data, t), lambda: ct == xt, lambda: ct <= _value(data, t)]
        + ([lambda: ct <= p.cf(data.draw(st.sampled_from(nums))) + data.draw(st.integers(0, 40))] if nums else []),
        "ord": [lambda: ct >= xt, lambda: ct <= _value(data, t), lambda: ct != xt,
                lambda: ct.isin(data.draw(st.lists(st.sampled_from(geco_toy.EDU), min_size=1, unique=True)))],
        "cat": [lambda: ct == xt, lambda: ct != _value(data, t),
                lambda: ct.isin(data.draw(st.lists(st.sampled_from(VALUES[t]), min_size=1, unique=True)))],
        "bin": [lambda: ct == xt, lambda: ct == _value(data, t), lambda: ct >= xt],
    }[k]
    return data.draw(st.sampled_from(options))()


def random_rules(data, max_rules=4):
    """Random acyclic PLAF programs over the geco_toy.toy features: a rule only reads features
    that come before its target in FEATURES."""
    items = []
    for _ in range(data.draw(st.integers(0, max_rules))):
        ti = data.draw(st.integers(1, len(FEATURES) - 1))
        t = FEATURES[ti]
        earlier = FEATURES[:ti]
        cons = _consequence(data, t, earlier)
        if data.draw(st.booleans()):
            items.append(p.rule(p.If(_condition(data, data.draw(st.sampled_from(earlier)))), p.Then(cons)))
        else:
            items.append(p.rule(cons))
    if data.draw(st.booleans()):
        items.append(p.fixed(data.draw(st.sampled_from(FEATURES))))
    if data.draw(st.booleans()):
        items.append(p.increasing(data.draw(st.sampled_from(["age", "hours", "edu"]))))
    if data.draw(st.booleans()):
        items.append(p.group("city", "zip"))
    return items


def _random_setting(data):
    """A random rule set compiled on the toy domain, and a random instance: ``(domain,
    program, compiled rules, instance, its keys)``."""
    dom = _domain()
    X, _ = geco_toy.toy()
    prog = Constraints(random_rules(data))
    x = X.iloc[data.draw(st.integers(0, len(X) - 1))]
    return dom, prog, BoundConstraints(prog, dom), x, dom.instance_keys(x)


def _random_changes(dom, xkeys, rng, allowed=None):
    """200 random candidates ``(M, V)``: each feature changed with probability 0.35 to a
    value of its domain (one ``allowed`` admits, when given) other than the instance's."""
    M = rng.random((200, len(dom))) < 0.35
    V = np.full(M.shape, -1, dtype=np.int32)
    for l, f in enumerate(dom.features):
        r = np.flatnonzero(M[:, l])
        pool = np.flatnonzero(allowed[l]) if allowed is not None and allowed[l] is not None else None
        if pool is not None and not len(pool):
            M[r, l] = False
            continue
        V[r, l] = rng.integers(f.size, size=len(r)) if pool is None else rng.choice(pool, size=len(r))
        same = f.keys[V[r, l]] == xkeys[l]
        M[r[same], l], V[r[same], l] = False, -1
    return M, V


@SETTINGS
@given(st.data())
def test_compiled_rules_agree_with_raw_evaluation(data):
    """Vectorised check (on Δ-candidates) == the rules interpreted on decoded raw rows,
    before and after the cascade; and the cascade never breaks a satisfied candidate's
    unconditional x-only constraints."""
    dom, prog, bound, x, xkeys = _random_setting(data)
    M, V = _random_changes(dom, xkeys, np.random.default_rng(data.draw(st.integers(0, 2**16))))
    cand = Candidates(M, V, dom.keys, xkeys)
    before = bound.check(cand)
    assert (before == prog.check_rows(x, decode(dom, x, M, V))).all()
    bound.cascade(cand, bound.allowed(xkeys))
    after = bound.check(cand)
    assert (after == prog.check_rows(x, decode(dom, x, M, V))).all()
    assert not (before & ~after).any()           # a satisfied candidate is never touched


@SETTINGS
@given(st.data())
def test_open_clauses_suffice_for_allowed_values(data):
    """For candidates whose changed values are all ``allowed`` (GeCo's), cascading and
    checking only ``open_clauses`` repairs and keeps exactly what all clauses do."""
    dom, prog, bound, x, xkeys = _random_setting(data)
    allowed = bound.allowed(xkeys)
    M, V = _random_changes(dom, xkeys, np.random.default_rng(data.draw(st.integers(0, 2**16))), allowed)
    every, some = Candidates(M.copy(), V.copy(), dom.keys, xkeys), Candidates(M.copy(), V.copy(), dom.keys, xkeys)
    bound.cascade(every, allowed)
    open_ = bound.open_clauses(xkeys)
    bound.cascade(some, allowed, open_)
    assert np.array_equal(every.M, some.M) and np.array_equal(every.V, some.V)
    assert np.array_equal(bound.check(every), bound.check(some, open_))
    assert all(any(cl is c for c in bound.clauses) for cl in open_)


def test_open_clauses_leave_out_what_allowed_holds():
    dom = _domain()
    X, _ = geco_toy.toy()
    x = X.iloc[0]
    xkeys = dom.instance_keys(x)
    only_x = BoundConstraints(Constraints([p.fixed("job"), p.increasing("age")]), dom)
    assert only_x.clauses and only_x.open_clauses(xkeys) == []
    top = float(X["zip"].max())
    bound = BoundConstraints(Constraints([p.increasing("age"), p.cf("hours") <= p.cf("age") + 5,
                                          p.cf("zip") <= top + 1]), dom)
    kept = bound.open_clauses(xkeys)
    assert [dom.names[cl.target] for cl in kept] == ["hours"]      # the one reading cf
    below = BoundConstraints(Constraints([p.cf("hours") <= float(x["hours"]) - 1]), dom)
    assert len(below.open_clauses(xkeys)) == 1                     # the instance itself breaks it


@SETTINGS
@given(st.data())
def test_geco_never_returns_a_rule_violation(data):
    X, _ = geco_toy.toy()
    pipe = geco_toy.toy_pipe("lr")
    rules = random_rules(data)
    x = geco_toy.rejected(pipe, 10).iloc[data.draw(st.integers(0, 9))]
    try:
        exp = GeCo(pipe, X, rules, q=40, max_generations=15).explain(
            x, random_state=data.draw(st.integers(0, 1000)))
    except NoCounterfactualError:
        return
    prog = Constraints(rules)
    cfs = exp.counterfactuals
    assert prog.check_rows(x, cfs).all()
    assert exp.stats["rejected_by_plaf"] == 0        # the search itself kept to the rules
    assert (pipe.predict(cfs) == 1).all()
    for r in prog.rules:                                       # spelled out for fixed / increasing
        if r.label and r.label.startswith("fixed"):
            for t in r.targets:
                assert (cfs[t].astype(str) == str(x[t])).all()
        if r.label and r.label.startswith("increasing"):
            for t in r.targets:
                if t == "edu":
                    assert (cfs[t].cat.codes >= geco_toy.EDU.index(x[t])).all()
                else:
                    assert (cfs[t] >= x[t]).all()


def test_geco_with_the_papers_kind_of_rules():
    """More education takes four years; hours capped (and fixed: education must do the
    work); city and zip move together."""
    X, _ = geco_toy.toy()
    pipe = geco_toy.toy_pipe("lr")
    rules = [p.group("city", "zip"), p.fixed("married", "hours"), p.increasing("age", "edu"),
             p.rule(p.If(p.cf("edu") > p.x("edu")), p.Then(p.cf("age") >= p.x("age") + 4)),
             p.cf("hours") <= 55]
    prog = Constraints(rules)
    n_edu = 0
    for _, x in geco_toy.rejected(pipe, 8).iterrows():
        try:
            exp = GeCo(pipe, X, rules).explain(x, random_state=0)
        except NoCounterfactualError:
            assert x["hours"] > 55                             # x itself breaks the cap
            continue
        cfs = exp.counterfactuals
        assert prog.check_rows(x, cfs).all()
        up = cfs["edu"].cat.codes.to_numpy() > geco_toy.EDU.index(x["edu"])
        assert (cfs.loc[up, "age"] >= x["age"] + 4).all()
        n_edu += int(up.sum())
        assert (cfs["hours"] == x["hours"]).all() and (cfs["married"] == x["married"]).all()
    assert n_edu > 0                                           # the rule was exercised
