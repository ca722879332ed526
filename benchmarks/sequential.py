"""Consequence-aware sequential counterfactuals on the authors' experiment (Naumann & Ntoutsi,
ECML-PKDD 2021): their Keras models (as groupcf ReLU networks), action sets and start
instances, read from --data-dir (default ``$GROUPCF_CSCF_DATA``, else ../shared/data/cscf
beside the repository; never copied).

    python benchmarks/sequential.py --dataset adult --methods scf cscf --n 30
    python benchmarks/sequential.py --dataset german --methods scf --n 30

Writes one CSV row per instance and method (--out) and prints a markdown table of medians
beside the authors' published medians (../shared/reference/cscf_summary.csv).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from cscf import load_cscf  # benchmarks/cscf.py: the authors' models, actions, start instances

import groupcf as gcf
from groupcf.sequential.result import format_steps


def run(args) -> pd.DataFrame:
    D = load_cscf(args.dataset, args.data_dir)
    rows = []
    for method in args.methods:
        if method == "cscf" and D.dependencies is None:
            print(f"{args.dataset}: no dependency graph, cscf = scf; skipped", file=sys.stderr)
            continue
        for i in range(args.start, min(args.start + args.n, len(D.starts))):
            x = D.starts.iloc[i]
            t0 = time.perf_counter()
            e = gcf.explain_sequence(
                x, D.model(), D.actions, D.dependencies, discounted=(method == "cscf"),
                **D.explain_kwargs(), population=args.population, offspring=args.offspring,
                mutants=args.mutants, generations=args.generations, random_state=args.seed + i,
                bound=not args.no_bound, bound_time_limit=args.bound_time)
            rt = time.perf_counter() - t0
            P = e.pareto
            t2 = P[P["length"] <= 2]
            best = e.best(by="cost")
            rows.append({
                "dataset": args.dataset, "method": method, "instance": i, "runtime_s": rt,
                "pareto_size": len(P),
                "min_cost_T2": float(t2["cost"].min()) if len(t2) else np.nan,
                "min_cost_all": float(P["cost"].min()),
                "min_disc_cost_all": float(P["discounted_cost"].min()),
                "lower_bound": e.lower_bound if e.lower_bound is not None else np.nan,
                "gap": e.gap if e.gap is not None else np.nan,
                "best_sequence": format_steps(best["steps"]),
                "final_state": json.dumps(best["final_state"]),
                "optimal": e.is_optimal, "bound_status": e.stats.get("bound_status"),
                "bound_s": e.stats.get("bound_seconds", 0.0),
                "n_solutions_len_le2": len(t2)})
            e.validate()
            print(f"{args.dataset} {method} #{i}: {rt:.2f} s, min cost {rows[-1]['min_cost_all']:.4g}, "
                  f"T2 {rows[-1]['min_cost_T2']:.4g}, bound {rows[-1]['lower_bound']:.4g}", file=sys.stderr)
    return pd.DataFrame(rows)


def authors_per_instance(folder: Path, dataset: str, method: str) -> pd.DataFrame:
    """Per start instance, the authors' own results (result JSONs of ppnaumann/CSCF @ ea8af1f,
    folder results/my_method): min undiscounted cost over their Pareto sequences of length <= 2
    and over all, and the runtime."""
    recs = []
    for f in sorted((folder / f"{dataset}_{method}").glob("*.json")):
        d = json.loads(f.read_text())
        A = len(d["pheno"][0]) // 2 if d.get("pheno") else 0
        lens = [sum(1 for k in p[:A] if k >= 0) for p in d.get("pheno", [])]
        costs = [c[0] for c in d.get("summed_costs", [])]
        t2 = [c for c, n in zip(costs, lens) if n <= 2]
        recs.append({"instance": d["x0_id"], "authors_min_cost_T2": min(t2) if t2 else np.nan,
                     "authors_min_cost_all": min(costs) if costs else np.nan,
                     "authors_runtime_s": d["runtime"]})
    return pd.DataFrame(recs)


def same_people(df: pd.DataFrame, folder: Path) -> str:
    """Per-person comparison with the authors' results for the same start instances."""
    lines = [("| dataset | method | people (both have a T2 sequence) | median min_cost_T2 ours | "
             "median min_cost_T2 authors | ours lower / equal (1e-3) / higher | median min_cost_all ours "
             "/ authors | median runtime s ours / authors |"), "|---|---|---|---|---|---|---|---|"]
    for (ds, m), g in df.groupby(["dataset", "method"], sort=False):
        a = authors_per_instance(folder, ds, m)
        if a.empty:
            continue
        j = g.merge(a, on="instance")
        both = j.dropna(subset=["min_cost_T2", "authors_min_cost_T2"])
        d = both["min_cost_T2"] - both["authors_min_cost_T2"]
        tol = 1e-3 * np.maximum(1.0, both["authors_min_cost_T2"].abs())
        lines.append(
            f"| {ds} | {m} | {len(both)} of {len(j)} | {both.min_cost_T2.median():.4g} | "
            f"{both.authors_min_cost_T2.median():.4g} | {int((d < -tol).sum())} / "
            f"{int((d.abs() <= tol).sum())} / {int((d > tol).sum())} | {j.min_cost_all.median():.4g} / "
            f"{j.authors_min_cost_all.median():.4g} | {j.runtime_s.median():.2f} / {j.authors_runtime_s.median():.1f} |")
    return "\n".join(lines)


