"""Result of a single-instance counterfactual search."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..solvers.base import Status


def describe_changes(instance: pd.Series, cf: pd.Series, features: list[str]) -> str:
    """``"AgeGroup: Less25 -> 25-45, Race: ..."`` for the listed features."""
    return ", ".join(f"{c}: {instance[c]} -> {cf[c]}" for c in features) or "(no change)"


@dataclass
class Explanation:
    """Counterfactual explanation(s) of one instance.

    Attributes
    ----------
    instance
        The explained instance (one row of raw features).
    counterfactuals
        One row per counterfactual, raw feature values, best first. Features that a
        counterfactual does not change keep the instance's raw value; a changed binned
        numeric feature shows its bin (a ``pd.Interval``).
    changed_features
        Original features the *best* counterfactual changes (``changes`` has them all).
    changes
        Per counterfactual, the list of changed original features.
    distances
        Per counterfactual, its distance to the instance under the distance that
        ``distance`` names — the one the method minimised. For MACE (and GeCo with
        ``distance=``) it is MACE's normalised mix of l0 / l1 / linf
        (:mod:`groupcf.formulations.distances`; l0 is the *fraction* of original features
        changed, ``len(changes[k])`` the count), the same value
        :func:`groupcf.metrics.proximity` computes from the raw rows. For GeCo with its
        own distance the label starts with ``"geco:"`` (e.g.
        ``"geco:0.333*l0+0.333*l1+0.333*linf"``) and the values are GeCo's distance
        (ordinal features 0/1, numeric ones over the data's range), which is *not*
        comparable with MACE's: to compare methods, use :func:`groupcf.metrics.proximity`
        with the same weights for all of them.
    probabilities
        Per counterfactual, the real model's probability of the positive class.
    status, is_optimal
        Solver status of the (first) search; ``is_optimal`` only when every returned
        counterfactual was proven optimal (for ``n > 1``: optimal given the previous ones).
    dual_bound
        The solver's lower bound on the best distance (MIP dual bound), when reported.
    objectives
        Per counterfactual, the solver's objective value (equals ``distances`` up to
        solver tolerances); empty for methods that do not solve a MIP.
    distance
        The distance's name, e.g. ``"l1"`` or ``"0.1*l0+0.9*l1"`` (MACE's), or
        ``"geco:..."`` (GeCo's own).
    """

    instance: pd.Series
    counterfactuals: pd.DataFrame
    changes: list[list[str]]
    distances: list[float]
    probabilities: np.ndarray
    status: Status
    is_optimal: bool
    solve_time: float
    method: str = "mace"
    distance: object = "l0"
    solver: str = "highs"
    dual_bound: float | None = None
    stats: dict = field(default_factory=dict)
    objectives: list[float] = field(default_factory=list)

    @property
    def changed_features(self) -> list[str]:
        return list(self.changes[0]) if self.changes else []

    @property
    def n_changed(self) -> list[int]:
        """Per counterfactual, the number of original features it changes."""
        return [len(c) for c in self.changes]

    @property
    def n_counterfactuals(self) -> int:
        return len(self.counterfactuals)

    def __repr__(self) -> str:
        head = (f"Explanation(method={self.method}, distance={self.distance}, solver={self.solver}, "
                f"status={self.status.value}, optimal={self.is_optimal}, "
                f"{self.n_counterfactuals} counterfactual(s), {self.solve_time:.3f}s)")
        lines = [head]
        for k, (_, cf) in enumerate(self.counterfactuals.iterrows()):
            lines.append(f"  #{k} distance={self.distances[k]:.4g} p={self.probabilities[k]:.3f}: "
                         + describe_changes(self.instance, cf, self.changes[k]))
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "instance": {k: _plain(v) for k, v in self.instance.items()},
            "counterfactuals": [{k: _plain(v) for k, v in row.items()} for _, row in self.counterfactuals.iterrows()],
            "changes": self.changes, "distances": list(map(float, self.distances)),
            "probabilities": [float(p) for p in self.probabilities],
            "status": self.status.value, "is_optimal": self.is_optimal, "solve_time": self.solve_time,
            "method": self.method, "distance": self.distance, "solver": self.solver,
            "dual_bound": self.dual_bound, "objectives": list(map(float, self.objectives)),
            "stats": {k: _plain(v) for k, v in self.stats.items()},
        }


def _plain(v):
    """JSON-friendly scalar."""
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, (np.bool_,)):
        return bool(v)
    if isinstance(v, pd.Interval):
        return str(v)
    return v
