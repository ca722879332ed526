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

from ..exceptions import InvalidInputError, NoCounterfactualError, NotRejectedError, SolverTimeLimitError
from ..features.display import bin_label, bin_value
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
#: failures that belong to one row (the batch records them and goes on)
ROW_ERRORS = (NotRejectedError, NoCounterfactualError, SolverTimeLimitError)


def _explain_row(x: pd.Series, model, method: str, options: dict, strict: bool = False):
    """One table row (dict) and the counterfactual rows (list of dicts) of one instance;
    ``strict``: a failure that is not one of :data:`ROW_ERRORS` is raised."""
    t0 = time.perf_counter()
    try:
        e = explain(x.to_frame().T, model, method=method, **options)
    except Exception as exc:  # noqa: BLE001 - one row's failure is recorded, not raised
        if strict and not isinstance(exc, ROW_ERRORS):
            raise
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
    space = None if e.model is None else e.model.space
    for rank, (_, cf) in enumerate(e.counterfactuals.iterrows()):
        d = {"row": x.name, "rank": rank, "distance": float(e.distances[rank])}
        for k, v in cf.items():
            if isinstance(v, pd.Interval) and space is not None and space[k].edges is not None:
                # a bin: its representative value (numbers stay numbers), the bin beside it
                d[k], d[f"{k} bin"] = bin_value(space[k], v), bin_label(space[k], v)
            else:
                d[k] = _cell(v)
        cfs.append(d)
    return row, cfs


def _cell(v):
    """A counterfactual's value for the table: numbers stay numbers, the rest is text."""
    if isinstance(v, (bool, np.bool_)):
        return str(v)
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    return str(v)


def _consistent(cf: pd.DataFrame) -> pd.DataFrame:
    """One type per feature column: numeric when every value is a number, else text (a
    changed binned feature gives its bin's representative value, and its bin as text in a
    ``"<feature> bin"`` column: :mod:`groupcf.features.display`)."""
    for c in cf.columns:
        if cf[c].dtype == object:
            num = pd.to_numeric(cf[c], errors="coerce")
            if num.notna().sum() == cf[c].notna().sum():
                cf[c] = num
            else:     # text; a missing cell (e.g. the bin of a row that kept its value) stays empty
                cf[c] = cf[c].map(lambda v: v if isinstance(v, str) else "" if pd.isna(v) else _cell(v)).astype(str)
    return cf


def _explain_chunk(chunk: pd.DataFrame, model, method: str, options: dict):
    rows, cfs = [], []
    for _, x in chunk.iterrows():
        r, c = _explain_row(x, model, method, options)
        rows.append(r)
        cfs.extend(c)
    table = pd.DataFrame(rows, index=chunk.index, columns=TABLE_COLUMNS)
    if cfs:
        cfs = _consistent(pd.DataFrame(cfs)).to_dict("records")
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


def check_main_guard(call: str) -> None:
    """Raise a clear error when a Dask worker process is importing the user's script
    (spawned workers import ``__main__``; without an ``if __name__ == "__main__":`` guard
    the script would start a cluster again from inside each worker)."""
    import multiprocessing as mp
    import sys

    main = sys.modules.get("__main__")
    # ``_inheriting``: the flag multiprocessing itself checks (a process still bootstrapping)
    bootstrapping = getattr(mp.current_process(), "_inheriting", False)
    if bootstrapping or (mp.parent_process() is not None and getattr(main, "__name__", "") == "__mp_main__"):
        raise RuntimeError(
            f"{call} was called while a Dask worker process was importing your script: "
            "Dask's worker processes import the main script, so put "
            "the call under `if __name__ == \"__main__\":` (or run it from a notebook)")


def local_cluster(n_workers: int):
    """A Dask ``LocalCluster`` of single-threaded worker processes; a failure to start
    says what usually causes it in a script (the missing ``__main__`` guard)."""
    import sys

    from dask.distributed import LocalCluster
    try:
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None)
    except RuntimeError as exc:
        script = getattr(sys.modules.get("__main__"), "__file__", None)
        hint = (f" If {script} is a script, put the call under `if __name__ == \"__main__\":` — Dask's worker "
                "processes import the main script." if script else "")
        raise RuntimeError(f"Dask could not start its worker processes ({exc}).{hint}") from exc


