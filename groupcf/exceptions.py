"""Named errors raised by groupcf.

Every error a user can meet has its own class so that notebooks and scripts can catch
exactly what they expect, and every message says what went wrong *and* what to do.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class GroupCFError(Exception):
    """Base class of every error raised by groupcf."""


# --- solver backends -------------------------------------------------------------------
class SolverError(GroupCFError):
    """A solver backend failed in a way that is not a property of the model."""


class SolverNotInstalledError(SolverError, ImportError):
    """The requested solver (or its Python package) is not installed."""


class SolverLicenseError(SolverError):
    """The solver refused the model because of a licence limit (e.g. Gurobi's pip licence)."""


class SolverCapabilityError(SolverError):
    """The backend lacks a capability the algorithm needs (e.g. LP duals for column
    generation); the message names the capability and the backends that have it."""


class SolverTimeLimitError(SolverError):
    """The solver hit its time limit before finding any feasible solution."""


# --- data and models -------------------------------------------------------------------
class InvalidInputError(GroupCFError, ValueError):
    """Input data are malformed: NaN, unknown category, wrong columns, ..."""


class UnsupportedModelError(GroupCFError, TypeError):
    """No embedding is registered for this model type (or its configuration)."""


class NotRejectedError(GroupCFError, ValueError):
    """An instance to explain is already classified positive by the model."""


# --- counterfactual search --------------------------------------------------------------
class NoCounterfactualError(GroupCFError):
    """No counterfactual exists under the given constraints (e.g. within Tmax changes).

    ``rows`` lists the offending instances (index labels) when known.
    """

    def __init__(self, message: str, rows: Iterable[Any] | None = None) -> None:
        super().__init__(message)
        self.rows = list(rows) if rows is not None else []


class ValidationError(GroupCFError, AssertionError):
    """A returned explanation failed its re-check against the real model.

    ``report`` is the :class:`~groupcf.results.base.ValidationReport` (what was checked,
    what failed) when the error comes from a result's ``validate()``."""

    def __init__(self, message: str, report: object = None) -> None:
        super().__init__(message)
        self.report = report


# --- datasets ---------------------------------------------------------------------------
class DatasetNotAvailableError(GroupCFError, FileNotFoundError):
    """A dataset file is neither bundled, nor in the data home, nor downloadable (offline)."""


class GroupCFWarning(UserWarning):
    """Something a user should see but that does not stop the call: an ignored
    argument, a fallback, a dropped row, a numerical disagreement within tolerance."""


# --- sequential counterfactuals ---------------------------------------------------------
class InvalidActionError(InvalidInputError):
    """An action refers to an unknown or immutable feature, has an empty value range, or
    an unreadable condition."""


class CyclicConsequenceError(InvalidInputError):
    """Consequential effects (or the feature-dependency graph) form a cycle."""
