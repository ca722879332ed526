"""Single-instance counterfactuals: MACE, GeCo and DiCE side by side.

    python benchmarks/single.py                 # full run: 200 rejected instances per case
    python benchmarks/single.py --n 20          # quick run
    python benchmarks/single.py --datasets german --models lr --methods mace geco

Per dataset (Adult, German, Credit; ``gcf.datasets.load(name)``, default variant) and
model (logistic regression ``C=10``; ReLU ``MLPClassifier((20, 20))``; ``rf``:
``RandomForestClassifier(100, max_depth=8)``; ``gbt``: ``GradientBoostingClassifier(
n_estimators=100, max_depth=3)``; ``gbt6``: ``GradientBoostingClassifier(n_estimators=500,
max_depth=6)``; ``rf500``: ``RandomForestClassifier(500, max_depth=10)``; ``xgb6``:
``XGBClassifier(n_estimators=500, max_depth=6)``; ``lgbm6``: ``LGBMClassifier(n_estimators=500,
max_depth=6)`` (num_leaves 31, its default); random_state ``--seed``, default 0):
split 50/50 (random_state ``--seed``), fit ``Pipeline(FeatureSpace, clf)`` on the training half
and explain the first ``--n`` test rows the model rejects with every method, under the
same actionability (the Dataset's ``immutable`` / ``increase_only`` suggestions).

FeatureSpace for every dataset: ``FeatureSpace(immutable=ds.immutable,
increase_only=ds.increase_only, numeric="passthrough")`` — numeric features stay
continuous (one column scaled to the training range), categoricals one-hot, ordered
categoricals ordinal one-hot, two-valued features binary (``--numeric bin``: numeric
features binned instead, FeatureSpace's default).

Methods (one counterfactual each is scored: the best one the method returns):

* ``mace``  — exact MIP (HiGHS), ``distance={"l0": 0.1, "l1": 0.9}``, ``n=1``;
* ``geco``  — GeCo as published (its own distance, alpha = beta = gamma = 1/3; k = 5,
  q = 100, m_init = 20, m_mut = 5), data = the training rows;
* ``geco+`` — GeCo minimising MACE's distance (``distance=`` the same weights) with the
  final coordinate-descent polish (``refine=True``);
* ``dice-genetic``, ``dice-random`` — DiCE (``dice-ml``; ``total_CFs=1``, desired class
  "opposite", defaults otherwise) on the same pipeline as a black box
  (``backend="sklearn"``): immutable features left out of ``features_to_vary``,
  increase-only features given a per-instance ``permitted_range`` from the instance's
  value upwards.

Every method is scored by the same :mod:`groupcf.metrics` functions on raw rows:
coverage (a counterfactual the real model accepts), validity, features changed
(``sparsity`` with the space), distance (``proximity(..., kind="mace")`` with the
weights above, the value MACE minimises), plus an actionability check (immutable
features unchanged, increase-only ones not decreased) and wall time per instance.
Writes ``<out>/single.csv`` (summary), ``single.md`` (markdown table) and
``single_instances.csv`` (one row per instance and method).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")        # DiCE draws a progress bar per query

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))   # the scripts' shared helpers
from _deadline import Timeout, with_deadline

import groupcf as gcf  # noqa: E402
from groupcf.exceptions import NoCounterfactualError, SolverTimeLimitError  # noqa: E402
from groupcf.formulations.distances import feature_distances, parse_distance  # noqa: E402
from groupcf.models import resolve_model  # noqa: E402
from groupcf.single.geco import GeCo  # noqa: E402

DISTANCE = {"l0": 0.1, "l1": 0.9}
DATASETS = ("adult", "german", "credit")
MODELS = ("lr", "mlp", "rf", "rf500", "gbt", "gbt6", "xgb6", "lgbm6")
METHODS = ("mace", "geco", "geco+", "dice-genetic", "dice-random")
#: per-method time limit per instance (seconds); MACE and GeCo stop themselves (MACE
#: keeps its best solution so far), DiCE is interrupted (counted as a failure)
TIME_LIMITS = {"mace": 10.0, "geco": 2.0, "geco+": 2.0, "dice-genetic": 10.0, "dice-random": 10.0}
OUT = Path(__file__).resolve().parent / "results"


# ----------------------------------------------------------------------------- set-up
@dataclass
class Case:
    dataset: str
    model: str
    ds: object
    pipe: object
    X_tr: pd.DataFrame
    y_tr: pd.Series
    S: pd.DataFrame
    accuracy: float
    n_rejected: int

    @property
    def space(self):
        return self.pipe[0]


def make_case(dataset: str, model: str, n: int, cache: Path | None = None, seed: int = 0,
              numeric: str = "passthrough") -> Case:
    """The case; ``seed`` is the split's and the model's random_state. With ``cache``, the
    fitted pipeline is read from (or written to) ``<cache>/<dataset>_<model>.joblib``
    (``..._s<seed>`` for another seed, ``..._bin`` for binned numerics; a GBT 500x6 takes
    minutes to fit)."""
    from sklearn.pipeline import make_pipeline

    ds = gcf.datasets.load(dataset)
    X_tr, X_te, y_tr, y_te = ds.split(test_size=0.5, random_state=seed)
    tag = (f"_s{seed}" if seed else "") + ("" if numeric == "passthrough" else f"_{numeric}")
    path = None if cache is None else Path(cache) / f"{dataset}_{model}{tag}.joblib"
    if path is not None and path.exists():
        import joblib
        pipe = joblib.load(path)
    else:
        clf = _classifier(model, seed)
        space = gcf.FeatureSpace(immutable=ds.immutable, increase_only=ds.increase_only,
                                 numeric=numeric)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # MLP convergence warnings
            pipe = make_pipeline(space, clf).fit(X_tr, y_tr)
        if path is not None:
            import joblib
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            joblib.dump(pipe, tmp)
            tmp.replace(path)
    rejected = X_te[pipe.predict(X_te) == 0]
    return Case(dataset, model, ds, pipe, X_tr, y_tr, rejected.iloc[:n],
                float(pipe.score(X_te, y_te)), len(rejected))


def _classifier(model: str, seed: int = 0):
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    return {
        "lr": lambda: LogisticRegression(C=10, max_iter=5000, random_state=seed),
        "mlp": lambda: MLPClassifier((20, 20), activation="relu", max_iter=300, random_state=seed),
        "rf": lambda: RandomForestClassifier(100, max_depth=8, random_state=seed, n_jobs=1),
        "gbt": lambda: GradientBoostingClassifier(n_estimators=100, max_depth=3, random_state=seed),
        "gbt6": lambda: GradientBoostingClassifier(n_estimators=500, max_depth=6, random_state=seed),
        "rf500": lambda: RandomForestClassifier(500, max_depth=10, random_state=seed, n_jobs=1),
        "xgb6": lambda: _xgb(seed),
        "lgbm6": lambda: _lgbm(seed),
    }[model]()


def _xgb(seed: int = 0):
    from xgboost import XGBClassifier

    return XGBClassifier(n_estimators=500, max_depth=6, random_state=seed, n_jobs=1)


def _lgbm(seed: int = 0):
    from lightgbm import LGBMClassifier

    return LGBMClassifier(n_estimators=500, max_depth=6, random_state=seed, n_jobs=1, verbose=-1)


# ----------------------------------------------------------------------------- methods
def mace_runner(case: Case, limit: float, options: dict | None = None):
    opts = dict(options or {})

    def run(x, i):
        return gcf.explain(x, case.pipe, method="mace", distance=DISTANCE, time_limit=limit, **opts)
    return run


def parse_variant(text: str) -> tuple[str, dict]:
    """``NAME=opt:value,opt:value`` (values ``true``/``false``, numbers or text) ->
    ``("mace[NAME]", options)``: MACE with those options, run as one more method."""
    name, _, body = text.partition("=")
    opts = {}
    for item in filter(None, body.split(",")):
        k, _, v = (part.strip() for part in item.partition(":"))
        opts[k] = {"true": True, "false": False, "none": None}.get(v.lower(), v)
        if isinstance(opts[k], str) and v.replace(".", "", 1).isdigit():
            opts[k] = float(v) if "." in v else int(v)
    return f"mace[{name}]", opts


def geco_runner(case: Case, limit: float, plus: bool):
    opts = dict(distance=DISTANCE, refine=True) if plus else {}
    explainer = GeCo(case.pipe, case.X_tr, time_limit=limit, **opts)   # active domain: once

    def run(x, i):
        return explainer.explain(x, random_state=i)
    return run


def dice_runner(case: Case, limit: float, kind: str):
    from importlib.metadata import version

    import dice_ml
    from raiutils.exceptions import UserConfigValidationException

    dice_version = version("dice-ml")
    X_tr, ds = case.X_tr, case.ds
    numeric = [c for c in X_tr.columns if pd.api.types.is_numeric_dtype(X_tr[c])]
    frame = X_tr.copy()
    frame["_y"] = case.y_tr.to_numpy()
    data = dice_ml.Data(dataframe=frame, continuous_features=numeric, outcome_name="_y")
    dice = dice_ml.Dice(data, dice_ml.Model(model=case.pipe, backend="sklearn"), method=kind)
    vary = [c for c in X_tr.columns if c not in ds.immutable]
    tm = resolve_model(case.pipe)

    def permitted(x):
        out = {}
        for c in ds.increase_only:
            if c in ds.immutable:
                continue
            if c in numeric:
                out[c] = [float(x[c]), float(max(X_tr[c].max(), x[c]))]
            else:                                    # ordered categorical: this level and above
                cats = list(X_tr[c].cat.categories)
                out[c] = cats[cats.index(x[c]):]
        return out

    def run(x, i):
        t0 = time.perf_counter()
        kw = dict(random_seed=i) if kind == "random" else {}
        np.random.seed(i)   # noqa: NPY002 - DiCE draws from numpy's global generator
        try:
            res = dice.generate_counterfactuals(x.to_frame().T.astype(X_tr.dtypes.to_dict()), total_CFs=1,
                                                desired_class="opposite", features_to_vary=vary,
                                                permitted_range=permitted(x) or None, verbose=False, **kw)
        except UserConfigValidationException as exc:    # DiCE's way to say "none found"
            if "No counterfactuals found" in str(exc):
                raise NoCounterfactualError(f"DiCE ({kind}): {exc}") from None
            raise
        cfs = res.cf_examples_list[0].final_cfs_df
        if cfs is None or len(cfs) == 0:
            raise NoCounterfactualError(f"DiCE ({kind}) returned no counterfactual")
        cfs = cfs[list(X_tr.columns)].astype(X_tr.dtypes.to_dict()).reset_index(drop=True)
        changed = [f.name for f, d in zip(case.space, feature_distances(case.space, x, cfs.iloc[[0]])[0])
                   if d > 0]
        return gcf.Explanation(
            instance=x, counterfactuals=cfs, changes=[changed],
            distances=list(gcf.metrics.proximity(x, cfs, case.space, "mace", DISTANCE)),
            probabilities=tm.proba(cfs), status=gcf.Status.FEASIBLE, is_optimal=False,
            solve_time=time.perf_counter() - t0, method=f"dice-{kind}",
            distance=parse_distance(DISTANCE).name,
            solver=f"dice-ml {dice_version} ({kind})")
    return run


def make_runner(method: str, case: Case, limit: float, variants: dict | None = None):
    if method == "mace":
        return mace_runner(case, limit)
    if method.startswith("mace["):
        return mace_runner(case, limit, (variants or {})[method])
    if method in ("geco", "geco+"):
        return geco_runner(case, limit, plus=method == "geco+")
    if method.startswith("dice-"):
        return dice_runner(case, limit, method.split("-", 1)[1])
    raise ValueError(f"unknown method {method!r}; available: {METHODS}")


# ----------------------------------------------------------------------------- scoring
def actionable(space, x, cf: pd.DataFrame) -> bool:
    """Immutable features unchanged and increase-only ones not decreased (codes)."""
    xc, c = space.codes(x.to_frame().T)[0], space.codes(cf)[0]
    for l, f in enumerate(space):
        if f.immutable and abs(c[l] - xc[l]) > 1e-9:
            return False
        if f.increase_only and c[l] < xc[l] - 1e-9:
            return False
    return True


def run_method(case: Case, method: str, limit: float, variants: dict | None = None):
    """Explain every instance of ``case.S``; per-instance rows and the explanations."""
    t0 = time.perf_counter()
    try:
        run = make_runner(method, case, limit, variants)
    except ImportError as exc:
        return None, f"not run: {exc}"
    prep = time.perf_counter() - t0
    # a hard cap well above the method's own limit (MACE / GeCo stop by themselves)
    hard = limit if method.startswith("dice-") else 3 * limit + 5
    rows, explanations = [], []
    for i, (idx, x) in enumerate(case.S.iterrows()):
        t, c = time.perf_counter(), time.process_time()
        status, exp = "ok", None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exp = with_deadline(lambda x=x, i=i: run(x, i), hard)
        except Timeout:
            status = "timeout"
        except (NoCounterfactualError, SolverTimeLimitError) as exc:
            status = type(exc).__name__
        except Exception as exc:                      # a method's own failure: record it
            status = f"error:{type(exc).__name__}: {str(exc)[:80]}"
        elapsed, cpu = time.perf_counter() - t, time.process_time() - c
        row = dict(dataset=case.dataset, model=case.model, method=method, index=idx, status=status,
                   time=elapsed, cpu=cpu, load=os.getloadavg()[0], found=exp is not None, valid=np.nan, actionable=np.nan,
                   distance=np.nan, changed=np.nan, optimal=np.nan)
        if exp is not None:
            best = exp.counterfactuals.iloc[[0]]
            row["valid"] = gcf.metrics.validity(case.pipe, best)
            row["actionable"] = float(actionable(case.space, x, best))
            row["distance"] = float(gcf.metrics.proximity(x, best, case.space, "mace", DISTANCE)[0])
            row["changed"] = int(gcf.metrics.sparsity(x, best, case.space)[0])
            row["optimal"] = float(exp.is_optimal)
            exp.counterfactuals = best                # score the best one only
        rows.append(row)
        explanations.append(exp)
    return dict(rows=rows, explanations=explanations, prep=prep), None


def summarize(case: Case, method: str, out: dict, mace_rows: list | None) -> dict:
    df = pd.DataFrame(out["rows"])
    ok = df[df.valid == 1.0]
    ms = df.time.to_numpy() * 1e3
    ratio = np.nan
    if mace_rows is not None:
        m = pd.DataFrame(mace_rows)
        both = (df.valid.to_numpy() == 1.0) & (m.valid.to_numpy() == 1.0)
        if both.any():
            ratio = df.distance.to_numpy()[both].mean() / m.distance.to_numpy()[both].mean()
    failures = df.status[df.status != "ok"].str.split(":").str[0].value_counts()
    return {
        "dataset": case.dataset, "model": case.model, "method": method, "n": len(df),
        "coverage": gcf.metrics.coverage(out["explanations"], case.pipe),
        "validity": df.valid[df.found].mean() if df.found.any() else np.nan,
        "actionable": df.actionable[df.found].mean() if df.found.any() else np.nan,
        "features_changed": ok.changed.mean(),
        "distance": ok.distance.mean(),
        "distance_vs_mace": ratio,
        "median_ms": float(np.median(ms)), "p95_ms": float(np.percentile(ms, 95)),
        "mean_ms": float(ms.mean()), "setup_s": out["prep"],
        "median_cpu_ms": float(np.median(df.cpu) * 1e3), "p95_cpu_ms": float(np.percentile(df.cpu, 95) * 1e3),
        "max_ms": float(ms.max()), "load": float(df.load.mean()),
        "proven": int((df.optimal == 1.0).sum()) if method.startswith("mace") else np.nan,
        "proven_10s": int(((df.optimal == 1.0) & (df.time <= 10.0)).sum()) if method.startswith("mace") else np.nan,
        "optimal": df.optimal[df.found].mean() if method.startswith("mace") and df.found.any() else np.nan,
        "failures": "; ".join(f"{k} {v}" for k, v in failures.items()),
    }


# ----------------------------------------------------------------------------- report
def markdown(summary: pd.DataFrame) -> str:
    cols = ["dataset", "model", "method", "n", "coverage", "validity", "actionable",
            "features changed", "distance", "dist / MACE", "median ms", "p95 ms", "max ms",
            "median CPU ms", "proven (≤ 10 s)", "load", "failures"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]

    def f(v, fmt):
        return "—" if v is None or (isinstance(v, float) and np.isnan(v)) else format(v, fmt)

    for r in summary.to_dict("records"):
        lines.append("| " + " | ".join([
            r["dataset"], r["model"], r["method"], str(r["n"]), f(r["coverage"], ".3f"),
            f(r["validity"], ".3f"), f(r["actionable"], ".3f"), f(r["features_changed"], ".2f"),
            f(r["distance"], ".4f"), f(r["distance_vs_mace"], ".3f"), f(r["median_ms"], ".1f"),
            f(r["p95_ms"], ".1f"), f(r["max_ms"], ".0f"), f(r["median_cpu_ms"], ".1f"),
            "—" if np.isnan(r["proven"]) else f"{r['proven']:.0f} ({r['proven_10s']:.0f})",
            f(r["load"], ".1f"), r["failures"] or "—"]) + " |")
    return "\n".join(lines)


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    import highspy  # noqa: F401
    import sklearn

    out = [f"groupcf {gcf.__version__}", f"numpy {np.__version__}", f"pandas {pd.__version__}",
           f"scikit-learn {sklearn.__version__}"]
    for pkg in ("highspy", "dice-ml", "numba"):
        try:
            out.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            out.append(f"{pkg} not installed")
    from groupcf.embeddings import _tree_walk
    from groupcf.embeddings.tree_delta import TreeDelta
    walk = "compiled (numba)" if _tree_walk.COMPILED and TreeDelta.compiled else "numpy"
    return ", ".join(out) + f"; tree walk: {walk}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200, help="rejected test instances per dataset and model")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--time-limit", nargs="+", default=[], metavar="METHOD=SECONDS",
                    help="per-instance time limits, e.g. mace=5 dice-genetic=20 (defaults: "
                         + ", ".join(f"{m}={v:g}" for m, v in TIME_LIMITS.items()) + ")")
    ap.add_argument("--out", type=Path, default=OUT, help="output directory")
    ap.add_argument("--cache", type=Path, default=None, metavar="DIR",
                    help="read / write the fitted pipelines as DIR/<dataset>_<model>.joblib")
    ap.add_argument("--seed", type=int, default=0,
                    help="random_state of the split and of every model (default 0: the numbers so far)")
    ap.add_argument("--numeric", default="passthrough", choices=("passthrough", "bin"),
                    help="FeatureSpace(numeric=...): continuous numeric columns (default) or bins")
    ap.add_argument("--fit-only", action="store_true", help="fit (and cache) the models, explain nothing")
    ap.add_argument("--mace-variant", nargs="+", default=[], metavar="NAME=OPT:VALUE,...",
                    help="MACE again with these options, as method mace[NAME] "
                         "(e.g. nocuts=distance_cuts:false); side by side with mace")
    args = ap.parse_args(argv)
    variants = dict(parse_variant(v) for v in args.mace_variant)
    limits = dict(TIME_LIMITS)
    for item in args.time_limit:
        m, _, v = item.partition("=")
        if m not in METHODS or not v:
            ap.error(f"--time-limit takes METHOD=SECONDS with METHOD in {list(METHODS)}, got {item!r}")
        limits[m] = float(v)

    args.out.mkdir(parents=True, exist_ok=True)
    started = _dt.datetime.now()
    t_all = time.perf_counter()
    command = "python benchmarks/single.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(f"# {command}\n# {started:%Y-%m-%d %H:%M}  {machine()}\n# {versions()}", flush=True)
    summaries, instances, notes = [], [], []
    methods = [m for m in METHODS if m in args.methods]       # MACE first: the reference
    methods[1:1] = list(variants) if "mace" in methods else []
    methods = methods if "mace" in methods else list(variants) + methods
    for dataset in args.datasets:
        for model in args.models:
            t = time.perf_counter()
            case = make_case(dataset, model, args.n, cache=args.cache, seed=args.seed,
                             numeric=args.numeric)
            if args.fit_only:
                print(f"{dataset} / {model}: fitted or cached ({time.perf_counter() - t:.1f}s)", flush=True)
                continue
            print(f"\n== {dataset} / {model}: test accuracy {case.accuracy:.3f}, {case.n_rejected} rejected, "
                  f"explaining {len(case.S)} (setup {time.perf_counter() - t:.1f}s)", flush=True)
            mace_rows = None
            for method in methods:
                t = time.perf_counter()
                out, why = run_method(case, method, limits["mace" if method.startswith("mace[") else method],
                                      variants)
                if out is None:
                    print(f"   {method:13s} {why}", flush=True)
                    notes.append(f"{dataset}/{model}/{method}: {why}")
                    continue
                if method == "mace":
                    mace_rows = out["rows"]
                s = summarize(case, method, out, mace_rows)
                summaries.append(s)
                instances.extend(out["rows"])
                pd.DataFrame(instances).to_csv(args.out / "single_instances.csv", index=False)   # so far
                proven = "" if np.isnan(s["proven"]) else f"  proven {s['proven']:.0f} ({s['proven_10s']:.0f} in 10 s)"
                print(f"   {method:13s} coverage {s['coverage']:.3f}  changed {s['features_changed']:.2f}  "
                      f"distance {s['distance']:.4f} (x{s['distance_vs_mace']:.3f} MACE)  median "
                      f"{s['median_ms']:.0f} ms  p95 {s['p95_ms']:.0f} ms  max {s['max_ms']:.0f} ms  "
                      f"cpu median {s['median_cpu_ms']:.0f} ms{proven}  load {s['load']:.1f}  "
                      f"[{time.perf_counter() - t:.0f}s]"
                      + (f"  failures: {s['failures']}" if s["failures"] else ""), flush=True)
    total = time.perf_counter() - t_all
    if args.fit_only:
        print(f"fitted / cached in {total / 60:.1f} min")
        return 0
    summary = pd.DataFrame(summaries)
    summary.to_csv(args.out / "single.csv", index=False)
    pd.DataFrame(instances).to_csv(args.out / "single_instances.csv", index=False)
    md = [f"Command: `{command}`  ", f"Date: {started:%Y-%m-%d %H:%M}; total wall time {total / 60:.1f} min  ",
          f"Machine: {machine()}  ", f"Versions: {versions()}  ",
          f"Distance: MACE's {parse_distance(DISTANCE).name} "
          "(gcf.metrics.proximity, kind='mace'), for every method  ",
          "Time limits per instance (s): " + ", ".join(f"{m} {limits.get(m, limits['mace']):g}" for m in methods), "",
          markdown(summary) if len(summary) else "(no results)"]
    if notes:
        md += ["", "Not run: " + "; ".join(notes)]
    (args.out / "single.md").write_text("\n".join(md) + "\n")
    print(f"\n{markdown(summary) if len(summary) else '(no results)'}\n\ntotal {total / 60:.1f} min; "
          f"wrote {args.out / 'single.csv'}, {args.out / 'single.md'}, {args.out / 'single_instances.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
