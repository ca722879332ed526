"""Plots of a :class:`~groupcf.results.global_actions.GlobalExplanation`.

Three views, all drawn with matplotlib on a given or new axis:

* :func:`plot_curve` — coverage against the number of actions ``k`` with the certified
  upper bound, and the mean cost on a second axis;
* :func:`plot_actions` — the actions × features map: each cell says what the action does
  to the feature (``→ category`` or ``+ amount``), coloured by the share of the people
  assigned to the action whose value it really changes (setting a category someone already
  has changes nothing for them);
* :func:`plot_groups` — coverage and mean cost per group (e.g. by sex) with their
  bootstrap intervals (:meth:`GlobalExplanation.by_group`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from .global_actions import GlobalExplanation

__all__ = ["action_feature_table", "plot_actions", "plot_curve", "plot_groups"]


def _axes(ax: Any, figsize: tuple[float, float]) -> Any:
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def plot_curve(res: GlobalExplanation, ax: Any = None) -> Any:
    """Coverage found and its certified upper bound against ``k``; mean cost on the right."""
    ax = _axes(ax, (5.5, 3.6))
    c = res.curve
    ax.plot(c["k"], 100 * c["coverage"], "o-", label="coverage found")
    ax.plot(c["k"], 100 * c["upper_bound_coverage"], "k--", lw=1, label="certified upper bound")
    ax.set_xlabel("number of actions k")
    ax.set_ylabel("coverage of S (%)")
    ax.set_xticks(list(c["k"]))
    ax2 = ax.twinx()
    ax2.plot(c["k"], c["mean_cost"], "s:", color="tab:red", label="mean cost")
    ax2.set_ylabel("mean cost of the covered", color="tab:red")
    lines = ax.get_lines() + ax2.get_lines()
    ax.legend(lines, [ln.get_label() for ln in lines], loc="lower right", fontsize="small")
    ax.set_title("Coverage–cost–k curve")
    return ax


def action_feature_table(res: GlobalExplanation) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What each action does to each feature it touches (text) and the share of the people
    assigned to it whose value of that feature it changes (numbers), as two frames with
    one row per action and one column per feature."""
    feats: list[str] = []
    for spec in res.specs:
        feats += [s["feature"] for s in spec if s["feature"] not in feats]
    text = pd.DataFrame("", index=res.actions.index, columns=feats)
    share = pd.DataFrame(np.nan, index=res.actions.index, columns=feats)
    for j, spec in enumerate(res.specs):
        mine = (res.assignment == j).fillna(False).to_numpy(dtype=bool)
        people = res.S.loc[mine] if res.S is not None else None
        for s in spec:
            f, v = s["feature"], s["value"]
            if s["op"] == "shift":
                text.loc[j, f] = f"{'+' if v >= 0 else '−'}{abs(v):g}"
                share.loc[j, f] = 1.0 if v != 0 else 0.0
            else:
                text.loc[j, f] = f"→ {v}" if s["op"] == "set" else str(v)
                if people is not None and len(people):
                    share.loc[j, f] = float((people[f].astype(object) != v).mean())
                else:
                    share.loc[j, f] = np.nan
    return text, share


def plot_actions(res: GlobalExplanation, ax: Any = None) -> Any:
    """Actions × features heat map (module docstring)."""
    text, share = action_feature_table(res)
    ax = _axes(ax, (1.9 + 1.5 * max(1, text.shape[1]), 0.9 + 0.6 * max(1, text.shape[0])))
    im = ax.imshow(share.to_numpy(dtype=float), cmap="Blues", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(text.shape[1]), list(text.columns), rotation=30, ha="right")
    labels = [f"{j}: {int(n)} people" for j, n in res.actions["n_covered"].items()]
    ax.set_yticks(range(text.shape[0]), labels)
    for i in range(text.shape[0]):
        for j in range(text.shape[1]):
            s = share.iat[i, j]
            ax.text(j, i, text.iat[i, j], ha="center", va="center", fontsize="small",
                    color="white" if np.isfinite(s) and s > 0.6 else "black")
    ax.figure.colorbar(im, ax=ax, label="share of its people it changes", shrink=0.8)
    ax.set_title("What each action changes")
    return ax


def plot_groups(res: GlobalExplanation, groups: str | pd.Series, ax: Any = None, n_boot: int = 1000,
                random_state: int | np.random.Generator | None = 0) -> Any:
    """Coverage (bars) and mean cost (points) per group with bootstrap intervals."""
    gaps = res.by_group(groups, n_boot=n_boot, random_state=random_state)
    ax = _axes(ax, (1.5 + 1.1 * len(gaps), 3.6))
    x = np.arange(len(gaps))
    cov = 100 * gaps["coverage"].to_numpy(dtype=float)
    err = np.abs(100 * gaps[["coverage_lo", "coverage_hi"]].to_numpy(dtype=float).T - cov)
    ax.bar(x, cov, yerr=err, capsize=4, color="tab:blue", alpha=0.75, label="coverage")
    ax.set_xticks(x, [f"{g}\n(n={n})" for g, n in zip(gaps.index, gaps["n"])])
    ax.set_ylabel("coverage (%)")
    ax.set_ylim(0, 105)
    ax2 = ax.twinx()
    mc = gaps["mean_cost"].to_numpy(dtype=float)
    merr = np.abs(gaps[["mean_cost_lo", "mean_cost_hi"]].to_numpy(dtype=float).T - mc)
    ax2.errorbar(x, mc, yerr=merr, fmt="s", color="tab:red", capsize=4, label="mean cost")
    ax2.set_ylabel("mean cost of the covered", color="tab:red")
    top = np.nanmax(np.r_[mc + merr[1], 0.0]) if np.isfinite(mc).any() else 1.0
    ax2.set_ylim(0, 1.15 * top if top > 0 else 1.0)
    name = groups if isinstance(groups, str) else getattr(groups, "name", None) or "group"
    ax.set_title(f"Recourse by {name}")
    return ax
