"""Markdown tables of BENCHMARKS.md "Global actions" from the grid CSVs of ``global_actions.py``.

``python benchmarks/global_tables.py benchmarks/results/global_grid_mlp.csv [--k 1 2 3 5 10]``
prints, per (dataset, model): one table (a row per ``k``; per ``Tmax`` groupcf's coverage /
mean cost with its certified bound, then GLOBE-CE and GLOBE-CE frozen), the wall / CPU
seconds and load, and the check of the issue's target against the better-covering peer.
``--seeds CSV ...``: GLOBE-CE over several seeds beside groupcf (:func:`seed_summary`).
"""
from __future__ import annotations

import argparse
import math

import pandas as pd

PEERS = ("globece", "globece-frozen")


def _cell(r, bound: bool = False) -> str:
    if r is None:
        return "—"
    txt = "0 %" if r["n_covered"] == 0 else f"{100 * r['coverage']:.1f} % / {r['mean_cost']:.2f}"
    if bound and pd.notna(r.get("upper_bound_coverage")):
        ub = 100 * r["upper_bound_coverage"]
        warn = " ⚠" if r["coverage"] > r["upper_bound_coverage"] + 1e-9 else ""
        txt += f" (≤ {ub:.1f}{warn})"
    if not bound and r["n_actions"] < r["k"] and r["k"] > 1:
        txt += f" ({int(r['n_actions'])} act.)"
    return txt


def _tmax_text(t) -> str:
    """``Tmax`` as the CSVs write it, whatever pandas read: ``"1"`` … or ``"None"``."""
    if t is None or str(t) in ("None", "nan", "NaN", ""):
        return "None"
    return str(int(float(t)))


def _tmax_order(ts) -> list:
    return sorted(ts, key=lambda t: math.inf if str(t) == "None" else int(t))


def table(g: pd.DataFrame, ks) -> str:
    """One (dataset, model) block."""
    ts = _tmax_order(g["Tmax"].astype(str).unique())
    methods = [m for m in PEERS if m in set(g["method"])]
    head = ["k"]
    for t in ts:
        head += [f"groupcf Tmax={t} (bound)"] + [{"globece": "GLOBE-CE", "globece-frozen": "GLOBE-CE frozen"}[m]
                                                   for m in methods]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    idx = {(str(r["Tmax"]), r["method"], int(r["k"])): r for _, r in g.iterrows()}
    for k in ks:
        cells = [str(k)]
        for t in ts:
            cells.append(_cell(idx.get((t, "groupcf", k)), bound=True))
            cells += [_cell(idx.get((t, m, k))) for m in methods]
        lines.append("| " + " | ".join(cells) + " |")
    times = []
    for t in ts:
        parts = []
        for m in ["groupcf", *methods]:
            rows = g[(g["Tmax"].astype(str) == t) & (g["method"] == m)]
            if len(rows):
                parts.append(f"{rows['time_s'].max():.0f} / {rows['cpu_s'].max():.0f}")
        if parts:
            times.append(f"Tmax={t}: groupcf {parts[0]}" + (f", GLOBE-CE {' and '.join(parts[1:])}" if parts[1:] else ""))
    lo, hi = g["load"].min(), g["load"].max()
    lines.append("")
    lines.append(f"Wall / CPU s (whole curve; load {lo:.0f}–{hi:.0f}): " + "; ".join(times) + ".")
    return "\n".join(lines)


