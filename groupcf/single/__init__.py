"""Single-instance counterfactuals: ``gcf.explain``."""
from __future__ import annotations

from ..exceptions import NotRejectedError
from ..features.validation import validate_instance
from ..models import reference_space, resolve_model
from ..results.explanation import Explanation
from . import searches  # noqa: F401  (registers MACE's numpy searches with the embedding protocol)
from .geco import GeCoOptions, explain_geco
from .mace import MaceOptions, mace
from .pso import PSOOptions, explain_pso
from .registry import check_options, methods, register_method


def _explain_mace(x, model, *, space=None, threshold: float = 0.5, options: MaceOptions | None = None,
                  **kwargs) -> Explanation:
    opts = MaceOptions.from_kwargs(options, owner="method='mace'", **kwargs)
    tm = resolve_model(model, space=space, threshold=threshold)
    x = validate_instance(x, tm.space)
    if tm.is_positive(x.to_frame().T)[0]:
        raise NotRejectedError(f"the model already accepts instance {x.name!r} "
                               f"(p = {tm.proba(x.to_frame().T)[0]:.3f} >= {threshold}); nothing to explain")
    kw = opts.to_dict()
    kw["distance"] = kw["distance"] if kw["distance"] is not None else "l0"
    for name in ("threads", "verbose"):     # solver options: passed only when set
        if kw[name] in (None, False):
            del kw[name]
    return mace(x, tm, **kw)


register_method("mace", _explain_mace, MaceOptions)
register_method("geco", explain_geco, GeCoOptions, needs_data=True,
                extra=("data", "constraints", "random_state"))
register_method("pso", explain_pso, PSOOptions, needs_data=True,
                extra=("data", "n", "random_state", "progress"))

#: names of the registered methods (``groupcf.single.registry.methods()`` is the live list)
METHODS = tuple(methods())