def _run_dask(chunks, model, method, options, n_jobs, client):
    from dask.distributed import Client, as_completed
    own = None
    if client is None:
        check_main_guard("explain_many(backend='dask')")
        own = local_cluster(n_jobs)
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

    Parameters
    ----------
    X
        Raw rows, one person each (a unique index: rows are identified by it).
    model
        As for :func:`groupcf.explain`.
    method
        ``"mace"`` (default), ``"geco"`` or ``"pso"`` (the last two need ``data=``).
    Tmax
        Most features one counterfactual may change (``None``: no limit).
    n_jobs, backend
        Parallel execution: ``"loky"`` (joblib processes; ``n_jobs=1`` runs in this
        process), ``"dask"`` (a ``LocalCluster`` of ``n_jobs`` single-threaded worker
        processes) or a ``dask.distributed.Client``.
    checkpoint
        A directory: finished chunks are written there as they complete, and rows already
        there are skipped when the same call is run again.
    chunk_size
        Rows per task; default about ``len(X) / (4 * workers)`` (at least 1, at most 50).
    progress
        A bar over the chunks, shown only when standard error is a terminal.
    validate
        Check the options once, up front, against the method's declared options (an
        unknown option or method, or a missing ``data=``, raises
        :class:`~groupcf.exceptions.InvalidInputError` naming it), then explain the first
        row here, before any dispatch, so that an unsupported model or a bad option value
        raises once (:func:`_probe`). Afterwards only a row's own failures are recorded
        per row (``error`` column).
    **method_options
        Passed to :func:`groupcf.explain` (``n``, ``threshold``, ``solver``,
        ``time_limit``, ``distance``, ``data``, the method's options).

    Returns
    -------
    ExplanationSet
        ``.table`` (one row per person: status, found, distance, features changed,
        probability, time, error), ``.counterfactuals``, ``.failed``, ``.audit(...)``.

    Raises
    ------
    InvalidInputError
        ``X`` is not a DataFrame or its index is not unique, an unknown method, backend
        or option, a bad option value.
    UnsupportedModelError
        The method needs an embedding the model has none of.

    Examples
    --------
    >>> res = gcf.explain_many(rejected, pipe, Tmax=2, n_jobs=2)             # doctest: +SKIP
    >>> res.table["found"].mean(), res.audit(X, by="sex").groups             # doctest: +SKIP
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
    probe_t, probe_c = _probe(todo, model, method, method_options) if validate else (None, [])
    if probe_t is not None:
        if ck is not None:
            _write_part(ck, probe_t, probe_c)
        todo = todo.iloc[len(probe_t):]
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
    if probe_t is not None:
        tables.append(probe_t)
        if probe_c:
            cfs.append(pd.DataFrame(probe_c))
    for table, cf in it:
        if ck is not None:
            _write_part(ck, table, cf)
        tables.append(table)
        if cf:
            cfs.append(pd.DataFrame(cf))
    table = pd.concat(tables) if tables else pd.DataFrame(columns=TABLE_COLUMNS)
    table = table.reindex(X.index)
    table.index.name = X.index.name
    cf_all = _consistent(pd.concat(cfs, ignore_index=True)) if cfs else pd.DataFrame()
    if len(cf_all):
        order = {k: i for i, k in enumerate(X.index)}
        cf_all = cf_all[cf_all["row"].isin(order)]
        cf_all = (cf_all.assign(_o=cf_all["row"].map(order)).sort_values(["_o", "rank"])
                  .drop(columns="_o").reset_index(drop=True))
    return ExplanationSet(table, cf_all, method, solve_time=time.perf_counter() - t_start, X=X.copy(),
                          model=model)


def _probe(todo: pd.DataFrame, model, method: str, options: dict):
    """Explain the first row here, before any dispatch, so that a call-level failure (an
    unsupported model, a bad option value, a missing solver) raises once instead of
    failing every row. A failure of the first row that is not one of :data:`ROW_ERRORS`
    is raised when the second row fails the same way (or there is no second row);
    otherwise it is that row's own failure and is recorded. Returns the probed rows'
    table and counterfactuals (``(None, [])`` when nothing is left to do)."""
    if not len(todo):
        return None, []
    rows, cfs = [], []
    first = todo.iloc[0]
    try:
        r, c = _explain_row(first, model, method, options, strict=True)
        rows.append(r)
        cfs += c
    except Exception as exc:
        if len(todo) < 2:
            raise
        try:
            r2, c2 = _explain_row(todo.iloc[1], model, method, options, strict=True)
        except Exception as exc2:
            if type(exc2) is type(exc):
                raise exc from None
            r2, c2 = _explain_row(todo.iloc[1], model, method, options)   # two different failures: per row
        rows.append(_explain_row(first, model, method, options)[0])   # row 0's own failure, recorded
        rows.append(r2)
        cfs += c2
    return pd.DataFrame(rows, index=todo.index[:len(rows)], columns=TABLE_COLUMNS), cfs


def _is_client(backend) -> bool:
    return type(backend).__name__ == "Client" and hasattr(backend, "scatter")


def _validate(method: str, options: dict) -> None:
    """Fail fast on a typo, before any work: the method's declared options
    (:func:`groupcf.single.registry.check_options`) and its required ``data=``."""
    spec = check_options(method, options)
    if spec.needs_data and options.get("data") is None:
        raise InvalidInputError(f"method={method!r} needs data= (raw reference rows, e.g. the training data)")
