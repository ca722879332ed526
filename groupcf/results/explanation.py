"""Result of a single-instance counterfactual search."""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from .base import ResultBase, Stats, Status, frame_records, html_pre, plain

if TYPE_CHECKING:  # pragma: no cover
    from ..models import TrainedModel

_plain = plain  # older name, still imported by callers


def describe_changes(instance: pd.Series, cf: pd.Series, features: list[str]) -> str:
    """``"AgeGroup: Less25 -> 25-45, Race: ..."`` for the listed features."""
    return ", ".join(f"{c}: {instance[c]} -> {cf[c]}" for c in features) or "(no change)"


@dataclass
class Explanation(ResultBase):
    """Counterfactual explanation(s) of one instance.

    Attributes
    ----------
    instance
        The explained instance (one row of raw features).
    counterfactuals
        One row per counterfactual (index ``0..n-1``), raw feature values, best first.
        Features that a counterfactual does not change keep the instance's raw value; a
        changed binned numeric feature shows its bin (a ``pd.Interval``).
    changes
        Per counterfactual, the list of changed original features.
    changed_features
        ``{counterfactual id: [original features]}`` (same shape as
        :attr:`GroupExplanation.changed_features <groupcf.results.group.GroupExplanation>`);
        ``changed_features[0]`` is the best counterfactual's change set.
    distances
        Per counterfactual, its distance to the instance under the distance that
        ``distance`` names — the one the method minimised. For MACE (and GeCo with
        ``distance=``) it is MACE's normalised mix of l0 / l1 / linf
        (:mod:`groupcf.formulations.distances`; l0 is the *fraction* of original features
        changed, ``len(changes[k])`` the count), the same value
        :func:`groupcf.metrics.proximity` computes from the raw rows. For GeCo with its
        own distance the label starts with ``"geco:"`` and the values are GeCo's distance,
        which is *not* comparable with MACE's: to compare methods, use
        :func:`groupcf.metrics.proximity` with the same weights for all of them.
    probabilities
        Per counterfactual, the real model's probability of the positive class.
    status, is_optimal
        :class:`~groupcf.solvers.base.Status` of the (first) search; ``is_optimal`` only
        when every returned counterfactual was proven optimal (for ``n > 1``: optimal
        given the previous ones).
    lower_bound
        Proven lower bound on the best distance (the MIP dual bound), when reported
        (``dual_bound`` is its deprecated name).
    objectives
        Per counterfactual, the solver's objective value (equals ``distances`` up to
        solver tolerances); empty for methods that do not solve a MIP.
    distance
        The distance's name, e.g. ``"l1"`` or ``"0.1*l0+0.9*l1"`` (MACE's), or
        ``"geco:..."`` (GeCo's own).
    Tmax
        The limit on changed features the search used (``None``: none).
    stats
        :class:`~groupcf.results.base.Stats` of the search.
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
    lower_bound: float | None = None
    stats: Stats = field(default_factory=Stats)
    objectives: list[float] = field(default_factory=list)
    Tmax: int | None = None
    model: "TrainedModel | None" = field(default=None, repr=False, compare=False)

    @property
    def changed_features(self) -> dict[int, list[str]]:
        return {k: list(c) for k, c in enumerate(self.changes)}

    @property
    def n_changed(self) -> list[int]:
        """Per counterfactual, the number of original features it changes."""
        return [len(c) for c in self.changes]

    @property
    def n_counterfactuals(self) -> int:
        return len(self.counterfactuals)

    # ------------------------------------------------------------------ display
    def _head(self) -> str:
        bound = "" if self.lower_bound is None else f", lower_bound={self.lower_bound:.4g}"
        return (f"Explanation(method={self.method}, distance={self.distance}, solver={self.solver}, "
                f"status={self.status.value}, optimal={self.is_optimal}{bound}, "
                f"{self.n_counterfactuals} counterfactual(s), {self.solve_time:.3f}s)")

    def __repr__(self) -> str:
        lines = [self._head()]
        for k, (_, cf) in enumerate(self.counterfactuals.iterrows()):
            lines.append(f"  #{k} distance={self.distances[k]:.4g} p={self.probabilities[k]:.3f}: "
                         + describe_changes(self.instance, cf, self.changes[k]))
        return "\n".join(lines)

    def summary(self) -> str:
        """Readable text: each counterfactual's distance, probability and changes (from
        the instance's value to the new one), then the search's limits and statistics."""
        name = "" if self.instance.name is None else f" of instance {self.instance.name!r}"
        lines = [f"{self.n_counterfactuals} counterfactual(s){name}"] + repr(self).splitlines()[1:]
        lines.append(self._head())
        if self.stats:
            lines.append("  stats: " + ", ".join(f"{k}={v}" for k, v in self.stats.items()))
        return "\n".join(lines)

    def _repr_html_(self) -> str:  # notebooks
        return html_pre(self.summary())

    # ------------------------------------------------------------------ checks
    def validate(self, model=None) -> "Explanation":
        """Re-check every counterfactual with the real model and the actionability
        rules: accepted by the model, change set as reported, immutable features
        unchanged, increase-only ones not decreased, at most ``Tmax`` changes. Raises
        :class:`~groupcf.exceptions.ValidationError` naming every failure; returns
        ``self`` so it chains."""
        tm = self.model if model is None else model
        if tm is None:
            raise ValidationError("validate() needs the model (pass model=...)")
        from ..models import resolve_model

        tm = resolve_model(tm)
        problems = []
        if not len(self.counterfactuals):
            raise ValidationError("the explanation has no counterfactual")
        pos = tm.is_positive(self.counterfactuals)
        for k in np.flatnonzero(~np.asarray(pos, dtype=bool)):
            problems.append(f"counterfactual {k} is not accepted by the model")
        space = tm.space
        c0 = space.codes(self.instance.to_frame().T)[0]
        codes = space.codes(self.counterfactuals)
        for k in range(len(self.counterfactuals)):
            diff = {f.name for l, f in enumerate(space) if abs(codes[k][l] - c0[l]) > 1e-9}
            if diff != set(self.changes[k]):
                problems.append(f"counterfactual {k} changes {sorted(diff)}, reported {sorted(self.changes[k])}")
            if self.Tmax is not None and len(diff) > self.Tmax:
                problems.append(f"counterfactual {k} changes {len(diff)} > Tmax={self.Tmax} features")
            for l, f in enumerate(space):
                if f.immutable and f.name in diff:
                    problems.append(f"counterfactual {k} changes immutable feature {f.name!r}")
                if f.increase_only and codes[k][l] < c0[l] - 1e-9:
                    problems.append(f"counterfactual {k} decreases increase-only feature {f.name!r}")
        if problems:
            raise ValidationError("; ".join(problems[:20]) + (" ..." if len(problems) > 20 else ""))
        return self

    # ------------------------------------------------------------------ export
    def to_dict(self) -> dict:
        """JSON-serialisable dict (``from_dict`` rebuilds the result, without the model;
        binned values come back as their interval's text)."""
        return {
            "instance": {k: plain(v) for k, v in self.instance.items()},
            "name": plain(self.instance.name),
            "counterfactuals": frame_records(self.counterfactuals),
            "changes": [list(c) for c in self.changes], "distances": [float(d) for d in self.distances],
            "probabilities": [float(p) for p in self.probabilities],
            "status": self.status.value, "is_optimal": bool(self.is_optimal),
            "solve_time": float(self.solve_time), "method": self.method,
            "distance": plain(self.distance), "solver": self.solver,
            "lower_bound": None if self.lower_bound is None else float(self.lower_bound),
            "objectives": [float(o) for o in self.objectives],
            "Tmax": None if self.Tmax is None else int(self.Tmax),
            "stats": Stats(self.stats).as_dict(),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict) -> "Explanation":
        """Rebuild an :class:`Explanation` from :meth:`to_dict`'s output."""
        cfs = pd.DataFrame(d["counterfactuals"], columns=list(d["instance"]))
        return cls(
            instance=pd.Series(d["instance"], name=d.get("name"), dtype=object), counterfactuals=cfs,
            changes=[list(c) for c in d["changes"]], distances=list(d["distances"]),
            probabilities=np.asarray(d["probabilities"], dtype=float), status=Status(d["status"]),
            is_optimal=d["is_optimal"], solve_time=d["solve_time"], method=d["method"],
            distance=d["distance"], solver=d["solver"],
            lower_bound=d.get("lower_bound", d.get("dual_bound")), stats=Stats(d.get("stats", {})),
            objectives=list(d.get("objectives", [])), Tmax=d.get("Tmax"))


def _dual_bound(self):
    warnings.warn("Explanation.dual_bound is deprecated; use lower_bound", DeprecationWarning, stacklevel=2)
    return self.lower_bound


_init = Explanation.__init__


def _compat_init(self, *args, dual_bound=None, **kwargs):
    """Accept the old constructor argument ``dual_bound=`` (now ``lower_bound``)."""
    if dual_bound is not None and kwargs.get("lower_bound") is None:
        kwargs["lower_bound"] = dual_bound
    _init(self, *args, **kwargs)


_compat_init.__doc__ = _init.__doc__
Explanation.__init__ = _compat_init
Explanation.dual_bound = property(_dual_bound, doc="Deprecated name of :attr:`lower_bound`.")
