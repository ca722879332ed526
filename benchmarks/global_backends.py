"""Global actions on a real dataset, one call per backend: the same curve, actions, coverage and cost?

    python benchmarks/global_backends.py DATASET N TMAX K SOLVER [SOLVER ...]
    python benchmarks/global_backends.py german 81 2 3 highs pyomo:cbc pyomo gurobi

The bundled dataset's 30 % test split (seed 0), a logistic regression on
``ds.space(numeric="passthrough")``, N of the rejected test rows (sampled with seed 0). Prints
each backend's curve and actions, then whether each agrees with the first backend that ran.
Exit status 1 when two backends disagree.
"""
from __future__ import annotations

import argparse
import sys
import time

from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset")
    ap.add_argument("n", type=int, help="rejected test rows (sampled, seed 0)")
    ap.add_argument("Tmax", type=int)
    ap.add_argument("k", type=int)
    ap.add_argument("solvers", nargs="+")
    a = ap.parse_args(argv)
    ds = gcf.datasets.load(a.dataset)
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.3, random_state=0)
    pipe = make_pipeline(ds.space(numeric="passthrough"), LogisticRegression(max_iter=2000)).fit(X_tr, y_tr)
    S = X_te[pipe.predict(X_te) == 0]
    S = S.sample(min(a.n, len(S)), random_state=0)
    out = {}
    for solver in a.solvers:
        t, c = time.perf_counter(), time.process_time()
        try:
            res = gcf.explain_global(S, pipe, Tmax=a.Tmax, k=a.k, solver=solver, progress=False)
        except Exception as e:  # a licence limit, a missing solver: say so, go on
            print(f"== {solver}: FAILED {type(e).__name__}: {str(e)[:300]}")
            continue
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        print(f"== {solver}: {wall:.1f} s wall, {cpu:.1f} s CPU; coverage {res.coverage:.4f}, mean cost {res.mean_cost:.4f}")
        print(res.curve.to_string())
        print(res.actions[["action", "n_covered"]].to_string())
        out[solver] = (res.curve.to_dict(), list(res.actions["action"]), res.coverage, round(res.mean_cost, 9))
    names = list(out)
    agree = True
    for s in names[1:]:
        same = [out[s][i] == out[names[0]][i] for i in range(4)]
        agree &= all(same)
        print(f"{s} vs {names[0]}: curve {same[0]}, actions {same[1]}, coverage {same[2]}, mean cost {same[3]}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
