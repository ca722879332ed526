"""The newcomer's German credit GBT case (BENCHMARKS.md "Global actions", "The bound within 1
point"): the README's call on all rejected test rows, no time limit, timed (wall and CPU) with
the enumeration pricing level's own figures.

``PYTHONPATH=$PWD python benchmarks/global_newcomer.py --tmax 2 --k 3``
"""
from __future__ import annotations

import argparse
import os
import time
import warnings

import groupcf as gcf


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="german")
    ap.add_argument("--tmax", type=lambda v: None if v == "None" else int(v), default=2)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--enumerate-work", type=int, default=None)
    args = ap.parse_args(argv)
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import make_pipeline

    ds = gcf.datasets.load(args.dataset)
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.3, random_state=0)
    pipe = make_pipeline(ds.space(numeric="passthrough"),
                         GradientBoostingClassifier(n_estimators=50, max_depth=3, random_state=0)).fit(X_tr, y_tr)
    S = X_te[pipe.predict(X_te) == 0]
    load0 = os.getloadavg()[0]
    opts = {} if args.enumerate_work is None else {"enumerate_work": args.enumerate_work}
    w0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = gcf.explain_global(S, pipe, Tmax=args.tmax, k=args.k, time_limit=args.time_limit, progress=False,
                                 **opts)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    print(f"{args.dataset} GBT, {len(S)} rejected, Tmax {args.tmax}, k {args.k}: {wall:.1f} s wall, {cpu:.1f} s CPU, "
          f"load {load0:.1f} -> {os.getloadavg()[0]:.1f}")
    print("enumeration:", res.stats.get("enumeration"), "| pricing MIPs:", res.stats.get("pricing_mips"))
    print(res.curve[["k", "n_covered", "upper_bound", "status", "mean_cost"]].to_string(index=False))


if __name__ == "__main__":
    main()
