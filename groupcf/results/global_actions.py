"""`GlobalExplanation`: the answer of :func:`groupcf.explain_global` — a few shared
actions, who each one is for, what it costs them, and the coverage–k curve with its
certified upper bounds."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from ..features.display import set_column
from ..solvers.base import Status
from .base import ResultBase, Stats, ValidationReport, denoise, html_pre, space_of
from .base import plain as _plain
from .global_rules import Rule, rules_from_json, rules_of, rules_to_json

if TYPE_CHECKING:  # pragma: no cover
    from ..models import TrainedModel

#: one action in raw terms: ``[{"feature", "op": "set" | "shift", "value"}]``
ActionSpec = list[dict[str, Any]]

CURVE_COLUMNS = ["k", "n_covered", "coverage", "mean_cost", "upper_bound", "upper_bound_coverage", "status"]


def _value_to_json(v: Any) -> Any:
    """An action's value as JSON: a bin (``pd.Interval``) as ``{"interval": [l, r, closed]}``."""
    if isinstance(v, pd.Interval):
        return {"interval": [_plain(v.left), _plain(v.right), v.closed]}
    return _plain(v)


def _value_from_json(v: Any) -> Any:
    if isinstance(v, dict) and "interval" in v:
        left, right, closed = v["interval"]
        return pd.Interval(float(left), float(right), closed=closed)
    return v


def _dtype_to_json(dt: Any) -> Any:
    """A column's dtype as JSON: a categorical's categories and order (a ``FeatureSpace``
    reads ordinal features from it), else the dtype's name."""
    if isinstance(dt, pd.CategoricalDtype):
        return {"categories": _plain(list(dt.categories)), "ordered": bool(dt.ordered)}
    return str(dt)


def _frame_from_json(d: dict[str, Any]) -> pd.DataFrame:
    """``S`` back from :meth:`GlobalExplanation.to_dict`, with its columns' dtypes (categorical
    with their categories and order) when they were saved."""
    S = pd.DataFrame(d["data"], index=d["index"], columns=d["columns"]).infer_objects()
    for c, dt in (d.get("dtypes") or {}).items():
        if isinstance(dt, dict):
            S[c] = pd.Categorical(S[c], categories=dt["categories"], ordered=dt["ordered"])
        elif dt in ("int64", "float64", "bool", "int32", "float32"):
            S[c] = S[c].astype(dt)
    return S


def apply_spec(X: pd.DataFrame, spec: ActionSpec) -> pd.DataFrame:
    """Raw rows ``X`` after one action given in raw terms (``[{"feature", "op", "value"}]``:
    ``"set"`` a value, ``"shift"`` by an amount)."""
    out = X.copy()
    for s in spec:
        f, v = s["feature"], s["value"]
        out[f] = out[f] + v if s["op"] == "shift" else set_column(out[f], v)
    return out


