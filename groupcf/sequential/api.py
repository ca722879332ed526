"""``gcf.explain_sequence``: consequence-aware sequential counterfactuals."""
from __future__ import annotations

import logging
import numbers
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from groupcf.exceptions import (
    InvalidInputError,
    NoCounterfactualError,
    NotRejectedError,
)
from groupcf.models import resolve_encoded
from groupcf.options import PROBABILITY, TIME_LIMIT, TMAX, Interval, Options, check_value, rename_deprecated
from groupcf.results.base import Stats
from groupcf.results.sequence import SequenceExplanation
from groupcf.sequential.actions import Action, ActionSet, DependencyGraph
from groupcf.sequential.bnb import bnb_bound
from groupcf.sequential.bound import BoundStatus, proven, sequence_bound
from groupcf.sequential.brkga import GAOptions, first_front, polish, run_brkga
from groupcf.sequential.encoding import OneHotEncoding
from groupcf.sequential.engine import (
    Problem,
    apply_action,
    feature_ranges,
    gower,
    objectives,
    rollout,
    violation,
)
from groupcf.sequential.result import pareto_frame, replay
from groupcf.solvers.base import Status
from groupcf.utils import Deadline

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SequenceOptions(Options):
    """Settings of :func:`explain_sequence` beyond the shared vocabulary.

    Passed to :func:`explain_sequence` as keywords or as this object (``options=``); values
    are checked when the object is created.

    Parameters
    ----------
    discounted
        Minimise the discounted cost (default, ``None``: when ``dependencies`` are given).
    ranges, categorical
        Gower distance: numeric ranges per feature (default 1) and categorical features.
    decimals, min_change
        Round states after every action; a feature counts as changed from ``min_change``.
    population, offspring, mutants, bias, generations
        BRKGA settings (defaults: the paper's).
    polish_front
        Afterwards, shrink each Pareto sequence's tweak values onto the decision boundary
        (bisection per action, re-checked; not in the paper).
    bound
        Compute the certified lower bound (:mod:`groupcf.sequential.bound`).
    bound_time_limit
        Seconds for the bound's MIPs (within the call's ``time_limit`` when one is set).
    positive_class
        For a model with ``predict_proba``: the column of the accepted class (formerly
        ``target``).

    Raises
    ------
    InvalidInputError
        A value outside its rule (e.g. ``bias`` outside [0, 1], ``population < 2``), or
        an unknown option given to :meth:`~groupcf.options.Options.from_kwargs`.

    Examples
    --------
    >>> opts = gcf.SequenceOptions(generations=50, bound=False)
    >>> opts.population, opts.generations, opts.bound
    (500, 50, False)
    >>> gcf.SequenceOptions.from_kwargs(generation=50)
    Traceback (most recent call last):
    ...
    groupcf.exceptions.InvalidInputError: SequenceOptions does not take option(s) 'generation' (did you mean 'generations'?); ...
    """

    discounted: bool | None = None
    ranges: Mapping[str, float] | None = None
    categorical: tuple = ()
    decimals: int | None = None
    min_change: float = 1e-9
    population: int = 500
    offspring: int = 400
    mutants: int = 100
    bias: float = 0.7
    generations: int = 150
    polish_front: bool = True
    bound: bool = True
    bound_time_limit: float = 10.0
    positive_class: int = 1

    _constraints: ClassVar[dict[str, list]] = {
        "discounted": [None, bool], "ranges": [None, Mapping], "categorical": [tuple, list],
        "decimals": [None, Interval(numbers.Integral, 0, None)],
        "min_change": [Interval(numbers.Real, 0, None, closed="neither")],
        "population": [Interval(numbers.Integral, 2, None)], "offspring": [Interval(numbers.Integral, 1, None)],
        "mutants": [Interval(numbers.Integral, 0, None)], "bias": [Interval(numbers.Real, 0, 1)],
        "generations": [Interval(numbers.Integral, 0, None)], "polish_front": [bool], "bound": [bool],
        "bound_time_limit": [Interval(numbers.Real, 0, None, closed="neither")],
        "positive_class": [Interval(numbers.Integral, 0, None)],
    }
    _renamed: ClassVar[dict[str, str]] = {"target": "positive_class"}


