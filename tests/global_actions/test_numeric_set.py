"""``numeric="set"`` against brute force (issue 23's closing gap): the box search's maximum and
bound (:mod:`groupcf.global_actions.boxes`), and explain_global's curve, bounds and costs, on
tiny random cases — also with a person whose integer value lies outside the training range
(a set value must be inside the domain; an increase-only one not below the person's own)."""
from __future__ import annotations

import numpy as np
import pytest

import groupcf as gcf
from groupcf.global_actions.actions import ActionSpace
from groupcf.global_actions.boxes import ActionBoxes
from groupcf.models import resolve_model
from tests.params import sweep
from tests.reference.global_actions import best_coverage, brute_force, tiny_cases


def _one_row_per_type(aspace: ActionSpace) -> np.ndarray:
    rows = np.zeros(aspace.n_types, dtype=np.int64)
    rows[aspace.type_of_row[::-1]] = np.arange(len(aspace.type_of_row))[::-1]
    return rows


def _cases(models, seeds=range(6)):
    """The tiny cases, and each once more with one person's ``count`` outside 0 … 3 (still rejected)."""
    for seed, model, (pipe, S, X, imm, inc) in tiny_cases(seeds, models):
        yield seed, model, (pipe, S, X, imm, inc)
        for val in (-2, 6):
            for i in range(len(S)):
                S2 = S.copy()
                S2.iloc[i, S2.columns.get_loc("count")] = val
                if pipe.predict(S2.iloc[i:i + 1])[0] == 0:
                    yield seed, model, (pipe, S2, X, imm, inc)
                    break


def _least_cost(C, D, k):
    """Brute force: the most people ``k`` actions cover, and the least total cost of doing so
    (each person at the cheapest of the chosen actions covering them)."""
    import itertools

    best = best_coverage(C, k)
    rows = [a for a in range(len(C)) if C[a].any()]
    least = np.inf
    for r in range(1, min(k, len(rows)) + 1):
        for sub in itertools.combinations(rows, r):
            cov = C[list(sub)].any(axis=0)
            if cov.sum() == best:
                least = min(least, float(np.where(C[list(sub)], D[list(sub)], np.inf).min(axis=0)[cov].sum()))
    return best, least


@pytest.mark.parametrize("model", sweep(["lr", "mlp", "forest", "gbt"], fast="mlp"))
def test_the_box_maximum_equals_brute_force(model):
    seen = 0
    for seed, _, (pipe, S, X, imm, inc) in _cases((model,)):
        tm = resolve_model(pipe)
        for Tmax in (1, 2, None):
            acts, C, _ = brute_force(pipe, S, X, imm, inc, Tmax, numeric="set")
            aspace = ActionSpace(tm, S, Tmax=Tmax, numeric="set")
            boxes = ActionBoxes.of(aspace)
            if boxes is None:
                assert not aspace.mutable
                continue
            Ct = C[:, _one_row_per_type(aspace)].astype(float)
            rng = np.random.default_rng(seed)
            for pi in (aspace.m, rng.random(aspace.n_types) * (rng.random(aspace.n_types) < 0.7)):
                want = float((Ct @ pi).max())
                for leaf_size in (1, 64):
                    res = boxes.maximise(pi, leaf_size=leaf_size)
                    assert res.finished, (seed, Tmax, leaf_size)
                    assert res.bound >= want - 1e-9, (seed, Tmax, leaf_size, res.bound, want)
                    assert res.value == pytest.approx(want), (seed, Tmax, leaf_size)
                    for act, v in zip(res.actions, res.values):
                        assert float(aspace.cover(act) @ pi) == pytest.approx(v)
            seen += 1
    assert seen >= 12


