"""Result of a single-instance counterfactual search."""
from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..features.display import show_value
from .base import ResultBase, Stats, Status, ValidationReport, denoise, frame_records, plain, space_of

if TYPE_CHECKING:  # pragma: no cover
    from ..features.space import FeatureSpace
    from ..models import TrainedModel

_plain = plain  # older name, still imported by callers


def describe_changes(instance: pd.Series, cf: pd.Series, features: list[str],
                     space: FeatureSpace | None = None) -> str:
    """``"AgeGroup: Less25 -> 25-45, Race: ..."`` for the listed features; with the
    ``space``, a bin shows its real bounds and a representative value
    (:func:`groupcf.features.display.show_value`: ``duration: 24 -> [4, 12) (~8)``)."""
    def show(c: str, v: Any) -> str:
        return show_value(None if space is None else space[c], v)

    return ", ".join(f"{c}: {show(c, instance[c])} -> {show(c, cf[c])}" for c in features) or "(no change)"


@dataclass
class Explanation(ResultBase):
    """Counterfactual explanation(s) of one instance.

    Returned by :func:`groupcf.explain` (built by the methods, not by hand); part of the
    result family (:class:`~groupcf.results.base.ResultBase`).

    Parameters
    ----------
    instance : pandas.Series
        The explained instance (one row of raw features).
    counterfactuals : pandas.DataFrame
        One row per counterfactual (index ``0..n-1``), raw feature values, best first.
        Features that a counterfactual does not change keep the instance's raw value; a
        changed binned numeric feature shows its bin (a ``pd.Interval``).
    changes : list of list of str
        Per counterfactual, the list of changed original features.
    distances : list of float
        Per counterfactual, its distance to the instance under the distance that
        ``distance_name`` names — the one the method minimised. For MACE (and GeCo with
        ``distance=``) it is MACE's normalised mix of l0 / l1 / linf
        (:mod:`groupcf.formulations.distances`; l0 is the *fraction* of original features
        changed, ``len(changes[k])`` the count), the same value
        :func:`groupcf.metrics.proximity` computes from the raw rows. For GeCo with its
        own distance the label starts with ``"geco:"`` and the values are GeCo's distance,
        which is *not* comparable with MACE's: to compare methods, use
        :func:`groupcf.metrics.proximity` with the same weights for all of them.
    probabilities : numpy.ndarray
        Per counterfactual, the real model's probability of the positive class.
    status : Status
        :class:`~groupcf.solvers.base.Status` of the (first) search.
    is_optimal : bool
        Every returned counterfactual was proven optimal (for ``n > 1``: optimal given the
        previous ones).
    solve_time : float
        Seconds.
    method : str, default "mace"
        The method that found it (``"mace"``, ``"geco"``, ``"pso"``).
    distance_name : str, default "l0"
        The distance's name, e.g. ``"l1"`` or ``"0.1*l0+0.9*l1"`` (MACE's), or
        ``"geco:..."`` (GeCo's own). ``distance`` is its deprecated name (reading it
        warns; the constructor still accepts ``distance=``).
    solver : str, default "highs"
        The MIP backend used (MACE).
    lower_bound : float or None, default None
        Proven lower bound on the best distance (the MIP dual bound), when reported.
        ``dual_bound`` is its deprecated name.
    stats : Stats
        :class:`~groupcf.results.base.Stats` of the search.
    objectives : list of float
        Per counterfactual, the solver's objective value (equals ``distances`` up to
        solver tolerances); empty for methods that do not solve a MIP.
    Tmax : int or None, default None
        The limit on changed features the search used (``None``: none).
    model : TrainedModel or None, default None
        The model, kept for :meth:`validate` (not serialised).

    Attributes
    ----------
    changed_features : dict
        ``{counterfactual id: [original features]}`` (same shape as
        :attr:`GroupExplanation.changed_features <groupcf.results.group.GroupExplanation>`);
        ``changed_features[0]`` is the best counterfactual's change set.
    n_changed : list of int
        Per counterfactual, the number of original features it changes.
    n_counterfactuals : int
        How many counterfactuals were found.

    See Also
    --------
    groupcf.explain : computes it.
    groupcf.metrics.proximity : the same distances from the raw rows.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> X = pd.DataFrame({"income": [1, 2, 3, 4, 5, 6], "debt": ["hi", "hi", "lo", "hi", "lo", "lo"]})
    >>> pipe = make_pipeline(gcf.FeatureSpace(), LogisticRegression(C=100)).fit(X, [0, 0, 1, 0, 1, 1])
    >>> exp = gcf.explain(X.iloc[0], pipe)
    >>> exp.changes, exp.distances, exp.is_optimal        # l0: 1 of the 2 features changed
    ([['income']], [0.5], True)
    >>> exp.validate()
    ValidationReport(ok=True, ...)
    >>> gcf.Explanation.from_json(exp.to_json()).changes == exp.changes
    True
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
    distance_name: object = "l0"
    solver: str = "highs"
    lower_bound: float | None = None
    stats: Stats = field(default_factory=Stats)
    objectives: list[float] = field(default_factory=list)
    Tmax: int | None = None
    model: TrainedModel | None = field(default=None, repr=False, compare=False)

    kind = "explanation"

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
        proof = ("proven optimal" if self.is_optimal else f"status {self.status.value}")
        bound = "" if self.lower_bound is None else f", lower bound {self.lower_bound:.4g}"
        return (f"{self.method}, distance {self.distance_name}, {proof}{bound}, "
                f"solver {self.solver}, {self.solve_time:.3f}s")

    def _lines(self) -> list[str]:
        """One line per counterfactual: its distance, probability, the changes, and the
        unchanged features in which counterfactuals differ from each other (so two
        counterfactuals never print identically)."""
        lines: list[str] = []
        for k, (_, cf) in enumerate(self.counterfactuals.iterrows()):
            lines.append(f"  #{k} distance={self.distances[k]:.4g} p={self.probabilities[k]:.3f}: "
                         + describe_changes(self.instance, cf, self.changes[k], self._space()))
        return lines

    def _space(self) -> FeatureSpace | None:
        return None if self.model is None else self.model.space

    def __repr__(self) -> str:
        return "\n".join([f"Explanation({self.n_counterfactuals} counterfactual(s); {self._head()})",
                          *self._lines()])

    def summary(self) -> str:
        """Readable text: each counterfactual's distance, probability and changes (from
        the instance's value to the new one), then how it was found and what was proven.

        Returns
        -------
        str
            The summary.
        """
        name = "" if self.instance.name is None else f" of instance {plain(self.instance.name)!r}"
        return "\n".join([f"{self.n_counterfactuals} counterfactual(s){name}", *self._lines(),
                          f"  ({self._head()})"])

    def to_frame(self) -> pd.DataFrame:
        """The counterfactuals (raw values) with their distance, probability, number and
        names of changed features.

        A changed binned feature shows its bin with the real bounds and a representative value
        (``"[4, 12) (~8)"``, :func:`groupcf.features.display.show_value`) when the model is known.

        Returns
        -------
        pandas.DataFrame
            Index ``0..n-1``, best first.
        """
        df = self.counterfactuals.copy()
        space = self._space()
        if space is not None:
            for c in df.columns:
                if any(isinstance(v, pd.Interval) for v in df[c]):
                    df[c] = [show_value(space[c], v) if isinstance(v, pd.Interval) else v for v in df[c]]
        df["distance"] = [float(d) for d in self.distances]
        df["probability"] = np.asarray(self.probabilities, dtype=float)
        df["n_changed"] = self.n_changed
        df["changed"] = [", ".join(c) for c in self.changes]
        return denoise(df)

    def plot(self, ax: Any = None) -> Any:
        """Counterfactuals × changed features: each cell shows the new value of a feature
        a counterfactual changes (blank: kept).

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None, default None
            Where to draw (``None``: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        import matplotlib.pyplot as plt

        feats = list(dict.fromkeys(f for c in self.changes for f in c))
        if ax is None:
            _, ax = plt.subplots(figsize=(max(4.0, 1.6 * len(feats) + 2), 0.5 * self.n_counterfactuals + 1.5))
        M = np.array([[1.0 if f in c else 0.0 for f in feats] for c in self.changes]).reshape(
            self.n_counterfactuals, len(feats))
        ax.imshow(M, aspect="auto", cmap="Blues", vmin=0, vmax=1.6)
        for k, (_, cf) in enumerate(self.counterfactuals.iterrows()):
            for j, f in enumerate(feats):
                if f in self.changes[k]:
                    ax.text(j, k, str(cf[f]), ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(feats)), [f"{f}\n(was {self.instance[f]})" for f in feats], fontsize=8)
        ax.set_yticks(range(self.n_counterfactuals),
                      [f"#{k} d={self.distances[k]:.3g}" for k in range(self.n_counterfactuals)])
        ax.set_title(f"{self.n_counterfactuals} counterfactual(s), {self.method}")
        ax.figure.tight_layout()
        return ax

    # ------------------------------------------------------------------ checks
    def _validation(self, tm: TrainedModel) -> ValidationReport:
        """Every counterfactual accepted by the model, its change set as reported,
        immutable features unchanged, increase-only ones not decreased, at most ``Tmax``
        changes."""
        rep = ValidationReport(n_items=len(self.counterfactuals), checked=[
            "every counterfactual is accepted by the model",
            "each change set is the one reported",
            "immutable features are unchanged, increase-only features not decreased",
            f"at most Tmax={self.Tmax} features change" if self.Tmax is not None else "no Tmax to check"])
        if not len(self.counterfactuals):
            rep.failures.append("the explanation has no counterfactual")
            return rep
        pos = tm.is_positive(self.counterfactuals)
        for k in np.flatnonzero(~np.asarray(pos, dtype=bool)).tolist():
            rep.failures.append(f"counterfactual {k} is not accepted by the model")
        space = space_of(tm)
        c0 = space.codes(self.instance.to_frame().T)[0]
        codes = space.codes(self.counterfactuals)
        for k in range(len(self.counterfactuals)):
            diff = {f.name for l, f in enumerate(space) if abs(codes[k][l] - c0[l]) > 1e-9}
            if diff != set(self.changes[k]):
                rep.failures.append(f"counterfactual {k} changes {sorted(diff)}, reported {sorted(self.changes[k])}")
            if self.Tmax is not None and len(diff) > self.Tmax:
                rep.failures.append(f"counterfactual {k} changes {len(diff)} > Tmax={self.Tmax} features")
            for l, f in enumerate(space):
                if f.immutable and f.name in diff:
                    rep.failures.append(f"counterfactual {k} changes immutable feature {f.name!r}")
                if f.increase_only and codes[k][l] < c0[l] - 1e-9:
                    rep.failures.append(f"counterfactual {k} decreases increase-only feature {f.name!r}")
        return rep

    # ------------------------------------------------------------------ export
    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict (binned values come back as their interval's text).

        Returns
        -------
        dict
            Plain JSON-serialisable values (``kind`` names the result class).
        """
        return {
            "kind": self.kind,
            "instance": {k: plain(v) for k, v in self.instance.items()},
            "name": plain(self.instance.name),
            "counterfactuals": frame_records(self.counterfactuals),
            "changes": [list(c) for c in self.changes], "distances": [float(d) for d in self.distances],
            "probabilities": [float(p) for p in self.probabilities],
            "status": self.status.value, "is_optimal": bool(self.is_optimal),
            "solve_time": float(self.solve_time), "method": self.method,
            "distance": plain(self.distance_name), "solver": self.solver,
            "lower_bound": None if self.lower_bound is None else float(self.lower_bound),
            "objectives": [float(o) for o in self.objectives],
            "Tmax": None if self.Tmax is None else int(self.Tmax),
            "stats": Stats(self.stats).as_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Explanation:
        """Rebuild the result from :meth:`to_dict`'s output (without the model).

        Parameters
        ----------
        d : dict
            A ``to_dict()`` output.

        Returns
        -------
        Explanation
            The result; :meth:`validate` then needs ``model=``.
        """
        cfs = pd.DataFrame(d["counterfactuals"], columns=list(d["instance"]))
        return cls(
            instance=pd.Series(d["instance"], name=d.get("name"), dtype=object), counterfactuals=cfs,
            changes=[list(c) for c in d["changes"]], distances=list(d["distances"]),
            probabilities=np.asarray(d["probabilities"], dtype=float), status=Status(d["status"]),
            is_optimal=d["is_optimal"], solve_time=d["solve_time"], method=d["method"],
            distance_name=d["distance"], solver=d["solver"],
            lower_bound=d.get("lower_bound", d.get("dual_bound")), stats=Stats(d.get("stats", {})),
            objectives=list(d.get("objectives", [])), Tmax=d.get("Tmax"))


def _dual_bound(self: Explanation) -> float | None:
    warnings.warn("Explanation.dual_bound is deprecated; use lower_bound", DeprecationWarning, stacklevel=2)
    return self.lower_bound


_init = Explanation.__init__


def _compat_init(self: Explanation, *args: Any, dual_bound: float | None = None, distance: object = None,
                 **kwargs: Any) -> None:
    """Accept the old constructor arguments ``dual_bound=`` (now ``lower_bound``) and
    ``distance=`` (now ``distance_name``)."""
    if dual_bound is not None and kwargs.get("lower_bound") is None:
        kwargs["lower_bound"] = dual_bound
    if distance is not None:
        kwargs.setdefault("distance_name", distance)
    _init(self, *args, **kwargs)


_compat_init.__doc__ = _init.__doc__
_compat_init.__signature__ = inspect.signature(_init)  # type: ignore[attr-defined]  # the fields, as documented
Explanation.__init__ = _compat_init  # type: ignore[method-assign]  # the old keywords, kept for one release
Explanation.dual_bound = property(  # type: ignore[attr-defined]  # deprecated alias, added after the class
    _dual_bound, doc="Deprecated name of :attr:`lower_bound`.")


def _distance(self: Explanation) -> object:
    warnings.warn("Explanation.distance is renamed distance_name (the values are in distances)",
                  FutureWarning, stacklevel=2)
    return self.distance_name


Explanation.distance = property(  # type: ignore[attr-defined]  # deprecated alias, added after the class
    _distance, doc="Deprecated name of :attr:`distance_name`.")
