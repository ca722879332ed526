"""Every action of at most ``--tmax`` (1 or 2) features on a setting of ``global_actions.py``,
scored by groupcf's numpy model path: the exact best coverage of one action, to judge a
certified bound that stays above what groupcf found (BENCHMARKS.md "Global actions", the
bound within 1 point).

A categorical / binary feature: every category. A numeric feature: every shift on the grid
of its integer steps when the feature is integer (exhaustive: a shift of an integer feature
is an integer), else ``--steps`` equal steps across ±range (then not exhaustive: said so).
With ``--tmax 2`` every combination of two of them on different features too. Also the
best pair of such actions (k = 2) when ``--pairs``.

``python benchmarks/global_brute.py --dataset compas --model gbt [--tmax 2] [--pairs]``
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import global_actions as ga  # noqa: E402


def single_actions(aspace, steps: int = 1000):
    """All single-feature actions of ``aspace`` (module docstring) and whether the
    enumeration is exhaustive."""
    from groupcf.global_actions.actions import Action

    acts, exhaustive = [], True
    for l in aspace.mutable:
        f = aspace.feats[l]
        if f.encoding == "onehot":
            acts += [Action(((l, c),)) for c in range(len(f.categories))]
        elif f.encoding == "binary":
            acts += [Action(((l, v),)) for v in (0, 1)]
        else:
            span = f.high - f.low
            if f.integer:
                raw = np.arange(-int(round(span)), int(round(span)) + 1)
            else:
                raw, exhaustive = np.linspace(-span, span, 2 * steps + 1), False
            if f.increase_only:
                raw = raw[raw > 0]         # a decrease never covers anyone
            acts += [Action(((l, float(r) / span),)) for r in raw if r != 0]
    return acts, exhaustive


def double_actions(singles):
    """Every combination of two single-feature actions on different features."""
    from groupcf.global_actions.actions import Action

    return [Action(tuple(sorted(a.changes + b.changes))) for a, b in itertools.combinations(singles, 2)
            if a.features[0] != b.features[0]]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--model", required=True, choices=["lr", "gbt", "mlp"])
    ap.add_argument("--max-people", type=int, default=200)
    ap.add_argument("--tmax", type=int, default=1, choices=[1, 2])
    ap.add_argument("--pairs", action="store_true", help="also the best two actions (k = 2)")
    args = ap.parse_args(argv)
    from groupcf.global_actions.actions import ActionSpace
    from groupcf.models import resolve_model

    t0, c0 = time.perf_counter(), time.process_time()
    _, S, pipe, rules, _ = ga.setup(args.dataset, args.model, args.max_people)
    aspace = ActionSpace(resolve_model(pipe), S, args.tmax, "shift", ga.scorer_weights(pipe, rules))
    acts, exhaustive = single_actions(aspace)
    C = aspace.cover_many(acts)
    if args.tmax == 2:
        doubles = double_actions(acts)
        acts = acts + doubles
        C = np.vstack([C, aspace.cover_many(doubles)])
    m = aspace.m
    cov = C.astype(float) @ m
    best = np.argsort(-cov, kind="stable")[:5]
    print(f"{args.dataset} / {args.model}: {len(S)} people, {aspace.n_types} types, {len(acts)} "
          f"actions of <= {args.tmax} features ({'exhaustive' if exhaustive else 'a grid: NOT exhaustive'})", flush=True)
    for j in best:
        print(f"  {cov[j]:.0f} covered: {aspace.describe(acts[j])}", flush=True)
    print(f"  anyone covered by some single action: {m[C.any(axis=0)].sum():.0f}", flush=True)
    if args.pairs and (cov > 0).sum() > 3000:
        print(f"  pairs skipped: {(cov > 0).sum()} actions cover someone (more than 3,000)", flush=True)
    elif args.pairs:
        keep = np.flatnonzero(cov > 0)
        Ck = C[keep]
        top = 0.0
        pair = None
        for i, j in itertools.combinations(range(len(keep)), 2):
            v = float(m[Ck[i] | Ck[j]].sum())
            if v > top:
                top, pair = v, (keep[i], keep[j])
        if pair is not None:
            print(f"  best pair: {top:.0f} covered: {aspace.describe(acts[pair[0]])} | {aspace.describe(acts[pair[1]])}",
                  flush=True)
    print(f"{time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} s CPU", flush=True)


if __name__ == "__main__":
    main()
