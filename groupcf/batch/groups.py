"""``gcf.explain_groups``: one group explanation (:func:`groupcf.explain_group`) per
subgroup of ``X`` (e.g. per race), in parallel on joblib or Dask, with a comparison table."""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..exceptions import InvalidInputError, NotRejectedError
from ..group import METHODS, explain_group, method_options
from ..models import resolve_model
from ..options import TIME_LIMIT, TMAX, check_value, positional_tmax
from ..progress import progress_bar
from ..results.sets import GroupExplanationSet


def _one(key, S, model, Tmax, options):
    try:
        return key, explain_group(S, model, Tmax=Tmax, progress=False, **options), ""
    except Exception as exc:  # noqa: BLE001 - one subgroup's failure is recorded
        return key, None, f"{type(exc).__name__}: {exc}"


def explain_groups(X: pd.DataFrame, model, *args, by=None, Tmax: int | None = None, n_jobs: int = 1,
                   backend="loky", progress: bool = True, **options) -> GroupExplanationSet:
    """Run ``explain_group(S, model, Tmax=Tmax, **options)`` for each subgroup ``S`` of
    ``X`` defined by ``by`` (a column name, or labels indexed like ``X``).

    Parameters
    ----------
    X
        Raw rows, every one rejected by the model.
    model
        As for :func:`groupcf.explain_group`.
    *args
        The old call ``explain_groups(X, model, Tmax, by)``: still works for one release,
        with a :class:`FutureWarning`.
    by
        A column of ``X`` or labels indexed like ``X``. ``by`` columns are passed to the
        model too, so a column the model does not use must be given as a Series
        (``by=df["region"]``).
    Tmax
        Most features one explanation may change (``None``: no limit).
    n_jobs, backend
        Parallel execution: ``"loky"`` (joblib processes) or ``"dask"`` (a LocalCluster of
        ``n_jobs`` workers) or a ``dask.distributed.Client``.
    progress
        A bar over the subgroups (terminal only).
    **options
        Passed to :func:`groupcf.explain_group` (``method``, ``solver``, ``time_limit``,
        ``threshold``, the method's options). They are checked once, before any work, and
        the model is resolved once: a typo or an unsupported model raises here, not in
        every subgroup.

    Returns
    -------
    GroupExplanationSet
        ``.results`` (subgroup → :class:`~groupcf.GroupExplanation`, ``None`` when that
        subgroup failed, its error in ``.errors``), ``.table`` (people, explanations,
        explanations per 100 people, features changed per person, certified, error).

    Raises
    ------
    InvalidInputError
        No ``by``, an unknown column, method, backend or option, a bad ``Tmax`` or
        ``time_limit``.
    NotRejectedError
        Some row of ``X`` is already accepted by the model.

    Examples
    --------
    >>> sets = gcf.explain_groups(rejected, pipe, by="race", Tmax=2)        # doctest: +SKIP
    >>> sets.table                  # explanations per 100 people, by race   # doctest: +SKIP
    """
    t0 = time.perf_counter()
    if args:   # old signature explain_groups(X, model, Tmax, by)
        if len(args) == 2 and by is None:
            Tmax, by = positional_tmax("explain_groups", args[:1], Tmax), args[1]
        else:
            Tmax = positional_tmax("explain_groups", args, Tmax)
    if by is None:
        raise InvalidInputError("explain_groups needs by= (a column of X, or labels indexed like X)")
    if "progress" in options:
        raise InvalidInputError("progress is explain_groups' own argument")
    method = options.get("method", "colgen")
    if method not in METHODS:
        raise InvalidInputError(f"unknown method {method!r}; available: {sorted(METHODS)}")
    method_options(method, {k: v for k, v in options.items()
                            if k not in ("method", "solver", "time_limit", "threshold", "space",
                                         "allow_partial", "margin")})
    check_value("explain_groups", "Tmax", Tmax, TMAX)
    check_value("explain_groups", "time_limit", options.get("time_limit"), TIME_LIMIT)
    tm = resolve_model(model, space=options.get("space"), threshold=options.get("threshold", 0.5))  # fail once
    if not isinstance(X, pd.DataFrame):
        raise InvalidInputError("X must be a pandas DataFrame of raw features (one row per person)")
    accepted = np.asarray(tm.is_positive(X), dtype=bool)
    if accepted.any():
        rows = X.index[accepted].tolist()
        raise NotRejectedError(f"{len(rows)} row(s) of X are already accepted by the model, rows {rows[:20]}"
                               f"{' ...' if len(rows) > 20 else ''}; explain_groups explains rejected rows only "
                               "(e.g. X[model.predict(X) == 0])")
    if isinstance(by, str):
        if by not in X.columns:
            raise InvalidInputError(f"unknown column {by!r}: choose one of {list(X.columns)}")
        labels = X[by]
    else:
        labels = pd.Series(by, index=X.index) if not isinstance(by, pd.Series) else by.loc[X.index]
    parts = [(k, X.loc[idx]) for k, idx in labels.groupby(labels, observed=True).groups.items()]
    if _is_client(backend) or backend == "dask":
        from dask.distributed import Client

        from . import check_main_guard, local_cluster
        if not _is_client(backend):
            check_main_guard("explain_groups(backend='dask')")
        own = None if _is_client(backend) else local_cluster(n_jobs)
        client = backend if own is None else Client(own)
        try:
            m = client.scatter(model, broadcast=True)
            futures = [client.submit(_one, k, S, m, Tmax, options, pure=False) for k, S in parts]
            out = [f.result() for f in progress_bar(futures, enabled=progress, total=len(parts),
                                                     desc="explain_groups")]
        finally:
            if own is not None:
                client.close()
                own.close()
    elif backend == "loky":
        from joblib import Parallel, delayed
        jobs = (delayed(_one)(k, S, model, Tmax, options) for k, S in parts)
        out = list(progress_bar(Parallel(n_jobs=n_jobs, backend="loky", return_as="generator")(jobs),
                                enabled=progress, total=len(parts), desc="explain_groups"))
    else:
        raise InvalidInputError(f"unknown backend {backend!r}: use 'loky', 'dask' or a dask Client")
    results, rows, errors = {}, {}, {}
    for (k, S), (_, g, err) in zip(parts, out):
        results[k] = g
        if g is None:
            errors[k] = err
            rows[k] = {"people": len(S), "explanations": None, "per_100": None,
                       "changed_per_person": None, "certified": False, "error": err}
            continue
        changed = sum(len(g.changed_features.get(c, [])) for c in g.assignment.dropna())
        rows[k] = {"people": len(S), "explanations": g.n_explanations,
                   "per_100": 100 * g.n_explanations / len(S),
                   "changed_per_person": changed / len(S), "certified": bool(g.is_optimal), "error": ""}
    table = pd.DataFrame.from_dict(rows, orient="index")
    name = getattr(labels, "name", None)
    table.index.name = name
    return GroupExplanationSet(results, table, errors, by=None if name is None else str(name),
                               solve_time=time.perf_counter() - t0)


def _is_client(backend) -> bool:
    return type(backend).__name__ == "Client" and hasattr(backend, "scatter")
