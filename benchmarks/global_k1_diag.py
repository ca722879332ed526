"""Why a peer's one action beats groupcf's at ``k = 1`` on a grid cell (diagnosis behind
BENCHMARKS.md "Global actions", "Default credit MLP, k = 1").

For each ``Tmax``, on the setting of ``global_actions.py`` (same people, model, rules,
scorer and cost weights):

1. GLOBE-CE's ``k = 1`` action (one scaled direction, its own rounding), scored; how many
   different *changes* it makes to the people it covers (a rounded categorical
   translation moves only the people whose category it outweighs: one GLOBE-CE "action"
   can be several groupcf actions), the same action read as groupcf's ``set`` (everyone
   moved), and, as a groupcf :class:`~groupcf.global_actions.actions.Action`, its cover at
   the threshold and at the MIPs' ``threshold + margin`` with the hardest person's score;
2. groupcf's ``k = 1`` as the grid reads it (the curve point of one ``k = --curve-k``
   call: the integer master's choice, not polished), and ``explain_global(k=1)`` without
   and with the polish, each scored, with wall and CPU seconds;
3. the exact least-cost action covering every coverable person (``ActionMIP.cheapest``
   over all types: what the polish solves at ``k = 1``).

``PYTHONPATH=$PWD python benchmarks/global_k1_diag.py --dataset credit --model mlp
--tmax 1 2 3 --globece /work/venvs/globece-src`` (one ``Tmax`` per call keeps a bench-lock
hold short).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import global_actions as ga  # noqa: E402
import global_scorer as gs  # noqa: E402

import groupcf as gcf  # noqa: E402


def patterns(S, spec, covered) -> int:
    """How many groupcf actions the spec is on the covered people: per ``map`` change, a
    person either ends at its target (moved, or already there: a groupcf ``set``) or keeps
    another category (no change of that feature); distinct such patterns (shifts are the
    same for everyone)."""
    X2 = gs.apply_action(S, spec)
    maps = [(c["feature"], next(iter(set(c["value"].values())))) for c in spec if c["op"] == "map"]
    seen = {tuple(str(X2[f].iloc[i]) == str(t) for f, t in maps) for i in np.flatnonzero(covered)}
    return len(seen)


def as_set(spec) -> list:
    """A GLOBE-CE spec with every ``map`` read as ``set`` to its (single) target."""
    out = []
    for c in spec:
        if c["op"] == "map":
            targets = set(c["value"].values())
            if len(targets) != 1:
                raise ValueError(f"map of {c['feature']} has {len(targets)} targets")
            out.append({"feature": c["feature"], "op": "set", "value": targets.pop()})
        else:
            out.append(dict(c))
    return out


def to_action(aspace, spec):
    """A ``set``/``shift`` spec as groupcf's :class:`Action` over ``aspace``."""
    from groupcf.global_actions.actions import Action

    names = [f.name for f in aspace.feats]
    changes = []
    for c in spec:
        l = names.index(c["feature"])
        f = aspace.feats[l]
        if c["op"] == "set":
            changes.append((l, list(f.categories).index(c["value"])))
        else:
            changes.append((l, float(c["value"]) / (f.high - f.low)))
    return Action(tuple(sorted(changes)))


def pool_report(S, pipe, Tmax, cost, time_limit, globece=None) -> None:
    """``explain_global(k=1, polish=False)`` watched: where its column comes from, the pool
    columns covering every coverable person and their cheapest, and whether GLOBE-CE's
    action (a ``set``/``shift`` spec) is in the pool."""
    _, seen = ga.explain_watched(S, pipe, Tmax=Tmax, k=1, cost=cost, time_limit=time_limit, polish=False)
    aspace, res = seen["aspace"], seen["search"]
    pool, m = res.pool, aspace.m
    full = float(m[res.coverable].sum())
    cols = pool.columns
    sources = {}
    for c in cols:
        sources[c.source] = sources.get(c.source, 0) + 1
    print(f"  pool: {len(cols)} columns by source {sources}", flush=True)
    chosen = res.curve[0].chosen[0] if res.curve and res.curve[0].chosen else None
    if chosen is not None:
        c = cols[chosen]
        print(f"  k=1 chose column {chosen} (source {c.source!r}): {aspace.describe(c.payload)}", flush=True)
    alls = [(float((m * c.element_costs)[c.cover].sum()) / full, c) for c in cols if m[c.cover].sum() >= full - 1e-9]
    alls.sort(key=lambda t: t[0])
    print(f"  {len(alls)} pool columns cover all {full:.0f}; cheapest: "
          + "; ".join(f"{cost:.3f} ({c.source}: {aspace.describe(c.payload)})" for cost, c in alls[:3]), flush=True)
    if globece is not None:
        key = to_action(aspace, globece).key
        print(f"  GLOBE-CE's action in the pool: {key in pool}", flush=True)


