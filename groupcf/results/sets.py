"""Results of many explanations: :class:`ExplanationSet` (``gcf.explain_many``: one
explanation per row) and :class:`GroupExplanationSet` (``gcf.explain_groups``: one group
explanation per subgroup). Both are members of the result family
(:class:`~groupcf.results.base.ResultBase`)."""
from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..exceptions import InvalidInputError
from ..solvers.base import Status
from .base import ResultBase, Stats, ValidationReport, frame_records, plain, space_of
from .group import GroupExplanation

if TYPE_CHECKING:  # pragma: no cover
    from ..audit import Audit
    from ..models import TrainedModel

__all__ = ["TABLE_COLUMNS", "ExplanationSet", "GroupExplanationSet", "read_checkpoint", "write_part"]

TABLE_COLUMNS = ["status", "found", "distance", "n_changed", "changed", "probability",
                 "time", "error"]


@dataclass
class ExplanationSet(ResultBase):
    """Explanations of many rows (:func:`groupcf.explain_many`).

    Built by :func:`groupcf.explain_many`; part of the result family
    (:class:`~groupcf.results.base.ResultBase`).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per input row, indexed like ``X`` (columns :data:`TABLE_COLUMNS`: solver
        status or the error's class, whether a counterfactual was found, its distance,
        number and ``;``-joined names of features changed, the model's probability after,
        seconds, error message).
    counterfactuals : pandas.DataFrame
        Long table: input ``row``, ``rank``, ``distance``, raw feature values as strings.
    method : str, default "mace"
        The method used.
    solve_time : float
        Wall-clock seconds of the whole call.
    X : pandas.DataFrame or None, default None
        The explained rows (for :meth:`validate`), when known.
    model : TrainedModel or None, default None
        The model, kept for :meth:`validate` (not serialised).
    stats : Stats
        Statistics of the run (empty unless a caller adds some).

    Attributes
    ----------
    status : Status
        ``optimal`` when every row was explained and proven optimal; ``error`` when a row
        failed; otherwise the first non-optimal status met.
    failed : pandas.DataFrame
        The rows of ``table`` whose explanation raised.

    See Also
    --------
    groupcf.explain_many : computes it.

    Examples
    --------
    >>> res = gcf.explain_many(X_rejected, pipe, Tmax=2, n_jobs=2)      # doctest: +SKIP
    >>> res.table.head(), res.failed, res.validate()                    # doctest: +SKIP
    """

    table: pd.DataFrame
    counterfactuals: pd.DataFrame = field(default_factory=pd.DataFrame)
    method: str = "mace"
    solve_time: float = math.nan
    X: pd.DataFrame | None = field(default=None, repr=False)
    model: TrainedModel | None = field(default=None, repr=False, compare=False)
    stats: Stats = field(default_factory=Stats)

    kind = "explanation_set"

    def __post_init__(self) -> None:
        if not isinstance(self.stats, Stats):
            self.stats = Stats(self.stats or {})

    # ------------------------------------------------------------------ family
    @property
    def status(self) -> Status:
        """``optimal`` when every row was explained and proven optimal; ``error`` when a
        row failed; otherwise the first non-optimal status met."""
        if len(self.failed):
            return Status.ERROR
        others = [s for s in self.table["status"].astype(str).str.lower() if s != "optimal"]
        if not others:
            return Status.OPTIMAL
        try:
            return Status(others[0])
        except ValueError:
            return Status.FEASIBLE

    @property
    def is_optimal(self) -> bool:
        """Every row explained and proven optimal."""
        return self.status == Status.OPTIMAL

    @property
    def lower_bound(self) -> None:
        """No bound is proven for a set of explanations (each row's is in its own result)."""
        return None

    @property
    def failed(self) -> pd.DataFrame:
        """Rows whose explanation raised (their ``error`` is not empty)."""
        return self.table[self.table["error"].fillna("") != ""]

    def __repr__(self) -> str:
        n = len(self.table)
        return (f"ExplanationSet(method={self.method!r}, rows={n}, "
                f"found={int(self.table['found'].sum())}, failed={len(self.failed)})")

    def summary(self) -> str:
        """Readable text: rows found / failed, distance and changed features, the most
        often changed features, the errors met.

        Returns
        -------
        str
            The summary.
        """
        t = self.table
        found = t[t["found"].astype(bool)]
        lines = [f"{len(t)} row(s) explained with method={self.method!r}: {len(found)} with a counterfactual, "
                 f"{len(self.failed)} failed"]
        if len(found):
            lines.append(f"  distance: median {found['distance'].median():.4g}, mean {found['distance'].mean():.4g}; "
                         f"features changed: mean {found['n_changed'].mean():.2f}")
            freq = self.feature_frequencies().head(5)
            lines.append("  most changed: " + ", ".join(f"{f} ({n})" for f, n in freq.items()))
        if len(self.failed):
            kinds = self.failed["status"].value_counts()
            lines.append("  failures: " + ", ".join(f"{k} ({n})" for k, n in kinds.items()))
        if not math.isnan(self.solve_time):
            lines.append(f"  ({self.solve_time:.2f}s wall)")
        return "\n".join(lines)

    def feature_frequencies(self) -> pd.Series:
        """How many rows' (best) counterfactual changes each feature.

        Returns
        -------
        pandas.Series
            Counts per feature, most frequent first.
        """
        names = [c for s in self.table["changed"].fillna("") for c in str(s).split(";") if c]
        return pd.Series(names, dtype=object).value_counts().rename("rows")

    def to_frame(self) -> pd.DataFrame:
        """The per-row table.

        Returns
        -------
        pandas.DataFrame
            A copy of :attr:`table`.
        """
        return self.table.copy()

    def plot(self, ax: Any = None) -> Any:
        """Bar chart: how many rows' counterfactual changes each feature.

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

        freq = self.feature_frequencies()
        if ax is None:
            _, ax = plt.subplots(figsize=(max(5.0, 0.45 * len(freq) + 2), 4))
        freq.plot.bar(ax=ax)
        ax.set_ylabel("rows whose counterfactual changes it")
        ax.set_title(f"changed features, {len(self.table)} rows, method={self.method}")
        ax.figure.tight_layout()
        return ax

    # ------------------------------------------------------------------ checks
    def _cf_rows(self, X: pd.DataFrame) -> pd.DataFrame:
        """The best counterfactual of each found row as raw rows typed like ``X`` (the explained rows)."""
        cf = self.counterfactuals
        cf = cf[cf["rank"] == 0].set_index("row")
        out = pd.DataFrame(index=cf.index)
        for c in X.columns:
            col, dt = cf[c], X[c].dtype
            if isinstance(dt, pd.CategoricalDtype):
                back = {str(v): v for v in dt.categories}
                out[c] = pd.Categorical(col.map(back), dtype=dt)
            elif pd.api.types.is_numeric_dtype(dt):
                out[c] = pd.to_numeric(col).astype(dt) if pd.api.types.is_integer_dtype(dt) \
                    else pd.to_numeric(col)
            else:
                out[c] = col.astype(dt)
        return out

    def _validation(self, tm: TrainedModel) -> ValidationReport:
        rep = ValidationReport(checked=[
            "every found row's best counterfactual is accepted by the model",
            "immutable features unchanged, increase-only ones not decreased",
            "the reported changed features are the ones that differ"])
        if self.X is None:
            rep.failures.append("the explained rows are not stored (ExplanationSet.X is None): pass them "
                                "as ExplanationSet(..., X=X) to validate")
            return rep
        if not len(self.counterfactuals):
            return rep
        C = self._cf_rows(self.X)
        rep.n_items = len(C)
        X = self.X.loc[C.index]
        pos = np.asarray(tm.is_positive(C), dtype=bool)
        space = space_of(tm)
        cx, cc = space.codes(X), space.codes(C)
        for i, label in enumerate(C.index):
            if not pos[i]:
                rep.failures.append(f"row {label!r}: counterfactual not accepted by the model")
            diff = {f.name for l, f in enumerate(space) if abs(cc[i, l] - cx[i, l]) > 1e-9}
            reported = {c for c in str(self.table.loc[label, "changed"]).split(";") if c}
            if diff != reported:
                rep.failures.append(f"row {label!r}: changes {sorted(diff)}, reported {sorted(reported)}")
            for l, f in enumerate(space):
                if f.immutable and f.name in diff:
                    rep.failures.append(f"row {label!r}: immutable feature {f.name!r} changed")
                if f.increase_only and cc[i, l] < cx[i, l] - 1e-9:
                    rep.failures.append(f"row {label!r}: increase-only feature {f.name!r} decreased")
        return rep

    # ------------------------------------------------------------------ export
    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict: the table and the counterfactuals (without the model and rows).

        Returns
        -------
        dict
            Plain JSON-serialisable values (``kind`` names the result class).
        """
        return {"kind": self.kind, "method": self.method, "solve_time": plain(self.solve_time),
                "index": [plain(i) for i in self.table.index], "table": frame_records(self.table),
                "counterfactuals": frame_records(self.counterfactuals), "stats": self.stats.as_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ExplanationSet:
        """Rebuild the result from :meth:`to_dict`'s output (without the model).

        Parameters
        ----------
        d : dict
            A ``to_dict()`` output.

        Returns
        -------
        ExplanationSet
            The result; :meth:`validate` then needs ``model=``.
        """
        table = pd.DataFrame(d["table"], index=d["index"], columns=TABLE_COLUMNS)
        return cls(table, pd.DataFrame(d["counterfactuals"]), d.get("method", "mace"),
                   d.get("solve_time", math.nan), stats=d.get("stats", {}))

    def to_parquet(self, path: str | Path) -> None:
        """The table (and the counterfactuals in ``<path>.cf.parquet``) as parquet (pyarrow).

        Parameters
        ----------
        path : str or pathlib.Path
            The table's file.
        """
        path = Path(path)
        self.table.to_parquet(path)
        if len(self.counterfactuals):
            self.counterfactuals.to_parquet(path.with_suffix(".cf.parquet"))

    def save(self, path: str | Path) -> None:
        """The table in ``path`` and the counterfactuals beside it (``<stem>.cf.<ext>``).

        Parameters
        ----------
        path : str or pathlib.Path
            ``.csv`` or ``.parquet``: the format.

        Raises
        ------
        InvalidInputError
            Another extension.
        """
        path = Path(path)
        if path.suffix == ".parquet":
            self.to_parquet(path)
        elif path.suffix == ".csv":
            self.table.to_csv(path)
            if len(self.counterfactuals):
                self.counterfactuals.to_csv(path.with_suffix(".cf.csv"), index=False)
        else:
            raise InvalidInputError(f"unknown output format {path.suffix!r} for {path}: use .csv or .parquet")

    @classmethod
    def load(cls, path: str | Path, method: str = "mace") -> ExplanationSet:
        """What :meth:`save` wrote (or a checkpoint directory), by extension.

        Parameters
        ----------
        path : str or pathlib.Path
            A ``.csv`` / ``.parquet`` file or a checkpoint directory.
        method : str, default "mace"
            The method to record.

        Returns
        -------
        ExplanationSet
            The table and counterfactuals (without the model and rows).

        Raises
        ------
        InvalidInputError
            No such file.
        """
        path = Path(path)
        if path.suffix == ".csv":
            if not path.exists():
                raise InvalidInputError(f"no such file: {path}")
            table = pd.read_csv(path, index_col=0, dtype={"error": str, "changed": str, "status": str})
            table["error"] = table["error"].fillna("")
            table["changed"] = table["changed"].fillna("")
            cfp = path.with_suffix(".cf.csv")
            return cls(table, pd.read_csv(cfp) if cfp.exists() else pd.DataFrame(), method)
        return cls.read_parquet(path, method)

    @classmethod
    def read_parquet(cls, path: str | Path, method: str = "mace") -> ExplanationSet:
        """What :meth:`to_parquet` wrote (or a checkpoint directory).

        Parameters
        ----------
        path : str or pathlib.Path
            The table's parquet file or a checkpoint directory.
        method : str, default "mace"
            The method to record.

        Returns
        -------
        ExplanationSet
            The table and counterfactuals (without the model and rows).

        Raises
        ------
        InvalidInputError
            No such file.
        """
        path = Path(path)
        if not path.exists():
            raise InvalidInputError(f"no such file: {path}")
        if path.is_dir():  # a checkpoint directory
            table, cfs = read_checkpoint(path)
            return cls(table, cfs, method)
        table = pd.read_parquet(path)
        cfp = path.with_suffix(".cf.parquet")
        cfs = pd.read_parquet(cfp) if cfp.exists() else pd.DataFrame()
        return cls(table, cfs, method)

    def audit(self, X: pd.DataFrame, by: str | pd.Series, **kw: Any) -> Audit:
        """Recourse burden by group: see :func:`groupcf.audit.audit`.

        Parameters
        ----------
        X : pandas.DataFrame
            The explained rows (raw features, indexed like the table).
        by : str or pandas.Series
            The grouping (a column of ``X`` or labels indexed like it).
        **kw
            Further arguments of :func:`groupcf.audit.audit` (``n_boot``, ``level``, ...).

        Returns
        -------
        Audit
            Per group: share found, mean distance and features changed, with bootstrap
            confidence intervals.
        """
        from ..audit import audit
        return audit(self, X, by, **kw)


# --------------------------------------------------------------------------- checkpoint
def read_checkpoint(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table and counterfactuals written so far in a checkpoint directory."""
    parts = sorted(path.glob("part-*.parquet"))
    tables = [pd.read_parquet(p) for p in parts if not p.name.endswith(".cf.parquet")]
    cfs = [pd.read_parquet(p) for p in sorted(path.glob("part-*.cf.parquet"))]
    table = pd.concat(tables) if tables else pd.DataFrame(columns=TABLE_COLUMNS)
    return table, (pd.concat(cfs, ignore_index=True) if cfs else pd.DataFrame())


def write_part(path: Path, table: pd.DataFrame, cfs: list[dict[str, Any]]) -> None:
    """Atomic write (tmp file then rename) so a killed run never leaves a half part."""
    import time

    stem = f"part-{int(time.time() * 1e6):x}-{table.index[0]}"
    if cfs:
        tmp = path / f".{stem}.cf.tmp"
        pd.DataFrame(cfs).to_parquet(tmp)
        tmp.rename(path / f"{stem}.cf.parquet")
    tmp = path / f".{stem}.tmp"
    table.to_parquet(tmp)
    tmp.rename(path / f"{stem}.parquet")


@dataclass
class GroupExplanationSet(ResultBase):
    """One group explanation per subgroup (:func:`groupcf.explain_groups`).

    Built by :func:`groupcf.explain_groups`; part of the result family
    (:class:`~groupcf.results.base.ResultBase`). ``res[key]`` is one subgroup's
    :class:`~groupcf.results.group.GroupExplanation`.

    Parameters
    ----------
    results : dict
        Subgroup → :class:`~groupcf.results.group.GroupExplanation` (``None`` when it
        failed; the error is in ``errors``).
    table : pandas.DataFrame
        One row per subgroup: people, explanations, explanations per 100 people, features
        changed per person, certified, error.
    errors : dict
        Subgroup → error message, for the subgroups that failed.
    by : str or None, default None
        The name of the grouping.
    solve_time : float
        Wall-clock seconds of the whole call.
    stats : Stats
        Statistics of the run (empty unless a caller adds some).

    Attributes
    ----------
    status : Status
        ``optimal`` when every subgroup is certified; ``error`` when one failed.
    lower_bound : int or None
        Sum of the subgroups' lower bounds; ``None`` when one failed.

    See Also
    --------
    groupcf.explain_groups : computes it.

    Examples
    --------
    >>> res = gcf.explain_groups(S, pipe, by="sex", Tmax=2)             # doctest: +SKIP
    >>> res.table, res["Female"].summary()                              # doctest: +SKIP
    """

    results: dict[Any, GroupExplanation | None]
    table: pd.DataFrame
    errors: dict[Any, str] = field(default_factory=dict)
    by: str | None = None
    solve_time: float = math.nan
    stats: Stats = field(default_factory=Stats)

    kind = "group_set"

    def __post_init__(self) -> None:
        if not isinstance(self.stats, Stats):
            self.stats = Stats(self.stats or {})

    @property
    def status(self) -> Status:
        """``optimal`` when every subgroup is certified; ``error`` when one failed."""
        if self.errors:
            return Status.ERROR
        st = [g.status for g in self.results.values() if g is not None]
        return next((s for s in st if s != Status.OPTIMAL), Status.OPTIMAL)

    @property
    def is_optimal(self) -> bool:
        return not self.errors and all(g is not None and g.is_optimal for g in self.results.values())

    @property
    def lower_bound(self) -> int | None:
        """Sum of the subgroups' lower bounds (a bound on the total number of explanations
        when every subgroup is explained separately); ``None`` when one failed."""
        if self.errors:
            return None
        return int(sum(g.lower_bound for g in self.results.values() if g is not None))  # no error: none is None

    def __getitem__(self, key: Any) -> GroupExplanation | None:
        return self.results[key]

    def __iter__(self) -> Iterator[Any]:
        warnings.warn("explain_groups now returns a GroupExplanationSet; unpacking it as (results, table) "
                      "will stop working in the next release: use .results and .table",
                      FutureWarning, stacklevel=2)
        return iter((self.results, self.table))

    def __repr__(self) -> str:
        return (f"GroupExplanationSet({len(self.results)} subgroup(s) by {self.by!r}, "
                f"certified={int(self.table['certified'].sum())}, failed={len(self.errors)})")

    def summary(self) -> str:
        """Readable text: one line per subgroup.

        Returns
        -------
        str
            The summary.
        """
        lines = [repr(self)]
        for k, row in self.table.iterrows():
            if row["error"]:
                lines.append(f"  {k}: {row['people']} people, FAILED: {row['error']}")
                continue
            lines.append(f"  {k}: {row['people']} people, {row['explanations']} explanation(s) "
                         f"({row['per_100']:.1f} per 100), {row['changed_per_person']:.2f} features changed "
                         f"per person, {'certified' if row['certified'] else 'not certified'}")
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """The comparison table.

        Returns
        -------
        pandas.DataFrame
            A copy of :attr:`table`.
        """
        return self.table.copy()

    def plot(self, ax: Any = None) -> Any:
        """Explanations per 100 people, per subgroup.

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

        if ax is None:
            _, ax = plt.subplots(figsize=(max(4.0, 0.8 * len(self.table) + 2), 4))
        self.table["per_100"].astype(float).plot.bar(ax=ax)
        ax.set_ylabel("explanations per 100 people")
        ax.set_title(f"group explanations by {self.by}")
        ax.figure.tight_layout()
        return ax

    def validate(self, model: Any = None, raise_on_error: bool = True) -> ValidationReport:
        """Validate every subgroup's explanation; one report over all of them.

        Parameters
        ----------
        model : object or None, default None
            The model to re-check with (``None``: each subgroup's own).
        raise_on_error : bool, default True
            Raise :class:`~groupcf.exceptions.ValidationError` (carrying the report as
            ``.report``) when a check fails.

        Returns
        -------
        ValidationReport
            What was checked and what failed.

        Raises
        ------
        ValidationError
            A check failed (with ``raise_on_error``), or no model is known.
        """
        rep = ValidationReport(checked=["each subgroup's GroupExplanation.validate()"])
        for k, g in self.results.items():
            if g is None:
                rep.failures.append(f"subgroup {k!r} failed: {self.errors.get(k, '')}")
                continue
            sub = g.validate(model, raise_on_error=False)
            rep.n_items += sub.n_items
            rep.failures += [f"subgroup {k!r}: {f}" for f in sub.failures]
        return rep.raise_if_failed() if raise_on_error else rep

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict: every subgroup's result and the table (without the models).

        Returns
        -------
        dict
            Plain JSON-serialisable values (``kind`` names the result class).
        """
        return {"kind": self.kind, "by": self.by, "solve_time": plain(self.solve_time),
                "keys": [plain(k) for k in self.results],
                "results": [None if g is None else g.to_dict() for g in self.results.values()],
                "index": [plain(i) for i in self.table.index], "table": frame_records(self.table),
                "errors": {str(k): v for k, v in self.errors.items()}, "stats": self.stats.as_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GroupExplanationSet:
        """Rebuild the result from :meth:`to_dict`'s output (without the model).

        Parameters
        ----------
        d : dict
            A ``to_dict()`` output.

        Returns
        -------
        GroupExplanationSet
            The result; :meth:`validate` then needs ``model=``.
        """
        results = {k: None if g is None else GroupExplanation.from_dict(g) for k, g in zip(d["keys"], d["results"])}
        errors = {k: d["errors"][str(k)] for k in d["keys"] if str(k) in d["errors"]}
        table = pd.DataFrame(d["table"], index=d["index"])
        return cls(results, table, errors, d.get("by"), d.get("solve_time", math.nan), d.get("stats", {}))
