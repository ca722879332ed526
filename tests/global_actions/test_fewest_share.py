"""``k=None, min_coverage=``: the fewest actions reaching a share. Its certified lower bound is
the fewest actions whose certified upper bound reaches the share (it was the bound for covering
everyone coverable, so the summary read "1 action … (certified lower bound 2)"); brute force
on tiny cases: lower bound ≤ the fewest that reach the share ≤ the actions returned."""
from __future__ import annotations

import math

import groupcf as gcf
from tests.reference.global_actions import best_coverage, brute_force, tiny_cases


def test_the_fewest_actions_reaching_a_share_match_brute_force():
    seen = 0
    for _seed, _, (pipe, S, X, imm, inc) in tiny_cases(range(8), ("lr", "mlp")):
        acts, C, _ = brute_force(pipe, S, X, imm, inc, 1)
        n = len(S)
        best = [best_coverage(C, kk) for kk in range(1, 4)]
        if best[0] == 0 or best[0] == best[-1]:
            continue                                   # one action already reaches what three do
        share = best[0] / n                            # one action reaches it, covering everyone needs more
        res = gcf.explain_global(S, pipe, Tmax=1, min_coverage=share, progress=False)
        target = math.ceil(share * n - 1e-9)
        want = next(kk for kk in range(1, len(acts) + 1) if best_coverage(C, kk) >= target)
        assert want == 1
        assert res.n_covered >= target
        assert res.lower_bound <= want <= res.n_actions
        assert res.stats["share_target"] == target
        if res.is_optimal:
            assert res.n_actions == want
        text = res.summary()
        assert f"Fewest actions covering at least {target} people: {res.n_actions} " \
               f"(certified lower bound {res.lower_bound})" in text
        full = gcf.explain_global(S, pipe, Tmax=1, progress=False)        # everyone coverable: unchanged
        assert "share_target" not in full.stats and "every coverable person" in full.summary()
        seen += 1
    assert seen >= 3


def test_a_share_no_action_set_reaches_falls_back_to_everyone_coverable():
    """A share above what is coverable: the answer is the fewest actions covering everyone
    coverable, with that bound and status, as without ``min_coverage``."""
    for _seed, _, (pipe, S, X, imm, inc) in tiny_cases(range(8), ("lr",)):
        _, C, _ = brute_force(pipe, S, X, imm, inc, 1)
        coverable = int(C.any(axis=0).sum())
        if coverable == len(S) or coverable == 0:
            continue
        res = gcf.explain_global(S, pipe, Tmax=1, min_coverage=1.0, progress=False)
        full = gcf.explain_global(S, pipe, Tmax=1, progress=False)
        assert "share_target" not in res.stats and "every coverable person" in res.summary()
        assert (res.n_covered, res.n_actions, res.lower_bound, res.status) == \
            (full.n_covered, full.n_actions, full.lower_bound, full.status)
        return
    raise AssertionError("no tiny case with someone uncoverable")
