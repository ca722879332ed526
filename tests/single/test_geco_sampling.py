"""GeCo's batched group re-sampling equals the per-group loop it replaces, random
numbers included (same ``random_state``, same search)."""
from __future__ import annotations

import numpy as np
import pytest

from groupcf.single.geco.sampling import GroupSamplers, _GroupSampler


def _samplers(rng, n_features=7):
    """Groups of one to three features (disjoint), with frequency weights, some tuples equal
    to the instance's and some infeasible (weight 0 in ``cw_change``)."""
    groups, f = [], 0
    while f < n_features:
        width = min(int(rng.integers(1, 4)), n_features - f)
        groups.append(list(range(f, f + width)))
        f += width
    out = []
    for members in groups:
        k = int(rng.integers(1, 9))
        tuples = rng.integers(0, 6, size=(k, len(members)))
        same = rng.random((k, len(members))) < 0.3
        cnt = rng.integers(1, 20, size=k).astype(float)
        change = ~same.all(axis=1) & (rng.random(k) < 0.8)
        change[0] = True
        out.append(_GroupSampler(members, tuples, same, np.cumsum(cnt * change), np.cumsum(cnt)))
    return out


def _loop_apply(smp, M, V, rows, rng, allow_revert):
    """The reference: one group re-sampled in ``rows`` (GeCo's per-group loop before
    ``GroupSamplers``): where ``allow_revert``, tuples equal to the instance's may be drawn."""
    idx = np.empty(len(rows), dtype=np.int64)
    for flag, cwt in ((True, smp.cw_any), (False, smp.cw_change)):
        sel = np.flatnonzero(allow_revert == flag)
        if len(sel):
            u = rng.random(len(sel)) * cwt[-1]
            idx[sel] = np.searchsorted(cwt, u, side="right")
    same = smp.same[idx]
    mem = np.asarray(smp.members)
    M[rows[:, None], mem[None, :]] = ~same
    V[rows[:, None], mem[None, :]] = np.where(same, -1, smp.tuples[idx])


@pytest.mark.parametrize("seed", range(6))
def test_batched_resampling_equals_the_loop(seed):
    rng = np.random.default_rng(seed)
    samplers = _samplers(rng)
    batch = GroupSamplers(samplers)
    n = 200
    M0 = rng.random((n, 7)) < 0.3
    V0 = np.where(M0, rng.integers(0, 6, size=(n, 7)), -1).astype(np.int32)
    rows = np.sort(rng.choice(n + 50, size=n, replace=False)) % n if seed % 2 else np.arange(n)
    rows = np.unique(rows)
    which = rng.integers(len(samplers), size=len(rows))
    revert = batch.changes_group(M0[rows], which)
    # the loop, group by group
    M1, V1, r1 = M0.copy(), V0.copy(), np.random.default_rng(100 + seed)
    for s, smp in enumerate(samplers):
        sel = which == s
        if sel.any():
            _loop_apply(smp, M1, V1, rows[sel], r1, revert[sel])
    M2, V2, r2 = M0.copy(), V0.copy(), np.random.default_rng(100 + seed)
    batch.apply(M2, V2, rows, which, r2, revert)
    np.testing.assert_array_equal(M1, M2)
    np.testing.assert_array_equal(V1, V2)
    assert r1.random() == r2.random()                       # the same numbers were drawn


def test_changes_group_reads_only_the_group():
    rng = np.random.default_rng(1)
    samplers = _samplers(rng)
    batch = GroupSamplers(samplers)
    M = rng.random((50, 7)) < 0.4
    which = rng.integers(len(samplers), size=50)
    want = np.array([M[i, samplers[s].members].any() for i, s in enumerate(which)])
    np.testing.assert_array_equal(batch.changes_group(M, which), want)


def test_geco_samplers_from_cached_counts_equal_the_cumulative_sums(german_binned):
    """``GeCo._samplers``: a one-feature group without rules is built from the feature's
    cached keys and cumulative counts (``cw_change`` = ``cw_any`` less the instance's value
    from its index on); every array equals the group's cumulative sums computed afresh,
    bit for bit, instance after instance (the cache is not changed by one)."""
    from groupcf.features.validation import validate_instance
    from groupcf.single.geco import GeCo

    pipe, rejected, X_tr = german_binned
    geco = GeCo(pipe, X_tr)
    dom = geco.domain
    n_single = 0
    for i in [0, 1, 2, 0]:
        x = validate_instance(rejected.iloc[i], None, columns=dom.names)
        xkeys = dom.instance_keys(x)
        allowed = geco.bound.allowed(xkeys) if geco._has_rules else [None] * len(dom)
        got = {tuple(s.members): s for s in geco._samplers(xkeys, allowed)}
        for members in geco.groups:
            tup, cnt = dom.tuples(members)
            # the reference, tuple by tuple: running sums of the counts of the feasible tuples
            # and of those that change the group
            same, change, cw_change, cw_any, run_c, run_a = [], [], [], [], 0.0, 0.0
            for r in range(len(tup)):
                eq = [bool(dom.keys[l][tup[r, j]] == xkeys[l]) for j, l in enumerate(members)]
                ok = all(allowed[l] is None or bool(allowed[l][tup[r, j]]) for j, l in enumerate(members))
                same.append(eq)
                change.append(ok and not all(eq))
                run_c += float(cnt[r]) if change[-1] else 0.0
                run_a += float(cnt[r]) if ok else 0.0
                cw_change.append(run_c)
                cw_any.append(run_a)
            if not any(change):
                assert tuple(members) not in got
                continue
            s = got[tuple(members)]
            assert np.array_equal(s.tuples, tup) and np.array_equal(s.same, np.array(same, dtype=bool))
            assert np.array_equal(s.cw_change, cw_change) and np.array_equal(s.cw_any, cw_any)
            n_single += len(members) == 1 and allowed[members[0]] is None
    assert n_single >= 2                     # the cached path ran


def test_weights_must_be_whole_counts():
    """The one-search draw relies on whole-number cumulative weights (the data's counts):
    anything else is refused at construction, naming what is wrong."""
    members, tuples, same = [0], np.array([[0], [1]]), np.array([[True], [False]])
    GroupSamplers([_GroupSampler(members, tuples, same, np.array([0.0, 3.0]), np.array([2.0, 5.0]))])
    for bad in (np.array([0.5, 3.0]), np.array([0.0, np.inf]), np.array([-1.0, 3.0]), np.array([3.0, 2.0]),
                np.zeros(0)):
        with pytest.raises(ValueError, match="whole numbers"):
            GroupSamplers([_GroupSampler(members, tuples, same, bad, np.array([2.0, 5.0]))])
