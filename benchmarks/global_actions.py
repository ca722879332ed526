"""Global counterfactual actions: groupcf's ``explain_global`` beside GLOBE-CE (and AReS),
every method scored by one scorer (:mod:`global_scorer`).

Two parts.

``--own FILE``: GLOBE-CE's own setting, reproduced. ``FILE`` is the JSON written by
``globece_own.py`` (run in the peers' venv: their German credit, their pickled logistic
regression, the 180 training rows it rejects, AReS and GLOBE-CE exactly as in their
notebook). This script rebuilds the same model as a groupcf pipeline (a
``LogisticRegression`` with their coefficients mapped to ``FeatureSpace``'s columns; the
decision values are checked equal), scores GLOBE-CE's and AReS's actions with the scorer,
and runs groupcf on the same people for each ``Tmax`` and ``k``. Their setting has no
immutable or increase-only features; the scorer then checks the domain only.

Otherwise: groupcf's bundled datasets (``--datasets german compas adult credit``), the
rejected test rows (30 % test split, seed 0, at most ``--max-people``), a model per
``--models`` (``lr``, ``gbt``: GradientBoosting 50 trees depth 3, ``mlp``: ReLU (20, 20)),
the dataset's suggested immutable / increase-only features for every method, and for each
``Tmax`` in ``--tmax`` and ``k`` in ``--k``: ``explain_global(S, pipe, Tmax=, k=)`` with
the scorer's cost as its objective (weight 10 on every numeric feature: groupcf's term is
|Δ|/range, the scorer's |Δ|/(range/10)) — by default ONE call per ``Tmax`` with
``k = max(--k)`` whose curve gives every smaller ``k`` (:func:`run_groupcf_curve`;
``--per-k``: one call per ``k``) —, GLOBE-CE (``--globece PATH``, its ``n_features =
Tmax``) on the same people, and with ``--methods ares`` AReS (the ``AReS`` class of the
same checkout, once per dataset and model, mining the rejected people and accepted test
rows). One CSV row per (dataset, model, Tmax, k, method): coverage and mean cost from the
scorer, the method's own figures, wall and CPU time, the load average, and groupcf's
certified upper bound on coverage. The CSV is rewritten after every (dataset, model).

Examples
--------
    make bench-global                                   # German, LR, full grid
    python benchmarks/global_actions.py --datasets german --models lr --tmax 1 2 --k 1 2 3
    /work/venvs/globece/bin/python benchmarks/globece_own.py --globece ../GLOBE-CE --out own.json
    python benchmarks/global_actions.py --own own.json --out benchmarks/results/global_own.csv
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import global_scorer as gs  # noqa: E402

import groupcf as gcf  # noqa: E402

COLUMNS = ["dataset", "model", "n_people", "Tmax", "k", "method", "n_actions", "coverage", "mean_cost", "n_covered",
           "own_coverage", "own_mean_cost", "upper_bound_coverage", "status", "time_s", "cpu_s", "load"]


def _tmax(v: str):
    return None if v.lower() in ("none", "inf", "0") else int(v)


def build_model(kind: str, space, X, y):
    """``Pipeline(space, classifier)`` fitted on ``X, y``."""
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline

    clf = {"lr": lambda: LogisticRegression(max_iter=2000),
           "gbt": lambda: GradientBoostingClassifier(n_estimators=50, max_depth=3, random_state=0),
           "mlp": lambda: MLPClassifier((20, 20), max_iter=1000, random_state=0)}[kind]()
    return make_pipeline(space, clf).fit(X, y)


def setup(name: str, model: str, max_people: int, max_train: int = 10000):
    """Training frame, the rejected test rows, the fitted pipeline and the rules."""
    ds = gcf.datasets.load(name)
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.3, random_state=0)
    if len(X_tr) > max_train:
        X_tr, y_tr = X_tr.iloc[:max_train], y_tr.iloc[:max_train]
    # the scorer (GLOBE-CE) charges 1 per categorical change, ordered or not: ordered
    # categoricals are declared nominal (same one-hot columns, same model) so groupcf's
    # objective is the scorer's cost, except increase-only ones, which need their order
    # (there a move of r ranks costs r to groupcf: weight k - 1 in run_groupcf)
    nominal = {c: "categorical" for c in ds.X.columns if isinstance(ds.X[c].dtype, pd.CategoricalDtype)
               and ds.X[c].dtype.ordered and c not in ds.increase_only}
    space = gcf.FeatureSpace(numeric="passthrough", immutable=ds.immutable, increase_only=ds.increase_only,
                             kinds=nominal or None)
    pipe = build_model(model, space, X_tr, y_tr)
    rejected = pipe.predict(X_te) == 0
    S = X_te[rejected].iloc[:max_people]
    population = pd.concat([S, X_te[~rejected]])          # FACTS mines the accepted too
    numeric = [f.name for f in space.features_ if f.kind == "numeric"]
    inc = [c for c in ds.increase_only if c in numeric
           or (isinstance(X_tr[c].dtype, pd.CategoricalDtype) and X_tr[c].dtype.ordered)]
    rules = gs.Rules.from_training(X_tr, immutable=ds.immutable, increase_only=inc, numeric=numeric)
    return X_tr, S, pipe, rules, population


def scorer_weights(pipe, rules) -> dict:
    """groupcf's ``cost=`` weights that make its objective the scorer's cost: 10 per
    numeric feature (|Δ|/range × 10 = |Δ|/bin width), ``levels - 1`` per ordinal one."""
    weights = {f: float(gs.N_BINS) for f in rules.numeric}
    for f in getattr(pipe[0], "features_", []):
        if f.kind == "ordinal":
            weights[f.name] = float(max(len(f.categories) - 1, 1))
    return weights


def run_groupcf(S, pipe, rules, Tmax, k, time_limit, **opts):
    """``explain_global`` with the scorer's cost (``opts``: its options, e.g.
    ``tie_break_time``); its specs and own figures."""
    weights = scorer_weights(pipe, rules)
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = gcf.explain_global(S, pipe, Tmax=Tmax, k=k, cost=weights, time_limit=time_limit, progress=False,
                                 **opts)
    dt = time.perf_counter() - t0
    last = res.curve.iloc[-1] if len(res.curve) else None
    return res.specs, dt, {"cpu_s": time.process_time() - c0, "own_coverage": res.coverage,
                           "own_mean_cost": res.mean_cost,
                           "upper_bound_coverage": float(last["upper_bound_coverage"]) if last is not None else math.nan,
                           "status": res.status.value}


def explain_watched(S, pipe, **kwargs):
    """``gcf.explain_global(S, pipe, progress=False, **kwargs)``, warnings silenced, with its
    search watched: ``(result, seen)``, ``seen["aspace"]`` the action space and
    ``seen["search"]`` the search's answer (the pool, every curve point's chosen columns),
    which ``explain_global`` does not return."""
    import groupcf.global_actions.api as api

    seen = {}
    search = api.search

    def spy(aspace, *a, **kw):
        out = search(aspace, *a, **kw)
        seen.update(aspace=aspace, search=out)
        return out
    api.search = spy
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = gcf.explain_global(S, pipe, progress=False, **kwargs)
    finally:
        api.search = search
    return res, seen


def run_groupcf_curve(S, pipe, rules, Tmax, ks, time_limit, polish_curve=None, **opts):
    """One ``explain_global(k=max(ks))`` call, the whole curve: ``{k: (specs, seconds,
    own figures)}`` for every ``k`` in ``ks``.

    The call's answer (``k = max(ks)``) is its polished ``specs``; a smaller ``k``'s
    actions are that curve point's integer-master choice (``explain_global`` returns the
    actions of its last point only, so they are read from its search: the pool's actions
    at the point's positions), not polished unless ``polish_curve`` (seconds per point:
    :func:`polish_point`, what ``explain_global(k=k)`` does to its answer); the scorer
    re-checks them all the same. Every ``k`` carries the call's whole wall and CPU time
    (plus its own polish).
    """
    K = max(ks)
    t0, c0 = time.perf_counter(), time.process_time()
    res, seen = explain_watched(S, pipe, Tmax=Tmax, k=K, cost=scorer_weights(pipe, rules), time_limit=time_limit,
                                **opts)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    points = {p.k: p for p in seen["search"].curve}
    out = {}
    for k in ks:
        row = res.curve[res.curve["k"] == k]
        t1, c1 = time.perf_counter(), time.process_time()
        if k == K:
            specs = res.specs
        elif k in points:
            acts = [seen["search"].pool.columns[j].payload for j in points[k].chosen]
            if polish_curve:
                acts = polish_point(seen["aspace"], seen["search"], acts, polish_curve)
            specs = [seen["aspace"].spec(a) for a in acts]
        else:
            continue
        own = {"cpu_s": cpu + time.process_time() - c1, "own_coverage": float(row["coverage"].iloc[0]) if len(row) else math.nan,
               "own_mean_cost": float(row["mean_cost"].iloc[0]) if len(row) else math.nan,
               "upper_bound_coverage": float(row["upper_bound_coverage"].iloc[0]) if len(row) else math.nan,
               "status": str(row["status"].iloc[0]) if len(row) else res.status.value}
        out[k] = (specs, dt + time.perf_counter() - t1, own)
    return out


def polish_point(aspace, search, acts, seconds):
    """A curve point's actions polished as ``explain_global`` polishes its answer
    (``groupcf.global_actions.api``: up to 3 rounds of neighbour refinement, then each
    action replaced by the cheapest one covering the people assigned to it, with the
    search's own ``ActionMIP``); coverage never drops, cost never rises."""
    from groupcf.global_actions.api import _assign, _polish
    from groupcf.global_actions.neighbours import refine
    from groupcf.utils import Deadline

    deadline = Deadline(seconds)
    for _ in range(3):
        if deadline.passed:
            break
        new = refine(aspace, acts, search.coverable)
        new = _polish(aspace, new, _assign([aspace.column(a) for a in new], aspace.n_types)[0],
                      list(range(len(new))), search.mip, deadline)
        if [a.key for a in new] == [a.key for a in acts]:
            break
        acts = new
    return acts


def _opts(args) -> dict:
    """``explain_global`` options given on the command line (else groupcf's defaults)."""
    return {} if args.tie_break_time is None else {"tie_break_time": args.tie_break_time}


def _row(base, method, k, specs, sc, dt, **extra):
    r = dict(base, method=method, k=k, n_actions=len(specs), coverage=sc.coverage, mean_cost=sc.mean_cost,
             n_covered=sc.n_covered, time_s=dt, load=os.getloadavg()[0])
    r.update(extra)
    return r


def bench(args, flush=None) -> list:
    """The grid; ``flush(rows)`` is called after every (dataset, model) block so a long
    run keeps what it measured."""
    rows = []
    for name in args.datasets:
        for model in args.models:
            X_tr, S, pipe, rules, population = setup(name, model, args.max_people)
            print(f"\n{name} / {model}: {len(S)} rejected test rows; immutable {rules.immutable}, "
                  f"increase-only {rules.increase_only}", flush=True)
            for Tmax in args.tmax:
                base = {"dataset": name, "model": model, "n_people": len(S), "Tmax": "None" if Tmax is None else Tmax}
                if "groupcf" in args.methods and args.per_k:
                    for k in args.k:
                        specs, dt, own = run_groupcf(S, pipe, rules, Tmax, k, args.time_limit, **_opts(args))
                        sc = gs.score(S, specs, pipe.predict, rules)
                        rows.append(_row(base, "groupcf", k, specs, sc, dt, **own))
                        _print(rows[-1])
                elif "groupcf" in args.methods:
                    curve = run_groupcf_curve(S, pipe, rules, Tmax, args.k, args.time_limit, args.polish_curve,
                                              **_opts(args))
                    for k, (specs, dt, own) in curve.items():
                        sc = gs.score(S, specs, pipe.predict, rules)
                        rows.append(_row(base, "groupcf", k, specs, sc, dt, **own))
                        _print(rows[-1])
                if "globece" in args.methods and args.globece:
                    from global_peers import run_globece
                    out = run_globece(args.globece, X_tr, S, pipe.predict, rules, args.k, Tmax=Tmax, seed=args.seed,
                                      pipe=pipe)
                    for k, (specs, dt, cpu) in out.items():
                        sc = gs.score(S, specs, pipe.predict, rules)
                        rows.append(_row(base, "globece", k, specs, sc, dt, cpu_s=cpu))
                        _print(rows[-1])
                    if rules.increase_only:     # the variant that cannot break the increase-only rule
                        out = run_globece(args.globece, X_tr, S, pipe.predict, rules, args.k, Tmax=Tmax,
                                          seed=args.seed, pipe=pipe, freeze=rules.increase_only)
                        for k, (specs, dt, cpu) in out.items():
                            sc = gs.score(S, specs, pipe.predict, rules)
                            rows.append(_row(base, "globece-frozen", k, specs, sc, dt, cpu_s=cpu))
                            _print(rows[-1])
            base = {"dataset": name, "model": model, "n_people": len(S), "Tmax": "None"}
            if "ares" in args.methods and args.globece:
                from global_peers import run_ares
                pop = population.iloc[:max(args.ares_population, len(S))]
                for method, freeze in [("ares", ()), ("ares-frozen", tuple(rules.increase_only))]:
                    if method == "ares-frozen" and not freeze:
                        continue
                    specs, dt, cpu, n_aff, own_fig = run_ares(args.globece, X_tr, pop, pipe.predict, rules, pipe=pipe,
                                                              apriori_threshold=args.ares_support, freeze=freeze)
                    if n_aff != len(S):
                        raise RuntimeError(f"AReS saw {n_aff} rejected rows, not the {len(S)} people")
                    sc = gs.score(S, specs, pipe.predict, rules)
                    rows.append(_row(base, method, len(specs), specs, sc, dt, cpu_s=cpu, **own_fig))
                    _print(rows[-1])
            if "facts" in args.methods and args.facts_python:
                pop = population if args.facts_population is None else population.iloc[:args.facts_population]
                specs, dt = run_facts(args.facts_python, pipe, pop, rules, args.facts_min_supp)
                sc = gs.score(S, specs, pipe.predict, rules)
                rows.append(_row(base, "facts", len(specs), specs, sc, dt))
                _print(rows[-1])
            if flush is not None:
                flush(rows)
    return rows


def run_facts(python: str, pipe, population, rules, min_supp: float):
    """FACTS in its own venv (``facts_runner.py``): its if-then pairs as scorer actions."""
    import pickle
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        inp, out = Path(tmp) / "in.pkl", Path(tmp) / "out.json"
        with open(inp, "wb") as fh:
            pickle.dump({"pipe": pipe, "X": population, "prot_attr": rules.immutable[0], "immutable": rules.immutable,
                         "numeric": rules.numeric, "widths": rules.width, "min_supp": min_supp}, fh)
        subprocess.run([python, str(Path(__file__).resolve().parent / "facts_runner.py"), "--input", str(inp),
                        "--out", str(out)], check=True)
        d = json.loads(out.read_text())
    return d["actions"], d["time_s"]


def _print(r):
    ub = r.get("upper_bound_coverage", math.nan)
    print(f"  {r['dataset']:8s} {r['model']:4s} Tmax={r['Tmax']!s:4s} k={r['k']:2d} {r['method']:8s} "
          f"{r['n_actions']:2d} actions  coverage {100 * r['coverage']:5.1f} %  mean cost {r['mean_cost']:6.3f}"
          f"  bound {100 * ub:5.1f} %  {r['time_s']:6.1f} s", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["german"])
    ap.add_argument("--models", nargs="+", default=["lr"], choices=["lr", "gbt", "mlp"])
    ap.add_argument("--methods", nargs="+", default=["groupcf", "globece"])
    ap.add_argument("--tmax", nargs="+", type=_tmax, default=[1, 2, 3, None])
    ap.add_argument("--k", nargs="+", type=int, default=list(range(1, 11)))
    ap.add_argument("--max-people", type=int, default=500)
    ap.add_argument("--time-limit", type=float, default=600.0,
                    help="groupcf, per explain_global call (the whole curve; with --per-k each k)")
    ap.add_argument("--tie-break-time", type=float, default=None,
                    help="groupcf's tie_break_time (s per least-cost stage; default: groupcf's, 2 s)")
    ap.add_argument("--polish-curve", type=float, default=None, metavar="SECONDS",
                    help="polish every curve point k < max(--k) as explain_global polishes its answer (s per point)")
    ap.add_argument("--per-k", action="store_true",
                    help="one explain_global call per k (each answer polished) instead of one call for the curve")
    ap.add_argument("--ares-population", type=int, default=1000,
                    help="AReS mines the first N rows of (rejected people, then accepted test rows)")
    ap.add_argument("--globece", default=os.environ.get("GLOBECE_PATH"),
                    help="local checkout of github.com/danwley/GLOBE-CE (never copied)")
    ap.add_argument("--ares-support", type=float, default=0.16, help="AReS's apriori threshold (their notebook's)")
    ap.add_argument("--facts-python", default=os.environ.get("FACTS_PYTHON"),
                    help="python of a venv with aif360[FACTS] (run as a subprocess)")
    ap.add_argument("--facts-min-supp", type=float, default=0.1, help="FACTS's frequent-itemset support")
    ap.add_argument("--facts-population", type=int, default=None,
                    help="FACTS mines the first N rows of (rejected people, then accepted test rows)")
    ap.add_argument("--own", help="JSON from globece_own.py: GLOBE-CE's own setting")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/results/global_actions.csv")
    ap.add_argument("--append", action="store_true", help="add rows to --out instead of replacing it")
    args = ap.parse_args(argv)
    if "globece" in args.methods and not args.globece and not args.own:
        print("GLOBE-CE not run: no --globece PATH (or $GLOBECE_PATH)", flush=True)
    t0 = time.perf_counter()
    if args.own:
        from global_own_setting import own
        write_results(pd.DataFrame(own(args), columns=COLUMNS), args.out, args.append, t0)
        return
    previous = read_results(args.out) if args.append and Path(args.out).exists() else None

    def flush(rows):
        df = pd.DataFrame(rows, columns=COLUMNS)
        write_results(df if previous is None else pd.concat([previous, df], ignore_index=True), args.out, False, t0)
    flush(bench(args, flush))


def read_results(path) -> pd.DataFrame:
    """A result CSV as written: ``Tmax`` kept as text (``"None"`` is not a missing value)."""
    return pd.read_csv(path, dtype={"Tmax": str}, keep_default_na=False, na_values=[""])


def write_results(df: pd.DataFrame, out, append: bool, t0: float) -> None:
    """Write (or append to) a result CSV and say where, how long, on what machine and load."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if append and out.exists():
        df = pd.concat([read_results(out), df], ignore_index=True)
    df.to_csv(out, index=False, float_format="%.6g")
    print(f"\nwrote {out} ({len(df)} rows) in {time.perf_counter() - t0:.0f} s; {platform.node()} "
          f"{os.cpu_count()} cpus (shared; load {os.getloadavg()[0]:.1f}), groupcf {gcf.__version__}", flush=True)


if __name__ == "__main__":
    main()
