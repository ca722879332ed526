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
            random_state=None, progress: bool = True, data=None,
            options: MaceOptions | GeCoOptions | PSOOptions | None = None, **method_options) -> Explanation:
    """Counterfactual explanation of one instance that the model rejects.

    The shared vocabulary is in the signature (``Tmax``, ``n``, ``threshold``, ``space``,
    ``solver``, ``time_limit``, ``random_state``, ``progress``, ``data``); a method's own
    options come as ``options=`` (its options object: :class:`MaceOptions`,
    :class:`~groupcf.single.geco.GeCoOptions`, :class:`~groupcf.single.pso.PSOOptions`)
    and/or as keywords. An argument the method cannot honour (``solver`` for GeCo, ...)
    raises :class:`~groupcf.exceptions.InvalidInputError` naming it; nothing is dropped.

    Parameters
    ----------
    x : pandas.Series or pandas.DataFrame
        The instance: a one-row DataFrame or a Series of raw features.
    model : object
        A fitted ``Pipeline(FeatureSpace, classifier)``, or a bare classifier / torch
        module together with ``space=`` (a fitted :class:`~groupcf.FeatureSpace`).
    method : {"mace", "geco", "pso"}, default "mace"
        ``"mace"``: exact nearest counterfactual, solved as a MIP (optimal within the MIP
        gap; ``is_optimal`` and ``lower_bound`` on the result say what was proven).
        ``"geco"``: GeCo's genetic algorithm (:mod:`groupcf.single.geco`) — needs
        ``data=`` (its values are sampled from that data), takes PLAF ``constraints=``
        (:mod:`groupcf.plaf`), returns the top ``n``; GeCo's hyper-parameters (``q``,
        ``m_init``, ``m_mut``, ``alpha``, ...) as keywords. Any classifier with
        ``predict_proba`` works (as a black box without an embedding). ``distance``
        (default: GeCo's own, weighted by ``alpha``, ``beta``, ``gamma``) makes GeCo
        minimise MACE's distance instead, and ``refine=True`` polishes its result (see
        :class:`~groupcf.single.geco.GeCoOptions`).
        ``"pso"``: mixed-discrete particle swarm over the top information-value features
        (:mod:`groupcf.single.pso`, Shekhar et al. 2023) for any classifier with
        ``predict_proba``; needs ``data=``, returns up to ``n`` diverse counterfactuals
        changing at most ``Tmax`` features; options of
        :class:`~groupcf.single.pso.PSOOptions` as keywords. By default it minimises the
        proximity the paper reports (mean change in median absolute deviations of ``data``,
        eq. 8) plus sparsity, not the paper's Gower objective (``scale="range"``).
        A new method registers itself with :func:`groupcf.single.registry.register_method`.
    Tmax : int or None, default None
        At most this many original features may change (``None``: no limit).
    n : int or None, default None
        Number of counterfactuals (``None``: the method's default, 1 for MACE). For MACE
        each next one differs from all earlier ones in at least one feature (MACE's
        diversity rule), best first (distances non-decreasing); fewer are returned when
        no further distinct counterfactual exists.
    threshold : float, default 0.5
        Probability of the positive class from which an instance is accepted.
    space : FeatureSpace or None, default None
        The fitted feature space when ``model`` is not a pipeline.
    solver : str, Backend or None, default None
        MACE's MIP backend: ``"highs"`` (``None``), ``"gurobi"``, ``"pyomo"``
        (appsi_highs), ``"pyomo:cbc"``, ... or a :class:`~groupcf.solvers.base.Backend`.
    time_limit : float or None, default None
        Seconds (``None``: no limit).
    random_state : int, numpy.random.Generator or None, default None
        Randomness of GeCo and PSO.
    progress : bool, default True
        A progress bar (MACE: over the ``n`` counterfactuals), only when stderr is a
        terminal; methods without a bar ignore it.
    data : pandas.DataFrame or None, default None
        Reference rows (raw features): needed by GeCo and PSO; for a scikit-learn
        preprocessing pipeline also the ranges of the numeric features.
    options : MaceOptions, GeCoOptions, PSOOptions or None, default None
        The method's options object (:class:`MaceOptions`,
        :class:`~groupcf.single.geco.GeCoOptions`, :class:`~groupcf.single.pso.PSOOptions`);
        keywords given beside it override its fields.
    **method_options
        The method's own options as keywords (the fields of its options class). MACE's:

        * ``distance`` — MACE's normalised distance over the original features (default
          ``"l0"``, see :mod:`groupcf.formulations.distances`): ``"l0"`` (fraction of
          features changed), ``"l1"`` (*mean* per-feature distance), ``"linf"`` (largest
          per-feature distance), or a dict of non-negative weights such as
          ``{"l0": 0.1, "l1": 0.9}``. Per-feature distances: 0/1 for binary and
          categorical features, ``|Δ code| / (k - 1)`` for an ordinal one-hot feature with
          ``k`` categories (binned numerics too), ``|Δ| / (high - low)`` for a numeric
          passthrough feature. The same definition is used by :mod:`groupcf.metrics`.
        * ``mip_gap`` — relative gap (default 1e-6 for MACE); ``threads``, ``verbose`` —
          solver threads and log.
        * ``diversity_tol`` — for ``n > 1``: a numeric passthrough feature "differs" from
          an earlier counterfactual when it moves by at least this fraction of its range
          (integer features: by whole units, at least one). Categorical, ordinal and
          binary features differ when their category differs.
        * ``upper_bound``, ``radius``, ``obbt`` — ReLU networks only (speed-ups that keep
          the answer exact; all on by default, :mod:`groupcf.single.net_bound`): a numpy
          upper bound (the exact best single change, a greedy completion and a pair
          search) as the MIP start; its radius (``n = 1``: the box, fixed features, a
          cardinality cut and neuron bounds within the l1 budget it implies; when at most
          one feature can change, the single-change scan is the proof and no MIP is
          solved); second-layer neuron bounds by LP within that radius.

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

    See Also
    --------
    MaceOptions, groupcf.GeCoOptions, groupcf.PSOOptions : the methods' options.
    groupcf.explain_many : many rows, in parallel.

    Notes
    -----
    Plausibility: numeric passthrough features stay inside the training data's range and
    integer ones (``Feature.integer``) take integer values; one-hot features take exactly
    one category; immutable features never change, increase-only ones never decrease.
    Every counterfactual is re-checked with the real model.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> X = pd.DataFrame({"income": [1, 2, 3, 4, 5, 6], "debt": ["hi", "hi", "lo", "hi", "lo", "lo"]})
    >>> pipe = make_pipeline(gcf.FeatureSpace(), LogisticRegression(C=100)).fit(X, [0, 0, 1, 0, 1, 1])
    >>> exp = gcf.explain(X.iloc[0], pipe, distance="l1", n=2)
    >>> exp.counterfactuals            # income in 4 quantile bins: a changed bin shows as its interval
            income debt
    0  [4.75, inf)   hi
    1  [2.25, 3.5)   lo
    >>> [round(d, 4) for d in exp.distances]       # mean per-feature distance: (3/3 + 0) / 2, (1/3 + 1) / 2
    [0.5, 0.6667]
    >>> exp.is_optimal, exp.validate().ok
    (True, True)
    >>> gcf.explain(X.iloc[0], pipe, options=gcf.MaceOptions(distance="l1"), Tmax=1).changes
    [['income']]
    >>> gcf.explain(X.iloc[0], pipe, method="geco", data=X, random_state=0)    # doctest: +SKIP
    >>> gcf.explain(X.iloc[0], pipe, method="mace", q=10)
    Traceback (most recent call last):
    ...
    groupcf.exceptions.InvalidInputError: ...
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
