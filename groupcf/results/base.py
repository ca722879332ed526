"""The result family's base: every result of groupcf (:class:`Explanation`,
:class:`GroupExplanation`, :class:`SequenceExplanation`, :class:`ExplanationSet`,
:class:`GroupExplanationSet`, :class:`GlobalExplanation`) subclasses :class:`ResultBase`
and so has

* ``status`` (a :class:`Status`), ``is_optimal``, ``lower_bound`` (``None`` where the
  method proves none), ``solve_time`` (seconds) and ``stats`` (:class:`Stats`);
* ``summary()`` (readable text), ``_repr_html_`` (notebooks);
* ``to_dict()`` / ``from_dict()`` / ``to_json()`` / ``from_json()``, ``to_frame()``;
* ``plot()``;
* ``validate(model=None, raise_on_error=True)`` returning a :class:`ValidationReport`
  (what was checked, what failed), raising :class:`~groupcf.exceptions.ValidationError`
  carrying that report when something failed (unless ``raise_on_error=False``).

Also the helpers they share: JSON-friendly values, the HTML repr, :class:`Stats`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ..solvers.base import Status

if TYPE_CHECKING:  # pragma: no cover
    from ..features.space import FeatureSpace
    from ..models import TrainedModel

__all__ = ["ResultBase", "Stats", "Status", "ValidationReport", "denoise", "frame_records", "html_pre", "plain"]

#: what every result class provides (checked by the tests for each class)
RESULT_API = ("status", "is_optimal", "lower_bound", "solve_time", "summary", "_repr_html_", "to_dict",
              "from_dict", "to_json", "from_json", "to_frame", "plot", "validate")


@dataclass
class ValidationReport:
    """What :meth:`ResultBase.validate` checked and what failed.

    Truthy when nothing failed, so ``assert res.validate(raise_on_error=False)`` works.

    Parameters
    ----------
    checked : list of str
        The checks run, in words (``"every counterfactual is accepted by the model"``, ...).
    failures : list of str
        One line per failure, naming the item (counterfactual, instance, action) and the
        rule it breaks; empty when everything holds.
    n_items : int, default 0
        How many items (counterfactuals, people, explanations) were re-checked.

    Attributes
    ----------
    ok : bool
        True when nothing failed.

    Examples
    --------
    >>> from groupcf.results.base import ValidationReport
    >>> rep = ValidationReport(["accepted by the model"], ["counterfactual 1: p = 0.31 < 0.5"], n_items=2)
    >>> rep.ok, bool(rep)
    (False, False)
    >>> print(rep.summary())
    validation FAILED: 1 failure(s) over 2 item(s)
      checked: accepted by the model
      failed: counterfactual 1: p = 0.31 < 0.5
    >>> rep.raise_if_failed()
    Traceback (most recent call last):
    ...
    groupcf.exceptions.ValidationError: counterfactual 1: p = 0.31 < 0.5
    """

    checked: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    n_items: int = 0

    @property
    def ok(self) -> bool:
        """True when nothing failed."""
        return not self.failures

    def __bool__(self) -> bool:
        return self.ok

    def summary(self) -> str:
        """Readable text: verdict, the checks, then the failures (the first 50).

        Returns
        -------
        str
            One line per check and per failure.
        """
        head = (f"validation passed: {self.n_items} item(s), {len(self.checked)} check(s)" if self.ok else
                f"validation FAILED: {len(self.failures)} failure(s) over {self.n_items} item(s)")
        lines = [head] + [f"  checked: {c}" for c in self.checked]
        lines += [f"  failed: {f}" for f in self.failures[:50]]
        if len(self.failures) > 50:
            lines.append(f"  ... and {len(self.failures) - 50} more")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"ValidationReport(ok={self.ok}, items={self.n_items}, checks={len(self.checked)}, "
                f"failures={len(self.failures)})")

    def _repr_html_(self) -> str:
        return html_pre(self.summary())

    def raise_if_failed(self) -> ValidationReport:
        """Raise when something failed; return ``self`` otherwise.

        Returns
        -------
        ValidationReport
            ``self``, when nothing failed.

        Raises
        ------
        ValidationError
            Something failed (with this report as ``.report``).
        """
        if self.failures:
            msg = "; ".join(self.failures[:20]) + (" ..." if len(self.failures) > 20 else "")
            raise ValidationError(msg, report=self)
        return self


class Stats(dict):  # type: ignore[type-arg]  # name -> number / short list / text
    """Statistics of a search: name -> number (or a short list / string for settings
    such as distance weights).

    A ``dict`` so existing code keeps working; ``as_dict()`` gives a JSON-friendly plain
    dict.

    Built like a :class:`dict`.

    Examples
    --------
    >>> from groupcf.results.base import Stats
    >>> st = Stats(iterations=np.int64(3), time_master=0.25)
    >>> st["time_master"]
    0.25
    >>> st.as_dict()           # plain Python values, ready for JSON
    {'iterations': 3, 'time_master': 0.25}
    """

    def as_dict(self) -> dict[str, Any]:
        """A JSON-friendly plain dict (numpy scalars as Python numbers).

        Returns
        -------
        dict
            Name -> plain value.
        """
        return {str(k): plain(v) for k, v in self.items()}

    def __repr__(self) -> str:
        return "Stats(" + ", ".join(f"{k}={v!r}" for k, v in self.items()) + ")"


class ResultBase:
    """Base of every result class (see the module docstring for the family's methods).

    Subclasses are dataclasses with fields (or properties) ``status``, ``is_optimal``,
    ``lower_bound``, ``solve_time`` and ``stats``, and implement ``summary``, ``to_dict``,
    ``from_dict``, ``to_frame``, ``plot`` and ``_validation(model) ->
    ValidationReport``. ``status`` and ``stats`` are normalised here, whatever was
    passed (strings and dicts, e.g. from ``from_dict``).

    Examples
    --------
    >>> from groupcf.results.base import RESULT_API, ResultBase
    >>> all(issubclass(c, ResultBase) for c in (gcf.Explanation, gcf.GroupExplanation,
    ...     gcf.SequenceExplanation, gcf.ExplanationSet, gcf.GroupExplanationSet, gcf.GlobalExplanation))
    True
    >>> all(hasattr(gcf.GroupExplanation, name) for name in RESULT_API if name not in
    ...     ("status", "is_optimal", "lower_bound", "solve_time"))
    True
    """

    #: the result's kind in ``to_dict()['kind']`` (checked by ``from_dict``)
    kind: ClassVar[str] = "result"

    def __post_init__(self) -> None:
        fields = vars(self)
        if "status" in fields and not isinstance(fields["status"], Status):
            fields["status"] = Status(fields["status"])
        if "stats" in fields and not isinstance(fields["stats"], Stats):
            fields["stats"] = Stats(fields["stats"] or {})

    @classmethod
    def check_kind(cls, d: dict[str, Any]) -> None:
        """Raise ``ValueError`` when ``d`` (a ``to_dict()``) is another kind of result.

        Parameters
        ----------
        d : dict
            A ``to_dict()`` output.

        Raises
        ------
        ValueError
            ``d["kind"]`` is not this class's :attr:`kind`.
        """
        kind = d.get("kind", cls.kind)
        if kind != cls.kind:
            raise ValueError(f"{cls.__name__}.from_dict got a {kind!r} result; expected {cls.kind!r}")

    # -------------------------------------------------------------- display
    def summary(self) -> str:  # pragma: no cover - every subclass implements it
        """Readable text: what was found and what was proven.

        Returns
        -------
        str
            The summary (every subclass implements it).
        """
        raise NotImplementedError

    def _repr_html_(self) -> str:
        """Notebooks: the summary, pre-formatted."""
        return html_pre(self.summary())

    # -------------------------------------------------------------- export
    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - every subclass implements it
        """JSON-serialisable dict (without the model).

        Returns
        -------
        dict
            Plain JSON-serialisable values (``kind`` names the result class).
        """
        raise NotImplementedError

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Any:  # pragma: no cover - every subclass implements it
        """Rebuild the result from :meth:`to_dict`'s output (without the model).

        Parameters
        ----------
        d : dict
            A ``to_dict()`` output.

        Returns
        -------
        ResultBase
            The result; :meth:`validate` then needs ``model=``.

        Raises
        ------
        ValueError
            ``d`` is another kind of result.
        """
        raise NotImplementedError

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
    def from_json(cls, text: str) -> Any:
        """Rebuild the result from :meth:`to_json`'s output (without the model).

        Parameters
        ----------
        text : str
            A ``to_json()`` output.

        Returns
        -------
        ResultBase
            The result, of the class ``from_json`` is called on.
        """
        return cls.from_dict(json.loads(text))

    def to_frame(self) -> pd.DataFrame:  # pragma: no cover - every subclass implements it
        """The result as a table (every subclass implements it).

        Returns
        -------
        pandas.DataFrame
            One row per counterfactual, person or subgroup.
        """
        raise NotImplementedError

    def plot(self, ax: Any = None) -> Any:  # pragma: no cover - every subclass implements it
        """The result's main figure (every subclass implements it).

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None, default None
            Where to draw (``None``: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        raise NotImplementedError

    # -------------------------------------------------------------- checks
    def validate(self, model: Any = None, raise_on_error: bool = True) -> ValidationReport:
        """Re-check every claim of the result with the real model and the actionability rules.

        Parameters
        ----------
        model : object or None, default None
            The model to re-check with (``None``: the one the result was computed with).
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
        tm = getattr(self, "model", None) if model is None else model
        if tm is None:
            raise ValidationError("validate() needs the model (pass model=...)")
        from ..models import resolve_model

        report = self._validation(resolve_model(tm))
        return report.raise_if_failed() if raise_on_error else report

    def _validation(self, tm: Any) -> ValidationReport:  # pragma: no cover - every subclass implements it
        raise NotImplementedError


def space_of(tm: TrainedModel) -> FeatureSpace:
    """The FeatureSpace of the model a result is validated with (the checks read raw rows
    through it); :class:`~groupcf.exceptions.ValidationError` for a model without one."""
    if tm.space is None:
        raise ValidationError("validate() needs a model with a FeatureSpace (a pipeline that starts with "
                              "one, or space=); this model takes raw rows")
    return tm.space


def plain(v: Any) -> Any:
    """JSON-friendly value (numpy scalars to Python, intervals to strings, recursively
    for lists and dicts)."""
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, pd.Interval):
        return str(v)
    if isinstance(v, np.ndarray):
        return [plain(u) for u in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [plain(u) for u in v]
    if isinstance(v, dict):
        return {str(k): plain(u) for k, u in v.items()}
    return v


def denoise(df: pd.DataFrame, tol: float = 1e-9) -> pd.DataFrame:
    """``df`` with floating-point noise (``|x| < tol``, e.g. ``-8.3e-17``) in its float
    columns shown as the zero it is (a copy)."""
    df = df.copy()
    for c in df.columns:
        if pd.api.types.is_float_dtype(df[c].dtype):
            df[c] = df[c].mask(df[c].abs() < tol, 0.0)
    return df


def frame_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of ``df`` as JSON-friendly dicts."""
    return [{cast(str, c): plain(v) for c, v in row.items()} for _, row in df.iterrows()]


def html_pre(text: str) -> str:
    """``text`` escaped inside a ``<pre>`` block (notebooks' ``_repr_html_``)."""
    return "<pre>" + text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + "</pre>"