@dataclass
class GlobalExplanation(ResultBase):
    """A few shared actions explaining a rejected population ``S``.

    Returned by :func:`groupcf.explain_global` (built by the method, not by hand); part of
    the result family (:class:`~groupcf.results.base.ResultBase`).

    Parameters
    ----------
    actions : pandas.DataFrame
        One row per action (index: action id): ``action`` (in words), ``features``,
        ``n_covered`` (people assigned to it), ``mean_cost`` (theirs), ``for_whom`` (the
        depth-≤2 rule over the raw features that best describes them, :meth:`subgroups`)
        with its ``precision`` and ``recall``.
    specs : list
        Each action in raw terms: ``[{"feature", "op": "set" | "shift", "value"}]``.
    assignment : pandas.Series
        Indexed like ``S``: the action id of each person, ``<NA>`` when uncovered.
    cost : pandas.Series
        Indexed like ``S``: each covered person's cost (MACE's l1 terms × weights), NaN
        when uncovered.
    coverage : float
        Share of ``S`` covered (re-checked with the real model).
    n_covered, n_coverable : int
        People covered, people some action within ``Tmax`` covers.
    mean_cost : float
        Mean cost over the covered people.
    curve : pandas.DataFrame
        One row per ``k' = 1 … k``: ``k, n_covered, coverage, mean_cost, upper_bound``
        (certified: no ``k'`` actions cover more people), ``upper_bound_coverage``, ``status``.
    status : Status
        :class:`~groupcf.solvers.base.Status` of the search.
    is_optimal : bool
        The answer is certified: coverage meets its upper bound (``k=None``: the number of
        actions meets its lower bound too).
    k : int or None
        The number of actions asked for (``None``: as few as cover every coverable person).
    Tmax : int or None
        Most features an action changes.
    numeric : str
        How actions move numeric features (``"shift"`` or ``"set"``).
    solver : str
        The MIP backend used.
    solve_time : float
        Seconds.
    lower_bound : int or None, default None
        With ``k=None``: the certified lower bound on the fewest actions covering every
        coverable person; else ``None``.
    upper_bound : int or None, default None
        Certified upper bound on the people ``k`` actions can cover (the last curve point).
    tree : pandas.DataFrame or None, default None
        With ``assign="tree"``: the assignment tree's leaves (``rule``, ``action_id``,
        ``n``); else ``None``.
    S : pandas.DataFrame, default None
        The explained population (raw features).
    stats : Stats
        Statistics of the search.
    model : TrainedModel or None, default None
        The model, kept for :meth:`validate` (not serialised).
    threshold : float, default 0.5
        The probability from which the search counted a person accepted (serialised).
    rules : dict or None, default None
        Each feature's rules the search ran under (``{name: Rule}``,
        :mod:`~groupcf.results.global_rules`: numeric domain, immutable, increase-only;
        serialised), which :meth:`validate` checks; ``None``: the validating model's.

    Attributes
    ----------
    n_actions : int
        Number of actions.

    See Also
    --------
    groupcf.explain_global : computes it.

    Examples
    --------
    >>> res = gcf.explain_global(S, pipe, Tmax=2, k=3)                  # doctest: +SKIP
    >>> res.curve, res.actions, res.by_group(S["sex"])                  # doctest: +SKIP
    >>> res.apply().head(), res.plot("actions"), res.validate()         # doctest: +SKIP
    """

    kind: ClassVar[str] = "global"

    actions: pd.DataFrame
    specs: list[ActionSpec]
    assignment: pd.Series
    cost: pd.Series
    coverage: float
    n_covered: int
    n_coverable: int
    mean_cost: float
    curve: pd.DataFrame
    status: Status
    is_optimal: bool
    k: int | None
    Tmax: int | None
    numeric: str
    solver: str
    solve_time: float
    lower_bound: int | None = None
    upper_bound: int | None = None
    tree: pd.DataFrame | None = field(default=None, repr=False)
    S: pd.DataFrame = field(default=None, repr=False)
    stats: Stats = field(default_factory=Stats, repr=False)
    model: TrainedModel | None = field(default=None, repr=False, compare=False)
    threshold: float = 0.5
    rules: dict[str, Rule] | None = field(default=None, repr=False, compare=False)

    # ------------------------------------------------------------------ properties
    @property
    def n_actions(self) -> int:
        return len(self.specs)

    @property
    def covered(self) -> pd.Series:
        """Bool per person of ``S``."""
        return self.assignment.notna()

    # ------------------------------------------------------------------ application
    def apply(self, X: pd.DataFrame | None = None) -> pd.DataFrame:
        """Each person's counterfactual: their raw row after their assigned action.

        Parameters
        ----------
        X : pandas.DataFrame or None, default None
            Raw rows whose index labels are people of ``S`` (``None``: ``S``).

        Returns
        -------
        pandas.DataFrame
            Indexed like ``X``; uncovered people unchanged.
        """
        X = self.S if X is None else X
        missing = X.index.difference(self.assignment.index)
        if len(missing):
            raise KeyError(f"rows {list(missing[:10])} are not people of S")
        a = self.assignment.reindex(X.index)
        pieces = [X.loc[a.isna().to_numpy()]]
        for j, spec in enumerate(self.specs):
            rows = (a == j).fillna(False).to_numpy(dtype=bool)
            if rows.any():
                pieces.append(apply_spec(X.loc[rows], spec))
        return pd.concat(pieces).loc[X.index]

    def apply_action(self, j: int, X: pd.DataFrame | None = None) -> pd.DataFrame:
        """Action ``j`` applied to every row of ``X``.

        Parameters
        ----------
        j : int
            The action id.
        X : pandas.DataFrame or None, default None
            Raw rows (``None``: ``S``).

        Returns
        -------
        pandas.DataFrame
            The moved rows, indexed like ``X``.
        """
        return apply_spec(self.S if X is None else X, self.specs[j])

    # ------------------------------------------------------------------ who, and gaps
    def subgroups(self, max_depth: int = 2, X: pd.DataFrame | None = None) -> pd.DataFrame:
        """Who each action is for: the rule over the raw features that best matches the
        people assigned to it (:func:`~groupcf.results.subgroups.best_rule`).

        Parameters
        ----------
        max_depth : int, default 2
            The rule's depth.
        X : pandas.DataFrame or None, default None
            The raw features to describe people with, indexed like ``S`` (``None``: ``S``).

        Returns
        -------
        pandas.DataFrame
            One row per action: the rule, its precision and recall.
        """
        from .subgroups import best_rule

        X = self.S if X is None else X.loc[self.S.index]
        rows = [dict(action_id=j, **best_rule(X, (self.assignment == j).fillna(False).to_numpy(dtype=bool),
                                              max_depth)) for j in range(self.n_actions)]
        return pd.DataFrame(rows, columns=["action_id", "rule", "precision", "recall", "f1", "n_selected"]
                            ).set_index("action_id")

    def by_group(self, groups: str | pd.Series, n_boot: int = 1000, level: float = 0.95,
                 random_state: int | np.random.Generator | None = None) -> pd.DataFrame:
        """Coverage and mean cost per group with bootstrap intervals, and each group's gap
        to the largest group (:func:`~groupcf.results.subgroups.bootstrap_gaps`).

        Parameters
        ----------
        groups
            A column name of ``S`` or a Series indexed like ``S`` (e.g. ``X["sex"]``).
        n_boot, level, random_state
            Bootstrap resamples, interval level, seed.

        Returns
        -------
        pandas.DataFrame
            One row per group: ``n, coverage(_lo, _hi), mean_cost(_lo, _hi),
            coverage_gap(_lo, _hi), cost_gap(_lo, _hi)``.
        """
        from .subgroups import bootstrap_gaps

        g = self._groups(groups)
        return denoise(bootstrap_gaps(self.covered.to_numpy(), self.cost.to_numpy(), g.to_numpy(), n_boot, level,
                                      random_state))

    def actions_by_group(self, groups: str | pd.Series) -> pd.DataFrame:
        """Share of each group assigned to each action.

        Parameters
        ----------
        groups : pandas.Series or array-like
            Group labels, indexed like ``S`` (or aligned with it).

        Returns
        -------
        pandas.DataFrame
            One row per group, one column per action (``"uncovered"`` last).
        """
        g = self._groups(groups)
        text = {j: f"{j}: {t}" for j, t in self.actions["action"].items()}
        a = self.assignment.map(text).astype(object).where(self.covered, "uncovered")
        return pd.crosstab(g.rename("group"), a.rename("action"), normalize="index")

    def _groups(self, groups: str | pd.Series) -> pd.Series:
        if isinstance(groups, str):
            return self.S[groups]
        g = pd.Series(groups)
        return g.loc[self.S.index] if g.index.equals(self.S.index) or set(self.S.index) <= set(g.index) else g

    # ------------------------------------------------------------------ text
    def summary(self) -> str:
        """Readable text: how many people the actions cover, what was certified, and each
        action in words.

        Returns
        -------
        str
            The summary.
        """
        n = len(self.assignment)
        head = (f"Global counterfactual actions (Tmax={self.Tmax}, numeric={self.numeric!r}, {self.solver}): "
                f"{self.n_actions} action(s) cover {self.n_covered} of {n} people "
                f"({100 * self.coverage:.1f} %; {self.n_coverable} coverable), mean cost {self.mean_cost:.3f}.")
        lines = [head]
        asked = self.k if self.k is not None else self.n_actions
        if self.stats.get("unused_actions"):
            lines.append(f"k = {asked} was asked; {self.n_actions} action(s) already cover everyone the best "
                         f"{asked} cover, so the other {self.stats['unused_actions']} would help no one and "
                         "are left out.")
        if self.upper_bound is not None:
            lines.append(f"Certified: no {asked} action(s) cover more than {self.upper_bound} people"
                         + (" — optimal." if self.is_optimal else f" (status {self.status.value})."))
        if self.lower_bound is not None and "share_target" in self.stats:      # k=None, min_coverage
            lines.append(f"Fewest actions covering at least {self.stats['share_target']} people: {self.n_actions} "
                         f"(certified lower bound {self.lower_bound}).")
        elif self.lower_bound is not None:
            lines.append(f"Fewest actions covering every coverable person: {self.n_actions} "
                         f"(certified lower bound {self.lower_bound}).")
        if "coverage_gap" in self.stats:
            by = ", ".join(f"{g} {100 * c:.1f} %" for g, c in self.stats["coverage_by_group"].items())
            lines.append(f"Coverage by {self.stats['fair_by']}: {by} (gap {100 * self.stats['coverage_gap']:.1f} "
                         f"points, bounded by {100 * self.stats['max_gap']:.1f}).")
        for j, row in self.actions.iterrows():
            n_j = int(row["n_covered"])
            lines.append(f"  {j}. {row['action']}: {n_j} {'person' if n_j == 1 else 'people'}, "
                         f"mean cost {row['mean_cost']:.3f}")
            if "for_whom" in row and isinstance(row["for_whom"], str):
                lines.append(f"     for {row['for_whom']} (precision {row['precision']:.2f}, "
                             f"recall {row['recall']:.2f})")
        if self.tree is not None:
            free = self.stats.get("free_assignment_covered")
            lines.append(f"Assigned by a decision tree ({len(self.tree)} leaves)"
                         + (f"; the free assignment covers {free} people." if free is not None else "."))
            for _, leaf in self.tree.iterrows():
                j = int(leaf["action_id"])
                lines.append(f"  if {leaf['rule']}: {'action ' + str(j) if j >= 0 else 'no action'} "
                             f"({int(leaf['n'])} people)")
        if len(self.curve):
            lines.append("Curve:")
            lines.append(self.curve.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return html_pre(self.summary())

    def to_frame(self) -> pd.DataFrame:
        """One row per person of ``S``.

        Returns
        -------
        pandas.DataFrame
            ``action`` id, ``action_text``, ``cost``, ``covered``, indexed like ``S``.
        """
        text = self.actions["action"].to_dict()
        return denoise(pd.DataFrame({"action": self.assignment, "action_text": self.assignment.map(text),
                                     "cost": self.cost, "covered": self.covered}, index=self.assignment.index))

    def plot(self, kind: Any = "curve", ax: Any = None, *,  # type: ignore[override]  # plot(ax) still works: below
             groups: str | pd.Series | None = None) -> Any:
        """Draw one view of the answer (:mod:`groupcf.results.global_plots`).

        Parameters
        ----------
        kind
            ``"curve"`` (coverage and certified upper bound against ``k``, mean cost),
            ``"actions"`` (actions × features: what each action does, and to what share of
            its people) or ``"groups"`` (coverage and mean cost per group, with intervals).
        ax
            A matplotlib axis (a new figure when omitted).
        groups
            For ``kind="groups"``: a column of ``S`` or a Series indexed like ``S``.

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        ValueError
            Unknown ``kind``, or ``kind="groups"`` without ``groups``.
        """
        from . import global_plots as gp

        if not isinstance(kind, str) and ax is None:   # plot(ax) as in the rest of the family
            kind, ax = "curve", kind
        if kind == "curve":
            return gp.plot_curve(self, ax)
        if kind == "actions":
            return gp.plot_actions(self, ax)
        if kind == "groups":
            if groups is None:
                raise ValueError("plot(kind='groups') needs groups=: a column of S or a Series indexed like S")
            return gp.plot_groups(self, groups, ax)
        raise ValueError(f"unknown plot kind {kind!r}; expected 'curve', 'actions' or 'groups'")

    def validate(self, model: Any = None, raise_on_error: bool = True, *, space: Any = None,
                 threshold: float | None = None) -> ValidationReport:
        """Re-check every claim of the result with the real model and the rules the search ran under.

        Parameters
        ----------
        model : object or None, default None
            The model to re-check with (``None``: the one the result was computed with; a
            result read back from JSON needs it).
        raise_on_error : bool, default True
            Raise :class:`~groupcf.exceptions.ValidationError` (carrying the report as
            ``.report``) when a check fails.
        space : FeatureSpace or None, default None
            As in :func:`~groupcf.explain_global`: the fitted ``FeatureSpace`` of a bare
            model, or the training ranges and rules of a preprocessing pipeline. ``None``:
            the rules the search ran under (:attr:`rules`, kept in the JSON too), so a
            result read back from JSON validates exactly as the original; given, its rules
            are checked instead.
        threshold : float or None, default None
            Probability from which a row is accepted (``None``: the search's,
            :attr:`threshold`).

        Returns
        -------
        ValidationReport
            What was checked and what failed.

        Raises
        ------
        ValidationError
            A check failed (with ``raise_on_error``), or no model is known.
        """
        import warnings

        from ..exceptions import ValidationError
        from ..models import TrainedModel, resolve_model

        tm = self.model if model is None else model
        if tm is None:
            raise ValidationError("validate() needs the model (pass model=...)")
        th = self.threshold if threshold is None else float(threshold)
        if isinstance(tm, TrainedModel) and (space is not None or th != tm.threshold):
            tm = tm.model                  # re-resolved below with the space / threshold asked for
        with warnings.catch_warnings():
            if space is None and self.rules is not None:   # the kept rules replace the estimated ranges
                warnings.filterwarnings("ignore", message="numeric ranges estimated")
            tm = resolve_model(tm, space=space, threshold=th)
        rules = self.rules if space is None and self.rules is not None else rules_of(space_of(tm))
        report = self._validation(tm, rules)
        return report.raise_if_failed() if raise_on_error else report

    def _validation(self, tm: TrainedModel, rules: dict[str, Rule] | None = None) -> ValidationReport:
        """Every covered person's counterfactual accepted by the model; every action within
        ``Tmax`` and free of immutable features; no increase-only feature decreased; numeric
        values an action changes inside the domain (a person's own out-of-range value is
        theirs, as in the cover); the coverage figures match the assignment. ``rules``: the
        features' rules (default: the model's space's)."""
        rep = ValidationReport(n_items=len(self.S), checked=[
            "every covered person's counterfactual is accepted by the model",
            f"every action changes at most Tmax={self.Tmax} features and no immutable one",
            "no increase-only feature decreases, every numeric value an action changes is inside its domain",
            "coverage, n_covered and mean_cost match the assignment and the costs"])
        fail = rep.failures
        rules = rules_of(space_of(tm)) if rules is None else rules
        for j, spec in enumerate(self.specs):
            feats = [s["feature"] for s in spec]
            if self.Tmax is not None and len(feats) > self.Tmax:
                fail.append(f"action {j} changes {len(feats)} > Tmax={self.Tmax} features")
            fail += [f"action {j} changes immutable feature {f!r}" for f in feats if rules[f].immutable]
        covered = self.covered.to_numpy()
        if covered.any():
            S = self.S.loc[covered]
            X = self.apply(S)
            pos = np.asarray(tm.is_positive(X), dtype=bool)
            fail += [f"person {label!r} (action {int(self.assignment[label])}) is rejected by the model"
                     for label in X.index[~pos]]
            for r in rules.values():
                tol = 1e-9 * max(1.0, abs(r.high - r.low)) if r.low is not None and r.high is not None else 1e-9
                if r.increase_only:
                    down = r.order(X[r.name]) < r.order(S[r.name]) - tol
                    fail += [f"person {label!r}: increase-only feature {r.name!r} decreases" for label in X.index[down]]
                if r.low is not None and r.high is not None:   # changed values only: a person's own value is theirs
                    v, v0 = X[r.name].to_numpy(dtype=float), S[r.name].to_numpy(dtype=float)
                    fail += [f"person {label!r}: {r.name}={x:g} outside [{r.low:g}, {r.high:g}]"
                             for label, x, x0 in zip(X.index, v, v0)
                             if x != x0 and not r.low - tol <= x <= r.high + tol]
        n_cov = int(covered.sum())
        if n_cov != self.n_covered or abs(self.coverage - n_cov / max(len(self.S), 1)) > 1e-12:
            fail.append(f"n_covered={self.n_covered}, coverage={self.coverage} but {n_cov} people are assigned")
        if self.cost[~covered].notna().any() or self.cost[covered].isna().any():
            fail.append("costs must be given exactly for the covered people")
        if n_cov and not math.isclose(float(self.cost[covered].mean()), self.mean_cost, rel_tol=1e-9, abs_tol=1e-12):
            fail.append(f"mean_cost={self.mean_cost} but the covered people's costs average "
                        f"{float(self.cost[covered].mean())}")
        return rep

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly dict (``S`` as records; the model is not included).

        Returns
        -------
        dict
            Plain JSON-serialisable values (``kind`` names the result class).
        """
        return {
            "kind": self.kind,
            "actions": {"index": [int(i) for i in self.actions.index],
                        "rows": [{c: _plain(v) for c, v in r.items()} for _, r in self.actions.iterrows()]},
            "specs": [[{**sp, "value": _value_to_json(sp["value"])} for sp in spec] for spec in self.specs],
            "assignment": {"index": _plain(list(self.assignment.index)),
                           "values": [None if pd.isna(v) else int(v) for v in self.assignment]},
            "cost": [None if pd.isna(v) else float(v) for v in self.cost],
            "coverage": float(self.coverage), "n_covered": int(self.n_covered),
            "n_coverable": int(self.n_coverable), "mean_cost": _plain(self.mean_cost),
            "curve": [{c: _plain(v) for c, v in r.items()} for _, r in self.curve.iterrows()],
            "status": self.status.value, "is_optimal": bool(self.is_optimal), "k": self.k, "Tmax": self.Tmax,
            "numeric": self.numeric, "solver": self.solver, "solve_time": float(self.solve_time),
            "lower_bound": self.lower_bound, "upper_bound": self.upper_bound,
            "S": None if self.S is None else {"index": _plain(list(self.S.index)), "columns": list(self.S.columns),
                                              "data": _plain(self.S.astype(object).to_numpy().tolist()),
                                              "dtypes": {str(c): _dtype_to_json(self.S[c].dtype) for c in self.S}},
            "stats": self.stats.as_dict(), "threshold": float(self.threshold),
            "rules": None if self.rules is None else rules_to_json(self.rules),
            "tree": None if self.tree is None else {c: _plain(list(self.tree[c])) for c in self.tree.columns},
        }

    def to_json(self, **kwargs: Any) -> str:
        """``to_dict()`` as JSON text.

        Parameters
        ----------
        **kwargs
            Passed to :func:`json.dumps` (e.g. ``indent``).

        Returns
        -------
        str
            The JSON text.
        """
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GlobalExplanation:
        """Rebuild the result from :meth:`to_dict`'s output (without the model).

        Parameters
        ----------
        d : dict
            A ``to_dict()`` output.

        Returns
        -------
        GlobalExplanation
            The result; :meth:`validate` then needs ``model=`` (the search's threshold and
            rules are read back with it).

        Raises
        ------
        ValueError
            ``d`` is another kind of result.
        """
        cls.check_kind(d)
        idx = d["assignment"]["index"]
        acts = pd.DataFrame(d["actions"]["rows"], index=pd.Index(d["actions"]["index"], name="action_id"))
        if "features" in acts:
            acts["features"] = acts["features"].apply(list)
        S = None
        if d.get("S") is not None:
            S = _frame_from_json(d["S"])
        mean = d["mean_cost"]
        specs = [[{**sp, "value": _value_from_json(sp["value"])} for sp in spec] for spec in d["specs"]]
        return cls(actions=acts, specs=specs,
                   assignment=pd.Series(d["assignment"]["values"], index=idx, dtype="Int64", name="action"),
                   cost=pd.Series([np.nan if v is None else v for v in d["cost"]], index=idx, dtype=float, name="cost"),
                   coverage=d["coverage"], n_covered=d["n_covered"], n_coverable=d["n_coverable"],
                   mean_cost=math.nan if mean is None else mean,
                   curve=pd.DataFrame(d["curve"], columns=CURVE_COLUMNS), status=Status(d["status"]),
                   is_optimal=d["is_optimal"], k=d["k"], Tmax=d["Tmax"], numeric=d["numeric"], solver=d["solver"],
                   solve_time=d["solve_time"], lower_bound=d["lower_bound"], upper_bound=d["upper_bound"], S=S,
                   stats=Stats(d.get("stats") or {}), threshold=float(d.get("threshold", 0.5)),
                   rules=rules_from_json(d.get("rules")),
                   tree=None if d.get("tree") is None else pd.DataFrame(d["tree"]).rename_axis("leaf"))

    @classmethod
    def from_json(cls, s: str) -> GlobalExplanation:
        """Rebuild the result from :meth:`to_json`'s output (without the model).

        Parameters
        ----------
        s : str
            A ``to_json()`` output.

        Returns
        -------
        GlobalExplanation
            The result; :meth:`validate` then needs ``model=`` (the search's threshold and
            rules are read back with it).
        """
        return cls.from_dict(json.loads(s))