@pytest.mark.parametrize("model", sweep(["lr", "mlp", "forest", "gbt"], fast="gbt"))
@pytest.mark.parametrize("enumerate_work", [0, 100_000_000], ids=["boxes-or-mips", "enumeration"])
def test_explain_global_with_set_matches_brute_force(model, enumerate_work):
    """Every curve point: found ≤ brute force ≤ certified bound, equal when optimal, and
    then no cheaper than the least cost of covering that many; every reported cost is the
    brute-force cost of the assigned action; the fewest actions' bound ≤ brute force."""
    points = proven_cost = 0
    for seed, _, (pipe, S, X, imm, inc) in _cases((model,), range(4)):
        for Tmax in (1, 2):
            acts, C, D = brute_force(pipe, S, X, imm, inc, Tmax, numeric="set")
            res = gcf.explain_global(S, pipe, Tmax=Tmax, k=3, numeric="set", progress=False,
                                     enumerate_work=enumerate_work)
            assert res.validate(raise_on_error=False).ok
            for _, p in res.curve.iterrows():
                best, least = _least_cost(C, D, int(p["k"]))
                assert p["n_covered"] <= best <= p["upper_bound"], (seed, Tmax, p.to_dict(), best)
                points += 1
                if p["status"] == "optimal":
                    assert p["n_covered"] == best
                    total = p["mean_cost"] * p["n_covered"] if best else 0.0
                    assert total >= least - 1e-9
                    proven_cost += abs(total - least) <= 1e-9
            for j, spec in enumerate(res.specs):
                a = {s["feature"]: (s["op"], s["value"]) for s in spec}
                mine = (res.assignment == j).fillna(False).to_numpy(dtype=bool)
                row = acts.index(a)
                assert C[row][mine].all()
                np.testing.assert_allclose(res.cost.to_numpy()[mine], D[row][mine], atol=1e-9)
            few = gcf.explain_global(S, pipe, Tmax=Tmax, numeric="set", progress=False, enumerate_work=enumerate_work)
            coverable = C.any(axis=0)
            want_k = next((kk for kk in range(1, len(acts) + 1) if best_coverage(C, kk) == coverable.sum()), 0) \
                if coverable.any() else 0
            assert few.n_covered == int(coverable.sum())
            assert (few.lower_bound or 0) <= want_k <= few.n_actions
    assert points > 0
    assert proven_cost >= 0.8 * points, (proven_cost, points)


def test_a_box_of_set_values_outside_the_domain_keeps_no_type():
    """The box bound checks a set value's domain as :meth:`ActionSpace.apply` does (before, a
    box allowing only values outside [0, 1] kept every type alive); its maximum over such
    values equals brute force over the valid ones."""
    from groupcf.global_actions.boxes import _Box

    for _, _, (pipe, S, X, imm, inc) in tiny_cases(range(6), ("mlp",)):
        tm = resolve_model(pipe)
        aspace = ActionSpace(tm, S, Tmax=1, numeric="set")
        l = [f.name for f in aspace.feats].index("count")
        if l not in aspace.mutable:
            continue
        base = ActionBoxes.of(aspace)
        values = {m: base.V[j] for j, m in enumerate(base.feat)}
        values[l] = np.concatenate([[-0.5], values[l], [1.5, 2.0]])
        boxes = ActionBoxes(aspace, values)
        j = boxes.feat.index(l)
        M = len(boxes.feat)
        keep, lo, hi = np.zeros(M, dtype=bool), np.zeros(M, dtype=np.int64), np.zeros(M, dtype=np.int64)
        keep[:] = True
        keep[j], lo[j], hi[j] = False, len(values[l]) - 2, len(values[l])        # only 1.5 and 2.0
        box = _Box((), keep, lo, hi, np.arange(aspace.n_types))
        assert not boxes._input_boxes(box, box.alive)[2].any()
        keep[j], lo[j], hi[j] = False, 0, 1                                        # only -0.5
        assert not boxes._input_boxes(_Box((), keep, lo, hi, box.alive), box.alive)[2].any()
        _, C, _ = brute_force(pipe, S, X, imm, inc, 1, numeric="set")
        want = float((C[:, _one_row_per_type(aspace)].astype(float) @ aspace.m).max())
        res = boxes.maximise(aspace.m, leaf_size=1)
        assert res.finished and res.value == pytest.approx(want) and res.bound == pytest.approx(want)
        return
    pytest.skip("no tiny case with a mutable count")
