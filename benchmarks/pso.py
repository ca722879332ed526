"""MD-PSO counterfactuals beside DiCE and GeCo on the four datasets of Shekhar et al. 2023.

    python benchmarks/pso.py --n 20                      # the issue's check
    python benchmarks/pso.py --data-dir /work/shared/data/mdpso --n 5 --datasets lsvt

Datasets (read from ``--data-dir``, default ``../shared/data/mdpso`` relative to the
repository; never copied into it; their README gives provenance):

* COMPAS: ``compas-two-years_5278_derived.csv`` (13 features); positive (desired)
  class: no two-year recidivism. ``sex`` and the race and age-category indicators are
  immutable, ``age`` increase-only.
* Hill-Valley: the non-noisy merged file (1212 x 100); positive class: hill (1).
* Arrhythmia: the 17 constant columns dropped (262 features), missing values filled
  with the training medians, columns with 2-5 distinct values categorical (two-valued
  ones binary), the rest numeric; positive class: normal (1). Age and sex immutable.
* LSVT: 126 x 310, all numeric; positive class: acceptable (1).

Per dataset: 50/50 stratified split (``--seed``, default 0), a
``Pipeline(FeatureSpace(numeric="passthrough"), RandomForestClassifier(100 trees))``
(its test accuracy is reported), the first ``--n`` test rows it rejects (all there are
where fewer), ``--k`` (5) counterfactuals per query from every method:

* ``pso``   — ``gcf.explain(x, pipe, method="pso", data=X_train, n=k)`` (defaults);
* ``pso-mad`` — the same with ``scale="mad"`` (l2 on the MAD scale of the metric) and
  ``h0=40`` (40 features active from the start; chosen after trying h0 = 10 / 40 / 80 on
  the first 10 Hill-Valley and LSVT queries, which are among those evaluated);
* ``dice-random``, ``dice-genetic`` — ``dice-ml`` on the same pipeline (sklearn backend,
  ``total_CFs=k``, desired class "opposite"; immutables not varied, increase-only from
  the query's value up);
* ``geco``  — ``gcf.explain(x, pipe, method="geco", data=X_train, k=k)``;
* ``mace``  — ``gcf.explain(x, pipe, method="mace", distance="l1", time_limit=T)``: one
  exact (l1 over the range-scaled features) counterfactual per query, from the forest
  embedded in the MIP; ``T`` = the per-query limit less 2 s (a time-limited answer is
  valid but not proven; column ``proven`` of the per-query CSV). Diversity needs two
  counterfactuals, so MACE rows have none.

Every counterfactual is re-checked with the random forest and the actionability rules;
only the valid ones are scored, with :mod:`groupcf.metrics_hd` (the paper's eqs. 8-15:
MAD-scaled continuous proximity, sparsity, diversity, eq. 15 normalised diversity and
diversity / proximity, the column the paper's Table II prints as "Norm. Div").
Wall time per query (``--time-limit`` seconds per query and method, default 60,
counts as no counterfactual). Writes ``<out>/pso_queries.csv``, ``pso.csv`` and ``pso.md``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

sys.path.insert(0, str(Path(__file__).resolve().parent))   # the scripts' shared helpers
import contextlib

from _deadline import Timeout, with_deadline

import groupcf as gcf
from groupcf import metrics_hd as mh
from groupcf.models import TrainedModel

REPO = Path(__file__).resolve().parent.parent
METHODS = ("pso", "pso-mad", "dice-random", "dice-genetic", "geco", "mace")
PAPER_NAMES = {"compas": "COMPAS", "hill-valley": "Hill-Valley", "arrhythmia": "Arrhythmia", "lsvt": "LSVT"}
PAPER_METHODS = {"pso": "MD-PSO", "pso-mad": "MD-PSO", "dice-random": "DiCE-Random", "dice-genetic": "DiCE-Genetic"}


# ----------------------------------------------------------------------------- data
def load(name: str, d: Path):
    """``(X, y, categorical, immutable, increase_only)``; y = 1 is the desired class."""
    if name == "compas":
        df = pd.read_csv(d / "compas" / "compas-two-years_5278_derived.csv")
        y = 1 - df.pop("twoyearrecid")
        imm = ["sex"] + [c for c in df.columns if c.startswith(("race_", "age_cat"))]
        return df.astype(float), y, [], imm, ["age"]
    if name == "hill-valley":
        df = pd.read_csv(d / "hill-valley" / "hill_valley_without_noise_merged.csv")
        return df.drop(columns="class").astype(float), df["class"].astype(int), [], [], []
    if name == "arrhythmia":
        df = pd.read_csv(d / "arrhythmia" / "arrhythmia.data", header=None, na_values="?")
        y = (df.pop(279) == 1).astype(int)
        df.columns = [f"a{c + 1}" for c in df.columns]
        df = df.loc[:, df.nunique() > 1]
        nun = df.nunique()
        cat = [c for c in df.columns if 2 <= nun[c] <= 5]
        return df.astype(float), y, cat, ["a1", "a2"], []
    if name == "lsvt":
        df = pd.read_csv(d / "lsvt" / "LSVT_voice_rehabilitation.csv")
        y = (df.pop("Class") == 1).astype(int)
        return df.astype(float), y, [], [], []
    raise SystemExit(f"unknown dataset {name!r}")


class Case:
    def __init__(self, name, d: Path, n: int, seed: int):
        X, y, cat, imm, inc = load(name, d)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=seed, stratify=y)
        med = X_tr.median()
        X_tr, X_te = X_tr.fillna(med), X_te.fillna(med)        # Arrhythmia's '?' only
        kinds = {c: ("binary" if X_tr[c].nunique() == 2 else "categorical") for c in cat}
        # categories seen only in the test half cannot be encoded: map them to the nearest seen one
        for c in cat:
            seen = np.sort(X_tr[c].unique())
            X_te[c] = [seen[np.argmin(np.abs(seen - v))] for v in X_te[c]]
        self.space = gcf.FeatureSpace(immutable=imm, increase_only=inc, kinds=kinds, numeric="passthrough")
        self.pipe = make_pipeline(self.space, RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1))
        self.pipe.fit(X_tr, y_tr)
        self.name, self.X_tr, self.y_tr, self.cat, self.imm, self.inc = name, X_tr, y_tr, cat, imm, inc
        self.accuracy = float(self.pipe.score(X_te, y_te))
        rej = X_te[self.pipe.predict(X_te) == 0]
        self.S = rej.sample(frac=1.0, random_state=seed).head(n)
        self.tm = TrainedModel(self.pipe, self.space, None, 0.5)
        # DiCE: categorical and two-valued columns as categories (else it proposes 0.8 for a 0/1 flag)
        self.dice_cat = [c for c in X_tr.columns if c in cat or X_tr[c].nunique() <= 2]
        self.mad = mh.mad(X_tr, [c for c in X_tr.columns if c not in cat])


# ----------------------------------------------------------------------------- methods
class _FloatModel:
    """The pipeline for DiCE: DiCE hands categorical columns over as strings."""

    def __init__(self, pipe, dtypes):
        self.pipe, self.dtypes = pipe, dtypes

    def predict_proba(self, X):
        return self.pipe.predict_proba(X[list(self.dtypes.index)].astype(float))

    def predict(self, X):
        return self.pipe.predict(X[list(self.dtypes.index)].astype(float))


def make_runner(method: str, case: Case, k: int):
    if method in ("pso", "pso-mad"):
        opts = {"scale": "mad", "h0": 40} if method == "pso-mad" else {}
        return lambda x, i: gcf.explain(x, case.pipe, method="pso", data=case.X_tr, n=k,
                                        random_state=i, **opts).counterfactuals
    if method == "mace":
        def run(x, i):
            e = gcf.explain(x, case.pipe, method="mace", distance="l1", time_limit=max(1.0, case.limit - 2))
            run.proven = e.is_optimal
            return e.counterfactuals
        return run
    if method == "geco":
        return lambda x, i: gcf.explain(x, case.pipe, method="geco", data=case.X_tr, k=k,
                                        random_state=i).counterfactuals
    if method.startswith("dice-"):
        import dice_ml

        kind = method.split("-", 1)[1]
        frame = case.X_tr.copy()
        for c in case.dice_cat:
            frame[c] = frame[c].astype(str)
        frame["_y"] = case.y_tr.to_numpy()
        cont = [c for c in case.X_tr.columns if c not in case.dice_cat]
        data = dice_ml.Data(dataframe=frame, continuous_features=cont, outcome_name="_y")
        model = dice_ml.Model(model=_FloatModel(case.pipe, case.X_tr.dtypes), backend="sklearn")
        dice = dice_ml.Dice(data, model, method=kind)
        vary = [c for c in case.X_tr.columns if c not in case.imm]

        def run(x, i):
            q = x.to_frame().T.copy()
            for c in case.dice_cat:
                q[c] = q[c].astype(str)
            rng = {c: [float(x[c]), float(max(case.X_tr[c].max(), x[c]))] for c in case.inc}
            kw = {"random_seed": i} if kind == "random" else {}
            np.random.seed(i)   # noqa: NPY002 - DiCE draws from numpy's global generator
            res = dice.generate_counterfactuals(q, total_CFs=k, desired_class="opposite",
                                                features_to_vary=vary, permitted_range=rng or None,
                                                verbose=False, **kw)
            cfs = res.cf_examples_list[0].final_cfs_df
            if cfs is None or not len(cfs):
                return None
            return cfs[list(case.X_tr.columns)].astype(float).reset_index(drop=True)
        return run
    raise SystemExit(f"unknown method {method!r}")


def valid_rows(case: Case, x: pd.Series, cfs: pd.DataFrame | None) -> pd.DataFrame:
    """The counterfactuals the forest accepts and the actionability rules allow."""
    if cfs is None or not len(cfs):
        return pd.DataFrame(columns=case.X_tr.columns)
    cfs = cfs[list(case.X_tr.columns)].astype(float).reset_index(drop=True)
    try:
        ok = case.tm.is_positive(cfs)
    except gcf.exceptions.InvalidInputError:           # e.g. an unknown category
        ok = np.zeros(len(cfs), dtype=bool)
        for r in range(len(cfs)):
            with contextlib.suppress(gcf.exceptions.InvalidInputError):
                ok[r] = case.tm.is_positive(cfs.iloc[[r]])[0]
    for c in case.imm:
        ok &= np.abs(cfs[c].to_numpy() - float(x[c])) <= 1e-9
    for c in case.inc:
        ok &= cfs[c].to_numpy() >= float(x[c]) - 1e-9
    return cfs[ok].reset_index(drop=True)


def run_case(case: Case, methods, k: int, limit: float, log):
    rows = []
    for method in methods:
        case.limit = limit
        try:
            run = make_runner(method, case, k)
        except ImportError as exc:
            log(f"  {case.name}/{method}: not run ({exc})")
            continue
        for i, (idx, x) in enumerate(case.S.iterrows()):
            t0 = time.perf_counter()
            status, cfs = "ok", None
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cfs = with_deadline(lambda run=run, x=x, i=i: run(x, i), limit)
            except Timeout:
                status = "timeout"
            except Exception as exc:                       # noqa: BLE001 - recorded per query
                status = f"{type(exc).__name__}: {str(exc)[:80]}"
            dt = time.perf_counter() - t0
            good = valid_rows(case, x, cfs)
            row = {"dataset": case.name, "method": method, "query": idx, "time": dt, "status": status,
                   "returned": 0 if cfs is None else len(cfs), "valid": len(good),
                   "proven": getattr(run, "proven", None) if status == "ok" else None}
            if len(good):
                row.update(mh.summarize_hd(x, good, case.mad, case.cat))
            rows.append(row)
        got = [r for r in rows if r["method"] == method]
        log(f"  {case.name}/{method}: {sum(r['valid'] > 0 for r in got)}/{len(got)} covered, "
            f"median {np.median([r['time'] for r in got]):.2f}s")
    return rows


def summarize(q: pd.DataFrame, acc: dict) -> pd.DataFrame:
    out = []
    for (ds, m), g in q.groupby(["dataset", "method"], sort=False):
        ok = g[g.valid > 0]
        out.append({"dataset": ds, "method": m, "rf_accuracy": acc[ds], "queries": len(g),
                    "coverage": (g.valid > 0).mean(), "valid_per_query": g.valid.mean(),
                    "proximity": ok.proximity.mean(), "proximity_cat": ok.get("proximity_cat", pd.Series()).mean(),
                    "sparsity": ok.sparsity.mean(), "diversity": ok.diversity.mean(),
                    "norm_div_eq15": ok.norm_div_eq15.mean(), "div_over_prox": ok.div_over_prox.mean(),
                    "time_median": g.time.median(), "time_p95": g.time.quantile(0.95),
                    "proven": int((g.proven == True).sum()) if "proven" in g else None})  # noqa: E712
    return pd.DataFrame(out)


def markdown(summary: pd.DataFrame, paper: pd.DataFrame | None) -> str:
    head = ("| dataset | method | RF acc | coverage | proximity | sparsity | diversity | norm. div (eq. 15) "
            "| div / prox | median s | p95 s |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|---|"]
    def f(v):
        return "–" if pd.isna(v) else f"{v:.4f}"

    for _, r in summary.iterrows():
        lines.append(f"| {r.dataset} | {r.method} | {r.rf_accuracy:.3f} | {r.coverage:.2f} | {f(r.proximity)} | "
                     f"{f(r.sparsity)} | {f(r.diversity)} | {f(r.norm_div_eq15)} | {f(r.div_over_prox)} | "
                     f"{r.time_median:.2f} | {r.time_p95:.2f} |")
        if paper is not None and r.method in PAPER_METHODS:
            p = paper[(paper.dataset == PAPER_NAMES[r.dataset]) & (paper.method == PAPER_METHODS[r.method])]
            for _, pr in p.iterrows():
                lines.append(f"| {r.dataset} | *paper {pr.method}* | | {pr.coverage:.2f} | {pr.proximity:.4f} | "
                             f"{pr.sparsity:.4f} | {pr.diversity:.4f} | – | {pr.norm_div:.4f} | – | – |")
    return "\n".join(lines)


def combine(dirs, out: Path, ref: Path):
    q, acc = None, {}
    for d in dirs:
        qi = pd.read_csv(d / "pso_queries.csv")
        acc.update(pd.read_csv(d / "pso.csv").groupby("dataset").rf_accuracy.first().to_dict())
        if q is not None:
            done = set(map(tuple, qi[["dataset", "method"]].drop_duplicates().to_numpy()))
            q = q[[(a, b) not in done for a, b in zip(q.dataset, q.method)]]
        q = qi if q is None else pd.concat([q, qi], ignore_index=True)
    order = {m: i for i, m in enumerate(METHODS)}
    dsorder = {n: i for i, n in enumerate(PAPER_NAMES)}
    q = q.sort_values(["dataset", "method"], key=lambda c: c.map(dsorder if c.name == "dataset" else order),
                      kind="stable")
    out.mkdir(parents=True, exist_ok=True)
    q.to_csv(out / "pso_queries.csv", index=False)
    s = summarize(q, acc)
    s.to_csv(out / "pso.csv", index=False)
    md = markdown(s, pd.read_csv(ref) if ref.is_file() else None)
    (out / "pso.md").write_text(md + "\n")
    print(md)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data" / "mdpso"))
    ap.add_argument("--reference", default=str(REPO.parent / "shared" / "reference" / "mdpso_table2.csv"))
    ap.add_argument("--datasets", nargs="+", default=list(PAPER_NAMES))
    ap.add_argument("--methods", nargs="+", default=list(METHODS))
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results"))
    ap.add_argument("--combine", nargs="+", metavar="DIR",
                    help="no run: combine the pso_queries.csv / pso.csv of earlier runs' output "
                         "directories into one table (a later directory replaces the (dataset, "
                         "method) rows of an earlier one)")
    a = ap.parse_args(argv)
    if a.combine:
        return combine([Path(p) for p in a.combine], Path(a.out), Path(a.reference))
    d = Path(a.data_dir)
    if not d.is_dir():
        raise SystemExit(f"no data directory {d}: pass --data-dir (see the module docstring)")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    rows, acc = [], {}
    for name in a.datasets:
        case = Case(name, d, a.n, a.seed)
        acc[name] = case.accuracy
        log(f"{name}: {len(case.X_tr)} train rows, {case.X_tr.shape[1]} features, RF accuracy "
            f"{case.accuracy:.3f}, {len(case.S)} rejected queries")
        rows += run_case(case, a.methods, a.k, a.time_limit, log)
    q = pd.DataFrame(rows)
    q.to_csv(out / "pso_queries.csv", index=False)
    s = summarize(q, acc)
    s.to_csv(out / "pso.csv", index=False)
    ref = Path(a.reference)
    md = markdown(s, pd.read_csv(ref) if ref.is_file() else None)
    (out / "pso.md").write_text(md + "\n")
    print(md)


if __name__ == "__main__":
    main()
