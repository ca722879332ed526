"""Command line: ``python -m groupcf explain ...``, ``python -m groupcf audit ...`` and
``python -m groupcf global ...``.

Exit codes: 0 success, 2 usage or input error (missing file, unknown column, a model that
is not a fitted pipeline), 1 unexpected failure. User errors print one line, no traceback.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .exceptions import GroupCFError, InvalidInputError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m groupcf",
                                description="Counterfactual explanations of a population, and audits of recourse burden.")
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("explain", help="explain every row of a CSV file")
    e.add_argument("--data", required=True, help="CSV of raw features, one row per person")
    e.add_argument("--model", required=True, help="joblib file of a fitted Pipeline(FeatureSpace, classifier)")
    e.add_argument("--method", default="mace", help="a registered method: mace (default), geco, pso")
    e.add_argument("--jobs", type=int, default=1, help="number of workers (default 1)")
    e.add_argument("--scheduler", default=None, help="Dask scheduler address (tcp://host:8786); else joblib")
    e.add_argument("--backend", default="loky", choices=["loky", "dask"], help="local backend (default loky)")
    e.add_argument("--checkpoint", default=None, help="checkpoint directory (resumes when re-run)")
    e.add_argument("--out", required=True, help="output parquet file (the input rows go beside it, "
                   "in <out>.input.parquet, for the audit)")
    e.add_argument("--tmax", type=int, default=None, help="at most this many features may change")
    e.add_argument("--n", type=int, default=1, help="counterfactuals per person (default 1)")
    e.add_argument("--index-col", default=None, help="CSV column to use as row identifier")
    a = sub.add_parser("audit", help="audit the recourse burden of an explain run")
    a.add_argument("run", help="parquet written by 'explain --out'")
    a.add_argument("--data", default=None, help="CSV holding the --by column (default: the run's input, if recorded)")
    a.add_argument("--by", required=True, help="column defining the groups, e.g. race")
    a.add_argument("--report", default=None, help="write a self-contained HTML report here")
    a.add_argument("--n-boot", "--boot", dest="n_boot", type=int, default=1000,
                   help="bootstrap resamples (default 1000; --boot is its old name)")
    a.add_argument("--global", dest="global_json", default=None,
                   help="JSON written by 'global --out': adds a shared-actions section to the report")
    g = sub.add_parser("global", help="a few shared actions explaining the rows a model rejects")
    g.add_argument("--data", required=True, help="CSV of raw features (the rows the model accepts are left out)")
    g.add_argument("--model", required=True, help="joblib file of a fitted Pipeline(FeatureSpace, classifier)")
    g.add_argument("--tmax", type=int, default=None, help="at most this many features per action")
    g.add_argument("--k", "--n", dest="k", type=int, default=None,
                   help="number of shared actions (default: the fewest covering everyone)")
    g.add_argument("--min-coverage", type=float, default=None, help="cheapest actions covering this share")
    g.add_argument("--numeric", default="shift", choices=["shift", "set"], help="numeric features: shift or set")
    g.add_argument("--time-limit", type=float, default=None, help="seconds")
    g.add_argument("--solver", default="highs", help="optimisation backend (default highs)")
    g.add_argument("--by", default=None, help="column of the data: coverage and cost gaps between its groups")
    g.add_argument("--out", default=None, help="write the result as JSON here")
    g.add_argument("--report", default=None, help="write a self-contained HTML report here (gaps by --by)")
    g.add_argument("--index-col", default=None, help="CSV column to use as row identifier")
    return p


def _global(args) -> int:
    import pandas as pd

    from .global_actions import explain_global
    X = _read_csv(args.data, args.index_col)
    model, names = _load_model(args.model, X)
    if args.by is not None and args.by not in X.columns:
        raise InvalidInputError(f"unknown column {args.by!r}: choose one of {list(X.columns)}")
    rejected = X[model.predict(X[names]) == model.classes_[0]]
    print(f"{len(rejected)} of {len(X)} rows are rejected by the model")
    res = explain_global(rejected[names], model, Tmax=args.tmax, k=args.k, min_coverage=args.min_coverage,
                         numeric=args.numeric, time_limit=args.time_limit, solver=args.solver, progress=True)
    print(res.summary())
    if args.by is not None:
        with pd.option_context("display.width", 140, "display.max_columns", 20):
            print()
            print(res.by_group(rejected[args.by]).to_string(float_format="%.4g"))
    if args.out:
        Path(args.out).write_text(res.to_json())
        print(f"result -> {args.out}")
    if args.report:
        from .audit.global_section import save_global_report

        save_global_report(res, args.report, None if args.by is None else rejected[args.by])
        print(f"report -> {args.report}")
    return 0


def _read_csv(path, index_col=None):
    import pandas as pd
    if not Path(path).is_file():
        raise InvalidInputError(f"data file not found: {path}")
    X = pd.read_csv(path)
    if index_col is not None:
        if index_col not in X.columns:
            raise InvalidInputError(f"unknown column {index_col!r} in {path}")
        X = X.set_index(index_col)
    return X


def _load_model(path, X):
    import joblib
    if not Path(path).is_file():
        raise InvalidInputError(f"model file not found: {path}")
    try:
        model = joblib.load(path)
    except Exception as exc:
        raise InvalidInputError(f"cannot read model {path}: {exc}") from exc
    steps = getattr(model, "steps", None)
    if not steps or not hasattr(model, "predict_proba"):
        raise InvalidInputError(f"{path} is not a Pipeline(FeatureSpace, classifier); save one with joblib.dump(pipeline, path)")
    feats = getattr(steps[0][1], "features_", None)
    if feats is None:
        raise InvalidInputError(f"{path}: the pipeline's first step is not a fitted groupcf FeatureSpace")
    names = [f.name for f in feats]
    missing = [c for c in names if c not in X.columns]
    if missing:
        raise InvalidInputError(f"the data lacks the model's feature columns {missing}")
    return model, names


def _explain(args) -> int:
    from .batch import explain_many
    X = _read_csv(args.data, args.index_col)
    model, names = _load_model(args.model, X)
    backend = args.backend
    if args.scheduler:
        from dask.distributed import Client
        backend = Client(args.scheduler)
    opts = {} if args.tmax is None else {"Tmax": args.tmax}
    if args.n != 1:
        opts["n"] = args.n
    r = explain_many(X[names], model, args.method, n_jobs=args.jobs, backend=backend,
                     checkpoint=args.checkpoint, progress=True, **opts)
    r.to_parquet(args.out)
    X.to_parquet(_input_path(args.out))       # every input column, for `audit --by`
    print(f"{len(r.table)} rows: {int(r.table['found'].sum())} explained, {len(r.failed)} failed -> {args.out}")
    return 0


def _input_path(out) -> Path:
    out = Path(out)
    return out.with_name(out.stem + ".input.parquet")


def _audit(args) -> int:
    import pandas as pd

    from .audit import audit
    from .batch import ExplanationSet
    r = ExplanationSet.read_parquet(args.run)
    if args.data is not None:
        X = _read_csv(args.data)
    elif _input_path(args.run).exists():
        X = pd.read_parquet(_input_path(args.run))
    else:
        raise InvalidInputError(f"--data is needed: {args.run} has no recorded input rows "
                                f"({_input_path(args.run)}); pass the CSV with the --by column")
    if args.by not in X.columns:
        raise InvalidInputError(f"unknown column {args.by!r}: choose one of {list(X.columns)}")
    if not r.table.index.isin(X.index).all():
        raise InvalidInputError(f"the rows of {args.run} are not rows of {args.data}")
    glob = None
    if args.global_json is not None:
        from .results.global_actions import GlobalExplanation

        glob = GlobalExplanation.from_json(Path(args.global_json).read_text())
    a = audit(r, X, args.by, n_boot=args.n_boot, global_actions=glob)
    with pd.option_context("display.width", 120, "display.max_columns", 20):
        print(a.groups.to_string(float_format="%.4g"))
        print()
        print(a.differences.to_string(float_format="%.4g"))
    if args.report:
        a.save_report(args.report)
        print(f"report -> {args.report}")
    return 0


def main(argv=None) -> int:
    """Run the command line (``python -m groupcf ...``); returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return {"explain": _explain, "audit": _audit, "global": _global}[args.command](args)
    except (GroupCFError, FileNotFoundError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