def _score_line(name, S, specs, pipe, rules, dt=None, cpu=None, extra=""):
    sc = gs.score(S, specs, pipe.predict, rules)
    t = "" if dt is None else f"  {dt:6.1f} s wall / {cpu:6.1f} s CPU"
    print(f"  {name:44s} {sc.n_covered:4d} covered ({100 * sc.coverage:5.1f} %)  mean cost "
          f"{sc.mean_cost if sc.n_covered else math.nan:6.3f}{t}{extra}", flush=True)
    for s in specs:
        print(f"      {s}", flush=True)
    return sc


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="credit")
    ap.add_argument("--model", default="mlp")
    ap.add_argument("--max-people", type=int, default=200)
    ap.add_argument("--tmax", nargs="+", type=ga._tmax, default=[1, 2, 3])
    ap.add_argument("--globece", default=os.environ.get("GLOBECE_PATH"))
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--curve-k", type=int, default=10, help="the grid's one call per Tmax")
    ap.add_argument("--steps", nargs="+", default=["globece", "curve", "k1", "cheapest"],
                    choices=["globece", "curve", "k1", "pool", "cheapest"])
    ap.add_argument("--cheapest-time", type=float, default=None, help="time limit of step 3 (default --time-limit)")
    args = ap.parse_args(argv)
    from groupcf.global_actions.actions import ActionSpace
    from groupcf.global_actions.pricing import ActionMIP
    from groupcf.models import resolve_model

    X_tr, S, pipe, rules, _ = ga.setup(args.dataset, args.model, args.max_people)
    w = ga.scorer_weights(pipe, rules)
    print(f"{args.dataset} / {args.model}: {len(S)} people; load {os.getloadavg()[0]:.1f}", flush=True)
    for Tmax in args.tmax:
        print(f"\nTmax = {Tmax}", flush=True)
        tm = resolve_model(pipe)
        aspace = ActionSpace(tm, S, Tmax, "shift", w)
        flat = None
        if args.globece and "globece" in args.steps:
            from global_peers import run_globece
            spec = run_globece(args.globece, X_tr, S, pipe.predict, rules, [1], Tmax=Tmax, pipe=pipe)[1][0]
            if spec:
                sc = _score_line("GLOBE-CE k=1", S, spec, pipe, rules)
                covered = sc.best >= 0
                print(f"      = {patterns(S, spec[0], covered)} groupcf action(s) on the people it covers", flush=True)
                flat = as_set(spec[0])
                _score_line("GLOBE-CE k=1 read as groupcf's set", S, [flat], pipe, rules)
                act = to_action(aspace, flat)
                Zp, valid = aspace.apply(act)
                s = np.full(aspace.n_types, -np.inf)
                s[valid] = aspace.embedding.score(Zp[valid]) - aspace.tau
                m = aspace.m
                ok = s >= 0
                print(f"      as a groupcf Action: covers {m[ok].sum():.0f} at tau, "
                      f"{m[s >= aspace.margin].sum():.0f} at tau + margin ({aspace.margin:g}); hardest covered "
                      f"score - tau = {s[ok].min() if ok.any() else math.nan:.3g}; groupcf cost "
                      f"{(m[ok] * aspace.costs(act)[ok]).sum() / max(m[ok].sum(), 1):.3f}", flush=True)
        if "curve" in args.steps:
            rows, dt, cpu = _timed(lambda T=Tmax: ga.run_groupcf_curve(S, pipe, rules, T, [1, args.curve_k],
                                                                     args.time_limit))
            specs, _, own = rows[1]
            _score_line(f"groupcf curve point k=1 of k={args.curve_k}", S, specs, pipe, rules, dt, cpu,
                        f"  bound {own['upper_bound_coverage']:.3f}")
        for polish in (False, True) if "k1" in args.steps else ():
            def call(polish=polish, Tmax=Tmax):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return gcf.explain_global(S, pipe, Tmax=Tmax, k=1, cost=w, time_limit=args.time_limit,
                                              progress=False, polish=polish)
            res, dt, cpu = _timed(call)
            _score_line(f"groupcf k=1, polish={polish}", S, res.specs, pipe, rules, dt, cpu,
                        f"  bound {res.curve['upper_bound_coverage'].iloc[-1]:.3f} {res.status.value}")
        if "pool" in args.steps:
            pool_report(S, pipe, Tmax, w, args.time_limit, globece=flat if args.globece and "globece" in args.steps
                        else None)
        if "cheapest" not in args.steps:
            continue
        mip = ActionMIP(aspace, "highs")
        all_types = list(range(aspace.n_types))
        r, dt, cpu = _timed(lambda mip=mip, types=all_types, limit=args.cheapest_time or args.time_limit:
                            mip.cheapest(types, time_limit=limit))
        if r.status.has_solution:
            _score_line("exact cheapest action covering everyone", S, [aspace.spec(r.actions[0])], pipe, rules,
                        dt, cpu, f"  MIP {r.status.value}, objective/n {r.objective / len(S):.3f}, "
                        f"bound/n {(r.bound or math.nan) / len(S):.3f}")
        else:
            print(f"  exact cheapest action covering everyone: {r.status.value} ({dt:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