def explain(x, model, method: str = "mace", *, Tmax: int | None = None, n: int | None = None,
            threshold: float = 0.5, space=None, solver=None, time_limit: float | None = None,
            random_state=None, progress: bool = True, data=None, options=None,
            **method_options) -> Explanation:
    """Counterfactual explanation of one instance that the model rejects.

    The shared vocabulary is in the signature (``Tmax``, ``n``, ``threshold``, ``space``,
    ``solver``, ``time_limit``, ``random_state``, ``progress``, ``data``); a method's own
    options come as ``options=`` (its options object: :class:`MaceOptions`,
    :class:`~groupcf.single.geco.GeCoOptions`, :class:`~groupcf.single.pso.PSOOptions`)
    and/or as keywords. An argument the method cannot honour (``solver`` for GeCo, ...)
    raises :class:`~groupcf.exceptions.InvalidInputError` naming it; nothing is dropped.

    Parameters
    ----------
    x
        The instance: a one-row DataFrame or a Series of raw features.
    model
        A fitted ``Pipeline(FeatureSpace, classifier)``, or a bare classifier / torch
        module together with ``space=`` (a fitted :class:`~groupcf.FeatureSpace`).
    method
        ``"mace"``: exact nearest counterfactual, solved as a MIP (optimal within the MIP
        gap; ``is_optimal`` and ``lower_bound`` on the result say what was proven).
        ``"geco"``: GeCo's genetic algorithm (:mod:`groupcf.single.geco`) — needs
        ``data=`` (its values are sampled from that data), takes PLAF ``constraints=``
        (:mod:`groupcf.plaf`), returns the top ``k``; ``random_state`` and GeCo's
        hyper-parameters (``q``, ``m_init``, ``m_mut``, ``alpha``, ...) as keywords. Any
        classifier with ``predict_proba`` works (as a black box without an embedding).
        An option GeCo does not take (MACE's ``solver``, ``n``, ...) raises
        :class:`~groupcf.exceptions.InvalidInputError`; ``distance`` (default: GeCo's
        own, weighted by ``alpha``, ``beta``, ``gamma``) makes GeCo minimise MACE's
        distance instead, and ``refine=True`` polishes its result (see
        :class:`~groupcf.single.geco.GeCoOptions`).
        ``"pso"``: mixed-discrete particle swarm over the top information-value features
        (:mod:`groupcf.single.pso`, Shekhar et al. 2023) for any classifier with
        ``predict_proba``; needs ``data=``, returns up to ``n`` diverse counterfactuals
        changing at most ``Tmax`` features; options of
        :class:`~groupcf.single.pso.PSOOptions` as keywords. By default it minimises the
        proximity the paper reports (mean change in median absolute deviations of ``data``,
        eq. 8) plus sparsity, not the paper's Gower objective (``scale="range"``).
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
    threads, verbose, progress
        Solver threads and log; ``progress=True`` shows a bar over the ``n``
        counterfactuals (only when stderr is a terminal).
    diversity_tol
        For ``n > 1``: a numeric passthrough feature "differs" from an earlier
        counterfactual when it moves by at least this fraction of its range (integer
        features: by whole units, at least one). Categorical, ordinal and binary features
        differ when their category differs.
    upper_bound, radius, obbt, distance_cuts
        Speed-ups that keep the answer exact (all on by default). ``upper_bound``: a numpy
        upper bound as the MIP start (ReLU networks: the exact best single change, a
        greedy completion and a pair search, :mod:`groupcf.single.net_bound`; tree
        ensembles: single changes, pairs and triples, :mod:`groupcf.single.tree_bound`);
        ``radius``: its radius (``n = 1``: the box, fixed features and a cardinality cut;
        networks: neuron bounds within the l1 budget it implies; trees: the MIP is built
        over the box only, trees whose leaf cannot change there are constants; when at
        most one feature can change, the single-change scan is the proof and no MIP is
        solved); ``obbt`` (networks): second-layer neuron bounds by LP within that
        radius; ``distance_cuts`` (trees): each tree's leaves weighted by how far their
        cell lies from the instance, a lower bound on the distance.

    Plausibility: numeric passthrough features stay inside the training data's range and
    integer ones (``Feature.integer``) take integer values; one-hot features take exactly
    one category; immutable features never change, increase-only ones never decrease.

    Every counterfactual is re-checked with the real model.

    Returns
    -------
    Explanation
        The counterfactual(s), best first, with what was proven.

    Raises
    ------
    NoCounterfactualError
        No counterfactual exists within ``Tmax`` under the actionability and plausibility
        constraints (for MACE the MIP is proven infeasible: a counterfactual is returned
        whenever one exists, never a wrong one).
    NotRejectedError
        The model already accepts ``x``.
    InvalidInputError
        An unknown method or distance name, negative distance weights, or an option the
        method does not take (the message names it, the nearest valid one and the method's
        options: :class:`MaceOptions`, :class:`~groupcf.single.geco.GeCoOptions`,
        :class:`~groupcf.single.pso.PSOOptions`; a new method registers itself with
        :func:`groupcf.single.registry.register_method`).

    Examples
    --------
    >>> exp = gcf.explain(x, pipe, method="mace", distance="l1", Tmax=3)    # doctest: +SKIP
    >>> print(exp.summary()); exp.validate()                                # doctest: +SKIP
    """
    given = {"Tmax": Tmax, "n": n, "solver": solver, "time_limit": time_limit,
             "random_state": random_state, "data": data, "options": options}
    kw = {k: v for k, v in given.items() if v is not None}
    kw.update(method_options)
    spec = check_options(method, kw)
    if space is None and data is not None:   # scikit-learn preprocessing: ranges from the reference rows
        space = reference_space(model, data)
    if "progress" in spec.accepted:      # a user-interface switch: methods without a bar ignore it
        kw["progress"] = progress
    return spec.function(x, model, threshold=threshold, space=space, **kw)


__all__ = ["Explanation", "MaceOptions", "explain", "methods", "register_method"]
