"""Scale benchmark of gcf.explain_many (issues 13, 26): rejected Adult applicants, MACE + LR and
GeCo + MLP, 1 and 2 workers on joblib (loky) and on a Dask LocalCluster (processes).

Workers are started (and groupcf imported in them) before the timed call, on both
backends alike, and that start-up is reported apart (``startup_s``): it is paid once per
pool, not per batch. For each method and backend the 1-worker and the 2-worker runs are
made back to back (``--repeat`` pairs), so that both see the same load from other jobs.

Columns:

* ``wall_s``, ``expl_per_s``: the timed call; ``load1`` the 1-minute load average just before it.
* ``efficiency``: 1-worker wall / (wall x workers), within the same pair.
* ``cpu_s``: CPU seconds (user + system) used by this process and its children during the
  call (the workers, the dispatch and the result handling); ``cores_got`` = cpu_s / wall,
  how many cores the run actually had (2 workers on a shared 2-core box get < 2);
  ``cpu_efficiency`` = 1-worker cpu_s / cpu_s: the parallel overhead in CPU terms, which
  the other jobs' load does not change (how much extra work two workers do).
* ``cost_ms``: mean per-row time inside the worker (wall, so it grows under load);
  ``overhead_ms`` = (wall x workers - summed per-row time) / rows; ``cpu_ms`` = cpu_s / rows.
* ``worker_rss_mb``: peak RSS of one worker process, sampled every 0.1 s (loky with one
  worker runs in this process: then it is this process, which also holds both models and
  the data); ``main_rss_mb``: this process's peak.
* ``proj_1M_64w_h``: 10^6 x (cost + overhead) / 64 workers, hours; ``proj_cpu_1M_64w_h``:
  10^6 x cpu_ms / 64, i.e. on 64 dedicated cores with this run's CPU cost per explanation.
* ``same_table``: the table (minus timings) equals the loky 1-worker one.

    python benchmarks/scale.py --n 2000        # make bench-scale
    python benchmarks/scale.py --n 2000 --methods mace --backends loky --out mace_loky.csv
"""
from __future__ import annotations

import argparse
import contextlib
import os
import threading
import time

import pandas as pd
import psutil
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf


class _Sampler:
    """Peak RSS per process (this one and its children), sampled in a thread; CPU seconds
    of this process and its children between ``start`` and ``stop``."""

    def __init__(self, period: float = 0.1):
        self.period = period
        self.me = psutil.Process()
        self.peak: dict[int, int] = {}
        self._stop = threading.Event()

    def _procs(self):
        procs = [self.me]
        with contextlib.suppress(psutil.Error):
            procs += self.me.children(recursive=True)
        return procs

    def _cpu(self) -> float:
        total = 0.0
        for p in self._procs():
            with contextlib.suppress(psutil.Error):
                t = p.cpu_times()
                total += t.user + t.system
        return total

    def _loop(self):
        while not self._stop.is_set():
            for p in self._procs():
                with contextlib.suppress(psutil.Error):
                    self.peak[p.pid] = max(self.peak.get(p.pid, 0), p.memory_info().rss)
            self._stop.wait(self.period)

    def __enter__(self):
        self.cpu0 = self._cpu()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.cpu = self._cpu() - self.cpu0
        self._stop.set()
        self.thread.join()

    def worker_peak_mb(self, in_process: bool) -> float:
        if in_process:
            return self.peak.get(self.me.pid, 0) / 2**20
        others = [v for k, v in self.peak.items() if k != self.me.pid]
        return max(others, default=0) / 2**20


def _import_groupcf():
    import groupcf  # noqa: F401  (what a worker imports before its first task)
    return os.getpid()


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


def _models(d):
    X, y = d.X, d.y
    return {
        "mace": make_pipeline(gcf.FeatureSpace(immutable=list(d.immutable)),
                              LogisticRegression(max_iter=1000)).fit(X, y),
        "geco": make_pipeline(gcf.FeatureSpace(immutable=list(d.immutable)),
                              MLPClassifier((16,), max_iter=300, random_state=0)).fit(X, y),
    }


