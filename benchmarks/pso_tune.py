"""The tuning of ``benchmarks/pso.py`` (``tune``, ``compare``): one set of MD-PSO defaults
for all four datasets, chosen on *tuning* queries only (:mod:`pso_protocol`), by a small
documented search (:data:`STAGE1`, :data:`STAGE2`, the greedy stage 3 of :func:`tune`) and one
rule (:func:`choose`). Results are kept under ``benchmarks/results/pso_tuning*.csv``.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pandas as pd
from pso_protocol import PAPER_NAMES, Case, cases, log, pso_runner, run_queries

#: The tuning grid. Stage 1: both objectives (``scale``: Gower = the paper's l2, or
#: MAD-scaled l2 = the reported metric) times the spread of the n (``w_diversity``).
#: Stage 2: one option at a time changed from the stage-1 winner: the active set
#: (``h0`` features from the start, ``h_growth``), the box (``epsilon``), seeding from
#: data, the polish. Stage 3: greedy combination: from the best so far, add each stage-2
#: change that beat the stage-1 winner (best first), kept when it lowers the score.
STAGE1 = [{"scale": s, "w_diversity": w} for s in ("range", "mad") for w in (0.25, 0.75)]
STAGE2 = [{"h0": 40}, {"h_growth": 4.0}, {"epsilon": 0.1}, {"epsilon": 0.05}, {"seed_with_data": False},
          {"polish": False}]



def score(summary: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: coverage (all tuning queries), median time, and the geometric
    mean over datasets of mean proximity / the paper's MD-PSO proximity."""
    ref = paper[paper.method == "MD-PSO"].set_index("dataset").proximity
    out = []
    for cfg, g in summary.groupby("config", sort=False):
        ratio = g.proximity.to_numpy() / g.dataset.map(PAPER_NAMES).map(ref).to_numpy()
        out.append({"config": cfg, "coverage": g.coverage.min(), "time_median": g.time_median.max(),
                    "cpu_median": g.cpu_median.max(),
                    "geo_ratio": float(np.exp(np.mean(np.log(ratio)))),
                    **{f"prox_{ds}": p for ds, p in zip(g.dataset, g.proximity)}})
    return pd.DataFrame(out)


def choose(scores: pd.DataFrame, max_time: float = 1.0) -> str:
    """The rule: among configurations covering every tuning query with a median CPU time
    per query (``cpu_median``: the process's own, so other jobs on a shared machine do not
    count) of at most ``max_time`` s on every dataset, the smallest ``geo_ratio``."""
    ok = scores[(scores.coverage >= 1.0) & (scores.cpu_median <= max_time)]
    return str((ok if len(ok) else scores).sort_values("geo_ratio", kind="stable").config.iloc[0])


def summarize_tune(q: pd.DataFrame) -> pd.DataFrame:
    g = q.groupby(["config", "dataset"], sort=False)
    return pd.DataFrame({"queries": g.size(), "coverage": g.valid.apply(lambda v: (v > 0).mean()),
                         "proximity": g.proximity.mean(), "best": g.best.mean(), "sparsity": g.sparsity.mean(),
                         "diversity": g.diversity.mean(), "time_median": g.time.median(),
                         "cpu_median": g.cpu.median()}).reset_index()


def config_name(opts: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in opts.items())


