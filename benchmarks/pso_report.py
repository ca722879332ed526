"""Tables of ``benchmarks/pso.py evaluate`` runs (``python benchmarks/pso.py report``):
every figure over *evaluation* queries, as mean ± sd over the (split, model seed) cases of
each case's mean, beside the paper's Table II (``--reference``). Writes ``pso.md``."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

NAMES = {"compas": "COMPAS", "hill-valley": "Hill-Valley", "arrhythmia": "Arrhythmia", "lsvt": "LSVT"}
PAPER = {"pso": "MD-PSO", "dice-random": "DiCE-Random", "dice-genetic": "DiCE-Genetic"}
METRICS = ("proximity", "best", "sparsity", "diversity")


def _pm(v: pd.Series, digits: int = 3) -> str:
    v = v.dropna()
    if not len(v):
        return "–"
    return f"{v.mean():.{digits}f} ± {v.std(ddof=1):.{digits}f}" if len(v) > 1 else f"{v.mean():.{digits}f}"


def per_case(q: pd.DataFrame, keys=("dataset", "method")) -> pd.DataFrame:
    """One row per (keys, split, seed): coverage, the mean metrics over its covered
    queries, median wall / CPU time."""
    q = q.copy()
    q["covered"] = q.valid > 0
    g = q.groupby([*keys, "split", "seed"], sort=False)
    out = g.agg(queries=("covered", "size"), coverage=("covered", "mean"), time=("time", "median"),
                cpu=("cpu", "median"))
    for m in METRICS:
        if m in q:
            out[m] = g[m].mean()
    return out.reset_index()


def table(q: pd.DataFrame, paper: pd.DataFrame | None, keys=("dataset", "method")) -> str:
    c = per_case(q, keys)
    head = f"| {' | '.join(keys)} | cases × queries | coverage | proximity (mean of n) | best of n | " \
           "sparsity | diversity | median s (wall / CPU) |"
    lines = [head, "|" + "---|" * (len(keys) + 7)]
    for key, g in c.groupby(list(keys), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        qq = q[np.logical_and.reduce([q[k] == v for k, v in zip(keys, key)])]
        lines.append(f"| {' | '.join(map(str, key))} | {len(g)} × {g.queries.max()} | {_pm(g.coverage, 2)} | "
                     f"{_pm(g.proximity)} | {_pm(g.best)} | {_pm(g.sparsity)} | {_pm(g.diversity)} | "
                     f"{qq.time.median():.2f} / {qq.cpu.median():.2f} |")
        if paper is not None and "method" in keys and "dataset" in keys:
            d = dict(zip(keys, key))
            p = paper[(paper.dataset == NAMES.get(d["dataset"])) & (paper.method == PAPER.get(d["method"], "-"))]
            if len(p):
                r = p.iloc[0]
                lines.append(f"| *paper {r.method}* |  | 5 queries | {r.coverage:.2f} | {r.proximity:.4f} | – | "
                             f"{r.sparsity:.4f} | {r.diversity:.4f} | – |")
    return "\n".join(lines)


def limit_table(pso: pd.DataFrame, mace: pd.DataFrame) -> str:
    """PSO's best of n ÷ the exact optimum on the queries both ran. The optimum of a proven
    query is the MIP's bound (equal to its objective within the gap; MACE's answer, moved
    onto the original forest's side of its splits by ``pso_limit.align``, is re-checked and
    its proximity agrees to float32 steps). Unproven: best ÷ the bound (an upper bound on
    the ratio)."""
    m = mace[["dataset", "split", "seed", "query", "proximity", "lower_bound", "proven", "status", "time", "valid"]]
    j = pso[pso.valid > 0].merge(m, on=["dataset", "split", "seed", "query"], suffixes=("", "_mace"))
    lines = ["| dataset | queries | MACE proven (bound > 0) | median exact optimum (proven) | median PSO best of 5 | "
             "median best ÷ optimum (proven) | range | median best ÷ lower bound (not proven, bound > 1e-6) | "
             "MACE answers the original forest accepts | MACE median s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for ds, g in j.groupby("dataset", sort=False):
        pr = g[(g.proven == True) & (g.lower_bound > 1e-12)]  # noqa: E712
        npr = g[(g.proven != True) & (g.lower_bound > 1e-6)]  # noqa: E712
        r1 = pr.best / pr.lower_bound
        r2 = (npr.best / npr.lower_bound).median() if len(npr) else np.nan
        rng = f"{r1.min():.2f}-{r1.max():.2f}" if len(pr) else "–"
        mm = mace[mace.dataset == ds]
        lines.append(f"| {ds} | {len(g)} | {len(pr)} | {pr.lower_bound.median():.4f} | {g.best.median():.4f} | "
                     f"{r1.median():.2f} | {rng} | {r2:.2f} ({len(npr)}) | {int((g.valid_mace > 0).sum())} | "
                     f"{mm.time.median():.1f} |")
    return "\n".join(lines)


def report(out: Path, reference: Path) -> str:
    paper = pd.read_csv(reference) if reference.is_file() else None
    parts = []
    main = out / "pso_eval_queries.csv"
    if main.is_file():
        q = pd.read_csv(main)
        parts += ["### Defaults on evaluation queries (random forest, 100 trees, n = 5)", "", table(q, paper), ""]
        first = q.sort_index().groupby(["dataset", "split", "seed"], sort=False).head(1)
        others = [pd.read_csv(f) for f in (out / "pso_eval_dice_rf100_queries.csv",) if f.is_file()]
        if others:
            side = pd.concat([first, *others], ignore_index=True)
            parts += ["### Side by side on the first evaluation query of each case", "", table(side, paper), ""]
        mace = out / "pso_eval_mace_rf100_queries.csv"
        if mace.is_file():
            parts += ["### The limit: exact nearest counterfactual under the same MAD-scaled l1", "",
                      limit_table(q, pd.read_csv(mace)), ""]
    robust = sorted(out.glob("pso_eval_robust_*_queries.csv"))
    if robust:
        r = pd.concat([pd.read_csv(f) for f in robust], ignore_index=True)
        parts += ["### Other models (defaults, n = 5)", "", table(r, None, ("dataset", "model")), ""]
    nfile = out / "pso_eval_n_rf100_queries.csv"
    if nfile.is_file():
        parts += ["### n from 1 to 10 (random forest, 100 trees)", "",
                  table(pd.read_csv(nfile), None, ("dataset", "k")), ""]
    md = "\n".join(parts)
    (out / "pso.md").write_text(md + "\n")
    return md
