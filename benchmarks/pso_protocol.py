"""The protocol of ``benchmarks/pso.py`` (MD-PSO on the four datasets of Shekhar et al.
2023): data, the cases (split x model seed x model), the disjoint tuning / evaluation query
pools, the paper's metrics and one query's run, re-checked with the model.

Data are read from ``--data-dir`` (default ``../shared/data/mdpso``, never copied; its
README gives provenance):

* COMPAS: ``compas-two-years_5278_derived.csv`` (13 features); desired class: no two-year
  recidivism; ``sex``, race and age-category indicators immutable, ``age`` increase-only.
* Hill-Valley: the non-noisy merged file (1212 x 100); desired class: hill (1).
* Arrhythmia: the 17 constant columns dropped (262 features), missing values filled with the
  training medians, columns with 2-5 distinct values categorical; desired class: normal (1);
  age and sex immutable.
* LSVT: 126 x 310, all numeric; desired class: acceptable (1).

**Protocol.** Per dataset, ``--splits`` (3) stratified 50/50 train/test splits (split seed
``s``) times ``--model-seeds`` (3) model seeds ``m``: a
``Pipeline(FeatureSpace(numeric="passthrough"), model)``, by default a random forest of 100
trees (``--models``: ``rf100``, ``rf500``, ``gb`` gradient boosting, ``mlp``). The *test rows*
of split ``s`` are shuffled with seed ``s`` and halved (:func:`split_pools`) into a tuning pool
and an evaluation pool, so the two query sets are disjoint for every model trained on that
split; the queries are the first ``--queries`` rows of a pool that the model rejects.
Every counterfactual is re-checked with the model and the actionability rules (:func:`valid_rows`);
only valid ones are scored with :mod:`groupcf.metrics_hd` (the paper's eqs. 8-15: proximity =
mean MAD-scaled |Δ| over continuous features, per counterfactual, averaged over the ``--k``
(5) counterfactuals; ``best`` = the smallest per-counterfactual proximity).
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

sys.path.insert(0, str(Path(__file__).resolve().parent))   # the scripts' shared helpers
# this checkout's groupcf, not the one the venv has installed (e.g. another worktree's)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _deadline import Timeout, with_deadline

import groupcf as gcf
from groupcf import metrics_hd as mh
from groupcf.models import TrainedModel

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
#: /work/shared beside /work/main (or beside the worktrees' folder, /work/wt/<name>)
SHARED = Path(os.environ.get("GROUPCF_SHARED") or next(
    (p for p in (REPO.parent / "shared", REPO.parent.parent / "shared") if p.is_dir()), REPO.parent / "shared"))
PAPER_NAMES = {"compas": "COMPAS", "hill-valley": "Hill-Valley", "arrhythmia": "Arrhythmia", "lsvt": "LSVT"}


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


def split_pools(index, seed: int) -> tuple[pd.Index, pd.Index]:
    """The test rows ``index`` shuffled with ``seed`` and halved: ``(tuning, evaluation)``,
    disjoint, together all of ``index`` (the first gets the extra row of an odd count)."""
    index = pd.Index(index)
    perm = np.random.default_rng(seed).permutation(len(index))
    cut = (len(index) + 1) // 2
    return index[perm[:cut]], index[perm[cut:]]


def make_model(kind: str, seed: int):
    """The classifier behind the FeatureSpace (features scaled to [0, 1] by the space)."""
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.neural_network import MLPClassifier

    if kind in ("rf100", "rf500"):
        return RandomForestClassifier(n_estimators=int(kind[2:]), random_state=seed, n_jobs=1)
    if kind == "gb":
        return HistGradientBoostingClassifier(max_iter=100, random_state=seed)
    if kind == "mlp":
        return MLPClassifier(hidden_layer_sizes=(50,), max_iter=1000, random_state=seed)
    raise SystemExit(f"unknown model {kind!r}")


class Case:
    """One (dataset, split seed, model seed, model kind): the fitted pipeline, the training
    rows, the MAD of the metric and the tuning / evaluation query pools."""

    def __init__(self, name: str, data, split_seed: int, model_seed: int, model: str = "rf100"):
        X, y, cat, imm, inc = data
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=split_seed, stratify=y)
        med = X_tr.median()
        X_tr, X_te = X_tr.fillna(med), X_te.fillna(med)        # Arrhythmia's '?' only
        kinds = {c: ("binary" if X_tr[c].nunique() == 2 else "categorical") for c in cat}
        # a numeric column two-valued by chance in this training half stays numeric
        kinds.update({c: "numeric" for c in X.columns if c not in cat and X_tr[c].nunique() <= 2 < X[c].nunique()})
        for c in cat:   # categories seen only in the test half: the nearest seen one
            seen = np.sort(X_tr[c].unique())
            X_te[c] = [seen[np.argmin(np.abs(seen - v))] for v in X_te[c]]
        self.space = gcf.FeatureSpace(immutable=imm, increase_only=inc, kinds=kinds, numeric="passthrough")
        self.pipe = make_pipeline(self.space, make_model(model, model_seed))
        self.pipe.fit(X_tr, y_tr)
        self.name, self.split_seed, self.model_seed, self.model = name, split_seed, model_seed, model
        self.X_tr, self.y_tr, self.X_te, self.cat, self.imm, self.inc = X_tr, y_tr, X_te, cat, imm, inc
        self.accuracy = float(self.pipe.score(X_te, y_te))
        self.tm = TrainedModel(self.pipe, self.space, None, 0.5)
        self.mad = mh.mad(X_tr, [c for c in X_tr.columns if c not in cat])
        self.pools = dict(zip(("tune", "eval"), split_pools(X_te.index, split_seed)))
        rejected = X_te.index[self.pipe.predict(X_te) == 0]
        self.rejected = {k: [i for i in v if i in set(rejected)] for k, v in self.pools.items()}

    def queries(self, role: str, n: int) -> pd.DataFrame:
        """The first ``n`` rejected rows of the ``role`` ("tune" / "eval") pool."""
        return self.X_te.loc[self.rejected[role][:n]]


# ----------------------------------------------------------------------------- metrics
def per_cf_proximity(x: pd.Series, cfs: pd.DataFrame, mad: pd.Series, categorical=()) -> np.ndarray:
    """Eq. 8 per counterfactual: mean over the continuous features (those with a MAD, not
    categorical) of ``|c_j - x_j| / MAD_j``."""
    cont = [c for c in cfs.columns if c in mad.index and c not in set(categorical)]
    d = np.abs(cfs[cont].to_numpy(float) - x[cont].to_numpy(float)[None, :]) / mad[cont].to_numpy(float)
    return d.mean(axis=1)


def query_metrics(x: pd.Series, cfs: pd.DataFrame, mad: pd.Series, categorical=()) -> dict:
    """The paper's metrics of one query's valid counterfactuals plus ``best`` (smallest
    per-counterfactual proximity) and ``changed_max`` (most features any of them changes)."""
    out = mh.summarize_hd(x, cfs, mad, categorical)
    out["best"] = float(per_cf_proximity(x, cfs, mad, categorical).min())
    diff = np.abs(cfs.to_numpy(float) - x[cfs.columns].to_numpy(float)[None, :]) > 1e-9
    out["changed_max"] = int(diff.sum(axis=1).max())
    return out


def valid_rows(case: Case, x: pd.Series, cfs: pd.DataFrame | None) -> pd.DataFrame:
    """The counterfactuals the model accepts and the actionability rules allow."""
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


# ----------------------------------------------------------------------------- runs
def pso_runner(case: Case, k: int, options: dict):
    def run(x, i):
        e = gcf.explain(x, case.pipe, method="pso", data=case.X_tr, n=k, random_state=i,
                        progress=False, **options)
        run.note = e.stats.get("note", "")
        return e.counterfactuals
    return run


def runner(method: str, case: Case, k: int, limit: float, options: dict | None = None):
    """One query's run of ``method``; ``options``: PSO options (``None``: the defaults)."""
    if method == "pso":
        return pso_runner(case, k, options or {})
    import pso_limit

    return pso_limit.runner(method, case, k, limit)


