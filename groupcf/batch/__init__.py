"""Population-scale explanations: ``gcf.explain_many``.

Every row of ``X`` is explained with :func:`groupcf.explain`; rows are processed in chunks
(one task per chunk, so per-task overhead is paid once per chunk) on joblib's process
backend (``backend="loky"``) or on Dask (``backend="dask"``: a ``LocalCluster``; or any
``dask.distributed.Client``). A row that fails is recorded in the table (``error``) and
never stops the batch. With ``checkpoint=`` every finished chunk is written as one parquet
file in that directory as soon as it completes; re-running the same call skips the rows
already written, so an interrupted run loses at most the chunks in flight.

The model goes to each worker once: on loky it is written to a temporary joblib file that
each worker process loads once into a cache keyed by a per-call token; on Dask it is
``client.scatter(model, broadcast=True)``. Rows travel with their chunk.

Dask and pyarrow are imported lazily (``pip install 'groupcf[dask]'``).
"""
from __future__ import annotations

import logging
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import InvalidInputError
from ..progress import progress_bar
from ..results.sets import TABLE_COLUMNS, ExplanationSet
from ..results.sets import read_checkpoint as _read_checkpoint
from ..results.sets import write_part as _write_part
from ..single import explain
from ..single.registry import check_options
from .groups import explain_groups

log = logging.getLogger(__name__)

__all__ = ["TABLE_COLUMNS", "ExplanationSet", "explain_groups", "explain_many"]



# --------------------------------------------------------------------------- one chunk
def _explain_row(x: pd.Series, model, method: str, options: dict):
    """One table row (dict) and the counterfactual rows (list of dicts) of one instance."""
    t0 = time.perf_counter()
    try:
        e = explain(x.to_frame().T, model, method=method, **options)
    except Exception as exc:  # noqa: BLE001 - one row's failure is recorded, not raised
        row = {"status": type(exc).__name__, "found": False, "distance": np.nan, "n_changed": -1,
                   "changed": "", "probability": np.nan, "time": time.perf_counter() - t0,
                   "error": f"{type(exc).__name__}: {exc}"}
        return row, []
    found = len(e.counterfactuals) > 0
    changes = e.changes[0] if found else []
    row = {"status": str(getattr(e.status, "name", e.status)), "found": found,
               "distance": float(e.distances[0]) if found else np.nan,
               "n_changed": len(changes) if found else -1, "changed": ";".join(changes),
               "probability": float(np.asarray(e.probabilities)[0]) if found else np.nan,
               "time": time.perf_counter() - t0, "error": ""}
    cfs = []
    for rank, (_, cf) in enumerate(e.counterfactuals.iterrows()):
        d = {"row": x.name, "rank": rank, "distance": float(e.distances[rank])}
        d.update({k: str(v) for k, v in cf.items()})
        cfs.append(d)
    return row, cfs


def _explain_chunk(chunk: pd.DataFrame, model, method: str, options: dict):
    rows, cfs = [], []
    for _, x in chunk.iterrows():
        r, c = _explain_row(x, model, method, options)
        rows.append(r)
        cfs.extend(c)
    table = pd.DataFrame(rows, index=chunk.index, columns=TABLE_COLUMNS)
    return table, cfs


# --------------------------------------------------------------------------- driver
def _chunks(X: pd.DataFrame, chunk_size: int):
    return [X.iloc[i:i + chunk_size] for i in range(0, len(X), chunk_size)]


_WORKER_CACHE: dict = {}


def _cached_chunk(chunk, model_path: str, token: str, method, options):
    """Worker side: load the model from the file once per worker process (keyed by token)."""
    if token not in _WORKER_CACHE:
        import joblib
        _WORKER_CACHE.clear()
        _WORKER_CACHE[token] = joblib.load(model_path)
    return _explain_chunk(chunk, _WORKER_CACHE[token], method, options)


def _run_loky(chunks, model, method, options, n_jobs):
    if n_jobs == 1:
        for c in chunks:
            yield _explain_chunk(c, model, method, options)
        return
    import os
    import tempfile
    import uuid

    import joblib
    from joblib import Parallel, delayed
    # the model goes to each worker once: a file read by a worker-side cache, not a pickle per task
    fd, path = tempfile.mkstemp(suffix=".joblib", prefix="groupcf-model-")
    os.close(fd)
    try:
        joblib.dump(model, path)
        token = uuid.uuid4().hex
        par = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered")
        yield from par(delayed(_cached_chunk)(c, path, token, method, options) for c in chunks)
    finally:
        os.unlink(path)