def reference_path(args) -> Path:
    """``--reference``, else the first of ``../shared/reference`` beside the repository and
    ``reference`` two levels above the data folder that holds ``cscf_summary.csv``."""
    if args.reference:
        return Path(args.reference)
    near = [ROOT / ".." / "shared" / "reference", Path(args.data_dir).resolve().parents[1] / "reference"]
    return next((d / "cscf_summary.csv" for d in near if (d / "cscf_summary.csv").exists()),
                near[0] / "cscf_summary.csv")


def table(df: pd.DataFrame, ref_path: Path) -> str:
    if not ref_path.exists():
        print(f"authors' medians not found at {ref_path} (--reference): shown as n/a", file=sys.stderr)
    ref = pd.read_csv(ref_path) if ref_path.exists() else pd.DataFrame()
    lines = [("| dataset | method | n | median runtime s (authors) | median min_cost_T2 (authors) | "
             "median min_cost_all (authors) | median min_disc_cost_all (authors) | median pareto size "
             "(authors) | median lower bound | median gap to bound | optimal | median bound s |"),
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def auth(ds, m, metric, subset):
        if ref.empty:
            return "n/a"
        r = ref[(ref.dataset == ds) & (ref.method == m) & (ref.metric == metric) & (ref.subset == subset)]
        return f"{r['median'].iloc[0]:.4g}" if len(r) else "n/a"

    for (ds, m), g in df.groupby(["dataset", "method"], sort=False):
        gap = (g["min_cost_all"] - g["lower_bound"]) / g["min_cost_all"]
        lines.append(
            f"| {ds} | {m} | {len(g)} | {g.runtime_s.median():.2f} ({auth(ds, m, 'runtime_s', 'all_runs')}) | "
            f"{g.min_cost_T2.median():.4g} ({auth(ds, m, 'min_cost_T2', 'paper_filtered')}) | "
            f"{g.min_cost_all.median():.4g} ({auth(ds, m, 'min_cost_all', 'all_available')}) | "
            f"{g.min_disc_cost_all.median():.4g} ({auth(ds, m, 'min_disc_cost_all', 'all_available')}) | "
            f"{g.pareto_size.median():.0f} ({auth(ds, m, 'pareto_size', 'all_runs')}) | "
            f"{g.lower_bound.median():.4g} | {100 * gap.median():.1f} % | {int(g.optimal.sum())}/{len(g)} | "
            f"{g.bound_s.median():.2f} |")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    """The command line (defaults read ``$GROUPCF_CSCF_DATA`` when it is called)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=["adult", "german"], default="adult")
    ap.add_argument("--methods", nargs="+", choices=["scf", "cscf"], default=["scf"])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--start", type=int, default=0, help="first start instance (with --n: a slice, for short runs)")
    ap.add_argument("--data-dir", default=os.environ.get("GROUPCF_CSCF_DATA", str(ROOT / ".." / "shared" / "data" / "cscf")),
                    help="the authors' data (default: $GROUPCF_CSCF_DATA, else ../shared/data/cscf)")
    ap.add_argument("--reference", default=None,
                    help="the authors' published medians (default: ../shared/reference/cscf_summary.csv beside "
                         "the repository, else beside the data folder: <data-dir>/../../reference)")
    ap.add_argument("--out", default=None, help="CSV path (default benchmarks/results/sequential_<dataset>.csv)")
    ap.add_argument("--population", type=int, default=500)
    ap.add_argument("--offspring", type=int, default=400)
    ap.add_argument("--mutants", type=int, default=100)
    ap.add_argument("--generations", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bound-time", type=float, default=10.0, help="seconds for the certified bound")
    ap.add_argument("--no-bound", action="store_true")
    ap.add_argument("--authors-results", default=None,
                    help="folder results/my_method of a checkout of ppnaumann/CSCF: per-person comparison")
    return ap


def main(argv=None):
    args = parser().parse_args(argv)
    df = run(args)
    out = Path(args.out or ROOT / "benchmarks" / "results" / f"sequential_{args.dataset}.csv")
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False)
    print(table(df, reference_path(args)))
    if args.authors_results:
        print()
        print(same_people(df, Path(args.authors_results)))
    print(f"\nrows: {out}")


if __name__ == "__main__":
    main()
