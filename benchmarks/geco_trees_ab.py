"""GeCo before/after on one pickled ``benchmarks/single.py`` case.

The case is ``single.make_case(dataset, model, 20)`` pickled to
``/tmp/trees_cases/<dataset>_<model>.pkl``; prints the median / p95 time and the mean
distance of its 20 explanations (``GeCo(pipe, X_tr, time_limit=2.0)``, random_state = the
row's position). Run it once with each checkout on ``PYTHONPATH``, back to back.
"""
from __future__ import annotations

import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import groupcf  # noqa: E402
from groupcf.single.geco import GeCo  # noqa: E402


def main(name: str) -> None:
    warnings.simplefilter("ignore")
    with open(f"/tmp/trees_cases/{name}.pkl", "rb") as fh:
        case = pickle.load(fh)
    ex = GeCo(case.pipe, case.X_tr, time_limit=2.0)
    ts, ds = [], []
    for i, (_, x) in enumerate(case.S.iterrows()):
        t = time.perf_counter()
        e = ex.explain(x, random_state=i)
        ts.append(time.perf_counter() - t)
        ds.append(e.distances[0])
    where = groupcf.__file__.split("/groupcf/")[0]
    print(f"{name} {where} geco median {1000 * np.median(ts):.0f} ms p95 {1000 * np.percentile(ts, 95):.0f} ms "
          f"mean dist {np.mean(ds):.5f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
