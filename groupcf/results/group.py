"""`GroupExplanation`: the answer of :func:`groupcf.explain_group`, and its audits."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..features.display import bin_label, show_value
from ..solvers.base import Status
from .base import ResultBase, Stats, ValidationReport, space_of
from .base import plain as _plain

if TYPE_CHECKING:  # pragma: no cover
    from ..models import TrainedModel


@dataclass
class GroupExplanation(ResultBase):
    """One-for-many counterfactual explanations of a group ``S``.

    Returned by :func:`groupcf.explain_group` (built by the methods, not by hand); part of
    the result family (:class:`~groupcf.results.base.ResultBase`).

    Parameters
    ----------
    n_explanations : int
        Number of counterfactual points used (the objective).
    lower_bound : int
        Proven lower bound on the optimal number (``ceil`` of the LP bound, or Farley's
        bound when stopped early).
    is_optimal : bool
        ``n_explanations == lower_bound``: certified optimal.
    status : Status
        :class:`~groupcf.solvers.base.Status` of the search.
    counterfactuals : pandas.DataFrame
        One row per explanation (index: explanation id), raw feature values.
    assignment : pandas.Series
        Indexed like ``S``: the explanation id of each instance (``-1`` for an
        unexplained instance with ``allow_partial=True``).
    changed_features : dict
        ``{explanation id: [original features]}``: the change set shared by the
        subgroup (every feature where some member differs from the counterfactual).
    Tmax : int
        Most original features changed per instance.
    method : str
        ``"colgen"`` or ``"compact"``.
    solver : str
        The MIP backend used.
    solve_time : float
        Seconds.
    S : pandas.DataFrame
        The explained group (raw features).
    expanded : numpy.ndarray
        The counterfactuals in the expanded 0/1 space, one row each.
    unexplained : list
        Index labels of ``S`` with no counterfactual within ``Tmax`` (``allow_partial``).
    stats : Stats
        Iterations, columns, time in master / pricing / auxiliary / final IP, ...
    model : TrainedModel or None, default None
        The model, kept for :meth:`validate` (not serialised).

    See Also
    --------
    groupcf.explain_group : computes it.

    Examples
    --------
    >>> res = gcf.explain_group(S, pipe, Tmax=2)                        # doctest: +SKIP
    >>> print(res.summary()); res.to_frame().head()                     # doctest: +SKIP
    >>> gcf.GroupExplanation.from_json(res.to_json())                   # doctest: +SKIP
    """

    n_explanations: int
    lower_bound: int
    is_optimal: bool
    status: Status
    counterfactuals: pd.DataFrame
    assignment: pd.Series
    changed_features: dict[int, list[str]]
    Tmax: int
    method: str
    solver: str
    solve_time: float
    S: pd.DataFrame = field(repr=False)
    expanded: np.ndarray = field(repr=False)              # counterfactuals, expanded
    unexplained: list[Any] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    model: TrainedModel | None = field(default=None, repr=False, compare=False)

    kind = "group"

    # ------------------------------------------------------------------ display
    def __repr__(self) -> str:
        opt = ("proven optimal" if self.is_optimal
               else f"not proven: lower bound {self.lower_bound}, status {self.status.value}")
        return (f"GroupExplanation({self.n_explanations} explanation(s) for {len(self.S)} instance(s), "
                f"Tmax={self.Tmax}, {opt}, method={self.method}, "
                f"solver={self.solver}, {self.solve_time:.2f}s)")

    def summary(self) -> str:
        """Readable text: what each subgroup must change, and to what.

        A binned feature shows its bin with the real bounds and a representative value
        (:func:`groupcf.features.display.show_value`); explanations that would read alike (same
        changes) also name the values their members keep that tell them apart (``with AgeGroup =
        25 - 45``).

        Returns
        -------
        str
            The summary.
        """
        lines = [repr(self)]
        sizes = self.assignment.value_counts()
        keeps = self._separating()
        for k, cf in self.counterfactuals.iterrows():
            members = self.assignment.index[self.assignment == k]
            feats = self.changed_features[k]
            change = ", ".join(f"{c} -> {self._show(c, cf[c])}" for c in feats) or "(nothing)"
            who = f" with {', '.join(keeps[k])}" if keeps.get(k) else ""
            lines.append(f"  explanation {k}: {int(sizes.get(k, 0))} instance(s){who} set {change}")
            for c in feats:
                before = pd.Series([self._show(c, v, False) for v in self.S.loc[members, c]]).value_counts()
                lines.append(f"      {c}: from " + ", ".join(f"{v} ({n})" for v, n in before.items()))
        if self.unexplained:
            lines.append(f"  unexplained (no counterfactual within Tmax): {self.unexplained}")
        return "\n".join(lines)

    def _show(self, c: str, v: Any, representative: bool = True) -> str:
        """``v`` of feature ``c`` as text (a bin: real bounds, and its representative value
        when ``representative``)."""
        space = None if self.model is None else self.model.space
        f = None if space is None else space[c]
        if not representative and isinstance(v, pd.Interval) and f is not None and f.edges is not None:
            return bin_label(f, v)
        return show_value(f, v)

    def _separating(self, most: int = 3) -> dict[int, list[str]]:
        """For each explanation whose changes read like another's: ``"feature = value"`` for
        the features outside its change set where its counterfactual differs from those
        others (values its members keep), the rarest among them first (the values that tell
        it apart from most of the others; at most ``most``, then ``"..."``)."""
        texts: dict[str, list[int]] = {}
        for k, cf in self.counterfactuals.iterrows():
            feats = self.changed_features[k]
            texts.setdefault(repr([(c, self._show(c, cf[c])) for c in feats]), []).append(k)
        out: dict[int, list[str]] = {}
        for same in texts.values():
            for k in same if len(same) > 1 else ():
                cf = self.counterfactuals.loc[k]
                shown = {c: self._show(c, cf[c], False) for c in self.counterfactuals.columns}
                # how many alike explanations share k's value of c (those that differ: c tells them apart)
                sharing = {c: sum(self._show(c, self.counterfactuals.loc[j, c], False) == shown[c] for j in same)
                           for c in self.counterfactuals.columns if c not in self.changed_features[k]}
                diff = sorted((c for c, n in sharing.items() if n < len(same)), key=lambda c: sharing[c])
                out[k] = [f"{c} = {shown[c]}" for c in diff[:most]] + (["..."] if len(diff) > most else [])
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per instance of ``S``: its explanation and its changes.

        Returns
        -------
        pandas.DataFrame
            Indexed like ``S``: the explanation id (``-1``: unexplained), the number and names
            of the features it changes, and the values it moves to (a bin with its real bounds
            and representative value).
        """
        rows: list[dict[str, Any]] = []
        for k in self.assignment.to_numpy():
            feats = self.changed_features.get(k, []) if k != -1 else []
            cf = self.counterfactuals.loc[k] if k != -1 else None
            rows.append({"explanation": int(k), "n_changed": len(feats), "changed": ", ".join(feats),
                         "to": ", ".join(f"{c}={self._show(c, cf[c])}" for c in feats) if cf is not None else ""})
        return pd.DataFrame(rows, index=self.S.index)

    def plot(self, ax: Any = None) -> Any:
        """The explanations × features heat map (:meth:`plot_heatmap`).

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None, default None
            Where to draw (``None``: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        return self.plot_heatmap(ax=ax)

    # ------------------------------------------------------------------ audits
    def feature_frequencies(self, per: str = "explanation", by: str | pd.Series | None = None,
                            ) -> pd.Series | pd.DataFrame:
        """How often each original feature is perturbed.

        Parameters
        ----------
        per : {"explanation", "instance"}, default "explanation"
            Count explanations whose change set contains the feature, or instances whose
            explanation changes it (every member of a subgroup shares its change set).
        by : str, pandas.Series or None, default None
            A column of ``S`` or a Series indexed like ``S``: split the instance counts per group.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            Counts per feature, most frequent first; with ``by``, a DataFrame features × groups.

        Raises
        ------
        ValueError
            An unknown ``per``.
        """
        features = list(self.S.columns)
        if per not in ("explanation", "instance"):
            raise ValueError("per must be 'explanation' or 'instance'")
        if by is None:
            if per == "explanation":
                counts = {f: sum(f in v for v in self.changed_features.values()) for f in features}
            else:
                counts = {f: int(sum(f in self.changed_features.get(k, []) for k in self.assignment)) for f in features}
            return pd.Series(counts, name=f"per_{per}").sort_values(ascending=False)
        groups = self.S[by] if isinstance(by, str) else pd.Series(by).reindex(self.S.index)
        rows: dict[Any, dict[str, int]] = {}
        for g, idx in groups.groupby(groups, observed=True).groups.items():
            sub = self.assignment.loc[idx]
            if per == "instance":
                rows[g] = {f: int(sum(f in self.changed_features.get(k, []) for k in sub)) for f in features}
            else:
                ks = set(sub) - {-1}
                rows[g] = {f: sum(f in self.changed_features[k] for k in ks) for f in features}
        return pd.DataFrame(rows).loc[features]

    def plot_heatmap(self, ax: Any = None, expanded: bool = True) -> Any:
        """Explanations × features heatmap (paper Figs. 1–2).

        Which expanded columns each counterfactual sets, with the changed ones highlighted.

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None, default None
            Where to draw (``None``: a new figure).
        expanded : bool, default True
            One column per expanded (0/1) column when the model's space is known; else one per
            original feature.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        import matplotlib.pyplot as plt

        space = self.model.space if self.model is not None else None
        if ax is None:
            width = 0.35 * (self.expanded.shape[1] if expanded else len(self.S.columns)) + 3
            _, ax = plt.subplots(figsize=(min(width, 30), 0.5 * self.n_explanations + 2))
        if expanded and space is not None:
            M = np.zeros_like(self.expanded)
            for k in range(self.n_explanations):
                for c in self.changed_features[k]:
                    cols = space[c].columns
                    M[k, cols] = np.where(self.expanded[k, cols] > 0.5, 2.0, 0.5)
            labels = list(space.get_feature_names_out())
        else:
            M = np.array([[1.0 if c in self.changed_features[k] else 0.0 for c in self.S.columns]
                          for k in range(self.n_explanations)])
            labels = list(self.S.columns)
        ax.imshow(M, aspect="auto", cmap="Blues", vmin=0, vmax=2)
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
        ax.set_yticks(range(self.n_explanations),
                      [f"#{k} ({int((self.assignment == k).sum())})" for k in range(self.n_explanations)])
        ax.set_xlabel("feature (dark: value the subgroup moves to; light: other values of a changed feature)")
        ax.set_ylabel("explanation (subgroup size)")
        ax.set_title(f"{self.n_explanations} group counterfactuals, Tmax={self.Tmax}")
        ax.figure.tight_layout()
        return ax

    def plot_frequencies(self, per: str = "instance", by: str | None = None, ax: Any = None) -> Any:
        """Bar chart of perturbed-feature frequencies (paper Figs. 3–5).

        Parameters
        ----------
        per : {"instance", "explanation"}, default "instance"
            As in :meth:`feature_frequencies`.
        by : str or None, default None
            A column of ``S`` (e.g. race or sex) splitting the bars.
        ax : matplotlib.axes.Axes or None, default None
            Where to draw (``None``: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        import matplotlib.pyplot as plt

        freq = self.feature_frequencies(per=per, by=by)
        if ax is None:
            _, ax = plt.subplots(figsize=(8, 4))
        freq.plot.bar(ax=ax)
        ax.set_ylabel(f"count per {per}")
        ax.set_title("perturbed features" + (f" by {by}" if by else ""))
        ax.figure.tight_layout()
        return ax

    # ------------------------------------------------------------------ checks
    def _validation(self, tm: TrainedModel) -> ValidationReport:
        """Every counterfactual accepted by the model; each change set within ``Tmax``
        and free of immutable features; every instance covered (or listed unexplained),
        equal to its counterfactual outside the change set, never decreasing an
        increase-only feature."""
        rep = ValidationReport(n_items=len(self.S), checked=[
            "every counterfactual is accepted by the model",
            f"every change set has at most Tmax={self.Tmax} features and no immutable one",
            "every instance is covered or listed as unexplained",
            "each instance equals its counterfactual outside the change set",
            "no increase-only feature decreases"])
        problems = rep.failures
        if len(self.counterfactuals):
            pos = tm.is_positive(self.counterfactuals)
            for k in np.flatnonzero(~pos).tolist():
                problems.append(f"explanation {k} is not accepted by the model")
        space = space_of(tm)
        codes_S = space.codes(self.S)
        codes_cf = space.codes(self.counterfactuals) if len(self.counterfactuals) else np.zeros((0, len(space)))
        names = [f.name for f in space]
        for k, feats in self.changed_features.items():
            if len(feats) > self.Tmax:
                problems.append(f"explanation {k} changes {len(feats)} > Tmax={self.Tmax} features")
            for c in feats:
                if space[c].immutable:
                    problems.append(f"explanation {k} changes immutable feature {c!r}")
        for r, (label, k) in enumerate(self.assignment.items()):
            if k == -1:
                if label not in self.unexplained:
                    problems.append(f"instance {label!r} is not covered")
                continue
            if k not in self.changed_features:
                problems.append(f"instance {label!r} assigned to unknown explanation {k}")
                continue
            diff = [names[l] for l in np.flatnonzero(np.abs(codes_S[r] - codes_cf[k]) > 1e-9)]
            outside = set(diff) - set(self.changed_features[k])
            if outside:
                problems.append(f"instance {label!r} differs from explanation {k} outside its change set: {sorted(outside)}")
            for l, f in enumerate(space):
                if f.increase_only and codes_cf[k][l] < codes_S[r][l] - 1e-9:
                    problems.append(f"instance {label!r} would have to decrease increase-only {f.name!r}")
        if set(self.assignment.index) != set(self.S.index):
            problems.append("the assignment is not indexed like S")
        return rep

    # ------------------------------------------------------------------ export
    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict (without the model).

        Returns
        -------
        dict
            Plain JSON-serialisable values (``kind`` names the result class).
        """
        return {
            "kind": self.kind,
            "n_explanations": int(self.n_explanations), "lower_bound": int(self.lower_bound),
            "is_optimal": bool(self.is_optimal), "status": self.status.value, "Tmax": int(self.Tmax),
            "method": self.method, "solver": self.solver, "solve_time": float(self.solve_time),
            "counterfactuals": [{c: _plain(v) for c, v in row.items()} for _, row in self.counterfactuals.iterrows()],
            "assignment": {str(k): int(v) for k, v in self.assignment.items()},
            "index": [_plain(i) for i in self.S.index],
            "changed_features": {str(k): list(v) for k, v in self.changed_features.items()},
            "S": [{c: _plain(v) for c, v in row.items()} for _, row in self.S.iterrows()],
            "expanded": self.expanded.tolist(),
            "unexplained": [_plain(u) for u in self.unexplained],
            "stats": Stats(self.stats).as_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GroupExplanation:
        """Rebuild the result from :meth:`to_dict`'s output (without the model).

        Parameters
        ----------
        d : dict
            A ``to_dict()`` output.

        Returns
        -------
        GroupExplanation
            The result; :meth:`validate` then needs ``model=``.

        Raises
        ------
        ValueError
            ``d`` is another kind of result.
        """
        cls.check_kind(d)
        index = d["index"]
        S = pd.DataFrame(d["S"], index=index)
        return cls(
            n_explanations=d["n_explanations"], lower_bound=d["lower_bound"], is_optimal=d["is_optimal"],
            status=Status(d["status"]), counterfactuals=pd.DataFrame(d["counterfactuals"]),
            assignment=pd.Series([d["assignment"][str(i)] for i in index], index=index, name="explanation"),
            changed_features={int(k): v for k, v in d["changed_features"].items()}, Tmax=d["Tmax"],
            method=d["method"], solver=d["solver"], solve_time=d["solve_time"], S=S,
            expanded=np.array(d["expanded"], dtype=float).reshape(len(d["counterfactuals"]), -1),
            unexplained=d["unexplained"], stats=d["stats"])
