"""MACE on ReLU networks with its speed-up options switched on one by one (issue 14).

    python benchmarks/mace_options.py --datasets credit --n 40

Same cases as ``single.py`` (``MLPClassifier((20, 20))``, the first ``--n`` rejected test
rows, MACE's ``{"l0": 0.1, "l1": 0.9}``, 10 s limit); per option set: median / p95 / max
wall time per instance, proven optima, and the largest distance difference from the
first set (every set is exact: should be ~0).
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from single import DISTANCE, make_case  # noqa: E402

import groupcf as gcf  # noqa: E402

SETS = {
    "off": dict(upper_bound=False, radius=False, obbt=False),
    "upper_bound": dict(upper_bound=True, radius=False, obbt=False),
    "+radius": dict(upper_bound=True, radius=True, obbt=False),
    "+obbt (default)": dict(upper_bound=True, radius=True, obbt=True),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["credit"])
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--time-limit", type=float, default=10.0)
    args = ap.parse_args(argv)
    print("| dataset | options | n | median s | p95 s | max s | proven | max abs(dist - off) |")
    print("|---|---|---|---|---|---|---|---|")
    for dataset in args.datasets:
        case = make_case(dataset, "mlp", args.n)
        ref = None
        for name, opts in SETS.items():
            times, dists, proven = [], [], 0
            for _, x in case.S.iterrows():
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        e = gcf.explain(x, case.pipe, method="mace", distance=DISTANCE,
                                        time_limit=args.time_limit, **opts)
                        dists.append(e.distances[0])
                        proven += bool(e.is_optimal)
                    except gcf.exceptions.SolverTimeLimitError:
                        dists.append(np.nan)
                times.append(time.perf_counter() - t)
            ts, ds = np.array(times), np.array(dists)
            ref = ds if ref is None else ref
            diff = np.nanmax(np.abs(ds - ref)) if np.any(np.isfinite(ds - ref)) else np.nan
            print(f"| {dataset} | {name} | {len(ts)} | {np.median(ts):.3f} | {np.percentile(ts, 95):.3f} | "
                  f"{ts.max():.2f} | {proven}/{len(ts)} | {diff:.2g} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
