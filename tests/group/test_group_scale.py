"""Column generation at scale: the bounds used before pricing completes stay valid."""
from __future__ import annotations

import numpy as np
import pytest

from groupcf.group.common import initial_columns
from groupcf.group.formulations.seed import SeedPricing
from groupcf.group.problem import GroupProblem
from groupcf.models import resolve_model
from groupcf.utils import Deadline
from tests.params import sweep
from tests.reference import group as group_ref  # also used at collection time


def _problems(n, start=0):
    seed = start
    while n:
        case = group_ref.random_case(seed)
        seed += 1
        if case is None:
            continue
        pipe, S, Tmax = case
        yield GroupProblem(S, resolve_model(pipe), Tmax), seed
        n -= 1


@pytest.mark.parametrize("block", sweep(range(4), fast=0))
def test_incomplete_seed_round_bound_is_valid(block):
    """A seed-pricing round stopped after one column still returns a finite bound, and it
    is at least the exact pricing value (the best column value of a complete round)."""
    stopped = 0
    for p, seed in _problems(10, start=1000 * block):
        for mode in (None, "embedded"):
            rng = np.random.default_rng(seed)
            w = rng.uniform(0, 1.5, p.n_types) * (rng.random(p.n_types) < 0.8)
            full = SeedPricing(p, "highs", mode=mode).solve(w, max_columns=10**6)
            best = max((float(c.cover @ w) for c in full.columns), default=0.0)
            assert full.optimal and full.dual_bound >= best - 1e-9
            early = SeedPricing(p, "highs", mode=mode).solve(w, max_columns=1)
            assert np.isfinite(early.dual_bound)
            assert early.dual_bound >= best - 1e-9, (seed, mode, early.dual_bound, best)
            stopped += not early.optimal
    assert stopped >= 3          # the early stop did happen


def test_initial_columns_without_proof_are_valid():
    """``prove=False`` (increase-only features): greedy points and feasible MIP points are
    accepted columns covering their own type; the unexplained types agree with ``prove=True``
    wherever the latter applies."""
    for p, _ in _problems(15):
        comp = p.completions("highs")
        cols, no_cf = initial_columns(p, "highs", Deadline(None), completions=comp, prove=False)
        covered = np.zeros(p.n_types, dtype=bool)
        for c in cols:
            assert p.is_positive(c.v)
            covered |= c.cover
        assert (covered | no_cf).all()
        _, no_nearest = initial_columns(p, "highs", Deadline(None))    # nearest-CF MIP for every type
        assert (no_cf == no_nearest).all()


@pytest.mark.parametrize("block", sweep(range(3), fast=0))
def test_embedded_seed_pricing_without_mips_is_exact(block):
    """Mode "embedded" (increase-only features) prices by the combinatorial search with
    exact completion checks; the same round with the seed MIPs only (search disabled)
    finds the same best column value, and both prove it."""
    checked = improving = 0
    for p, seed in _problems(40, start=5000 + 1000 * block):
        if not any(f.increase_only and not f.immutable for f in p.space):
            continue
        rng = np.random.default_rng(seed)
        for _ in range(3):
            w = rng.uniform(0, 1.2, p.n_types) * (rng.random(p.n_types) < 0.8)
            fast = SeedPricing(p, "highs", mode="embedded").solve(w, max_columns=10**6)
            slow = SeedPricing(p, "highs", mode="embedded")
            slow._dmask = None                     # every seed by its MIP
            ref = slow.solve(w, max_columns=10**6)
            best = [max((float(c.cover @ w) for c in r.columns), default=0.0) for r in (fast, ref)]
            assert fast.optimal and ref.optimal
            assert best[0] == pytest.approx(best[1], abs=1e-6), (seed, best)
            for c in fast.columns:
                assert p.is_positive(c.v)
            checked += 1
            improving += best[0] > 1
    assert checked >= 6 and improving >= 3


@pytest.mark.slow
def test_seed_pricing_reused_across_rounds_stays_exact():
    """The completion answers a seed keeps between rounds (they do not depend on the duals)
    leave every round exact: one SeedPricing over five dual vectors finds the same best
    column value as a fresh one (search disabled: seed MIPs only) each time."""
    checked = 0
    for p, seed in _problems(40, start=7000):
        if not any(f.increase_only and not f.immutable for f in p.space):
            continue
        rng = np.random.default_rng(seed)
        kept = SeedPricing(p, "highs", mode="embedded")
        for _ in range(5):
            w = rng.uniform(0, 1.2, p.n_types) * (rng.random(p.n_types) < 0.8)
            ref = SeedPricing(p, "highs", mode="embedded")
            ref._dmask = None
            a, b = kept.solve(w, max_columns=10**6), ref.solve(w, max_columns=10**6)
            best = [max((float(c.cover @ w) for c in r.columns), default=0.0) for r in (a, b)]
            assert a.optimal and b.optimal
            assert best[0] == pytest.approx(best[1], abs=1e-6), (seed, best)
            checked += 1
    assert checked >= 20


def test_sum_of_products_counts_the_enumerated_completions():
    import itertools

    from groupcf.group.formulations.exact_check import _sum_of_products

    rng = np.random.default_rng(0)
    for _ in range(50):
        n = [int(x) for x in rng.integers(1, 6, size=int(rng.integers(0, 7)))]
        for k in range(len(n) + 1):
            expect = sum(int(np.prod(c)) for c in itertools.combinations(n, k))
            assert _sum_of_products(n, k) == expect


def test_network_with_a_continuous_feature_prices_exactly():
    """A ReLU net over a continuous feature and an increase-only ordinal one: completion
    questions on the continuous feature need a MIP, so the search leaves them open (never
    a false 'infeasible'); the round equals the seed-MIP-only round."""
    import pandas as pd
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline

    import groupcf as gcf

    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": pd.Categorical(rng.choice(["x", "y", "z"], 400), categories=["x", "y", "z"],
                                          ordered=True),
                      "b": pd.Categorical(rng.choice(["p", "q"], 400)),
                      "c": rng.normal(size=400).round(1),
                      "d": pd.Categorical(rng.choice(["u", "v", "w"], 400))})
    y = ((0.3 * X.a.cat.codes + 0.3 * (X.b == "q") + 2 * X.c + 0.3 * (X.d == "w")) > 1.0).astype(int)
    pipe = make_pipeline(gcf.FeatureSpace(increase_only=["a"], numeric="passthrough"),
                         MLPClassifier((6,), max_iter=2000, random_state=0)).fit(X, y)
    rejected = X[pipe.predict(X) == 0]
    checked = 0
    for Tmax in (1, 2, 3):
        p = GroupProblem(rejected.iloc[:12], resolve_model(pipe), Tmax)
        for r in range(3):
            w = np.random.default_rng(r).uniform(0, 1.2, p.n_types)
            fast = SeedPricing(p, "highs", mode="embedded").solve(w, max_columns=10**6)
            ref = SeedPricing(p, "highs", mode="embedded")
            ref._dmask = None
            ref = ref.solve(w, max_columns=10**6)
            best = [max((float(c.cover @ w) for c in q.columns), default=0.0) for q in (fast, ref)]
            assert fast.optimal and ref.optimal
            assert best[0] == pytest.approx(best[1], abs=1e-6), (Tmax, r, best)
            checked += best[0] > 1
    assert checked >= 3
