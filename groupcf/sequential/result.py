"""Replaying sequences step by step, the Pareto table and the flow plot of
:func:`groupcf.explain_sequence`; the result class itself is
:class:`groupcf.results.sequence.SequenceExplanation` (re-exported here)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from groupcf.exceptions import ValidationError
from groupcf.results.sequence import SequenceExplanation, format_steps
from groupcf.sequential.actions import StateView
from groupcf.sequential.engine import (
    Problem,
    Rollout,
    apply_action,
    check_conditions,
    discount,
)
from groupcf.utils import TOL

__all__ = ["SequenceExplanation", "format_steps", "pareto_frame", "plot_flow", "replay"]


def replay(problem: Problem, steps) -> tuple[float, float, list, np.ndarray]:
    """Apply ``[(action name, value), ...]`` one at a time from the start state, checking
    every condition and that every step changes something; returns (cost, discounted
    cost, probability after each step, final state). Raises ValidationError."""
    aset, idx = problem.actions, problem.actions.index
    by_name = {a.name: a for a in aset}
    S = problem.x0[None, :].astype(float).copy()
    cost = disc = 0.0
    probs, seen = [], set()
    for t, (name, v) in enumerate(steps):
        a = by_name[name]
        if name in seen:
            raise ValidationError(f"step {t}: action {name!r} used twice")
        seen.add(name)
        before = StateView(S, idx)
        if a.kind == "add":
            lo, hi = a.value_range(before)
            if not (lo[0] - TOL <= v <= hi[0] + TOL):
                raise ValidationError(f"step {t}: {name} value {v} outside [{lo[0]}, {hi[0]}]")
        elif v not in set(a.values.tolist()):
            raise ValidationError(f"step {t}: {name} cannot set {v}")
        A = apply_action(a, S, np.array([v], float), idx, problem.decimals)
        after = StateView(A, idx)
        changed = np.abs(A - S) >= problem.min_change
        if not check_conditions(a, before, after)[0]:
            raise ValidationError(f"step {t}: a condition of {name} fails")
        if not changed.any():
            raise ValidationError(f"step {t}: {name} changes nothing")
        f = idx[a.feature]
        b = float(a.cost(before, after, A[:, f] - S[:, f], S[:, f])[0])
        cost += b
        disc += b * float(discount(a, problem.graph, before, changed, idx)[0])
        S = A
        probs.append(float(problem.model.proba(S)[0]))
    return cost, disc, probs, S[0]


def pareto_frame(problem: Problem, r: Rollout, rows: Sequence[int], source: str = "ga") -> pd.DataFrame:
    """The Pareto table (one row per sequence) of the rows ``rows`` of a recorded rollout."""
    names = problem.actions.names
    feats = problem.actions.features
    if r.states is None:
        raise ValueError("pareto_frame needs a recorded rollout (rollout(..., record=True))")
    recs = []
    for i in rows:
        L = int(r.length[i])
        steps = [(names[r.steps[i, t]], float(r.values[i, t])) for t in range(L)]
        probs = [float(p) for p in problem.model.proba(np.vstack([r.states[t][i] for t in range(L)]))]
        recs.append({"steps": steps, "length": L, "cost": float(r.cost[i]),
                         "discounted_cost": float(r.disc_cost[i]), "distance": float(r.distance[i]),
                         "final_state": dict(zip(feats, r.final[i].tolist())), "proba": probs,
                         "source": source})
    return pd.DataFrame(recs, columns=["steps", "length", "cost", "discounted_cost", "distance",
                                       "final_state", "proba", "source"])


def plot_flow(explanations: Sequence[SequenceExplanation], by: str = "cost", max_steps: int = 3, ax=None):
    """Which action comes at step 1, 2, 3 in each person's best sequence (the paper's
    Sankey view): one column of boxes per step, bands between consecutive steps with a
    width proportional to the number of people."""
    import matplotlib.pyplot as plt
    seqs = [[n for n, _ in e.best(by=by)["steps"]][:max_steps] for e in explanations]
    names = sorted({n for s in seqs for n in s}) + ["(end)"]
    ax = ax or plt.subplots(figsize=(7, 4))[1]
    n = max(1, len(seqs))
    colors = plt.cm.tab10(np.arange(len(names)) % 10)
    y = {}
    for t in range(max_steps):
        col = [s[t] if t < len(s) else "(end)" for s in seqs]
        top = 0.0
        for k, name in enumerate(names):
            c = col.count(name) / n
            if c:
                ax.bar(t, c * 0.9, bottom=top, width=0.25, color=colors[k], edgecolor="k")
                ax.text(t, top + c * 0.45, f"{name}\n{col.count(name)}", ha="center", va="center", fontsize=7)
                y[(t, name)] = [top, top]
                top += c
    for t in range(max_steps - 1):
        for s in seqs:
            a = s[t] if t < len(s) else "(end)"
            b = s[t + 1] if t + 1 < len(s) else "(end)"
            if a == "(end)":
                continue
            ya, yb = y[(t, a)], y[(t + 1, b)]
            h = 0.9 / n
            xs = np.linspace(t + 0.125, t + 0.875, 20)
            w = (1 - np.cos(np.pi * (xs - xs[0]) / (xs[-1] - xs[0]))) / 2
            ax.fill_between(xs, ya[1] + (yb[1] - ya[1]) * w, ya[1] + h + (yb[1] - ya[1]) * w,
                            color=colors[names.index(a)], alpha=0.35, lw=0)
            ya[1] += h
            yb[1] += h
    ax.set_xticks(range(max_steps), [f"step {t + 1}" for t in range(max_steps)])
    ax.set_yticks([])
    ax.set_title(f"order of actions in the {by}-best sequence of {len(seqs)} people")
    return ax
