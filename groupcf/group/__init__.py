"""One-for-many group counterfactuals: ``gcf.explain_group``."""
from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import GroupCFWarning, InvalidInputError, NoCounterfactualError
from ..models import DEFAULT_MARGIN, resolve_model
from ..options import Options, nearest_names, positional_tmax
from ..progress import show_progress
from ..results.group import GroupExplanation
from ..solvers import make_backend
from ..solvers.base import Status
from .colgen import ColgenOptions, column_generation
from .compact import CompactOptions, compact_mip
from .problem import GroupProblem

log = logging.getLogger(__name__)

#: method name -> (algorithm, its options dataclass)
METHODS: dict[str, tuple[Callable[..., Any], type[Options]]] = {
    "colgen": (column_generation, ColgenOptions), "compact": (compact_mip, CompactOptions)}


def method_options(method: str, options: dict):
    """The options dataclass of ``method`` built from ``options`` (its fields as keywords,
    and/or ``options=`` an instance of it); an unknown or inapplicable option raises
    :class:`InvalidInputError` naming it, the nearest valid one and the accepted ones."""
    cls = METHODS[method][1]
    options = dict(options)
    obj = options.pop("options", None)
    accepted = cls.field_names()
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        others = [m for m, (_, c) in METHODS.items() if m != method and set(unknown) <= set(c.field_names())]
        hint = f" (an option of method={others[0]!r})" if others else ""
        named = ", ".join(f"{u!r}{nearest_names(u, accepted)}" for u in unknown)
        raise InvalidInputError(
            f"explain_group(method={method!r}) does not accept the option(s) {named}{hint}; "
            f"accepted: {accepted if accepted else 'none'}")
    return cls.from_kwargs(obj, owner=f"explain_group(method={method!r})", **options)


def explain_group(S: pd.DataFrame, model, *args, Tmax: int | None = None, space=None,
                  method: str = "colgen", solver="highs", threshold: float = 0.5,
                  time_limit: float | None = None, progress: bool = True, allow_partial: bool = False,
                  margin: float = DEFAULT_MARGIN, **options) -> GroupExplanation:
    """The fewest counterfactual points that explain every instance of ``S``.

    Each counterfactual is classified positive and shared by a subgroup of ``S``; every
    member of the subgroup reaches it by changing only features of one common set of at
    most ``Tmax`` original features (immutable features never; increase-only features
    never downwards).

    Parameters
    ----------
    S : pandas.DataFrame
        DataFrame of raw features; every row must be rejected by the model.
    model : object
        A fitted ``Pipeline(FeatureSpace, classifier)``, or a classifier / torch module
        with ``space=``.
    *args
        ``Tmax`` given positionally (the old signature): still works for one release,
        with a :class:`FutureWarning`.
    Tmax : int or None, default None
        Most original features one explanation may change (keyword; ``None``: no limit,
        i.e. every mutable feature may change).
    space : FeatureSpace or None, default None
        The fitted feature space when ``model`` is not a pipeline.
    method : {"colgen", "compact"}, default "colgen"
        ``"colgen"`` (column generation) or ``"compact"`` (the compact MIP).
    solver : str or Backend, default "highs"
        ``"highs"``, ``"gurobi"``, ``"pyomo"``, ``"pyomo:cbc"``, ... or a Backend.
    threshold : float, default 0.5
        Probability of the positive class from which an instance is accepted.
    time_limit : float or None, default None
        Seconds, overall. The best solution found is returned with its lower bound
        (status ``time_limit`` unless proven optimal); it never raises for lack of time.
        Instances the limit left without any counterfactual (only when even the cheap
        greedy completion fails for them) are listed in ``result.unexplained`` with a
        :class:`~groupcf.exceptions.GroupCFWarning`.
    progress : bool, default True
        Show the phases' progress bars (only on a terminal).
    allow_partial : bool, default False
        Explain what can be explained and list the instances without any counterfactual
        within ``Tmax`` in ``result.unexplained`` (otherwise: ``NoCounterfactualError``).
    margin : float
        Score margin by which a counterfactual must be accepted in the MIPs (against
        solver tolerances; enlarged when the real model disagrees).
    **options
        The method's options, as keywords or as ``options=`` (its options object), checked against its options dataclass
        (colgen: :class:`~groupcf.group.colgen.ColgenOptions` — ``n_solutions``, ``aux``,
        ``ip_every``, ``max_iterations``, ``pricing="seed"|"mip"``, ``seed_mode``,
        ``max_change_sets``, ``max_enumerated_sets``; compact:
        :class:`~groupcf.group.compact.CompactOptions`, none). An unknown or inapplicable
        option raises :class:`~groupcf.exceptions.InvalidInputError` naming it.

    Returns
    -------
    GroupExplanation
        ``counterfactuals`` (one row per explanation, raw values), ``assignment`` (row of
        ``S`` → explanation), ``changed_features``, ``n_explanations``, ``lower_bound``,
        ``is_optimal``, ``status``, ``unexplained``; ``validate()`` re-checks it all.

    Raises
    ------
    NotRejectedError
        Some row of ``S`` is already accepted.
    NoCounterfactualError
        Some row has no counterfactual within ``Tmax`` (unless ``allow_partial``).
    InvalidInputError, UnsupportedModelError, SolverNotInstalledError
        Bad input, a model without an embedding, an unknown or missing solver.

    Examples
    --------
    >>> res = gcf.explain_group(S, pipe, Tmax=2)                        # doctest: +SKIP
    >>> res.n_explanations, res.lower_bound, res.is_optimal             # doctest: +SKIP
    >>> res.counterfactuals, res.assignment, res.validate()             # doctest: +SKIP
    """
    Tmax = positional_tmax("explain_group", args, Tmax)
    if method not in METHODS:
        raise InvalidInputError(f"unknown method {method!r}{nearest_names(method, METHODS)}; "
                                f"available: {sorted(METHODS)}")
    opts = method_options(method, options)
    t0 = time.perf_counter()
    tm = resolve_model(model, space=space, threshold=threshold)
    make_backend(solver)  # fail fast: not installed / unknown name
    assert tm.space is not None   # resolve_model (no black box) found the model's space
    if Tmax is None:
        Tmax = max(1, sum(not f.immutable for f in tm.space))
    problem = GroupProblem(S, tm, Tmax, margin=margin)
    algorithm = METHODS[method][0]
    sol = algorithm(problem, solver=solver, time_limit=time_limit, progress=show_progress(progress),
                    options=opts)
    unreached = problem.unreached[problem.type_of_row]
    late_rows = S.index[unreached].tolist()
    proven_none = sol.unexplained_types[problem.type_of_row] & ~unreached
    unexplained_rows = S.index[proven_none].tolist()
    if late_rows:
        warnings.warn(f"the time limit passed before {len(late_rows)} instance(s) of S had any counterfactual: rows "
                      f"{late_rows[:20]}{' ...' if len(late_rows) > 20 else ''}; the answer explains the others "
                      "(result.unexplained lists them; raise time_limit to explain everyone)",
                      GroupCFWarning, stacklevel=2)
    if unexplained_rows and not allow_partial:
        raise NoCounterfactualError(
            f"{len(unexplained_rows)} instance(s) of S have no counterfactual within Tmax={Tmax} "
            f"under the actionability constraints: rows {unexplained_rows[:20]}"
            f"{' ...' if len(unexplained_rows) > 20 else ''}; pass allow_partial=True to explain the rest",
            rows=unexplained_rows)
    res = _build_result(problem, sol, S, tm, method, solver, time.perf_counter() - t0, unexplained_rows + late_rows)
    if late_rows:
        res.is_optimal, res.status = False, Status.TIME_LIMIT
        res.stats["unreached_rows"] = len(late_rows)
    return res


