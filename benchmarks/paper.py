"""Reproduce the one-for-many paper's experiments (Lodi & Ramírez-Ayerbe, Tables 4–9).

Setup (as in the paper's computational experiments): the paper's encodings (``variant="paper"``; the authors' data files
are read from ``--data-home`` / ``$GROUPCF_DATA``, else the bundled copies for COMPAS and
German), a 50/50 random split (seed 0), logistic regression ``C=10`` and scikit-learn
ReLU MLPs (COMPAS 10×2, German 20×2, Students 14×3; ``random_state=0``), ``S`` = the
first ``|S|`` rejected test rows, and the paper's ``Tmax`` values. Beyond the paper,
``--models rf gbt``: ``RandomForestClassifier(100, max_depth=6)`` and
``GradientBoostingClassifier(n_estimators=100, max_depth=3)`` (``random_state=0``), whose
MIP embedding is the split-level formulation of :mod:`groupcf.embeddings.trees` (Mišić 2020).

``--seed N`` (default 0 = the setup above, so earlier numbers stay reproducible) is the
``random_state`` of the 50/50 split and of every model (the MLP's initial weights and batch
order, the forest's bootstrap and feature draws, the boosting's feature order in split ties;
``LogisticRegression`` with lbfgs draws nothing). ``S`` stays "the first ``|S|`` rejected
test rows", so a new split is a new ``S``. The paper's data files fix neither the split nor
``S``; the encodings, ``C``, the network sizes, the ensembles' sizes and the ``Tmax`` grid do
not change with the seed.

Example::

    python benchmarks/paper.py --datasets compas german --models lr nn \\
        --sizes 10 20 50 100 --methods colgen compact --solver highs \\
        --time-limit 300 --out results.csv

Writes the CSV and, next to it, a markdown table with the paper's y* and times beside
ours (``results.md``). Columns beyond the paper's: ``root_lp`` (the master LP value when
column generation converged), ``cheap_pricing`` (iterations answered by the pool, the
known change sets or the complete column set), ``exact_pricing`` (exact pricing rounds)
with ``exact_level`` and ``seed_solves``, ``bp_nodes`` (branch-and-price nodes) and
``gap_closed_by_enumeration`` (the set cover over every class of every maximal change
set certified the answer, :mod:`groupcf.group.enumeration`).
"""
from __future__ import annotations

import argparse
import logging
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

import pandas as pd
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf

ROOT = Path(__file__).resolve().parents[1]
PAPER_TABLES = ROOT.parent / "shared" / "reference" / "paper_tables.csv"
TMAX = {"compas": [2, 3], "german": [5, 10, 15], "students": [10, 15, 20]}
NN = {"compas": (10, 10), "german": (20, 20), "students": (14, 14, 14)}
MODELS = ("lr", "nn", "rf", "gbt")

log = logging.getLogger("bench.paper")


