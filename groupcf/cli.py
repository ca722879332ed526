"""Command line: ``python -m groupcf explain | group | global | audit ...`` (``--help`` on each).

Data files are CSV or parquet (by extension); outputs too. Exit codes: 0 success, 2 usage
or input error (missing file, unknown column, a model that is not a fitted pipeline), 1
unexpected failure. User errors print one line, no traceback.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from .exceptions import GroupCFError, InvalidInputError

if TYPE_CHECKING:
    from .results.group import GroupExplanation
    from .results.sets import GroupExplanationSet

EXPLAIN_EPILOG = """files written:
  OUT                      one row per person: status, found, distance, features changed, error
  OUT's stem + .cf.EXT     the counterfactuals (raw feature values, numbers as numbers), when any;
                           a changed binned feature holds its bin's representative value, and
                           '<feature> bin' the bin itself, e.g. [4, 12)
  OUT's stem + .input.parquet   every input column, read by 'audit --by'
EXT is OUT's extension: .csv or .parquet."""


GLOBAL_DESCRIPTION = """A few shared actions (the same change for everyone it covers) explaining the rows of
--data that the model rejects (rows it accepts are skipped); the Python call is
groupcf.explain_global, whose keywords these options are. Prints the actions, whom each
is for, and the coverage-k curve with its certified upper bounds."""


def _version() -> str:
    from . import __version__

    return __version__