def _run_dask(chunks, model, method, options, n_jobs, client):
    from dask.distributed import Client, LocalCluster, as_completed
    own = None
    if client is None:
        own = LocalCluster(n_workers=n_jobs, threads_per_worker=1, processes=True,
                           dashboard_address=None)
        client = Client(own)
    try:
        m = client.scatter(model, broadcast=True)  # sent once per worker
        futures = [client.submit(_explain_chunk, c, m, method, options, pure=False)
                   for c in chunks]
        for fut in as_completed(futures):
            yield fut.result()
    finally:
        if own is not None:
            client.close()
            own.close()


def explain_many(X: pd.DataFrame, model, method: str = "mace", *, Tmax: int | None = None,
                 n_jobs: int = 1, backend="loky", checkpoint=None, chunk_size: int | None = None,
                 progress: bool = True, validate: bool = True,
                 **method_options) -> ExplanationSet:
    """Explain every row of ``X`` with :func:`groupcf.explain` (``method``, ``Tmax``, options).

    ``backend``: ``"loky"`` (joblib processes; ``n_jobs=1`` runs in this process),
    ``"dask"`` (a ``LocalCluster`` of ``n_jobs`` single-threaded worker processes) or a
    ``dask.distributed.Client``. ``checkpoint``: a directory; finished chunks are written
    there as they complete and rows already there are skipped when the same call is run
    again. ``chunk_size`` defaults to about ``len(X) / (4 * workers)`` (at least 1, at most
    50). With ``validate`` the options are checked once, up front, against the method's
    declared options: an unknown option or method, or a missing ``data=``, raises
    :class:`~groupcf.exceptions.InvalidInputError` naming it instead of failing every row.
    ``progress``: a bar over the chunks, shown only when standard error is a terminal.
    Returns an :class:`ExplanationSet`.
    """
    t_start = time.perf_counter()
    if not isinstance(X, pd.DataFrame):
        raise InvalidInputError("X must be a pandas DataFrame of raw features (one row per person)")
    if not X.index.is_unique:
        raise InvalidInputError("X's index must be unique (rows are identified by it); use X.reset_index(drop=True)")
    if Tmax is not None:
        method_options = {**method_options, "Tmax": Tmax}
    if validate and len(X):
        _validate(method, method_options)
    done_t, done_c = (pd.DataFrame(columns=TABLE_COLUMNS), pd.DataFrame())
    ck = None
    if checkpoint is not None:
        ck = Path(checkpoint)
        ck.mkdir(parents=True, exist_ok=True)
        done_t, done_c = _read_checkpoint(ck)
        done_t = done_t[done_t.index.isin(X.index)]
    todo = X[~X.index.isin(done_t.index)]
    workers = n_jobs if not _is_client(backend) else max(1, len(backend.scheduler_info()["workers"]))
    if chunk_size is None:
        chunk_size = max(1, min(50, math.ceil(len(todo) / (4 * max(1, workers)))))
    chunks = _chunks(todo, chunk_size)
    log.info("explain_many: %d rows (%d done before), %d chunks of %d", len(todo),
             len(done_t), len(chunks), chunk_size)
    if _is_client(backend):
        it = _run_dask(chunks, model, method, method_options, n_jobs, backend)
    elif backend == "dask":
        it = _run_dask(chunks, model, method, method_options, n_jobs, None)
    elif backend == "loky":
        it = _run_loky(chunks, model, method, method_options, n_jobs)
    else:
        raise InvalidInputError(f"unknown backend {backend!r}: use 'loky', 'dask' or a dask Client")
    it = progress_bar(it, enabled=progress, total=len(chunks), desc="explain_many (chunks)")
    tables, cfs = [done_t] if len(done_t) else [], [done_c] if len(done_c) else []
    for table, cf in it:
        if ck is not None:
            _write_part(ck, table, cf)
        tables.append(table)
        if cf:
            cfs.append(pd.DataFrame(cf))
    table = pd.concat(tables) if tables else pd.DataFrame(columns=TABLE_COLUMNS)
    table = table.reindex(X.index)
    table.index.name = X.index.name
    cf_all = pd.concat(cfs, ignore_index=True) if cfs else pd.DataFrame()
    if len(cf_all):
        order = {k: i for i, k in enumerate(X.index)}
        cf_all = cf_all[cf_all["row"].isin(order)]
        cf_all = (cf_all.assign(_o=cf_all["row"].map(order)).sort_values(["_o", "rank"])
                  .drop(columns="_o").reset_index(drop=True))
    return ExplanationSet(table, cf_all, method, solve_time=time.perf_counter() - t_start, X=X.copy(),
                          model=model)


def _is_client(backend) -> bool:
    return type(backend).__name__ == "Client" and hasattr(backend, "scatter")


def _validate(method: str, options: dict) -> None:
    """Fail fast on a typo, before any work: the method's declared options
    (:func:`groupcf.single.registry.check_options`) and its required ``data=``."""
    spec = check_options(method, options)
    if spec.needs_data and options.get("data") is None:
        raise InvalidInputError(f"method={method!r} needs data= (raw reference rows, e.g. the training data)")