def _build_result(problem, sol, S, tm, method, solver, elapsed, unexplained_rows) -> GroupExplanation:
    space = tm.space
    cols = sol.columns
    # assign each type to the first chosen column covering it
    type_to_k = np.full(problem.n_types, -1, dtype=int)
    for k, col in enumerate(cols):
        free = (type_to_k < 0) & col.cover
        type_to_k[free] = k
    used = [k for k in range(len(cols)) if (type_to_k == k).any()]
    remap = {k: j for j, k in enumerate(used)}
    cols = [cols[k] for k in used]
    type_to_k = np.array([remap.get(k, -1) for k in type_to_k])
    assignment = pd.Series(type_to_k[problem.type_of_row], index=S.index, name="explanation")
    changed = {}
    for k, col in enumerate(cols):
        members = type_to_k == k
        diff = problem.differences(col.v)[members]
        changed[k] = [space.features_[l].name for l in np.flatnonzero(diff.any(axis=0))]
    V = np.array([c.v for c in cols]).reshape(len(cols), space.n_features_out_)
    cfs = space.inverse_transform(V) if len(cols) else pd.DataFrame(columns=S.columns)
    n = len(cols)
    lower = min(sol.lower_bound, n)
    optimal = n <= sol.lower_bound
    status = Status.OPTIMAL if optimal else sol.status
    return GroupExplanation(
        n_explanations=n, lower_bound=int(lower), is_optimal=bool(optimal), status=status,
        counterfactuals=cfs, assignment=assignment, changed_features=changed, Tmax=int(problem.Tmax),
        method=method, solver=getattr(solver, "name", str(solver)), solve_time=elapsed, S=S.copy(),
        expanded=V, unexplained=unexplained_rows, stats=sol.stats.as_dict(), model=tm)


__all__ = ["ColgenOptions", "CompactOptions", "GroupExplanation", "explain_group"]