def _one(rej, pipe, method, opts, backend, nj):
    client, cluster, startup = _start_workers(backend, nj)
    try:
        load1 = os.getloadavg()[0]
        with _Sampler() as s:
            t0 = time.perf_counter()
            r = gcf.explain_many(rej, pipe, method, n_jobs=nj, backend=client or backend, progress=False, **opts)
            wall = time.perf_counter() - t0
    finally:
        if client is not None:
            client.close()
            cluster.close()
    work = float(r.table["time"].sum())
    n = len(rej)
    row = {"method": method, "backend": backend, "workers": nj, "rows": n, "load1": load1,
           "startup_s": startup, "wall_s": wall, "expl_per_s": n / wall, "cpu_s": s.cpu, "cores_got": s.cpu / wall,
           "overhead_ms": 1000 * max(0.0, wall * nj - work) / n, "cost_ms": 1000 * work / n,
           "cpu_ms": 1000 * s.cpu / n,
           "worker_rss_mb": s.worker_peak_mb(in_process=backend == "loky" and nj == 1),
           "main_rss_mb": s.peak.get(os.getpid(), 0) / 2**20,
           "found": int(r.table["found"].sum()), "failed": len(r.failed)}
    return row, r.table.drop(columns="time")


def run(n: int, methods, backends=("loky", "dask"), jobs=(1, 2), repeat: int = 1, cache=None):
    d = gcf.datasets.load("adult")
    if cache and os.path.exists(cache):
        import joblib
        models = joblib.load(cache)
    else:
        models = _models(d)
        if cache:
            import joblib
            joblib.dump(models, cache)
    rows, ref = [], {}
    for method in methods:
        pipe = models[method]
        rej = d.X[pipe.predict(d.X) == 0].iloc[:n]
        opts = {} if method == "mace" else {"data": d.X.sample(2000, random_state=0), "random_state": 0, "n": 1}
        for backend in backends:
            for rep in range(repeat):
                base = None
                for nj in jobs:
                    row, table = _one(rej, pipe, method, opts, backend, nj)
                    ref.setdefault(method, table)
                    if base is None:
                        base = row
                    row.update(repeat=rep, efficiency=base["wall_s"] / row["wall_s"] / nj,
                               cpu_efficiency=base["cpu_s"] / row["cpu_s"], same_table=table.equals(ref[method]))
                    rows.append(row)
                    print(f"{method} {backend} {nj}w rep {rep}: {row['wall_s']:.1f} s, load {row['load1']:.2f}, "
                          f"cores {row['cores_got']:.2f}, eff {row['efficiency']:.2f}", flush=True)
    df = pd.DataFrame(rows)
    df["proj_1M_64w_h"] = 1e6 * (df["cost_ms"] + df["overhead_ms"]) / 1000 / 64 / 3600
    df["proj_cpu_1M_64w_h"] = 1e6 * df["cpu_ms"] / 1000 / 64 / 3600
    return df


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2000, help="rejected applicants per method")
    p.add_argument("--methods", default="mace,geco")
    p.add_argument("--backends", default="loky,dask")
    p.add_argument("--repeat", type=int, default=1, help="1-worker / 2-worker pairs per method and backend")
    p.add_argument("--cache", default=None, help="joblib file of the two fitted models (written when missing)")
    p.add_argument("--out", default=None, help="CSV of the rows (appended to when it exists)")
    a = p.parse_args(argv)
    df = run(a.n, a.methods.split(","), a.backends.split(","), repeat=a.repeat, cache=a.cache)
    if a.out:
        df.to_csv(a.out, mode="a", header=not os.path.exists(a.out), index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(df.to_string(index=False, float_format="%.3g"))
    with contextlib.suppress(ImportError):
        print(df.to_markdown(index=False, floatfmt=".3g"))


if __name__ == "__main__":
    main()