def fit(dataset: str, model: str, data_home, seed: int = 0):
    """The pipeline, test rows and labels; ``seed`` is the split's and the model's ``random_state``."""
    ds = gcf.datasets.load(dataset, variant="paper", data_home=data_home)
    X_tr, X_te, y_tr, y_te = ds.split(test_size=0.5, random_state=seed)
    clf = {
        "lr": lambda: LogisticRegression(C=10, max_iter=5000, random_state=seed),
        "nn": lambda: MLPClassifier(NN[dataset], max_iter=2000, random_state=seed),
        "rf": lambda: RandomForestClassifier(100, max_depth=6, random_state=seed, n_jobs=1),
        "gbt": lambda: GradientBoostingClassifier(n_estimators=100, max_depth=3, random_state=seed),
    }[model]()
    pipe = make_pipeline(gcf.FeatureSpace(), clf).fit(X_tr, y_tr)
    return pipe, X_te, y_te


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["compas", "german", "students"])
    ap.add_argument("--models", nargs="+", default=["lr", "nn"], choices=MODELS,
                    help="lr, nn (the paper's); rf, gbt (tree ensembles, not in the paper)")
    ap.add_argument("--sizes", nargs="+", type=int, default=[10, 20, 50, 100])
    ap.add_argument("--tmax", nargs="+", type=int, default=None, help="default: the paper's values per dataset")
    ap.add_argument("--methods", nargs="+", default=["colgen"])
    ap.add_argument("--solver", default="highs")
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--data-home", default=os.environ.get("GROUPCF_DATA"))
    ap.add_argument("--out", default="results.csv")
    ap.add_argument("--validate", action="store_true", help="re-check every result with the real model")
    ap.add_argument("--seed", type=int, default=0,
                    help="random_state of the 50/50 split (hence of S, the first |S| rejected test rows) and of "
                         "every model (MLP weights, forest and boosting draws); default 0 = the paper setup's "
                         "numbers so far. Encodings, model sizes and the Tmax grid do not change.")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    paper = pd.read_csv(PAPER_TABLES) if PAPER_TABLES.exists() else None
    rows = []
    out = Path(args.out)
    for dataset in args.datasets:
        for model in args.models:
            pipe, X_te, y_te = fit(dataset, model, args.data_home, args.seed)
            acc = float(pipe.score(X_te, y_te))
            rejected = X_te[pipe.predict(X_te) == 0]
            for n in args.sizes:
                S = rejected.iloc[:n]
                for Tmax in (args.tmax or TMAX[dataset]):
                    for method in args.methods:
                        t, c = time.perf_counter(), time.process_time()
                        try:
                            res = gcf.explain_group(S, pipe, Tmax=Tmax, method=method, solver=args.solver,
                                                    time_limit=args.time_limit, progress=False)
                            if args.validate:
                                res.validate()
                            st = res.stats
                            row = dict(y_star=res.n_explanations, lower_bound=res.lower_bound,
                                       certified=res.is_optimal, status=res.status.value,
                                       root_lp=round(st["lp_bound"], 3) if "lp_bound" in st else None,
                                       columns=st.get("columns"), iterations=st.get("iterations"),
                                       cheap_pricing=st.get("heuristic_hits", 0) + st.get("pool_hits", 0),
                                       exact_pricing=st.get("pricing_calls"),
                                       exact_level=st.get("exact_pricing"),
                                       seed_solves=st.get("seed_solves"), bp_nodes=st.get("bp_nodes", 0),
                                       gap_closed_by_enumeration=bool(st.get("gap_closed_by_enumeration")),
                                       error="")
                        except gcf.exceptions.GroupCFError as err:
                            row = dict(y_star=None, lower_bound=None, certified=False, status="error",
                                       error=f"{type(err).__name__}: {err}")
                        row.update(dataset=dataset, model=model, seed=args.seed, S=len(S), Tmax=Tmax, method=method,
                                   accuracy=round(acc, 4), time_s=round(time.perf_counter() - t, 3),
                                   cpu_s=round(time.process_time() - c, 3), load=round(os.getloadavg()[0], 1))
                        if paper is not None:
                            p = paper[(paper.dataset == dataset) & (paper.model == model)
                                      & (n == paper.S) & (paper.Tmax == Tmax)]
                            if len(p):
                                p = p.iloc[0]
                                row.update(paper_y=int(p.y_star), paper_cg_s=float(p.cg_time_s),
                                           paper_mip_s=float(p.mip_time_s))
                                ref = p.cg_time_s if method == "colgen" else p.mip_time_s
                                row["speedup"] = round(float(ref) / max(row["time_s"], 1e-3), 1)
                        rows.append(row)
                        log.info("%s %s |S|=%d Tmax=%d %s: y=%s lb=%s certified=%s %.2fs %s", dataset, model,
                                 n, Tmax, method, row["y_star"], row["lower_bound"], row["certified"],
                                 row["time_s"], row["error"])
                        pd.DataFrame(rows).to_csv(out, index=False)     # keep partial results
    df = pd.DataFrame(rows)
    cols = ["dataset", "model", "seed", "S", "Tmax", "method", "accuracy", "y_star", "lower_bound", "certified",
            "time_s", "cpu_s", "load", "paper_y", "paper_cg_s", "paper_mip_s", "speedup", "root_lp", "columns", "iterations",
            "cheap_pricing", "exact_pricing", "exact_level", "seed_solves", "bp_nodes",
            "gap_closed_by_enumeration", "status", "error"]
    df = df[[c for c in cols if c in df.columns]]
    df.to_csv(out, index=False)
    md = out.with_suffix(".md")
    header = (f"Run {date.today()} on {platform.node()} ({os.cpu_count()} cores, {platform.processor() or platform.machine()}), "
              f"solver={args.solver}, time limit {args.time_limit:g}s\n\n"
              f"Command: `python benchmarks/paper.py {' '.join(sys.argv[1:] if argv is None else argv)}`\n\n")
    md.write_text(header + markdown(df.drop(columns=["error"])) + "\n")
    log.info("wrote %s and %s", out, md)
    return 0


def markdown(df: pd.DataFrame) -> str:
    """A markdown table (``DataFrame.to_markdown`` needs the optional ``tabulate``)."""
    cells = [[("" if pd.isna(v) else str(v)) for v in row] for row in df.itertuples(index=False)]
    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in cells])


if __name__ == "__main__":
    sys.exit(main())
