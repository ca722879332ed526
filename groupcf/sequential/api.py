"""``gcf.explain_sequence``: consequence-aware sequential counterfactuals."""
from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from groupcf.exceptions import (
    InvalidInputError,
    NoCounterfactualError,
    NotRejectedError,
)
from groupcf.sequential.actions import Action, ActionSet, DependencyGraph
from groupcf.sequential.bound import BoundStatus, sequence_bound
from groupcf.sequential.brkga import GAOptions, first_front, polish, run_brkga
from groupcf.sequential.engine import (
    Problem,
    Scorer,
    apply_action,
    feature_ranges,
    gower,
    objectives,
    rollout,
    violation,
)
from groupcf.sequential.result import SequenceExplanation, pareto_frame, replay

logger = logging.getLogger(__name__)


def explain_sequence(x, model, actions: ActionSet | Sequence[Action],
                     dependencies: DependencyGraph | Mapping | None = None, *,
                     features: Sequence[str] | None = None, encode=None, target: int = 1,
                     immutable: Sequence[str] = (), discounted: bool | None = None,
                     ranges: Mapping[str, float] | None = None, categorical: Sequence[str] = (),
                     decimals: int | None = None, min_change: float = 1e-9,
                     population: int = 500, offspring: int = 400, mutants: int = 100,
                     bias: float = 0.7, generations: int = 150, seed: int = 0,
                     polish_front: bool = True, bound: bool = True, solver="highs", time_limit: float = 10.0,
                     progress: bool = True) -> SequenceExplanation:
    """Pareto-optimal sequences of actions that make ``model`` accept ``x``
    (Naumann & Ntoutsi, "Consequence-aware Sequential Counterfactual Generation",
    ECML-PKDD 2021), plus a certified lower bound on their cost.

    Parameters
    ----------
    x
        The start state: a Series/dict over feature names, or an array with ``features``.
    model
        A :class:`~groupcf.embeddings.base.Embedding` (scored in numpy, accepted where
        ``score >= 0``; enables the bound) or any object with ``predict_proba`` (accepted
        where the probability of class ``target`` is ``>= 0.5``).
    actions
        An :class:`ActionSet` or a list of :class:`Action` (validated against the features).
    dependencies
        A :class:`DependencyGraph` (or its edge mapping ``{(k, h): tau}``): costs are
        discounted by consequences (eqs. 1-2, "cscf"); without it ``c = b`` ("scf").
    encode
        Maps x-space states ``(m, n)`` to model inputs (e.g. a
        :class:`~groupcf.sequential.encoding.OneHotEncoding`, which the bound can read).
    discounted
        Minimise the discounted cost (default: when ``dependencies`` are given).
    ranges, categorical
        Gower distance: numeric ranges per feature (default 1) and categorical features.
    decimals, min_change
        Round states after every action; a feature counts as changed from ``min_change``.
    population, offspring, mutants, bias, generations, seed
        BRKGA settings (defaults: the paper's).
    polish_front
        Afterwards, shrink each Pareto sequence's tweak values onto the decision boundary
        (bisection per action, re-checked; not in the paper).
    bound
        Compute the certified lower bound (:mod:`groupcf.sequential.bound`).
    progress
        A bar over the generations (only when standard error is a terminal).

    Raises
    ------
    InvalidActionError, CyclicConsequenceError
        Bad actions or dependencies.
    NotRejectedError
        The model already accepts ``x``.
    NoCounterfactualError
        No valid accepted sequence was found (none exists if the bound is infeasible).
    """
    t0 = time.perf_counter()
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
    scorer = Scorer(model, encode, target)
    if scorer.margin(x0[None, :])[0] >= 0:
        raise NotRejectedError("the model already accepts x; there is nothing to explain")
    cats = set(categorical) | set(getattr(encode, "categories", {}) or {})
    problem = Problem(x0, aset, scorer, dependencies, decimals, min_change,
                      bool(dependencies is not None if discounted is None else discounted),
                      feature_ranges(features, ranges, sorted(cats)))
    opts = GAOptions(population, offspring, mutants, bias, generations, seed)
    G, F, cv = run_brkga(problem, opts, progress=progress)
    feas = np.flatnonzero(cv <= 0)
    if polish_front and len(feas):     # shrink the front's tweaks onto the decision boundary
        front = feas[first_front(F[feas])]
        Gp = polish(problem, G[front])
        rp = rollout(problem, Gp)
        G = np.vstack([G, Gp])
        F = np.vstack([F, objectives(problem, rp)])
        cv = np.concatenate([cv, violation(problem, rp)])
        feas = np.flatnonzero(cv <= 0)
    cap = float(rollout(problem, G[feas]).cost.min()) if len(feas) else None
    tb = time.perf_counter()
    b = sequence_bound(problem, encode, solver, time_limit, cap=cap) if bound else None
    tb = time.perf_counter() - tb
    frames = []
    if len(feas):
        front = feas[first_front(F[feas])]
        r = rollout(problem, G[front], record=True)
        frames.append(pareto_frame(problem, r, range(len(front))))
    if b is not None and b.steps is not None:
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
    pareto = _nondominated(problem, pd.concat(frames, ignore_index=True))
    lb = None if b is None else b.value
    optimal = bool(lb is not None and np.isfinite(lb) and pareto["cost"].min() <= lb + 1e-3 * max(1.0, abs(lb)))
    info = {} if b is None else {"status": str(b.status), "seconds": tb, "mip_sequence": b.steps}
    return SequenceExplanation(pd.Series(x0, index=features), pareto, problem, lb, optimal,
                               time.perf_counter() - t0, info)


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