def run_queries(case: Case, run, S: pd.DataFrame, limit: float, tags: dict) -> list[dict]:
    rows = []
    for i, (idx, x) in enumerate(S.iterrows()):
        t0, c0 = time.perf_counter(), time.process_time()
        status, cfs = "ok", None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cfs = with_deadline(lambda x=x, i=i: run(x, i), limit)
        except Timeout:
            status = "timeout"
        except Exception as exc:                       # noqa: BLE001 - recorded per query
            status = f"{type(exc).__name__}: {str(exc)[:120]}"
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        good = valid_rows(case, x, cfs)
        row = {"dataset": case.name, "model": case.model, "split": case.split_seed, "seed": case.model_seed,
               **tags, "query": idx, "time": dt, "cpu": cpu, "status": status,
               "returned": 0 if cfs is None else len(cfs), "valid": len(good),
               "note": getattr(run, "note", "") if status == "ok" else ""}
        for key in ("lower_bound", "proven"):
            if hasattr(run, key) and status == "ok":
                row[key] = getattr(run, key)
        if len(good):
            row.update(query_metrics(x, good, case.mad, case.cat))
        rows.append(row)
    return rows


def cases(a, model: str = "rf100"):
    d = Path(a.data_dir)
    if not d.is_dir():
        raise SystemExit(f"no data directory {d}: pass --data-dir (see the module docstring)")
    for name in a.datasets:
        data = load(name, d)
        for s in range(a.splits):
            for m in range(a.model_seeds):
                yield Case(name, data, s, m, model)


def log(msg):
    print(msg, file=sys.stderr, flush=True)
