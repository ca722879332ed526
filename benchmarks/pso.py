"""MD-PSO (``method="pso"``) on the four datasets of Shekhar et al. 2023: a tuning protocol
whose defaults are scored on queries it never saw, beside the exact limit and DiCE.

    python benchmarks/pso.py tune                       # the grid on tuning queries -> pso_tuning*.csv
    python benchmarks/pso.py compare --configs "" split_search=False --tag split   # a change of the search
    python benchmarks/pso.py evaluate                   # defaults on evaluation queries -> pso_eval*.csv
    python benchmarks/pso.py evaluate --methods mace-mad --queries 2     # the exact limit
    /work/venvs/dice/bin/python benchmarks/pso.py evaluate --methods dice-random dice-genetic
    python benchmarks/pso.py evaluate --models rf500 gb mlp --tag robust # robustness
    python benchmarks/pso.py report                     # mean ± sd tables from the CSVs -> pso.md

(``make bench-pso`` runs tune, evaluate and report.) ``pso_protocol.py`` holds the data,
cases, query pools, metrics and runs (its docstring: the protocol); ``pso_tune.py`` the
search over options on tuning queries and its rule; ``pso_limit.py`` the exact limit and
DiCE; ``pso_report.py`` the tables. ``evaluate`` scores
methods on *evaluation* queries only.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")        # one thread: CPU time per query is the cost

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))   # the scripts' shared helpers
from pso_protocol import PAPER_NAMES, RESULTS, SHARED, cases, log, run_queries, runner
from pso_tune import compare, parse_config, tune


# ----------------------------------------------------------------------------- evaluate
def evaluate(a):
    out = Path(a.out)
    for model in a.models:
        rows: list[dict] = []
        for case in cases(a, model):
            S = case.queries("eval", a.queries)
            log(f"{case.name} {model} split {case.split_seed} seed {case.model_seed}: accuracy "
                f"{case.accuracy:.3f}, {len(S)} queries")
            for method in a.methods:
                for k in a.ks:
                    try:
                        run = runner(method, case, k, a.time_limit, parse_config(a.options))
                    except ImportError as exc:
                        log(f"  {method}: not run ({exc})")
                        continue
                    rows.extend(run_queries(case, run, S, a.time_limit,
                                            {"method": method, "k": k, "accuracy": case.accuracy}))
        tag = f"_{a.tag}" if a.tag else ""
        name = f"pso_eval{tag}_{model}" if len(a.models) > 1 or a.tag else f"pso_eval{tag}"
        pd.DataFrame(rows).to_csv(out / f"{name}_queries.csv", index=False)
        log(f"wrote {out / f'{name}_queries.csv'}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=("tune", "compare", "evaluate", "report"))
    ap.add_argument("--data-dir", default=os.environ.get("MDPSO_DATA", str(SHARED / "data" / "mdpso")))
    ap.add_argument("--reference", default=str(SHARED / "reference" / "mdpso_table2.csv"))
    ap.add_argument("--datasets", nargs="+", default=list(PAPER_NAMES))
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--model-seeds", type=int, default=3)
    ap.add_argument("--models", nargs="+", default=["rf100"])
    ap.add_argument("--methods", nargs="+", default=["pso"])
    ap.add_argument("--queries", type=int, default=2, help="queries per (split, model seed) and role")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--ks", type=int, nargs="+", default=None, help="evaluate: values of n (default --k)")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--tag", default="")
    ap.add_argument("--max-time", type=float, default=1.0, help="tune: largest median s per query")
    ap.add_argument("--max-configs", type=int, default=100, help="tune: stop after this many new configurations")
    ap.add_argument("--configs", nargs="+", default=["", "split_search=False"], help="compare: options")
    ap.add_argument("--options", default="", help='evaluate: PSO options ("a=1,b=x"; "": the defaults)')
    ap.add_argument("--out", default=str(RESULTS))
    a = ap.parse_args(argv)
    a.ks = a.ks or [a.k]
    Path(a.out).mkdir(parents=True, exist_ok=True)
    if a.command == "tune":
        return tune(a)
    if a.command == "compare":
        return compare(a)
    if a.command == "evaluate":
        return evaluate(a)
    import pso_report

    print(pso_report.report(Path(a.out), Path(a.reference)))


if __name__ == "__main__":
    main()
