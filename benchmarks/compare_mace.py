"""Before / after comparison of MACE from two runs of ``single.py`` (issue 14, MACE on networks).

    python benchmarks/compare_mace.py BEFORE/single_instances.csv AFTER/single_instances.csv

Per dataset and model, on the instances both runs explained (the same rows: checked):
MACE's median / p95 / max wall time per instance before and after and their ratios, how
many answers were accepted and proven optimal, the largest distance difference between
the two runs (both exact: should be ~0), and "never farther than GeCo": the rows where
the after-run's MACE distance is at most GeCo's (``gcf.metrics.proximity`` with MACE's
weights, both from the after-run; a row where GeCo found nothing counts as satisfied), for
``geco`` and ``geco+`` when the after-run has them.
Prints a markdown table.
"""
from __future__ import annotations

import sys

import numpy as np
import pandas as pd

#: MACE is "not farther than GeCo" within this absolute distance tolerance
TOL = 1e-9


def _stats(t: pd.Series) -> tuple[float, float, float]:
    t = t.to_numpy()
    return float(np.median(t)), float(np.percentile(t, 95)), float(t.max())


def compare(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (ds, model), a in after[after.method == "mace"].groupby(["dataset", "model"], sort=False):
        b = before[(before.method == "mace") & (before.dataset == ds) & (before.model == model)]
        if list(b["index"]) != list(a["index"]):
            raise SystemExit(f"{ds}/{model}: the two runs explained different rows")
        a, b = a.set_index("index"), b.set_index("index")
        mb, pb, xb = _stats(b.time)
        ma, pa, xa = _stats(a.time)
        both = (a.optimal == 1) & (b.optimal == 1)
        row = {
            "dataset": ds, "model": model, "n": len(a),
            "median s before": mb, "median s after": ma, "median ratio": mb / ma,
            "p95 s before": pb, "p95 s after": pa, "p95 ratio": pb / pa,
            "max s before": xb, "max s after": xa,
            "proven before": f"{int((b.optimal == 1).sum())}/{len(b)}",
            "proven after": f"{int((a.optimal == 1).sum())}/{len(a)}",
            "accepted after": f"{int((a.valid == 1).sum())}/{len(a)}",
            "max |dist after - before| (both proven)":
                float((a.distance[both] - b.distance[both]).abs().max()) if both.any() else np.nan,
        }
        for method in ("geco", "geco+"):
            g = after[(after.method == method) & (after.dataset == ds) & (after.model == model)]
            if not len(g):
                continue
            g = g.set_index("index").reindex(a.index)
            ok = g.valid == 1
            row[f"MACE <= {method}"] = f"{int(((~ok) | (a.distance <= g.distance + TOL)).sum())}/{len(a)}"
            row[f"{method} / MACE distance"] = float(g.distance[ok].mean() / a.distance[ok].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        raise SystemExit(__doc__)
    out = compare(pd.read_csv(args[0]), pd.read_csv(args[1]))
    print(out.to_markdown(index=False, floatfmt=".3g"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
