"""Branch-and-price: instances whose LP bound is below the integer optimum.

Two "triangles" of types (design: any two types of a triangle can share a counterfactual
with Tmax = 2, no three can, and types of different triangles cannot): the master LP
takes every pair column at 1/2 (value 3) while 4 counterfactuals are needed, so the root
bound ceil(3) = 3 does not certify and only branching can.
"""
from __future__ import annotations

import numpy as np
import pytest

import groupcf as gcf
from groupcf.group.branching import choose_pair, repair
from groupcf.group.common import initial_columns
from groupcf.group.components import branch_and_price_by_component, component_labels
from groupcf.group.formulations.seed import SeedPricing
from groupcf.group.problem import GroupProblem
from groupcf.models import resolve_model
from groupcf.utils import Deadline


@pytest.mark.parametrize("kind", ["lr", "nn"])
def test_branch_and_price_closes_the_gap(group_ref, triangles, kind):
    S, models = triangles
    pipe = models[kind]
    best, _, explainable = group_ref.brute_force_group(pipe[0], lambda P: pipe.decision_function(P) if kind == "lr"
                                             else _logit(pipe, P), S, 2)
    assert explainable.all() and best == 4
    # max_enumerated_sets=0: the logistic model may not close the gap by enumeration;
    # components=False: one tree over both triangles (the root alone cannot certify)
    res = gcf.explain_group(S, pipe, Tmax=2, progress=False, max_change_sets=0, max_enumerated_sets=0,
                            components=False)
    assert res.stats["lp_bound"] == pytest.approx(3.0)
    assert res.stats["bp_nodes"] >= 2
    assert res.n_explanations == 4 and res.lower_bound == 4 and res.is_optimal
    res.validate()
    # per component (the two triangles): ceil(1.5) + ceil(1.5) = 4 certifies without branching
    res = gcf.explain_group(S, pipe, Tmax=2, progress=False, max_change_sets=0, max_enumerated_sets=0)
    assert res.stats["lp_bound"] == pytest.approx(3.0)
    assert res.stats["components"] == 2 and res.stats["components_bound"] == 4
    assert res.n_explanations == 4 and res.lower_bound == 4 and res.is_optimal
    res.validate()
    compact = gcf.explain_group(S, pipe, Tmax=2, method="compact", progress=False)
    assert compact.n_explanations == 4 and compact.is_optimal


def _logit(pipe, P):
    p = np.clip(pipe.predict_proba(P)[:, 1], 1e-300, 1 - 1e-16)
    return np.log(p) - np.log1p(-p)


def test_branching_under_a_time_limit_reports_the_gap(triangles):
    """No time for the tree: the root bound (3) is reported, not a false certificate."""
    S, models = triangles
    res = gcf.explain_group(S, models["nn"], Tmax=2, progress=False, time_limit=1e-9)
    res.validate()
    assert not res.is_optimal and res.lower_bound < res.n_explanations


@pytest.mark.parametrize("kind", ["lr", "nn"])
def test_branch_and_price_per_component(triangles, kind):
    """Branch-and-price restricted to one component (the other types' rows relaxed) from a
    weak bound of 1 per triangle closes each triangle at 2; an unexplained type elsewhere
    (inactive) does not make the node masters infeasible."""
    S, models = triangles
    p = GroupProblem(S, resolve_model(models[kind]), 2)
    seed = SeedPricing(p, "highs")
    cols, no_cf = initial_columns(p, "highs", Deadline(None), completions=p.completions("highs"))
    assert not no_cf.any()
    active = np.ones(p.n_types, dtype=bool)
    active[0] = False                                      # as if type 0 had no counterfactual
    labels = component_labels(seed.compat, active)
    assert labels[0] == -1 and len(set(labels[1:])) == 2
    incumbent = [problem_col for problem_col in cols if (problem_col.cover & active).any()]
    out, lower, nodes, searched, closed = branch_and_price_by_component(
        p, cols, seed, "highs", Deadline(None), incumbent, labels, np.ones(2, dtype=int), active)
    covered = np.zeros(p.n_types, dtype=bool)
    for c in out:
        assert p.is_positive(c.v)
        covered |= c.cover
    assert covered[active].all()
    # triangle of types 1, 2 (type 0 inactive): one column; the other triangle: two
    assert len(out) == lower == 3 and searched >= 1 and closed == searched


def test_repair_and_pair_choice():
    label = np.array([0, 0, 2, 3])          # same(0, 1)
    differ = [(2, 3)]
    cover = np.array([True, False, True, True])
    # 0 without 1 breaks "same"; 2 and 3 together break "differ"
    assert repair(cover, label, differ, True).tolist() == [False, False, True, False]
    assert repair(cover, label, differ, False).tolist() == [False, False, False, True]
    # the triangle's LP: three pair columns at 1/2
    C = np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]], dtype=bool)
    i, j = choose_pair(C, np.full(3, 0.5))
    assert (i, j) in {(0, 1), (1, 2), (0, 2)}
    assert choose_pair(C[:1], np.ones(1)) is None    # integral: nothing to branch on