def tune(a):
    """Stage 1, then stage 2 from the stage-1 winner; each configuration's queries are
    appended to ``pso_tuning_queries.csv`` as it finishes and configurations already there
    are skipped (so the search can run as several short locked runs: ``--max-configs``)."""
    paper = pd.read_csv(a.reference)
    out = Path(a.out)
    path = out / "pso_tuning_queries.csv"
    done = pd.read_csv(path) if path.is_file() else pd.DataFrame(columns=["config"])
    built: list[Case] = []
    budget = [a.max_configs]

    def run_configs(configs) -> bool:
        for opts in configs:
            name = config_name(opts)
            if name in set(done.config):
                continue
            if budget[0] <= 0:
                return False
            if not built:
                built.extend(cases(a))
            rows: list[dict] = []
            for case in built:
                rows.extend(run_queries(case, pso_runner(case, a.k, opts), case.queries("tune", a.queries),
                                        a.time_limit, {"config": name}))
            pd.DataFrame(rows).to_csv(path, mode="a", header=not path.is_file(), index=False)
            budget[0] -= 1
            log(f"  {name}: done")
        return True

    def scores_of(configs):
        q = pd.read_csv(path)
        names = [config_name(o) for o in configs]
        return score(summarize_tune(q[q.config.isin(names)]), paper).set_index("config").loc[names].reset_index()

    if not run_configs(STAGE1):
        return log("stopped after --max-configs; run again to go on")
    win = STAGE1[[config_name(o) for o in STAGE1].index(choose(scores_of(STAGE1), a.max_time))]
    log(f"stage 1 winner: {win}")
    stage2 = [{**win, **o} for o in STAGE2]
    if not run_configs(stage2):
        return log("stopped after --max-configs; run again to go on")
    s2 = scores_of([win, *stage2]).set_index("config")
    eligible = s2[(s2.coverage >= 1.0) & (s2.cpu_median <= a.max_time)]
    base = s2.geo_ratio[config_name(win)]
    better = [o for o in STAGE2 if config_name({**win, **o}) in eligible.index
              and eligible.geo_ratio[config_name({**win, **o})] < base]
    better.sort(key=lambda o: eligible.geo_ratio[config_name({**win, **o})])
    configs, stage = [*STAGE1, *stage2], [1] * len(STAGE1) + [2] * len(stage2)
    cur = {**win, **better[0]} if better else win
    for o in better[1:]:
        if set(o) & set(cur) - set(win):          # the same option twice (two epsilons)
            continue
        cand = {**cur, **o}
        if not run_configs([cand]):
            return log("stopped after --max-configs; run again to go on")
        configs.append(cand)
        stage.append(3)
        sc = scores_of([cur, cand]).set_index("config")
        if sc.coverage[config_name(cand)] >= 1 and sc.cpu_median[config_name(cand)] <= a.max_time \
                and sc.geo_ratio[config_name(cand)] < sc.geo_ratio[config_name(cur)]:
            cur = cand
    scores = scores_of(configs)
    scores["stage"] = stage
    best = choose(scores, a.max_time)
    scores["chosen"] = scores.config == best
    q = pd.read_csv(path)
    summarize_tune(q).to_csv(out / "pso_tuning.csv", index=False)
    scores.to_csv(out / "pso_tuning_scores.csv", index=False)
    print(scores.to_string(index=False))
    print(f"chosen: {best}")


def parse_config(text: str) -> dict:
    """``"a=1,b=mad,c=False"`` -> options (``""``: the defaults)."""
    out = {}
    for item in filter(None, text.split(",")):
        k, v = item.split("=", 1)
        for cast in (int, float):
            with contextlib.suppress(ValueError):
                v = cast(v)
                break
        out[k] = {"True": True, "False": False, "None": None}.get(v, v) if isinstance(v, str) else v
    return out


def compare(a):
    """Score ``--configs`` (``"option=value,..."``; ``""`` = the defaults) on the tuning
    queries and apply the rule of :func:`choose` to them (used when the search itself
    changes: the new default against the old one, on tuning queries only)."""
    paper = pd.read_csv(a.reference)
    out = Path(a.out)
    rows: list[dict] = []
    for case in cases(a):
        for text in a.configs:
            rows.extend(run_queries(case, pso_runner(case, a.k, parse_config(text)), case.queries("tune", a.queries),
                                    a.time_limit, {"config": text or "defaults"}))
    q = pd.DataFrame(rows)
    q.to_csv(out / f"pso_tuning_{a.tag or 'compare'}_queries.csv", index=False)
    names = list(dict.fromkeys(q.config))
    scores = score(summarize_tune(q), paper).set_index("config").loc[names].reset_index()
    scores["chosen"] = scores.config == choose(scores, a.max_time)
    scores.to_csv(out / f"pso_tuning_{a.tag or 'compare'}_scores.csv", index=False)
    print(scores.to_string(index=False))
