"""The tables of BENCHMARKS.md "Global actions" (benchmarks/global_tables.py) and the k = 1
diagnosis helpers (benchmarks/global_k1_diag.py), on hand-made rows."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd

_DIR = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name):
    if str(_DIR) not in sys.path:
        sys.path.insert(0, str(_DIR))
    spec = importlib.util.spec_from_file_location(name, _DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _grid():
    rows = []
    for k, (cov, cost, ub) in enumerate([(0.9, 5.0, 0.95), (0.96, 4.0, 0.96)], start=1):
        rows.append(dict(dataset="d", model="lr", n_people=200, Tmax=1, k=k, method="groupcf", n_actions=k,
                         coverage=cov, mean_cost=cost, n_covered=int(200 * cov), upper_bound_coverage=ub,
                         time_s=10.0, cpu_s=4.0, load=2.0))
    for k, (cov, cost, n_act) in enumerate([(0.5, 1.0, 1), (0.5, 1.0, 1)], start=1):
        rows.append(dict(dataset="d", model="lr", n_people=200, Tmax=1, k=k, method="globece", n_actions=n_act,
                         coverage=cov, mean_cost=cost, n_covered=int(200 * cov), upper_bound_coverage=np.nan,
                         time_s=3.0, cpu_s=1.0, load=2.5))
    return pd.DataFrame(rows)


def test_table_cells_bounds_and_collapsed_actions():
    gt = _load("global_tables")
    text = gt.table(_grid(), [1, 2])
    lines = text.splitlines()
    assert lines[0] == "| k | groupcf Tmax=1 (bound) | GLOBE-CE |"
    assert lines[2] == "| 1 | 90.0 % / 5.00 (≤ 95.0) | 50.0 % / 1.00 |"
    assert lines[3] == "| 2 | 96.0 % / 4.00 (≤ 96.0) | 50.0 % / 1.00 (1 act.) |"
    assert "Tmax=1: groupcf 10 / 4, GLOBE-CE 3 / 1" in lines[-1]


def test_target_check_counts_coverage_dominance_and_gap():
    gt = _load("global_tables")
    chk = gt.target_check(_grid()).iloc[0]
    assert (chk["cov_ge"], chk["dominates"], chk["above_bound"]) == (2, 0, 0)
    assert (chk["dearer_covers_more"], chk["dearer_same_coverage"]) == (2, 0)
    same = _grid()
    same.loc[same["method"] == "globece", "coverage"] = 0.96       # k = 1: fewer covered; k = 2: as many, cheaper
    assert gt.target_check(same).iloc[0][["dearer_covers_more", "dearer_same_coverage"]].tolist() == [0, 1]
    assert chk["bound_gap_pp"] == 5.0
    assert "k=1: 90.0%/5.000 vs globece 50.0%/1.000" in chk["notes"]
    assert gt.markdown(pd.DataFrame({"a": [1], "b": ["x"]})) == "| a | b |\n|---|---|\n| 1 | x |"


def test_globece_map_read_as_set_and_its_change_sets():
    diag = _load("global_k1_diag")
    S = pd.DataFrame({"c": pd.Categorical(["a", "b", "t", "a"], categories=["a", "b", "t"]), "x": [1.0, 2.0, 3.0, 4.0]})
    spec = [{"feature": "c", "op": "map", "value": {"a": "t"}}, {"feature": "x", "op": "shift", "value": 0.5}]
    assert diag.as_set(spec) == [{"feature": "c", "op": "set", "value": "t"}, spec[1]]
    # people 0 and 3 moved a -> t, person 2 already at t: one groupcf action (set c = t);
    # person 1 keeps b: a second one (x shifted alone)
    assert diag.patterns(S, spec, np.array([True, True, True, True])) == 2
    assert diag.patterns(S, spec, np.array([True, False, True, True])) == 1


def test_tmax_read_back_from_a_csv_with_none(tmp_path):
    gt = _load("global_tables")
    assert [gt._tmax_text(t) for t in ["1", 2.0, "None", float("nan"), None]] == ["1", "2", "None", "None", "None"]
    assert gt._tmax_order(["None", "3", "1"]) == ["1", "3", "None"]


def test_seed_summary_mean_min_max_and_seeds_above_groupcf():
    gt = _load("global_tables")
    grid = _grid()
    runs = []
    for seed, (a, b) in enumerate([(0.5, 0.2), (0.97, 0.1), (0.3, 0.4)]):     # k = 1: globece, globece-frozen
        for m, c in [("globece", a), ("globece-frozen", b)]:
            runs.append(dict(dataset="d", Tmax="1", k=1, method=m, coverage=c, seed=seed))
    out = gt.seed_summary(pd.DataFrame(runs), grid, [1]).iloc[0]
    assert out["groupcf"] == "90.0 %"
    assert out["globece"] == "59.0 % (30.0–97.0)"
    assert out["globece-frozen"] == "23.3 % (10.0–40.0)"
    assert out["better of the two"] == "62.3 % (40.0–97.0)"            # 50, 97, 40
    assert out["seeds above groupcf"] == "1 of 3"