def _common(p: argparse.ArgumentParser, *, tmax_help: str) -> None:
    """The model-side flags every command that explains shares (one vocabulary)."""
    p.add_argument("--data", required=True, help="CSV or parquet of raw features, one row per person")
    p.add_argument("--model", required=True, help="joblib file of a fitted scikit-learn pipeline")
    p.add_argument("--tmax", "--Tmax", dest="tmax", type=int, default=None, help=tmax_help)
    p.add_argument("--solver", default="highs", help="optimisation backend: highs (default), gurobi, pyomo")
    p.add_argument("--time-limit", type=float, default=None, help="seconds (default: no limit)")
    p.add_argument("--threshold", type=float, default=0.5,
                   help="probability from which a row is accepted (default 0.5)")
    p.add_argument("--space", default=None, metavar="FILE",
                   help="joblib file of a FeatureSpace fitted on the training rows (Python's space=): the "
                        "numeric ranges and immutable / increase-only rules of a model whose pipeline starts "
                        "with scikit-learn preprocessing (without it: the scalers' estimated ranges, no rules)")
    p.add_argument("--index-col", default=None, help="column of --data (name or 0-based position) to use as row identifier")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m groupcf",
                                description="Counterfactual explanations of a population, and audits of recourse burden.")
    p.add_argument("--version", action="version", version=f"groupcf {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("explain", help="explain every row of a data file (MACE, GeCo or PSO)", epilog=EXPLAIN_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(e, tmax_help="at most this many features may change")
    e.add_argument("--method", default="mace", choices=["mace", "geco", "pso"], help="method (default mace)")
    e.add_argument("--reference", default=None,
                   help="CSV or parquet of reference rows (e.g. the training data): needed by geco and pso")
    e.add_argument("--distance", default=None, help="MACE's distance: l0 (default), l1 or linf")
    e.add_argument("--n", type=int, default=1, help="counterfactuals per person (default 1)")
    e.add_argument("--jobs", type=int, default=1, help="number of workers (default 1)")
    e.add_argument("--scheduler", default=None, help="Dask scheduler address (tcp://host:8786); else joblib")
    e.add_argument("--backend", default="loky", choices=["loky", "dask"], help="local backend (default loky)")
    e.add_argument("--checkpoint", default=None, help="checkpoint directory (resumes when re-run)")
    e.add_argument("--out", required=True, help="output file, .csv or .parquet (see 'files written' below)")
    g = sub.add_parser("group", help="the fewest shared counterfactuals explaining the rows a model rejects")
    _common(g, tmax_help="at most this many features per explanation (default: no limit)")
    g.add_argument("--by", default=None, help="column of the data: one group explanation per value")
    g.add_argument("--allow-partial", action="store_true",
                   help="explain the rows that can be explained when some cannot within --tmax (default: error)")
    g.add_argument("--out", default=None, help="write the result as JSON here")
    a = sub.add_parser("audit", help="audit the recourse burden of an explain run")
    a.add_argument("run", help="file written by 'explain --out'")
    a.add_argument("--data", default=None, help="CSV holding the --by column (default: the run's input, if recorded)")
    a.add_argument("--by", required=True, help="column defining the groups, e.g. race")
    a.add_argument("--report", default=None, help="write a self-contained HTML report here")
    a.add_argument("--n-boot", "--boot", dest="n_boot", type=int, default=1000,
                   help="bootstrap resamples (default 1000; --boot is its old name)")
    a.add_argument("--global", dest="global_json", default=None,
                   help="JSON written by 'global --out': adds a shared-actions section to the report")
    gl = sub.add_parser("global", help="a few shared actions explaining the rows a model rejects",
                        description=GLOBAL_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(gl, tmax_help="at most this many features per action (default: no limit)")
    gl.add_argument("--k", "--n", dest="k", type=int, default=None,
                    help="number of shared actions (default: the fewest covering everyone coverable)")
    gl.add_argument("--min-coverage", type=float, default=None,
                    help="a share in (0, 1]: with --k the cheapest k actions covering it (a MIP that runs until it "
                         "proves its optimum, minutes on tree ensembles: give --time-limit); without, the fewest")
    gl.add_argument("--numeric", default="shift", choices=["shift", "set"],
                    help="numeric features: shifted by one amount for everyone (shift, default) or set to one value")
    gl.add_argument("--cost", action="append", default=None, metavar="FEATURE=WEIGHT",
                    help="weight of a feature's cost term (default 1 each); repeat it or separate pairs by "
                         "commas: --cost age=2,priors_count=0.5")
    gl.add_argument("--fair-by", default=None, metavar="COLUMN",
                    help="column of the data: every group's coverage within --max-gap of every other's "
                         "(needs --k; not with --min-coverage)")
    gl.add_argument("--max-gap", type=float, default=None,
                    help="largest coverage gap between the --fair-by groups, a share (default 0.05)")
    gl.add_argument("--assign", default="best", choices=["best", "tree"],
                    help="best (default): each person takes the cheapest action covering them; tree: a "
                         "decision tree over the features (depth <= --tree-depth) assigns the actions (not with "
                         "--fair-by)")
    gl.add_argument("--tree-depth", type=int, default=None, choices=[0, 1, 2],
                    help="with --assign tree: the tree's largest depth (default 2)")
    gl.add_argument("--by", default=None,
                    help="column of the data: coverage and cost per group and gaps to the largest, with bootstrap "
                         "intervals (1000 resamples, seed 0, as in --report); default: --fair-by's column")
    gl.add_argument("--out", default=None, help="write the result as JSON here")
    gl.add_argument("--report", default=None, help="write a self-contained HTML report here (gaps by --by)")
    return p


def read_table(path, index_col=None):
    """A CSV or parquet file as a DataFrame (``InvalidInputError`` naming a missing file)."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"data file not found: {path}")
    X = pd.read_parquet(path) if path.suffix in (".parquet", ".pq") else pd.read_csv(path)
    if index_col is not None:
        if index_col not in X.columns and str(index_col).isdigit() and int(index_col) < X.shape[1]:
            index_col = X.columns[int(index_col)]      # a position, as pandas' index_col takes
        if index_col not in X.columns:
            raise InvalidInputError(f"unknown column {index_col!r} in {path}: give a name of "
                                    f"{list(X.columns)} or a position 0 … {X.shape[1] - 1}")
        X = X.set_index(index_col)
        if str(X.index.name).startswith("Unnamed: "):   # pandas' name for to_csv's unnamed index
            X.index.name = None
    return X


def _joblib_file(path, what: str):
    """The object saved with ``joblib.dump`` at ``path`` (``what``: named in the errors)."""
    import joblib

    if not Path(path).is_file():
        raise InvalidInputError(f"{what} file not found: {path}")
    try:
        return joblib.load(path)
    except Exception as exc:
        raise InvalidInputError(f"cannot read {what} {path}: {exc}") from exc


def _load_space(path):
    """``--space``: a fitted FeatureSpace from a joblib file (``None`` when not given)."""
    from .features import FeatureSpace
    if path is None:
        return None
    space = _joblib_file(path, "space")
    if not isinstance(space, FeatureSpace) or not hasattr(space, "features_"):
        raise InvalidInputError(f"{path} is not a fitted FeatureSpace; save one with "
                                "joblib.dump(gcf.FeatureSpace(numeric='passthrough').fit(X_train), path)")
    return space


def _load_model(path, X, space=None):
    from .models import resolve_model
    model = _joblib_file(path, "model")
    if not hasattr(model, "steps") or not hasattr(model, "predict_proba"):
        raise InvalidInputError(f"{path} is not a Pipeline (a groupcf FeatureSpace or fitted "
                                "scikit-learn preprocessing, then a classifier); save one with joblib.dump(pipeline, path)")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        names = [f.name for f in resolve_model(model, space=space).space]
    for w in seen:        # Python's advice (space=) said in the CLI's words, once for the whole command
        text = str(w.message)
        estimated = "numeric ranges estimated" in text
        if estimated:
            text += " (on the command line: --space FILE, that FeatureSpace saved with joblib.dump)"
        warnings.warn(text, w.category, stacklevel=2)
        if estimated:
            warnings.filterwarnings("ignore", message="numeric ranges estimated")
    missing = [c for c in names if c not in X.columns]
    if missing:
        raise InvalidInputError(f"the data lacks the model's feature columns {missing}")
    return model, names


def _inputs(args):
    """``--data``, ``--space`` and ``--model`` read and checked (``args.space`` becomes the
    FeatureSpace): the rows, the model and its feature names."""
    X = read_table(args.data, args.index_col)
    args.space = _load_space(args.space)
    model, names = _load_model(args.model, X, args.space)
    return X, model, names


def _population(args):
    """``--data``, ``--model`` and ``--space`` read and checked (``--by`` a column of the
    data; ``args.space`` becomes the FeatureSpace): the model, its feature names and the
    rows it rejects."""
    X, model, names = _inputs(args)
    for col in (args.by, getattr(args, "fair_by", None)):
        if col is not None and col not in X.columns:
            raise InvalidInputError(f"unknown column {col!r}: choose one of {list(X.columns)}")
    rejected = X[model.predict_proba(X[names])[:, 1] < args.threshold]
    print(f"{len(rejected)} of {len(X)} rows are rejected by the model")
    if rejected.empty:
        raise InvalidInputError(f"no row of {args.data} is rejected by the model (probability < --threshold "
                                f"{args.threshold:g}): nothing to explain")
    return model, names, rejected


def _explain(args) -> int:
    from .batch import explain_many
    X, model, names = _inputs(args)
    backend = args.backend
    if args.scheduler:
        from dask.distributed import Client
        backend = Client(args.scheduler)
    opts = {"Tmax": args.tmax, "threshold": args.threshold}
    if args.space is not None:
        opts["space"] = args.space
    if args.time_limit is not None:
        opts["time_limit"] = args.time_limit
    if args.n != 1:
        opts["n"] = args.n
    if args.method == "mace":
        opts["solver"] = args.solver
        if args.distance is not None:
            opts["distance"] = args.distance
    elif args.distance is not None and args.method == "geco":
        opts["distance"] = args.distance
    if args.reference is not None:
        opts["data"] = read_table(args.reference)[names]
    elif args.method in ("geco", "pso"):
        raise InvalidInputError(f"--method {args.method} needs --reference (rows to sample values from, e.g. the "
                                "training data)")
    r = explain_many(X[names], model, args.method, n_jobs=args.jobs, backend=backend,
                     checkpoint=args.checkpoint, progress=True, **opts)
    r.save(args.out)
    X.to_parquet(_input_path(args.out))       # every input column, for `audit --by`
    print(f"{len(r.table)} rows: {int(r.table['found'].sum())} explained, {len(r.failed)} failed -> {args.out}")
    return 0


def _group(args) -> int:
    import pandas as pd

    from .batch import explain_groups
    from .group import explain_group
    model, names, rejected = _population(args)
    kw = dict(Tmax=args.tmax, solver=args.solver, time_limit=args.time_limit, threshold=args.threshold,
              space=args.space, allow_partial=args.allow_partial)
    res: GroupExplanation | GroupExplanationSet
    if args.by is None:
        res = explain_group(rejected[names], model, progress=True, **kw)
    else:
        res = explain_groups(rejected[names], model, by=rejected[args.by], progress=True, **kw)
    with pd.option_context("display.width", 140, "display.max_columns", 20):
        print(res.summary())
    if args.out:
        Path(args.out).write_text(res.to_json())
        print(f"result -> {args.out}")
    return 0


def _global(args) -> int:
    import pandas as pd

    from .global_actions import explain_global
    _check_global(args)
    model, names, rejected = _population(args)
    res = explain_global(rejected[names], model, Tmax=args.tmax, k=args.k, min_coverage=args.min_coverage,
                         numeric=args.numeric, cost=_weights(args.cost),
                         fair_by=None if args.fair_by is None else rejected[args.fair_by], max_gap=args.max_gap,
                         assign=args.assign, tree_depth=args.tree_depth, time_limit=args.time_limit, solver=args.solver,
                         threshold=args.threshold, space=args.space, progress=True)
    print(res.summary())
    if args.by is not None:
        with pd.option_context("display.width", 140, "display.max_columns", 20):
            print()
            # seeded as the report's (and audit's) intervals: the same numbers on screen and in the HTML
            print(res.by_group(rejected[args.by], random_state=0).to_string(float_format="%.4g"))
    if args.out:
        Path(args.out).write_text(res.to_json())
        print(f"result -> {args.out}")
    if args.report:
        from .audit.global_section import save_global_report

        save_global_report(res, args.report, None if args.by is None else rejected[args.by])
        print(f"report -> {args.report}")
    return 0


def _check_global(args) -> None:
    """``global``'s options checked with their CLI names (before any file is read)."""
    if args.k is not None and args.k < 1:
        raise InvalidInputError(f"--k must be a positive integer (or left out: the fewest actions), got {args.k}")
    if args.min_coverage is not None and not 0.0 < args.min_coverage <= 1.0:
        raise InvalidInputError(f"--min-coverage is a share in (0, 1] (0.9 for 90 %), got {args.min_coverage:g}")
    if args.max_gap is not None and args.fair_by is None:
        raise InvalidInputError("--max-gap bounds the coverage gap between the --fair-by groups: give --fair-by COLUMN "
                                "(--by only reports the gaps)")
    if args.fair_by is not None and (args.k is None or args.min_coverage is not None):
        raise InvalidInputError("--fair-by bounds the coverage gap of k actions: give --k and no --min-coverage")
    if args.assign == "tree" and args.fair_by is not None:
        raise InvalidInputError("--assign tree and --fair-by cannot be combined: the tree would break the gap bound")
    if args.tree_depth is not None and args.assign != "tree":
        raise InvalidInputError("--tree-depth is the depth of the --assign tree: give --assign tree")
    if args.max_gap is None:
        args.max_gap = 0.05
    if args.tree_depth is None:
        args.tree_depth = 2
    if args.by is None:                  # the gaps --fair-by bounds, shown (and in --report) by default
        args.by = args.fair_by


def _weights(pairs) -> dict[str, float] | None:
    """``--cost`` values (``FEATURE=WEIGHT``, repeated or comma-separated) as ``cost=``'s dict."""
    if not pairs:
        return None
    out = {}
    for item in (p.strip() for arg in pairs for p in arg.split(",")):
        name, sep, value = item.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise InvalidInputError(f"--cost takes FEATURE=WEIGHT pairs (e.g. age=2), got {item!r}") from None
    return out


def _input_path(out) -> Path:
    out = Path(out)
    return out.with_name(out.stem + ".input.parquet")


def _audit(args) -> int:
    import pandas as pd

    from .audit import audit
    from .batch import ExplanationSet
    r = ExplanationSet.load(args.run)
    if args.data is not None:
        X = read_table(args.data)
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
    commands = {"explain": _explain, "group": _group, "audit": _audit, "global": _global}
    try:
        with warnings.catch_warnings():          # the filters a command sets end with it
            return commands[args.command](args)
    except (GroupCFError, FileNotFoundError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
