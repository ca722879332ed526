"""Group counterfactuals at population scale (issue 14): a grid of column-generation runs.

    python benchmarks/scale_group.py                                   # the whole grid, 300 s each
    python benchmarks/scale_group.py --datasets adult --models mlp --sizes 500 --tmax 3

Set-up as a new user would do it: default ``FeatureSpace`` with the dataset's own
immutable / increase-only rules, ``ds.split(test_size=0.5, random_state=0)``, the model
(``LogisticRegression(C=10)`` or ``MLPClassifier((20, 20))``) fitted on the first 10,000
training rows, ``S`` = the first ``|S|`` rejected test rows (all of them when there are
fewer), ``allow_partial=True``. Every returned counterfactual is re-checked by the
model's own ``predict`` and against the change-set rules (column ``valid``). One CSV row
per configuration (``benchmarks/results/scale_group.csv`` by default).
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import groupcf as gcf  # noqa: E402

DATASETS = ("adult", "credit", "german")
MODELS = ("lr", "mlp")
SIZES = (200, 500, 1000)
TMAX = (2, 3, 5)
OUT = Path(__file__).resolve().parent / "results" / "scale_group.csv"


def make_case(dataset: str, model: str):
    """``(pipeline, rejected test rows)`` for one dataset and model (module doc)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline

    ds = gcf.datasets.load(dataset)
    X_tr, X_te, y_tr, y_te = ds.split(test_size=0.5, random_state=0)
    X_tr, y_tr = X_tr.iloc[:10_000], y_tr.iloc[:10_000]
    clf = (LogisticRegression(C=10, max_iter=5000, random_state=0) if model == "lr" else
           MLPClassifier((20, 20), activation="relu", max_iter=300, random_state=0))
    space = gcf.FeatureSpace(immutable=ds.immutable, increase_only=ds.increase_only)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # MLP convergence warnings
        pipe = make_pipeline(space, clf).fit(X_tr, y_tr)
    return pipe, X_te[pipe.predict(X_te) == 0]


def validate(res, pipe) -> bool:
    """Every explained row's counterfactual is accepted by the model's ``predict`` and
    changes at most ``Tmax`` features of that row (compared as feature codes), never an
    immutable one, never an increase-only one downwards."""
    if res.n_explanations == 0:
        return True
    if (pipe.predict(res.counterfactuals) != 1).any():
        return False
    space = pipe[0]
    rows = res.assignment[res.assignment >= 0]
    X = space.codes(res.S.loc[rows.index])
    V = space.codes(res.counterfactuals)[rows.to_numpy()]
    changed = np.abs(V - X) > 1e-6
    imm = np.array([f.immutable for f in space.features_])
    inc = np.array([f.increase_only for f in space.features_])
    return bool((changed.sum(axis=1) <= res.Tmax).all() and not changed[:, imm].any()
                and not (changed[:, inc] & (V[:, inc] < X[:, inc])).any())


def run(dataset, model, size, Tmax, time_limit, pipe, rejected, solver="highs") -> dict:
    S = rejected.iloc[:size]
    t = time.perf_counter()
    res = gcf.explain_group(S, pipe, Tmax=Tmax, method="colgen", solver=solver, time_limit=time_limit,
                            allow_partial=True, progress=False)
    elapsed = time.perf_counter() - t
    st = res.stats
    y, lb = res.n_explanations, res.lower_bound
    return dict(dataset=dataset, model=model, size=len(S), Tmax=Tmax, certified=bool(res.is_optimal),
                y=y, bound=lb, gap=round((y - lb) / y, 4) if y else 0.0, time=round(elapsed, 2),
                columns=st.get("columns"), pricing_rounds=st.get("pricing_calls"),
                iterations=st.get("iterations"), bp_nodes=st.get("bp_nodes", 0),
                lp_bound=round(float(st.get("lp_bound", 0.0)), 3), unexplained=len(res.unexplained),
                time_initial=round(st.get("time_initial", 0.0), 1), time_pricing=round(st.get("time_pricing", 0.0), 1),
                time_bp=round(st.get("time_branch_and_price", 0.0), 1),
                valid=validate(res, pipe))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    ap.add_argument("--tmax", nargs="+", type=int, default=list(TMAX))
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--solver", default="highs")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    for dataset in args.datasets:
        for model in args.models:
            pipe, rejected = make_case(dataset, model)
            for size in args.sizes:
                for Tmax in args.tmax:
                    row = run(dataset, model, size, Tmax, args.time_limit, pipe, rejected, args.solver)
                    print(", ".join(f"{k}={v}" for k, v in row.items()), flush=True)
                    rows.append(row)
                    pd.DataFrame(rows).to_csv(args.out, index=False)
                if size >= len(rejected):
                    break                      # every rejected row already used
    df = pd.DataFrame(rows)
    if len(df):
        print(f"\ncertified {int(df.certified.sum())}/{len(df)}, median time {np.median(df.time):.1f} s, "
              f"all valid: {bool(df.valid.all())}; CSV: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
