"""``TreeEnsemble.apply`` on a swarm's batch: the full-array walk it replaced (every (row,
tree) pair at every depth, inlined here) against the leaf-skipping walk, on split 0 / model
seed 0's random forest of ``benchmarks/pso.py`` (CPU and wall ms per 50-row call, mean of 300)::

    MDPSO_DATA=../shared/data/mdpso python benchmarks/tree_apply.py
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pso_protocol as P

from groupcf.embeddings import get_embedding


def full_walk(ens, Z):
    """The previous ``apply``: all (row, tree) pairs at every depth."""
    Z = np.asarray(Z, dtype=float)
    idx = np.broadcast_to(ens.roots, (len(Z), ens.n_trees)).copy()
    rows = np.arange(len(Z))[:, None]
    for _ in range(ens.depth):
        f = ens.feature[idx]
        split = f >= 0
        if not split.any():
            break
        go_left = Z[rows, np.where(split, f, 0)] <= ens.threshold[idx]
        idx = np.where(split, np.where(go_left, ens.left[idx], ens.right[idx]), idx)
    return idx


def main(reps: int = 300) -> None:
    data = Path(os.environ.get("MDPSO_DATA", str(P.SHARED / "data" / "mdpso")))
    for name in ("hill-valley", "lsvt"):
        case = P.Case(name, P.load(name, data), 0, 0)
        emb = get_embedding(case.pipe)[1]
        Z = case.space.transform(case.X_te)[:50]
        assert (full_walk(emb, Z) == emb.apply(Z)).all()
        for label, f in (("full walk", full_walk), ("apply", type(emb).apply)):
            c0, t0 = time.process_time(), time.perf_counter()
            for _ in range(reps):
                f(emb, Z)
            print(f"{name} {emb!r} {label}: CPU {1e3 * (time.process_time() - c0) / reps:.2f} ms, "
                  f"wall {1e3 * (time.perf_counter() - t0) / reps:.2f} ms per {len(Z)}-row call")


if __name__ == "__main__":
    main()