def target_check(df: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model, Tmax): groupcf against the better-covering peer at each ``k``.

    ``cov_ge``: the ``k`` where groupcf covers at least as many; ``dominates``: and at no
    higher mean cost (or the peer covers nobody); of the others where coverage is at least
    the peer's, ``dearer_covers_more`` (groupcf covers more people, the extra ones at a
    higher mean cost) and ``dearer_same_coverage`` (as many people, dearer)."""
    out = []
    df = df.assign(Tmax=df["Tmax"].astype(str))
    for (ds, mo, t), g in df.groupby(["dataset", "model", "Tmax"], sort=False):
        mine = g[g["method"] == "groupcf"].set_index("k")
        peers = g[g["method"].isin(PEERS)]
        cov_ge = dom = above = n = more = same = 0
        gap = 0.0
        notes = []
        for k, r in mine.iterrows():
            n += 1
            gap = max(gap, 100 * (r["upper_bound_coverage"] - r["coverage"]))
            above += int(r["coverage"] > r["upper_bound_coverage"] + 1e-9)
            p = peers[peers["k"] == k]
            if p.empty:
                continue
            best = p.sort_values(["coverage", "mean_cost"], ascending=[False, True]).iloc[0]
            ge = r["coverage"] >= best["coverage"] - 1e-12
            cov_ge += int(ge)
            ok = ge and (best["n_covered"] == 0 or r["mean_cost"] <= best["mean_cost"] + 1e-9)
            dom += int(ok)
            if ge and not ok:       # dearer than the peer: while covering more people, or as many
                more += int(r["coverage"] > best["coverage"] + 1e-12)
                same += int(r["coverage"] <= best["coverage"] + 1e-12)
            if not ok:
                notes.append(f"k={k}: {100 * r['coverage']:.1f}%/{r['mean_cost']:.3f} vs {best['method']} "
                             f"{100 * best['coverage']:.1f}%/{best['mean_cost']:.3f}")
        note = "; ".join(notes[:2]) + (f"; … ({len(notes)} k)" if len(notes) > 2 else "")
        out.append({"dataset": ds, "model": mo, "Tmax": t, "ks": n, "cov_ge": cov_ge, "dominates": dom,
                    "dearer_covers_more": more, "dearer_same_coverage": same,
                    "bound_gap_pp": round(gap, 1), "above_bound": above, "notes": note})
    return pd.DataFrame(out)


def seed_summary(runs: pd.DataFrame, grid: pd.DataFrame, ks) -> pd.DataFrame:
    """GLOBE-CE over several seeds beside groupcf's one run, per (dataset, Tmax, k).

    ``runs``: the peers' rows of several ``--seed`` runs, with a ``seed`` column; ``grid``:
    rows holding groupcf's. Coverage in %: each variant's mean (min–max) over the seeds, the
    better of the two per seed, and in how many seeds that better one covers more than groupcf."""
    runs = runs.assign(Tmax=runs["Tmax"].map(_tmax_text))
    grid = grid.assign(Tmax=grid["Tmax"].map(_tmax_text))
    mine = grid[grid["method"] == "groupcf"].set_index(["dataset", "Tmax", "k"])["coverage"]
    out = []
    for (ds, t), g in runs.groupby(["dataset", "Tmax"], sort=False):
        for k in ks:
            x = g[g["k"] == k]
            cov = {m: x[x["method"] == m].set_index("seed")["coverage"] * 100 for m in PEERS}
            best = pd.concat(list(cov.values()), axis=1).max(axis=1)
            gc = 100 * mine.get((ds, t, k), math.nan)
            row = {"dataset": ds, "Tmax": t, "k": k, "groupcf": f"{gc:.1f} %"}
            for m, v in [*cov.items(), ("better of the two", best)]:
                row[m] = f"{v.mean():.1f} % ({v.min():.1f}–{v.max():.1f})"
            row["seeds above groupcf"] = f"{int((best > gc + 1e-9).sum())} of {len(best)}"
            out.append(row)
    return pd.DataFrame(out)


def markdown(df: pd.DataFrame) -> str:
    """A frame as a markdown table (no ``tabulate`` needed)."""
    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--k", nargs="+", type=int, default=[1, 2, 3, 5, 10])
    ap.add_argument("--seeds", nargs="+", default=None, metavar="CSV",
                    help="GLOBE-CE runs of several --seed (one CSV per seed, the seed read from the name's "
                         "trailing number): their mean / min / max beside groupcf's rows in the positional CSVs")
    args = ap.parse_args(argv)
    if args.seeds:
        import re
        runs = pd.concat([pd.read_csv(f, dtype={"Tmax": str}, keep_default_na=False, na_values=[""]).assign(
            seed=int(re.findall(r"(\d+)\.csv$", f)[0])) for f in args.seeds], ignore_index=True)
        grid = pd.concat([pd.read_csv(f, dtype={"Tmax": str}, keep_default_na=False, na_values=[""])
                          for f in args.csv], ignore_index=True)
        print(markdown(seed_summary(runs, grid, args.k)))
        return
    df = pd.concat([pd.read_csv(f, dtype={"Tmax": str}, keep_default_na=False, na_values=[""]) for f in args.csv],
                   ignore_index=True)
    df["Tmax"] = df["Tmax"].map(_tmax_text)
    df = df[df["method"].isin(["groupcf", *PEERS])]
    for (ds, mo), g in df.groupby(["dataset", "model"], sort=False):
        print(f"#### {ds}, {mo.upper()} ({int(g['n_people'].iloc[0])} rejected)\n")
        print(table(g, args.k))
        print()
    print(markdown(target_check(df)))


if __name__ == "__main__":
    main()