def explain_sequence(x, model, actions: ActionSet | Sequence[Action],
                     dependencies: DependencyGraph | Mapping | None = None, *,
                     Tmax: int | None = None, threshold: float = 0.5, features: Sequence[str] | None = None,
                     encode=None, immutable: Sequence[str] = (), solver="highs",
                     time_limit: float | None = None, random_state=None, progress: bool = True,
                     options: SequenceOptions | None = None, **kwargs) -> SequenceExplanation:
    """Pareto-optimal sequences of actions that make ``model`` accept ``x``
    (Naumann & Ntoutsi, "Consequence-aware Sequential Counterfactual Generation",
    ECML-PKDD 2021), plus a certified lower bound on their cost.

    Parameters
    ----------
    x
        The start state: a Series/dict over feature names, or an array with ``features``.
    model
        A :class:`~groupcf.embeddings.base.Embedding` (scored in numpy; enables the bound),
        any object with ``predict_proba``, or a :class:`~groupcf.models.TrainedModel` from
        :func:`~groupcf.models.resolve_encoded` (with its encoder); every state is scored
        through that adapter.
    actions
        An :class:`ActionSet` or a list of :class:`Action` (validated against the features).
    dependencies
        A :class:`DependencyGraph` (or its edge mapping ``{(k, h): tau}``): costs are
        discounted by consequences (eqs. 1-2, "cscf"); without it ``c = b`` ("scf").
    Tmax
        The most actions in a sequence (``None``: no limit).
    threshold
        Probability of the positive class from which the model accepts.
    features
        Feature names, when ``x`` is an array.
    encode
        Maps x-space states ``(m, n)`` to model inputs (e.g. a
        :class:`~groupcf.sequential.encoding.OneHotEncoding`, which the bound can read);
        ``None``: the model takes the state as it is (an embedding then gets the bound too).
    immutable
        Features no action may change.
    solver
        The backend of the bound's MIPs.
    time_limit
        Seconds for the whole call (``None``: no limit); the bound's MIPs get at most
        ``options.bound_time_limit`` of it.
    random_state
        Seed of the genetic search (int, Generator or None).
    progress
        A bar over the generations (only when standard error is a terminal).
    options, **kwargs
        :class:`SequenceOptions` (as the object and/or its fields as keywords; the old
        names ``seed`` and ``target`` still work, with a :class:`FutureWarning`).

    Returns
    -------
    SequenceExplanation

    Raises
    ------
    InvalidActionError, CyclicConsequenceError
        Bad actions or dependencies.
    NotRejectedError
        The model already accepts ``x``.
    NoCounterfactualError
        No valid accepted sequence was found (none exists if the bound is infeasible).

    Examples
    --------
    >>> e = gcf.explain_sequence(x, model, actions, deps, encode=encoder, Tmax=3)  # doctest: +SKIP
    >>> e.best(by="discounted_cost"); print(e.summary()); e.validate()            # doctest: +SKIP
    """
    t0 = time.perf_counter()
    kwargs = rename_deprecated("explain_sequence", kwargs, {"seed": "random_state"})
    if "random_state" in kwargs:
        if random_state is not None:
            raise InvalidInputError("explain_sequence: got both 'seed' and 'random_state'")
        random_state = kwargs.pop("random_state")
    opt = SequenceOptions.from_kwargs(options, owner="explain_sequence", stacklevel=5, **kwargs)
    for name, rule in (("Tmax", TMAX), ("time_limit", TIME_LIMIT), ("threshold", PROBABILITY)):
        check_value("explain_sequence", name, locals()[name], rule)
    deadline = Deadline(time_limit)
    seed = int(np.random.default_rng(random_state).integers(2**31 - 1)) \
        if not isinstance(random_state, numbers.Integral) else int(random_state)
    discounted, ranges, categorical = opt.discounted, opt.ranges, opt.categorical
    if isinstance(x, Mapping):
        x = pd.Series(x)
    if isinstance(x, pd.Series):
        features = list(x.index) if features is None else list(features)
        x0 = np.asarray(x[features], dtype=float)
    else:
        if features is None:
            raise InvalidInputError("x is an array: give features=[names] in its order")
        x0 = np.asarray(x, dtype=float).reshape(-1)
        if len(x0) != len(features):
            raise InvalidInputError(f"x has {len(x0)} values for {len(features)} features")
    if not np.all(np.isfinite(x0)):
        raise InvalidInputError("x has missing or infinite values")
    aset = actions if isinstance(actions, ActionSet) else ActionSet(actions, features, immutable)
    if list(aset.features) != list(features):
        raise InvalidInputError("the action set was built over other features than x's")
    if dependencies is not None and not isinstance(dependencies, DependencyGraph):
        dependencies = DependencyGraph(dependencies, features)
    tm = resolve_encoded(model, encode, threshold=threshold, positive_class=opt.positive_class)
    encode = tm.encoder if encode is None else encode    # a TrainedModel brings its encoder
    if encode is None and tm.embedding is not None:       # an embedding over the state itself:
        encode = OneHotEncoding(list(features), {})       # the identity, which the bound can read
    if tm.margin(x0[None, :])[0] >= 0:
        raise NotRejectedError("the model already accepts x; there is nothing to explain")
    cats = set(categorical) | set(getattr(encode, "categories", {}) or {})
    problem = Problem(x0, aset, tm, dependencies, opt.decimals, opt.min_change,
                      bool(dependencies is not None if discounted is None else discounted),
                      feature_ranges(features, ranges, sorted(cats)), max_length=Tmax)
    opts = GAOptions(opt.population, opt.offspring, opt.mutants, opt.bias, opt.generations, seed)
    G, F, cv = run_brkga(problem, opts, progress=progress, deadline=deadline)
    feas = np.flatnonzero(cv <= 0)
    if opt.polish_front and len(feas):     # shrink the front's tweaks onto the decision boundary
        front = feas[first_front(F[feas])]
        Gp = polish(problem, G[front])
        rp = rollout(problem, Gp)
        G = np.vstack([G, Gp])
        F = np.vstack([F, objectives(problem, rp)])
        cv = np.concatenate([cv, violation(problem, rp)])
        feas = np.flatnonzero(cv <= 0)
    costs = rollout(problem, G[feas]).cost if len(feas) else np.zeros(0)
    cap = float(costs.min()) if len(feas) else None
    tb = time.perf_counter()
    left = deadline.left()
    bound_time = opt.bound_time_limit if left is None else max(0.0, min(opt.bound_time_limit, left))
    b = None
    if opt.bound and bound_time > 0:     # branch and bound over tweak values; the MIP if it cannot
        b = bnb_bound(problem, encode, bound_time, cap=cap)
        if b is None:
            b = sequence_bound(problem, encode, solver, bound_time, cap=cap)
    tb = time.perf_counter() - tb
    frames = []
    if len(feas):
        front = feas[first_front(F[feas])]
        r = rollout(problem, G[front], record=True)
        frames.append(pareto_frame(problem, r, range(len(front))))
        if problem.discounted:     # the cheapest undiscounted sequence, which the bound is about
            cheapest = feas[[int(np.argmin(costs))]]
            frames.append(pareto_frame(problem, rollout(problem, G[cheapest], record=True), [0]))
    if b is not None and b.steps is not None and (Tmax is None or len(b.steps) <= Tmax):
        cost, disc, probs, final = replay(problem, b.steps)
        frames.append(pd.DataFrame([{
            "steps": b.steps, "length": len(b.steps), "cost": cost, "discounted_cost": disc,
            "distance": float(_gower(problem, final)), "final_state": dict(zip(features, final.tolist())),
            "proba": probs, "source": "bound"}]))
    if not frames:
        if b is not None and b.status is BoundStatus.INFEASIBLE:
            raise NoCounterfactualError("no sequence of the given actions within their ranges "
                                        "makes the model accept x (the bound MIP is infeasible)")
        raise NoCounterfactualError("the search found no valid sequence that the model accepts; "
                                    "widen the actions' ranges or add actions, or raise generations")
    every = pd.concat(frames, ignore_index=True)
    pareto = _nondominated(problem, every)
    low = every.loc[[every["cost"].idxmin()]]
    if float(low["cost"].iloc[0]) < float(pareto["cost"].min()):    # dominated in the discounted
        pareto = pd.concat([pareto, low], ignore_index=True).sort_values("cost", kind="stable")  # objectives
        pareto = pareto.reset_index(drop=True)
    lb = None if b is None else b.value
    optimal = lb is not None and bool(np.isfinite(lb)) and proven(float(pareto["cost"].min()), lb)
    info = {} if b is None else {"bound_status": str(b.status), "bound_seconds": tb, "mip_sequence": b.steps}
    return SequenceExplanation(pd.Series(x0, index=features), pareto, problem, lb, optimal,
                               time.perf_counter() - t0, Status.OPTIMAL if optimal else Status.FEASIBLE,
                               Tmax, Stats(info))


def _gower(problem: Problem, final: np.ndarray) -> float:
    return gower(problem, final[None, :])[0]


def _nondominated(problem: Problem, df: pd.DataFrame) -> pd.DataFrame:
    """Keep the non-dominated rows (the paper's objectives), one per distinct sequence."""
    idx = problem.actions.index
    mut = [idx[f] for f in problem.actions.mutable]
    x0 = problem.x0
    rows = []
    for _, r in df.iterrows():
        fin = np.array(list(r["final_state"].values()))
        counts = np.zeros(len(x0))
        S = x0.copy()
        for name, v in r["steps"]:     # change counts per feature, from the replayed states
            a = problem.actions[problem.actions.names.index(name)]
            A = apply_action(a, S[None, :], np.array([v]), idx, problem.decimals)[0]
            counts += np.abs(A - S) >= problem.min_change
            S = A
        c = r["discounted_cost"] if problem.discounted else r["cost"]
        rows.append(np.concatenate([[c], counts[mut], [round(_gower(problem, fin), 2)]]))
    F = np.array(rows)
    keep = first_front(F)
    out = df.iloc[keep]
    out = out.loc[~out["steps"].map(repr).duplicated()]
    return out.sort_values("cost", kind="stable").reset_index(drop=True)

