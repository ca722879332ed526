"""``gcf.explain_groups``: one group explanation (:func:`groupcf.explain_group`) per
subgroup of ``X`` (e.g. per race), in parallel on joblib or Dask, with a comparison table."""
from __future__ import annotations

import pandas as pd

from ..exceptions import InvalidInputError
from ..group import explain_group


def _one(key, S, model, Tmax, options):
    try:
        return key, explain_group(S, model, Tmax, progress=False, **options), ""
    except Exception as exc:  # noqa: BLE001 - one subgroup's failure is recorded
        return key, None, f"{type(exc).__name__}: {exc}"


def explain_groups(X: pd.DataFrame, model, Tmax: int, by, *, n_jobs: int = 1, backend="loky",
                   **options):
    """Run ``explain_group(S, model, Tmax, **options)`` for each subgroup ``S`` of ``X``
    defined by ``by`` (a column name, or labels indexed like ``X``). Returns
    ``(results, table)``: a dict subgroup -> GroupExplanation (None when it failed) and
    a comparison table (people, explanations, explanations per 100 people, features changed
    per person, certified optimal, error). ``by`` columns are passed to the model too, so a
    column the model does not use must be given as a Series (``by=df["region"]``)."""
    if isinstance(by, str):
        if by not in X.columns:
            raise InvalidInputError(f"unknown column {by!r}: choose one of {list(X.columns)}")
        labels = X[by]
    else:
        labels = pd.Series(by, index=X.index) if not isinstance(by, pd.Series) else by.loc[X.index]
    parts = [(k, X.loc[idx]) for k, idx in labels.groupby(labels, observed=True).groups.items()]
    if _is_client(backend) or backend == "dask":
        from dask.distributed import Client, LocalCluster
        own = None if _is_client(backend) else LocalCluster(n_workers=n_jobs, threads_per_worker=1,
                                                            dashboard_address=None)
        client = backend if own is None else Client(own)
        try:
            m = client.scatter(model, broadcast=True)
            out = client.gather([client.submit(_one, k, S, m, Tmax, options, pure=False) for k, S in parts])
        finally:
            if own is not None:
                client.close()
                own.close()
    elif backend == "loky":
        from joblib import Parallel, delayed
        out = Parallel(n_jobs=n_jobs, backend="loky")(delayed(_one)(k, S, model, Tmax, options) for k, S in parts)
    else:
        raise InvalidInputError(f"unknown backend {backend!r}: use 'loky', 'dask' or a dask Client")
    results, rows = {}, {}
    for (k, S), (_, g, err) in zip(parts, out):
        results[k] = g
        if g is None:
            rows[k] = {"people": len(S), "explanations": None, "per_100": None,
                       "changed_per_person": None, "certified": False, "error": err}
            continue
        changed = sum(len(g.changed_features.get(c, [])) for c in g.assignment.dropna())
        rows[k] = {"people": len(S), "explanations": g.n_explanations,
                   "per_100": 100 * g.n_explanations / len(S),
                   "changed_per_person": changed / len(S), "certified": bool(g.is_optimal), "error": ""}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = getattr(labels, "name", None)
    return results, table


def _is_client(backend) -> bool:
    return type(backend).__name__ == "Client" and hasattr(backend, "scatter")
