"""The result of :func:`groupcf.explain_sequence`: a Pareto set of action sequences, in the
result family (:class:`~groupcf.results.base.ResultBase`).

The sequence problem (actions, consequences, the model) is kept as ``problem``, an object
of the sequential package with ``replay(steps)`` and ``accepts(state)``; this module does
not import that package (results sit below the algorithms)."""
from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InvalidInputError, ValidationError
from ..solvers.base import Status
from .base import ResultBase, Stats, ValidationReport, plain

__all__ = ["SequenceExplanation", "format_steps"]

PARETO_COLUMNS = ["steps", "length", "cost", "discounted_cost", "distance", "final_state", "proba", "source"]


def format_steps(steps: Iterable[tuple[str, Any]]) -> str:
    """``"a(+1.5) → b(3)"``: the actions of a sequence with their values."""
    return " → ".join(f"{n}({v:+.4g})" if isinstance(v, float) else f"{n}({v})" for n, v in steps)


@dataclass
class SequenceExplanation(ResultBase):
    """Pareto-optimal action sequences for one person.

    Returned by :func:`groupcf.explain_sequence` (built by the method, not by hand); part
    of the result family (:class:`~groupcf.results.base.ResultBase`).

    Parameters
    ----------
    x : pandas.Series
        The start state (over the feature names).
    pareto : pandas.DataFrame
        One row per sequence: ``steps`` (list of ``(action, value)``), ``length``,
        ``cost`` (sum of direct efforts), ``discounted_cost`` (eqs. 1-2), ``distance``
        (Gower), ``final_state`` (dict), ``proba`` (the model's probability of the positive
        class after each step), ``source`` (``"ga"`` or ``"bound"``). With discounted costs it
        also holds the cheapest (undiscounted) valid sequence found, which ``lower_bound`` is
        compared with, even when the discounted objectives dominate it.
    problem : object, default None
        The sequence problem (actions, consequences, the model), used by :meth:`validate`;
        ``None`` after :meth:`from_dict`.
    lower_bound : float or None, default None
        Certified lower bound on the undiscounted cost of *any* valid sequence (``None``
        if not computed); ``is_optimal`` says whether a sequence within 0.1 % of it
        (``1e-3 * bound``, relative) was found.
    is_optimal : bool, default False
        Whether the cheapest sequence is proven optimal.
    solve_time : float, default 0.0
        Seconds.
    status : Status, default Status.FEASIBLE
        ``optimal`` when ``is_optimal``, otherwise ``feasible`` (or what stopped the
        search).
    Tmax : int or None, default None
        The most actions a sequence could take (``None``: no limit).
    stats : Stats
        The bound's status, its seconds, the MIP's own sequence. ``bound_status`` says how
        the bound was obtained (``optimal``: the bound's own MIP or search finished, which
        proves nothing about the sequences when the bound stays below them; that is
        ``is_optimal``).

    See Also
    --------
    groupcf.explain_sequence : computes it.

    Examples
    --------
    >>> res = gcf.explain_sequence(x, model, actions, dependencies)     # doctest: +SKIP
    >>> print(res.summary()); res.best                                  # doctest: +SKIP
    """

    x: pd.Series
    pareto: pd.DataFrame
    problem: Any = field(default=None, repr=False, compare=False)
    lower_bound: float | None = None
    is_optimal: bool = False
    solve_time: float = 0.0
    status: Status = Status.FEASIBLE
    Tmax: int | None = None
    stats: Stats = field(default_factory=Stats)

    kind = "sequence"

    # -------------------------------------------------------------- compatibility
    @property
    def optimal(self) -> bool:
        """Deprecated name of :attr:`is_optimal`."""
        warnings.warn("SequenceExplanation.optimal is renamed is_optimal", FutureWarning, stacklevel=2)
        return self.is_optimal

    @property
    def runtime_s(self) -> float:
        """Deprecated name of :attr:`solve_time`."""
        warnings.warn("SequenceExplanation.runtime_s is renamed solve_time", FutureWarning, stacklevel=2)
        return self.solve_time

    @property
    def bound_info(self) -> dict[str, Any]:
        """Deprecated name of :attr:`stats`."""
        warnings.warn("SequenceExplanation.bound_info is renamed stats", FutureWarning, stacklevel=2)
        return dict(self.stats)

    # -------------------------------------------------------------- reading
    @property
    def best_cost(self) -> float:
        """The smallest (undiscounted) cost among the Pareto sequences."""
        return float(self.pareto["cost"].min())

    @property
    def gap(self) -> float | None:
        """``(best_cost - lower_bound) / best_cost`` (at most about 0.001 when proven
        optimal; ``None`` without a bound)."""
        if self.lower_bound is None or not np.isfinite(self.lower_bound):
            return None
        c = self.best_cost
        return 0.0 if c <= 0 else max(0.0, (c - float(self.lower_bound)) / c)

    def __repr__(self) -> str:
        lb = "none" if self.lower_bound is None else f"{self.lower_bound:.4g}"
        proof = "proven optimal" if self.is_optimal else "not proven"
        return (f"SequenceExplanation({len(self.pareto)} Pareto sequence(s), min cost "
                f"{self.pareto['cost'].min():.4g}, lower bound {lb}, {proof}, {self.solve_time:.2f}s)")

    def best(self, by: str = "cost", max_length: int | None = None) -> pd.Series:
        """The sequence minimising ``by``, optionally among the short ones.

        Parameters
        ----------
        by : {"cost", "discounted_cost", "distance", "length"}, default "cost"
            The criterion.
        max_length : int or None, default None
            Only sequences of at most this many steps.

        Returns
        -------
        pandas.Series
            The row of :attr:`pareto`.

        Raises
        ------
        InvalidInputError
            An unknown criterion, or no sequence short enough.
        """
        if by not in ("cost", "discounted_cost", "distance", "length"):
            raise InvalidInputError(f"best(by={by!r}): use cost, discounted_cost, distance or length")
        df = self.pareto if max_length is None else self.pareto[self.pareto["length"] <= max_length]
        if df.empty:
            raise InvalidInputError(f"no Pareto sequence has at most {max_length} steps")
        return df.sort_values([by, "cost", "length"], kind="stable").iloc[0]

    def to_frame(self) -> pd.DataFrame:
        """A readable table, cheapest first: the sequence as text and its numbers.

        Returns
        -------
        pandas.DataFrame
            One row per Pareto sequence.
        """
        out = self.pareto[["length", "cost", "discounted_cost", "distance", "source"]].copy()
        out.insert(0, "sequence", [format_steps(s) for s in self.pareto["steps"]])
        out["final proba"] = [p[-1] if len(p) else np.nan for p in self.pareto["proba"]]
        return out.sort_values("cost", kind="stable").reset_index(drop=True)

    def summary(self) -> str:
        """Readable text: each Pareto sequence (cheapest first) and what was proven.

        Returns
        -------
        str
            The summary.
        """
        df = self.to_frame()
        lines = [f"{len(df)} Pareto-optimal sequence(s) of actions"]
        for _, r in df.iterrows():
            lines.append(f"  {r['sequence']}: cost {r['cost']:.4g} (discounted {r['discounted_cost']:.4g}), "
                         f"{int(r['length'])} step(s), distance {r['distance']:.3g}, "
                         f"final probability {r['final proba']:.3f}")
        lb = "no lower bound computed" if self.lower_bound is None else \
            f"lower bound {self.lower_bound:.4g}" + ("" if self.gap is None else f", gap {100 * self.gap:.1f} %")
        lines.append(f"  ({'proven optimal' if self.is_optimal else 'not proven optimal'}; {lb}; "
                     f"{self.solve_time:.2f}s)")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """The Pareto front (:meth:`plot_front`).

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None, default None
            Where to draw (``None``: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        return self.plot_front(ax=ax)

    def plot_front(self, x: str = "cost", y: str = "distance", ax: Any = None) -> Any:
        """Scatter of the Pareto set (size = length), the bound as a vertical line.

        Parameters
        ----------
        x, y : str, default "cost", "distance"
            The columns of :attr:`pareto` on the axes.
        ax : matplotlib.axes.Axes or None, default None
            Where to draw (``None``: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        import matplotlib.pyplot as plt
        ax = ax or plt.subplots(figsize=(5, 3.5))[1]
        df = self.pareto
        ax.scatter(df[x], df[y], s=30 * df["length"], alpha=0.7)
        for _, r in df.iterrows():
            ax.annotate(" → ".join(n for n, _ in r["steps"]), (r[x], r[y]), fontsize=7)
        if self.lower_bound is not None and x == "cost":
            ax.axvline(self.lower_bound, ls="--", c="gray", label="certified lower bound")
            ax.legend(fontsize=8)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        return ax

    # -------------------------------------------------------------- checks
    def validate(self, model: Any = None, raise_on_error: bool = True) -> ValidationReport:
        """Replay every sequence step by step with the real model and the actions' conditions.

        Parameters
        ----------
        model : object or None, default None
            Not needed: the problem holds the model (``None``).
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
            A check failed (with ``raise_on_error``), or the problem is unknown (after :meth:`from_dict`).
        """
        if self.problem is None:
            raise ValidationError("validate() needs the sequence problem, which a result rebuilt "
                                  "from_dict does not hold: validate the original result")
        rep = ValidationReport(n_items=len(self.pareto), checked=[
            "every step's conditions hold and every step changes something",
            "the model accepts each sequence's final state",
            "the replayed final state and costs equal the reported ones",
            f"at most Tmax={self.Tmax} actions" if self.Tmax is not None else "no Tmax to check"])
        for k, row in self.pareto.iterrows():
            try:
                cost, disc, _probs, final = self.problem.replay(row["steps"])
            except ValidationError as exc:
                rep.failures.append(f"sequence {k}: {exc}")
                continue
            if not self.problem.accepts(final):
                rep.failures.append(f"sequence {k}: the model rejects its final state")
            reported = np.array([row["final_state"][f] for f in self.problem.actions.features])
            if not np.allclose(reported, final, rtol=1e-9, atol=1e-9):
                rep.failures.append(f"sequence {k}: the replayed final state differs from the reported one")
            if abs(cost - row["cost"]) > 1e-6 * max(1.0, abs(cost)) or \
                    abs(disc - row["discounted_cost"]) > 1e-6 * max(1.0, abs(disc)):
                rep.failures.append(f"sequence {k}: replayed cost {cost:.6g}/{disc:.6g} differs "
                                    f"from the reported {row['cost']:.6g}/{row['discounted_cost']:.6g}")
            if self.Tmax is not None and len(row["steps"]) > self.Tmax:
                rep.failures.append(f"sequence {k}: {len(row['steps'])} actions > Tmax={self.Tmax}")
        return rep.raise_if_failed() if raise_on_error else rep

    # -------------------------------------------------------------- export
    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict (``from_dict`` rebuilds it without the problem).

        Returns
        -------
        dict
            Plain JSON-serialisable values (``kind`` names the result class).
        """
        rows: list[dict[str, Any]] = []
        for _, r in self.pareto.iterrows():
            rows.append({"steps": [[n, plain(v)] for n, v in r["steps"]], "length": int(r["length"]),
                         "cost": float(r["cost"]), "discounted_cost": float(r["discounted_cost"]),
                         "distance": float(r["distance"]), "final_state": plain(dict(r["final_state"])),
                         "proba": [float(p) for p in r["proba"]], "source": r["source"]})
        return {"kind": self.kind, "x": {k: plain(v) for k, v in self.x.items()}, "pareto": rows,
                "lower_bound": None if self.lower_bound is None else float(self.lower_bound),
                "is_optimal": bool(self.is_optimal), "status": self.status.value,
                "solve_time": float(self.solve_time), "Tmax": self.Tmax, "stats": self.stats.as_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SequenceExplanation:
        """Rebuild the result from :meth:`to_dict`'s output (without the model).

        Parameters
        ----------
        d : dict
            A ``to_dict()`` output.

        Returns
        -------
        SequenceExplanation
            The result; :meth:`validate` then needs ``model=``.
        """
        pareto = pd.DataFrame([{**r, "steps": [tuple(s) for s in r["steps"]]} for r in d["pareto"]],
                              columns=PARETO_COLUMNS)
        return cls(pd.Series(d["x"], dtype=float), pareto, None, d.get("lower_bound"), d.get("is_optimal", False),
                   d.get("solve_time", 0.0), Status(d.get("status", "feasible")), d.get("Tmax"),
                   Stats(d.get("stats", {})))
