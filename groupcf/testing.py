"""Public conformance check of a model type, like scikit-learn's ``check_estimator``.

A new model type is done when :func:`check_embedding` passes on a fitted instance: its
embedding (a module in ``groupcf/embeddings/`` plus a registry entry) must reproduce the
model's own output in numpy and as MIP constraints with the inputs fixed, on every
installed solver backend, and its score bounds must contain the scores of sampled points.

>>> from groupcf.testing import check_embedding
>>> report = check_embedding(pipe, X_test)          # doctest: +SKIP
>>> report.ok, report.checked                       # doctest: +SKIP
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .exceptions import InvalidInputError, SolverError, SolverLicenseError, SolverNotInstalledError
from .features import FeatureSpace
from .models import resolve_model
from .results.base import ValidationReport
from .solvers import available_backends, make_backend
from .solvers.base import VarType

__all__ = ["check_embedding"]

#: backends tried when ``backends`` is not given (each only when installed)
DEFAULT_BACKENDS = ("highs", "pyomo", "gurobi")


def _tol(ref: np.ndarray, atol: float) -> np.ndarray:
    out: np.ndarray = atol * np.maximum(1.0, np.abs(ref))
    return out


def check_embedding(model: Any, X: pd.DataFrame, space: FeatureSpace | None = None, *,
                    backends: Sequence[str] | None = None, n_points: int = 10, atol: float = 1e-6,
                    random_state: Any = 0, raise_on_error: bool = True) -> ValidationReport:
    """Check that groupcf embeds ``model`` exactly.

    Parameters
    ----------
    model
        A fitted ``Pipeline(FeatureSpace, classifier)``, or a classifier / torch module
        with ``space=``.
    X
        Raw rows (a DataFrame) the model scores; a sample of them is used.
    space
        The fitted :class:`~groupcf.FeatureSpace` when ``model`` is not a pipeline.
    backends
        Solver backends for the MIP check (default: HiGHS, Pyomo and Gurobi, each when
        installed; Gurobi's size-limited licence is reported, not failed).
    n_points
        Rows used by the MIP check (every row of the sample is used by the numpy checks).
    atol
        Tolerance, relative to ``max(1, |value|)``.
    random_state
        Sampling of rows, fixed columns and domain points.
    raise_on_error
        Raise ``AssertionError`` (with the report's text) when a check fails (default), as
        scikit-learn's ``check_estimator`` does; otherwise return the failing report.

    Returns
    -------
    ValidationReport
        The checks run (``checked``) and what failed (``failures``).

    Raises
    ------
    InvalidInputError
        ``X`` is not a DataFrame of raw rows, or no space is known.
    UnsupportedModelError
        No embedding is registered for the model.
    AssertionError
        A check failed (with ``raise_on_error``).

    Notes
    -----
    The checks:

    1. numpy: the embedding's probability (``score_to_proba(score(Z))``) equals the real
       model's ``predict_proba`` on every row, and its decisions agree away from the cut;
    2. partial evaluation: fixing a random subset of columns and scoring the rest gives the
       same scores;
    3. MIP with the inputs fixed, on every installed backend: the score variable equals the
       numpy score;
    4. score bounds over the input domain contain the scores of the rows and of random
       points of the domain.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from groupcf.testing import check_embedding
    >>> X = pd.DataFrame({"a": [0.0, 1.5, 2.0, 3.5, 4.0, 5.0], "b": ["u", "v", "u", "v", "w", "v"]})
    >>> pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), LogisticRegression())
    >>> pipe = pipe.fit(X, [0, 0, 1, 0, 1, 1])
    >>> report = check_embedding(pipe, X, backends=["highs"])
    >>> report.ok, report.n_items
    (True, 6)
    """
    if not isinstance(X, pd.DataFrame) or not len(X):
        raise InvalidInputError("check_embedding needs X: a non-empty DataFrame of raw rows the model scores")
    rng = np.random.default_rng(random_state)
    tm = resolve_model(model, space=space)
    space, emb = tm.space, tm.embedding
    assert space is not None and emb is not None   # resolve_model raises otherwise
    sample = X.iloc[rng.permutation(len(X))[: max(n_points, min(len(X), 200))]]
    Z = space.transform(sample)
    domain = space.domain()
    name = type(emb).__name__
    rep = ValidationReport(n_items=len(sample))

    # 1. numpy against the real model
    rep.checked.append(f"numpy: {name}'s probability equals the model's predict_proba on {len(sample)} rows")
    s = emb.score(Z)
    p_emb, p_real = emb.score_to_proba(s), tm.proba(sample)
    bad = np.flatnonzero(np.abs(p_emb - p_real) > _tol(p_real, atol))
    if len(bad):
        i = bad[0]
        rep.failures.append(f"numpy: {len(bad)} row(s) differ from the model, e.g. row {sample.index[i]!r}: "
                            f"embedding p = {p_emb[i]:.9g}, model p = {p_real[i]:.9g}")
    cut = emb.score_threshold(0.5)
    clear = np.abs(p_real - 0.5) > 10 * atol
    disagree = np.flatnonzero(clear & ((s >= cut) != (p_real >= 0.5)))
    if len(disagree):
        rep.failures.append(f"numpy: {len(disagree)} decision(s) differ from the model's")

    # 2. partial evaluation
    rep.checked.append("partial evaluation: fixing columns and scoring the others gives the same scores")
    for i in range(min(3, len(Z))):
        fixed = np.sort(rng.choice(Z.shape[1], size=max(1, Z.shape[1] // 2), replace=False))
        free = np.setdiff1d(np.arange(Z.shape[1]), fixed)
        part = emb.partial(fixed.tolist(), Z[i, fixed].tolist())
        got = part.score(Z[[i]][:, free]) if len(free) else part.score(np.zeros((1, 0)))
        if abs(float(got[0]) - s[i]) > _tol(np.array([s[i]]), atol)[0]:
            rep.failures.append(f"partial: row {sample.index[i]!r} scores {float(got[0]):.9g} with columns "
                                f"{fixed.tolist()} fixed, {s[i]:.9g} in full")

    # 3. MIP with the inputs fixed, on every installed backend
    names = [b for b in (backends or DEFAULT_BACKENDS) if backends is not None or b in available_backends()]
    for b in names:
        rep.checked.append(f"MIP ({b}): with the inputs fixed, the score variable equals the score")
        try:
            for i in range(min(n_points, len(Z))):
                be = make_backend(b)
                vtype = [VarType.BINARY if k else VarType.CONTINUOUS for k in domain.integer]
                x = np.asarray(be.add_vars(domain.n, lb=Z[i], ub=Z[i], vtype=vtype))
                c = emb.add_to(be, x, domain)
                sol = be.solve()
                if not sol.status.has_solution or sol.x is None:
                    rep.failures.append(f"MIP ({b}): row {sample.index[i]!r}: no solution ({sol.status.value})")
                    continue
                v = float(sol.x[c.score])
                if abs(v - s[i]) > max(_tol(np.array([s[i]]), atol)[0], 1e-5 * max(1.0, abs(s[i]))):
                    rep.failures.append(f"MIP ({b}): row {sample.index[i]!r}: score variable {v:.9g}, "
                                        f"numpy score {s[i]:.9g}")
        except SolverLicenseError as exc:
            rep.checked[-1] += f" (not run: licence limit: {exc})"
        except SolverNotInstalledError as exc:
            rep.failures.append(f"MIP ({b}): backend not installed: {exc}")
        except SolverError as exc:
            rep.failures.append(f"MIP ({b}): {type(exc).__name__}: {exc}")

    # 4. score bounds contain sampled scores
    rep.checked.append("score bounds over the input domain contain the scores of the rows and of random points")
    try:
        lo, hi = emb.score_bounds(domain.lb, domain.ub)
    except NotImplementedError:
        rep.checked[-1] += f" (not run: {name} does not bound its score)"
    else:
        S = np.concatenate([s, emb.score(domain.sample(200, rng))])
        out = np.flatnonzero((lo - _tol(S, atol) > S) | (hi + _tol(S, atol) < S))
        if len(out):
            rep.failures.append(f"bounds: {len(out)} sampled score(s) outside [{lo:.6g}, {hi:.6g}], "
                                f"e.g. {S[out[0]]:.6g}")
    if raise_on_error and not rep.ok:
        raise AssertionError(f"check_embedding({type(tm.model).__name__}) failed:\n{rep.summary()}")
    return rep


def registered_model_types() -> list[type[Any]]:
    """The model types with a registered embedding (frameworks already imported).

    Returns
    -------
    list of type
        The classes :func:`check_embedding` (and every method) can embed.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from groupcf.testing import registered_model_types
    >>> LogisticRegression in registered_model_types()
    True
    """
    from .embeddings.registry import registered_types

    return registered_types()


__all__ += ["registered_model_types"]
