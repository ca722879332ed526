"""Before / after table of MACE (and GeCo) on tree ensembles from ``single.py`` runs.

    python benchmarks/mace_trees_table.py benchmarks/results/mace_trees/base \\
        benchmarks/results/mace_trees/new [--geco DIR] [--variant benchmarks/results/mace_trees/nocuts]

Reads each directory's ``single_instances.csv`` (one row per instance and method). Per
dataset and model: MACE's median / p95 / max wall time, median CPU time, rows proven
optimal within 10 s, rows past 11 s, mean distance and load — for the *before* run (its rows), the *after*
run on the same first rows, and the after run on all its rows with GeCo's median; with
``--variant``, every MACE method of that run (e.g. ``mace[nocuts]`` beside ``mace``).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

MODEL_NAMES = {"rf": "RF 100×8", "rf500": "RF 500×10", "gbt6": "GBT 500×6", "xgb6": "XGB 500×6",
               "lgbm6": "LGBM 500×6", "gbt": "GBT 100×3"}


def stats(df: pd.DataFrame) -> str:
    if not len(df):
        return "—"
    t = df.time.to_numpy()
    proven = int(((df.optimal == 1.0) & (df.time <= 10.0)).sum())
    over = int((df.time > 11.0).sum())          # past MACE's 10 s time_limit (+1 s for the re-checks)
    return (f"{np.median(t):.2f} / {np.percentile(t, 95):.2f} / {t.max():.2f} | {np.median(df.cpu):.2f} | "
            f"{proven}/{len(df)} | {over} | {df.distance.mean():.5f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--variant", type=Path, default=None)
    ap.add_argument("--geco", type=Path, default=None, help="a run with GeCo (default: the after run)")
    args = ap.parse_args(argv)
    before = pd.read_csv(args.before / "single_instances.csv")
    after = pd.read_csv(args.after / "single_instances.csv")
    geco_runs = pd.read_csv(args.geco / "single_instances.csv") if args.geco else after
    head = ("| dataset | model | rows | before: median / p95 / max s | CPU s | proven ≤ 10 s | > 11 s | distance "
            "| after, same rows: median / p95 / max s | CPU s | proven ≤ 10 s | > 11 s | distance "
            "| after, all rows: median / p95 / max s | CPU s | proven ≤ 10 s | > 11 s | distance | GeCo median ms "
            "| load |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for (ds, model), a in after.groupby(["dataset", "model"], sort=False):
        b = before[(before.dataset == ds) & (before.model == model) & (before.method == "mace")]
        m = a[a.method == "mace"]
        same = m[m["index"].isin(b["index"])]
        g = geco_runs[(geco_runs.dataset == ds) & (geco_runs.model == model) & (geco_runs.method == "geco")]
        geco = f"{1e3 * np.median(g.time):.0f}" if len(g) else "—"
        load = f"{b.load.mean():.1f} / {m.load.mean():.1f}" if len(b) else f"{m.load.mean():.1f}"
        print(f"| {ds} | {MODEL_NAMES.get(model, model)} | {len(b)} / {len(m)} | {stats(b)} | {stats(same)} "
              f"| {stats(m)} | {geco} | {load} |")
    if args.variant is not None:
        v = pd.read_csv(args.variant / "single_instances.csv")
        print("\n| dataset | model | method | median / p95 / max s | CPU s | proven ≤ 10 s | > 11 s | distance | load |")
        print("|---|---|---|---|---|---|---|---|---|")
        for (ds, model, method), d in v[v.method.str.startswith("mace")].groupby(["dataset", "model", "method"],
                                                                                sort=False):
            print(f"| {ds} | {MODEL_NAMES.get(model, model)} | {method} | {stats(d)} | {d.load.mean():.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
