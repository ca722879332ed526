"""Scale benchmark of gcf.explain_many (issue 13): rejected Adult applicants, MACE + LR and
GeCo + MLP, n_jobs 1 and 2 on joblib (loky) and on a Dask LocalCluster (processes).

Workers are started (and groupcf imported in them) before the timed call, on both
backends alike, and that start-up is reported apart (``startup_s``): it is paid once per
pool, not per batch. Reports throughput (explanations/s), parallel efficiency (speed-up / workers), per-task
overhead (wall x workers - summed per-row time, per explanation), peak RSS of the
worker processes, whether the tables agree across backends, and a projection of the time
for 1,000,000 people on 64 workers (per-explanation cost + overhead, perfectly spread).

    python benchmarks/scale.py --n 2000        # make bench-scale
"""
from __future__ import annotations

import argparse
import contextlib
import resource
import time

import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf


def _peak_rss_mb(client=None) -> float:
    if client is not None:
        def rss():
            import resource as r
            return r.getrusage(r.RUSAGE_SELF).ru_maxrss / 1024
        return max(client.run(rss).values())
    return max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
               resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


def _import_groupcf():
    import groupcf  # noqa: F401  (what a worker imports before its first task)
    return True


def _start_workers(backend: str, nj: int):
    """Start the workers outside the timed call and return ``(client, cluster, seconds)``:
    a Dask LocalCluster, or joblib's reusable loky pool (which ``explain_many`` then reuses)
    with groupcf imported in each worker. ``n_jobs=1`` on loky runs in this process."""
    t = time.perf_counter()
    client = cluster = None
    if backend == "dask":
        from dask.distributed import Client, LocalCluster
        cluster = LocalCluster(n_workers=nj, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        client.run(_import_groupcf)
    elif nj > 1:
        from joblib import Parallel, delayed
        Parallel(n_jobs=nj, backend="loky")(delayed(_import_groupcf)() for _ in range(4 * nj))
    return client, cluster, time.perf_counter() - t


def run(n: int, methods, jobs=(1, 2)):
    d = gcf.datasets.load("adult")
    X, y = d.X, d.y
    space = gcf.FeatureSpace(immutable=list(d.immutable))
    models = {
        "mace": make_pipeline(space, LogisticRegression(max_iter=1000)).fit(X, y),
        "geco": make_pipeline(gcf.FeatureSpace(immutable=list(d.immutable)),
                              MLPClassifier((16,), max_iter=300, random_state=0)).fit(X, y),
    }
    rows, tables = [], {}
    for method in methods:
        pipe = models[method]
        rej = X[pipe.predict(X) == 0].iloc[:n]
        opts = {} if method == "mace" else {"data": X.sample(2000, random_state=0), "random_state": 0, "k": 1}
        base = {}
        for backend in ("loky", "dask"):
            for nj in jobs:
                client, cluster, startup = _start_workers(backend, nj)
                t0 = time.perf_counter()
                r = gcf.explain_many(rej, pipe, method, n_jobs=nj, backend=client or backend, **opts)
                wall = time.perf_counter() - t0
                mem = _peak_rss_mb(client)
                if client is not None:
                    client.close()
                    cluster.close()
                work = float(r.table["time"].sum())
                key = (method, backend, nj)
                tables[key] = r.table.drop(columns="time")
                base.setdefault(backend, wall)
                rows.append({"method": method, "backend": backend, "workers": nj, "rows": len(rej),
                             "startup_s": startup, "wall_s": wall, "expl_per_s": len(rej) / wall,
                             "efficiency": base[backend] / wall / nj,
                             "overhead_ms": 1000 * max(0.0, wall * nj - work) / len(rej),
                             "cost_ms": 1000 * work / len(rej), "peak_rss_mb": mem,
                             "found": int(r.table["found"].sum()), "failed": len(r.failed)})
        ref = tables[(method, "loky", 1)]
        for key, t in tables.items():
            if key[0] == method:
                same = t.equals(ref)
                for row in rows:
                    if (row["method"], row["backend"], row["workers"]) == key:
                        row["same_table"] = same
    df = pd.DataFrame(rows)
    df["proj_1M_64w_h"] = 1e6 * (df["cost_ms"] + df["overhead_ms"]) / 1000 / 64 / 3600
    return df


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2000, help="rejected applicants per method")
    p.add_argument("--methods", default="mace,geco")
    a = p.parse_args(argv)
    df = run(a.n, a.methods.split(","))
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(df.to_string(index=False, float_format="%.3g"))
    with contextlib.suppress(ImportError):
        print(df.to_markdown(index=False, floatfmt=".3g"))


if __name__ == "__main__":
    main()
