"""The certified bound against the coverage found, with a generous time limit, and why a gap
stays (BENCHMARKS.md "Global actions", issue 23 target "bound within 1 point").

One ``explain_global(S, pipe, Tmax=, k=K)`` call on a setting of ``global_actions.py``
(same people, model, rules, cost weights), watched from outside: every column-generation
run of the curve (``groupcf.global_actions.search.column_generation``: why it stopped,
converged or not, LP value, bound) and every exact pricing MIP (``ActionMIP.best``: status,
seconds). One CSV row per ``k``: coverage found, bound, status, and the curve point's
column generation, so a gap reads as

* ``converged`` (pricing proved no column improves): the bound is the LP value of the
  master over *all* actions; a gap is the LP bound's weakness (or an integer master over
  the pool that is not the integer optimum over all actions: no branch and price here);
* not converged (``deadline`` / ``level``: an exact pricing MIP stopped by its time cap,
  no proof): the bound is the Lagrangian bound of the last round, a gap may close with time.

``PYTHONPATH=$PWD python benchmarks/global_bound_gap.py --dataset compas --model gbt --tmax 1
--k 2 --time-limit 300 --out benchmarks/results/global_bound_gap.csv --append``
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import global_actions as ga  # noqa: E402
import global_scorer as gs  # noqa: E402

import groupcf as gcf  # noqa: E402


def watched_call(S, pipe, Tmax, k, cost, time_limit, **opts):
    """``explain_global`` with its column-generation runs and pricing MIPs recorded:
    ``(result, runs, mips, wall, cpu)``; ``runs``: one dict per run, in order."""
    import groupcf.global_actions.search as search_mod
    from groupcf.global_actions.pricing import ActionMIP

    runs, mips, inside = [], [], []
    cg, best = search_mod.column_generation, ActionMIP.best

    def cg_spy(*a, **kw):
        w0, c0, n0 = time.perf_counter(), time.process_time(), len(mips)
        inside.append(True)
        try:
            out = cg(*a, **kw)
        finally:
            inside.pop()
        mine = mips[n0:]
        runs.append({"phase": kw.get("phase", ""), "stopped": out.stopped, "converged": out.converged,
                     "lp": out.lp_value, "cg_bound": out.bound, "iterations": out.iterations,
                     "cg_s": time.perf_counter() - w0, "cg_cpu_s": time.process_time() - c0,
                     "pricing_mips": len(mine), "pricing_optimal": sum(m["status"] == "optimal" for m in mine),
                     "pricing_s": sum(m["s"] for m in mine)})
        return out

    def best_spy(self, pi, *a, **kw):
        w0 = time.perf_counter()
        out = best(self, pi, *a, **kw)
        mips.append({"status": out.status.value, "s": time.perf_counter() - w0, "relaxed": kw.get("relaxed", False),
                     "in_cg": bool(inside), "bound": out.bound})
        return out

    search_mod.column_generation, ActionMIP.best = cg_spy, best_spy
    w0, c0 = time.perf_counter(), time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = gcf.explain_global(S, pipe, Tmax=Tmax, k=k, cost=cost, time_limit=time_limit, progress=False,
                                     **opts)
    finally:
        search_mod.column_generation, ActionMIP.best = cg, best
    return res, runs, mips, time.perf_counter() - w0, time.process_time() - c0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--model", required=True, choices=["lr", "gbt", "mlp"])
    ap.add_argument("--tmax", type=ga._tmax, required=True)
    ap.add_argument("--k", type=int, required=True, help="the curve 1 ... k in one call")
    ap.add_argument("--max-people", type=int, default=200)
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--out", default="benchmarks/results/global_bound_gap.csv")
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--enumerate-work", type=int, default=None,
                    help="explain_global's enumerate_work (0: the MIP pricing levels only; default: the library's)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    _, S, pipe, rules, _ = ga.setup(args.dataset, args.model, args.max_people)
    load0 = os.getloadavg()[0]
    res, runs, mips, dt, cpu = watched_call(S, pipe, args.tmax, args.k, ga.scorer_weights(pipe, rules),
                                            args.time_limit, **({} if args.enumerate_work is None else
                                                                {"enumerate_work": args.enumerate_work}))
    curve_runs = [r for r in runs if "(k=" in r["phase"]]
    # MIPs outside column generation: the k = 1 best single action (additive models, <= 50 types)
    single = [x for x in mips if not x["in_cg"]]
    by_k = {int(r["phase"].split("k=")[1].rstrip(")")): r for r in curve_runs}
    sc = gs.score(S, res.specs, pipe.predict, rules)
    rows = []
    for _, p in res.curve.iterrows():
        kk = int(p["k"])
        r = by_k.get(kk, {})
        rows.append({"dataset": args.dataset, "model": args.model, "n_people": len(S),
                     "Tmax": "None" if args.tmax is None else args.tmax, "k": kk, "time_limit": args.time_limit,
                     "n_covered": int(p["n_covered"]), "upper_bound": int(p["upper_bound"]),
                     "gap_pp": 100 * (int(p["upper_bound"]) - int(p["n_covered"])) / len(S), "status": p["status"],
                     "cg_stopped": r.get("stopped", "not run (k-1 covers all, or no time)"), "cg_converged": r.get("converged"),
                     "cg_lp": r.get("lp"), "cg_bound": r.get("cg_bound"), "cg_iterations": r.get("iterations"),
                     "cg_s": r.get("cg_s"), "pricing_mips": r.get("pricing_mips", 0),
                     "pricing_optimal": r.get("pricing_optimal", 0), "pricing_s": r.get("pricing_s", 0.0),
                     "best_single": ";".join(f"{x['status']} {x['s']:.0f}s bound {x['bound']}" for x in single)
                     if kk == 1 else "",
                     "scorer_covered_last_k": sc.n_covered if kk == args.k else math.nan,
                     "enumerate_work": "default" if args.enumerate_work is None else args.enumerate_work,
                     "enumeration": str(res.stats.get("enumeration", "")) if kk == 1 else "",
                     "time_s": dt, "cpu_s": cpu, "load_start": load0, "load_end": os.getloadavg()[0]})
        print(f"k={kk:2d} covered {rows[-1]['n_covered']:3d} bound {rows[-1]['upper_bound']:3d} "
              f"({rows[-1]['gap_pp']:4.1f} pp) {p['status']:10s} cg {rows[-1]['cg_stopped']:12s} "
              f"lp {r.get('lp') or math.nan:8.2f} bound {r.get('cg_bound') or math.nan:8.2f} "
              f"{rows[-1]['pricing_mips']} MIPs ({rows[-1]['pricing_optimal']} optimal, "
              f"{rows[-1]['pricing_s']:.0f} s) {rows[-1]['best_single']}", flush=True)
    print(f"{dt:.0f} s wall, {cpu:.0f} s CPU, load {load0:.1f} -> {os.getloadavg()[0]:.1f}", flush=True)
    ga.write_results(pd.DataFrame(rows), args.out, args.append, t0)


if __name__ == "__main__":
    main()
