"""MACE (l1) on a random forest, Adult: the tree ensembles' acceptance check.

    python benchmarks/trees_adult.py                  # 20 rejected rows, 60 s limit per row
    python benchmarks/trees_adult.py --n 5 --time-limit 10

Set-up: Adult (``gcf.datasets.load("adult")``), ``ds.split(test_size=0.5,
random_state=0)``, the first 10,000 training rows; ``Pipeline(FeatureSpace(
numeric="passthrough"), RandomForestClassifier(100, max_depth=8, random_state=0))`` (no
immutable / increase-only features); the first ``--n`` test rows the forest rejects.

Per row: MACE (Karimi et al. 2020) with ``distance="l1"`` (exact MIP over the forest's
split levels, Mišić 2020), GeCo (Schleich et al. 2021) minimising the same l1 distance
with its final polish (``distance="l1", refine=True``, the training rows as data), and the
best single-feature change over the training values (every feature set to every value it
takes in the training rows, the cheapest one the forest accepts). Every distance is
``gcf.metrics.proximity(x, cf, space, weights="l1")``; every answer is re-checked with the
real pipeline. The check passes when every MACE answer is accepted and proven optimal,
never farther than GeCo's or the best single change, and the median MACE time is <= 1 s.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))   # the scripts' shared helpers
from single import machine, versions  # noqa: E402

import groupcf as gcf  # noqa: E402
from groupcf.single.geco import GeCo  # noqa: E402

TOL = 1e-6     # distances compared up to this (MACE's MIP gap is relative 1e-6)


def setup(n_train: int, n: int):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline

    ds = gcf.datasets.load("adult")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.5, random_state=0)
    X_tr, y_tr = X_tr.iloc[:n_train], y_tr.iloc[:n_train]
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"),
                         RandomForestClassifier(100, max_depth=8, random_state=0, n_jobs=1)).fit(X_tr, y_tr)
    rejected = X_te[pipe.predict(X_te) == 0]
    return pipe, X_tr, rejected.iloc[:n]


def best_single_change(pipe, X_tr: pd.DataFrame, x: pd.Series) -> float:
    """l1 distance of the cheapest accepted point that changes one feature of ``x`` to a
    value the feature takes in the training rows (``inf`` when there is none)."""
    rows = []
    for c in X_tr.columns:
        for v in pd.unique(X_tr[c]):
            if v != x[c]:
                r = x.copy()
                r[c] = v
                rows.append(r)
    cand = pd.DataFrame(rows).astype(X_tr.dtypes.to_dict()).reset_index(drop=True)
    ok = cand[pipe.predict(cand) == 1]
    if not len(ok):
        return np.inf
    return float(gcf.metrics.proximity(x, ok, pipe[0], weights="l1").min())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20, help="rejected test rows to explain")
    ap.add_argument("--n-train", type=int, default=10_000, help="training rows")
    ap.add_argument("--time-limit", type=float, default=60.0, help="MACE's limit per row (s)")
    ap.add_argument("--geco-time-limit", type=float, default=2.0, help="GeCo's limit per row (s)")
    ap.add_argument("--out", type=Path, default=None, help="optional CSV of the per-row table")
    args = ap.parse_args(argv)
    command = "python benchmarks/trees_adult.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(f"# {command}\n# {machine()}\n# {versions()}", flush=True)
    t = time.perf_counter()
    pipe, X_tr, S = setup(args.n_train, args.n)
    space = pipe[0]
    geco = GeCo(pipe, X_tr, distance="l1", refine=True, time_limit=args.geco_time_limit)
    print(f"# set-up {time.perf_counter() - t:.1f} s: {len(X_tr)} training rows, {len(S)} rejected rows\n",
          flush=True)
    rows = []
    for i, (idx, x) in enumerate(S.iterrows()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            exp = gcf.explain(x, pipe, method="mace", distance="l1", time_limit=args.time_limit)
            t_mace = time.perf_counter() - t
            t = time.perf_counter()
            g = geco.explain(x, random_state=i)
            t_geco = time.perf_counter() - t
        cf = exp.counterfactuals.iloc[[0]]
        d_mace = float(gcf.metrics.proximity(x, cf, space, weights="l1")[0])
        d_geco = float(gcf.metrics.proximity(x, g.counterfactuals.iloc[[0]], space, weights="l1")[0])
        d_single = best_single_change(pipe, X_tr, x)
        lb = exp.lower_bound
        rows.append(dict(
            row=idx, time_s=t_mace, status=exp.status.value, proven=bool(exp.is_optimal),
            lower_bound=np.nan if lb is None else float(lb),
            gap=np.nan if lb is None else (d_mace - float(lb)) / max(abs(d_mace), 1e-12),
            mace_l1=d_mace, geco_l1=d_geco, geco_s=t_geco, single_l1=d_single,
            accepted=bool(pipe.predict(cf)[0] == 1),
            geco_accepted=bool(pipe.predict(g.counterfactuals.iloc[[0]])[0] == 1),
            upper_bound=exp.stats.get("upper_bound", np.nan),
            changed=", ".join(exp.changes[0])))
        r = rows[-1]
        print(f"{idx:>6} {r['time_s']:7.2f}s {r['status']:>10} proven={r['proven']!s:5} "
              f"mace {d_mace:.5f} (lb {r['lower_bound']:.5f})  geco {d_geco:.5f}  single {d_single:.5f}  "
              f"accepted={r['accepted']}  [{r['changed']}]", flush=True)
    df = pd.DataFrame(rows)
    print("\n" + df.drop(columns=["upper_bound"]).to_markdown(index=False, floatfmt=".5f"))
    ok_geco = df.mace_l1 <= df.geco_l1 + TOL
    ok_single = df.mace_l1 <= df.single_l1 + TOL
    med, p95 = float(df.time_s.median()), float(np.percentile(df.time_s, 95))
    checks = {
        "accepted by the forest": int(df.accepted.sum()),
        "proven optimal": int(df.proven.sum()),
        "<= GeCo's l1": int(ok_geco.sum()),
        "<= best single change": int(ok_single.sum()),
    }
    print("\n" + "; ".join(f"{k} {v}/{len(df)}" for k, v in checks.items())
          + f"; MACE median {med:.2f} s, p95 {p95:.2f} s, max {df.time_s.max():.2f} s "
            f"(GeCo median {df.geco_s.median() * 1e3:.0f} ms)")
    passed = all(v == len(df) for v in checks.values()) and med <= 1.0
    print("check:", "PASSED" if passed else "NOT PASSED")
    if args.out is not None:
        df.to_csv(args.out, index=False)
    return 0 if passed else 1


if __name__ == "__main__":
    os.environ.setdefault("TQDM_DISABLE", "1")
    sys.exit(main())
