"""Single-instance counterfactuals: ``gcf.explain``."""
from __future__ import annotations

import pandas as pd

from ..exceptions import InvalidInputError, NotRejectedError
from ..models import DEFAULT_MARGIN, resolve_model
from ..results.explanation import Explanation
from .mace import mace_l0, validate_instance

METHODS = ("mace",)


def explain(x, model, method: str = "mace", distance="l0", Tmax: int | None = None,
            solver="highs", space=None, *, threshold: float = 0.5, n: int = 1,
            time_limit: float | None = None, mip_gap: float | None = None,
            margin: float = DEFAULT_MARGIN, **options) -> Explanation:
    """Counterfactual explanation of one instance that the model rejects.

    Parameters
    ----------
    x
        The instance: a one-row DataFrame or a Series of raw features.
    model
        A fitted ``Pipeline(FeatureSpace, classifier)``, or a bare classifier / torch
        module together with ``space=`` (a fitted :class:`~groupcf.FeatureSpace`).
    method
        ``"mace"``: exact nearest counterfactual, solved as a MIP.
    distance
        ``"l0"``: number of changed original features.
    Tmax
        At most this many original features may change (``None``: no limit).
    solver
        ``"highs"`` (default), ``"gurobi"``, ``"pyomo"`` (appsi_highs), ``"pyomo:cbc"``,
        ... or a :class:`~groupcf.solvers.base.Backend`.
    threshold
        Probability of the positive class from which an instance is accepted.
    n
        Number of counterfactuals; each next one differs from all earlier ones in at least
        one feature (MACE's diversity rule), best first.

    Returns an :class:`~groupcf.results.explanation.Explanation`. Raises
    :class:`~groupcf.exceptions.NoCounterfactualError` when no counterfactual exists within
    ``Tmax`` under the actionability constraints, :class:`NotRejectedError` when the model
    already accepts ``x``. Every counterfactual is re-checked with the real model.
    """
    if method not in METHODS:
        raise InvalidInputError(f"unknown method {method!r}; available: {list(METHODS)}")
    if distance != "l0":
        raise InvalidInputError(f"distance {distance!r} is not supported yet; available: 'l0'")
    if Tmax is not None and (int(Tmax) != Tmax or Tmax < 1):
        raise InvalidInputError(f"Tmax must be a positive integer or None, got {Tmax!r}")
    if int(n) != n or n < 1:
        raise InvalidInputError(f"n must be a positive integer, got {n!r}")
    tm = resolve_model(model, space=space, threshold=threshold)
    x = validate_instance(x, tm.space)
    if tm.is_positive(x.to_frame().T)[0]:
        raise NotRejectedError(f"the model already accepts instance {x.name!r} "
                               f"(p = {tm.proba(x.to_frame().T)[0]:.3f} >= {threshold}); nothing to explain")
    return mace_l0(x, tm, Tmax=Tmax, solver=solver, n=int(n), time_limit=time_limit,
                   mip_gap=mip_gap, margin=margin, **options)


__all__ = ["explain", "Explanation"]
