"""gcf.explain_many against a real Dask deployment: a ``dask scheduler`` and two ``dask worker``
processes started on localhost from this venv (random free ports), reached through a
``dask.distributed.Client`` -- the set-up of a cluster, not the in-process ``LocalCluster`` of
test_batch.py. Every row's answer must equal the serial run's, and the chunks must have run
on those worker processes, importing this checkout's groupcf (PYTHONPATH)."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import groupcf as gcf
from groupcf.batch import explain_many

distributed = pytest.importorskip("dask.distributed")

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 120.0   # seconds for the scheduler file / the workers to appear (a busy 2-core box)
N_WORKERS = 2


def _dask_cli(role: str) -> list[str]:
    """This venv's ``dask-<role>`` / ``dask <role>`` executable (else the module, same venv)."""
    bindir = Path(sys.executable).parent
    for exe, args in ((bindir / f"dask-{role}", []), (bindir / "dask", [role])):
        if exe.exists():
            return [str(exe), *args]
    return [sys.executable, "-m", f"distributed.cli.dask_{role}"]


#: seconds the processes get to exit by themselves after ``client.shutdown()`` (they do in
#: ~1 s; a SIGTERM sent sooner interrupts the workers' own shutdown and they hang until killed:
#: teardowns of 5-20 s), then seconds a terminated process gets before it is killed
SETTLE, STOP_GRACE = 10.0, 5.0


def _stop(procs, settle: float = 0.0) -> None:
    """Wait up to ``settle`` seconds for every process started here to exit, then terminate
    each one left (and its process group), and kill what is left after ``STOP_GRACE``."""
    deadline = time.monotonic() + settle
    while time.monotonic() < deadline and any(p.poll() is None for p in procs):
        time.sleep(0.05)
    for p in procs:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster(request, tmp_path_factory):
    """``(client, worker_addresses)`` of a scheduler + ``N_WORKERS`` worker processes; the
    finalizer closes the client and stops the processes whatever the test did."""
    tmp = tmp_path_factory.mktemp("dask")
    sched_file = tmp / "scheduler.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    procs: list[subprocess.Popen] = []
    client = None
    logs = []

    def finalize():
        settle = 0.0
        if client is not None:
            try:
                client.shutdown()   # asks the scheduler to stop itself and its workers
                settle = SETTLE
            except Exception:  # noqa: BLE001 - the processes are stopped below in any case
                client.close(timeout=10)
        _stop(procs, settle)
        for f in logs:
            f.close()

    request.addfinalizer(finalize)

    def start(cmd, name):
        log = open(tmp / f"{name}.log", "w")   # noqa: SIM115 - closed by the finalizer
        logs.append(log)
        # own session: the finalizer signals the whole group (a worker's children included)
        procs.append(subprocess.Popen(cmd, cwd=tmp, env=env, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True))

    # port 0: the OS picks a free port; the scheduler writes its address to the file.
    # --idle-timeout / --death-timeout: nothing outlives a test process killed without its finalizer
    start([*_dask_cli("scheduler"), "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
           "--scheduler-file", str(sched_file), "--idle-timeout", "600"], "scheduler")
    deadline = time.monotonic() + START_TIMEOUT
    while not sched_file.exists() or not sched_file.read_text().strip():
        if procs[0].poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"dask scheduler did not start:\n{(tmp / 'scheduler.log').read_text()}")
        time.sleep(0.1)
    address = json.loads(sched_file.read_text())["address"]
    for i in range(N_WORKERS):
        start([*_dask_cli("worker"), address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
               "--no-dashboard", "--name", f"w{i}", "--local-directory", str(tmp / f"w{i}"),
               "--death-timeout", "60"], f"worker{i}")
    client = distributed.Client(address, timeout=START_TIMEOUT)
    try:
        client.wait_for_workers(N_WORKERS, timeout=START_TIMEOUT)
    except TimeoutError:
        logs_text = "\n".join((tmp / f"worker{i}.log").read_text() for i in range(N_WORKERS))
        pytest.fail(f"dask workers did not connect:\n{logs_text}")
    return client, set(client.scheduler_info()["workers"])


def _groupcf_file():
    import groupcf
    return groupcf.__file__


def _pid():
    return os.getpid()


def test_explain_many_on_scheduler_and_worker_processes(cluster):
    client, workers = cluster
    assert len(workers) == N_WORKERS
    # the workers are separate processes importing this checkout's groupcf
    assert set(client.run(_pid).values()).isdisjoint({os.getpid()})
    for f in client.run(_groupcf_file).values():
        assert Path(f).resolve().is_relative_to(ROOT), f

    d = gcf.datasets.load("compas")
    pipe = make_pipeline(gcf.FeatureSpace(immutable=list(d.immutable)),
                         LogisticRegression(max_iter=500)).fit(d.X, d.y)
    rej = d.X[pipe.predict(d.X) == 0].iloc[:10]
    serial = explain_many(rej, pipe, "mace", n_jobs=1, progress=False)
    with distributed.get_task_stream(client) as ts:
        remote = explain_many(rej, pipe, "mace", backend=client, chunk_size=2, progress=False)

    # every row: the same answer as the serial run (all columns but the timing)
    assert list(remote.table.index) == list(rej.index)
    pd.testing.assert_frame_equal(remote.table.drop(columns="time"), serial.table.drop(columns="time"))
    pd.testing.assert_frame_equal(remote.counterfactuals, serial.counterfactuals)
    assert serial.table["found"].all() and remote.failed.empty
    assert (remote.table["probability"] >= 0.5).all()   # re-checked with the real model in the worker
    # the chunks ran on the worker processes (the first row is probed in this process;
    # the other 9 go in chunks of 2)
    chunk_tasks = [t for t in ts.data if t["key"].startswith("_explain_chunk")]
    assert len(chunk_tasks) == 5
    assert {t["worker"] for t in chunk_tasks} <= workers
