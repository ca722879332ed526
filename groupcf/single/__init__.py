"""Single-instance counterfactuals: ``gcf.explain``."""
from __future__ import annotations

from ..exceptions import InvalidInputError, NotRejectedError
from ..formulations.distances import parse_distance
from ..models import DEFAULT_MARGIN, resolve_model
from ..results.explanation import Explanation
from .geco import explain_geco
from .mace import DIVERSITY_TOL, mace, validate_instance
from .pso import explain_pso

METHODS = ("mace", "geco", "pso")


def explain(x, model, method: str = "mace", distance=None, Tmax: int | None = None,
            solver="highs", space=None, *, threshold: float = 0.5, n: int = 1,
            time_limit: float | None = None, mip_gap: float | None = None,
            margin: float = DEFAULT_MARGIN, diversity_tol: float = DIVERSITY_TOL,
            data=None, constraints=None, k: int = 5, random_state=None,
            **options) -> Explanation:
    """Counterfactual explanation of one instance that the model rejects.

    Parameters
    ----------
    x
        The instance: a one-row DataFrame or a Series of raw features.
    model
        A fitted ``Pipeline(FeatureSpace, classifier)``, or a bare classifier / torch
        module together with ``space=`` (a fitted :class:`~groupcf.FeatureSpace`).
    method
        ``"mace"``: exact nearest counterfactual, solved as a MIP (optimal within the MIP
        gap; ``is_optimal`` and ``dual_bound`` on the result say what was proven).
        ``"geco"``: GeCo's genetic algorithm (:mod:`groupcf.single.geco`) — needs
        ``data=`` (its values are sampled from that data), takes PLAF ``constraints=``
        (:mod:`groupcf.plaf`), returns the top ``k``; ``random_state`` and GeCo's
        hyper-parameters (``q``, ``m_init``, ``m_mut``, ``alpha``, ...) as keywords. Any
        classifier with ``predict_proba`` works (as a black box without an embedding).
        MACE's ``Tmax``, ``solver``, ``n``, ... do not apply; ``distance`` (default: GeCo's
        own, weighted by ``alpha``, ``beta``, ``gamma``) makes GeCo minimise MACE's
        distance instead, and ``refine=True`` polishes its result (see
        :class:`~groupcf.single.geco.GeCoParams`).
        ``"pso"``: mixed-discrete particle swarm over the top information-value features
        (:mod:`groupcf.single.pso`, Shekhar et al. 2023) for any classifier with
        ``predict_proba``; needs ``data=``, returns up to ``n`` diverse counterfactuals;
        options of :class:`~groupcf.single.pso.PSOParams` as keywords.
    distance
        MACE's normalised distance over the original features (default ``"l0"``) (see
        :mod:`groupcf.formulations.distances`): ``"l0"`` (fraction of features changed),
        ``"l1"`` (*mean* per-feature distance), ``"linf"`` (largest per-feature distance),
        or a dict of non-negative weights such as ``{"l0": 0.1, "l1": 0.9}``. Per-feature
        distances: 0/1 for binary and categorical features, ``|Δ code| / (k - 1)`` for an
        ordinal one-hot feature with ``k`` categories (binned numerics too),
        ``|Δ| / (high - low)`` for a numeric passthrough feature. The same definition is
        used by :mod:`groupcf.metrics`.
    Tmax
        At most this many original features may change (``None``: no limit).
    solver
        ``"highs"`` (default), ``"gurobi"``, ``"pyomo"`` (appsi_highs), ``"pyomo:cbc"``,
        ... or a :class:`~groupcf.solvers.base.Backend`.
    threshold
        Probability of the positive class from which an instance is accepted.
    n
        Number of counterfactuals; each next one differs from all earlier ones in at least
        one feature (MACE's diversity rule), best first (distances non-decreasing). Fewer
        are returned when no further distinct counterfactual exists.
    time_limit, mip_gap
        Solver limits (seconds; relative gap, default 1e-6 for MACE).
    diversity_tol
        For ``n > 1``: a numeric passthrough feature "differs" from an earlier
        counterfactual when it moves by at least this fraction of its range (integer
        features: by whole units, at least one). Categorical, ordinal and binary features
        differ when their category differs.

    Plausibility: numeric passthrough features stay inside the training data's range and
    integer ones (``Feature.integer``) take integer values; one-hot features take exactly
    one category; immutable features never change, increase-only ones never decrease.

    Returns an :class:`~groupcf.results.explanation.Explanation`. Raises
    :class:`~groupcf.exceptions.NoCounterfactualError` when no counterfactual exists within
    ``Tmax`` under the actionability and plausibility constraints (the MIP is proven
    infeasible: a counterfactual is returned whenever one exists, never a wrong one),
    :class:`NotRejectedError` when the model already accepts ``x``,
    :class:`~groupcf.exceptions.InvalidInputError` for an unknown method or distance
    name, or negative distance weights. Every counterfactual is re-checked with the real
    model.
    """
    if method not in METHODS:
        raise InvalidInputError(f"unknown method {method!r}; available: {list(METHODS)}")
    if method == "geco":
        if time_limit is not None:
            options.setdefault("time_limit", time_limit)
        if distance is not None:
            options.setdefault("distance", distance)
        return explain_geco(x, model, data=data, constraints=constraints, k=k,
                            random_state=random_state, space=space, threshold=threshold, **options)
    if method == "pso":   # mixed-discrete PSO (groupcf.single.pso); its options as keywords
        return explain_pso(x, model, data=data, n=n, space=space, threshold=threshold,
                           random_state=random_state, **options)
    if distance is None:
        distance = "l0"
    parse_distance(distance)  # validates: named InvalidInputError
    if Tmax is not None and (int(Tmax) != Tmax or Tmax < 1):
        raise InvalidInputError(f"Tmax must be a positive integer or None, got {Tmax!r}")
    if int(n) != n or n < 1:
        raise InvalidInputError(f"n must be a positive integer, got {n!r}")
    tm = resolve_model(model, space=space, threshold=threshold)
    x = validate_instance(x, tm.space)
    if tm.is_positive(x.to_frame().T)[0]:
        raise NotRejectedError(f"the model already accepts instance {x.name!r} "
                               f"(p = {tm.proba(x.to_frame().T)[0]:.3f} >= {threshold}); nothing to explain")
    return mace(x, tm, distance=distance, Tmax=Tmax, solver=solver, n=int(n), time_limit=time_limit,
                mip_gap=mip_gap, margin=margin, diversity_tol=diversity_tol, **options)


__all__ = ["explain", "Explanation"]
