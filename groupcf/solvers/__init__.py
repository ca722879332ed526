"""Solver backends: one small interface (:class:`Backend`), several solvers.

>>> from groupcf.solvers import make_backend
>>> m = make_backend("highs", time_limit=10)       # the default
>>> m = make_backend("gurobi")     # pip install "groupcf[gurobi]"               # doctest: +SKIP
>>> m = make_backend("pyomo")      # pyomo + appsi_highs, persistent             # doctest: +SKIP
>>> m = make_backend("pyomo:cbc")  # any pyomo SolverFactory name                # doctest: +SKIP
>>> pricing = m.spawn()                             # a fresh model, same solver/options

Backends declare what they can do in ``backend.capabilities``; formulations read the
declaration instead of testing the solver's name.

Conventions shared by every backend (tests/test_solvers.py checks them on each):

* ``Solution.objective`` is ``c @ x + offset`` in the user's sense; integer variables in
  ``x`` are rounded to exact integers.
* ``row_duals`` (LPs) are ``d objective / d bound`` in the user's sense: for a
  minimisation a binding ``>=`` row has a dual ``>= 0``; for a maximisation a binding
  ``<=`` row has a dual ``>= 0``.
* Status: OPTIMAL (within the MIP gap); FEASIBLE = a solution but a limit stopped the
  solve; TIME_LIMIT = a limit (time, iterations, ...) and no solution; INFEASIBLE;
  UNBOUNDED only for a model proven feasible (a solver's "unbounded" or "infeasible or
  unbounded" is settled by re-solving with a zero objective); ERROR otherwise.
* ``pool`` holds distinct solutions (distinct on the integer variables), best first,
  the incumbent excluded; a MIP start applies to the next solve only.
"""
from __future__ import annotations

import dataclasses
import importlib.util
from typing import Any

from ..exceptions import InvalidInputError
from ..options import nearest_names
from .base import Backend, Capabilities, Solution, SolverOptions, Status, VarType
from .gurobi import GurobiBackend
from .highs import HighsBackend
from .pyomo import PyomoBackend

__all__ = [
    "Backend", "Capabilities", "SolverOptions", "Solution", "Status", "VarType",
    "HighsBackend", "GurobiBackend", "PyomoBackend",
    "make_backend", "available_backends", "BACKENDS",
]

#: registry: name -> backend class ("pyomo:NAME" is handled by :class:`PyomoBackend`)
BACKENDS: dict[str, type[Backend]] = {
    "highs": HighsBackend,
    "gurobi": GurobiBackend,
    "pyomo": PyomoBackend,
}

# solvers probed by available_backends() for the "pyomo:NAME" form
_PYOMO_SOLVERS = ("cbc", "glpk", "scip", "cplex")


def _names_help() -> str:
    return ", ".join(list(BACKENDS) + ["pyomo:<solver> (e.g. pyomo:cbc, pyomo:glpk)"])


def make_backend(solver: str | type[Backend] | Backend = "highs",
                 options: SolverOptions | None = None, **kwargs: Any) -> Backend:
    """A new, empty model.

    Parameters
    ----------
    solver : str, Backend subclass or Backend, default "highs"
        A name (``"highs"``, ``"gurobi"``, ``"pyomo"``, ``"pyomo:cbc"``, ...), a
        :class:`Backend` subclass, or a backend instance -- then a fresh, empty model of
        the same type and options is returned (:meth:`Backend.spawn`).
    options : SolverOptions or None, default None
        The solver's options; with an instance they replace its options.
    **kwargs
        Fields of :class:`SolverOptions` (``time_limit``, ``mip_gap``, ``mip_abs_gap``,
        ``threads``, ``verbose``); they override ``options`` (or the instance's).

    Returns
    -------
    Backend
        An empty model.

    Raises
    ------
    InvalidInputError
        An unknown solver name (the message names the nearest one and the available
        ones), or a ``solver`` of another type.
    SolverNotInstalledError
        The solver's package is not installed.

    Examples
    --------
    >>> from groupcf.solvers import make_backend
    >>> b = make_backend("highs", time_limit=10)
    >>> b, b.options.time_limit
    (HighsBackend(vars=0, rows=0), 10)
    >>> make_backend(b).options.time_limit            # a fresh model, same options
    10
    >>> make_backend("higs")
    Traceback (most recent call last):
    ...
    groupcf.exceptions.InvalidInputError: unknown solver 'higs' (did you mean 'highs'?); available: ...
    """
    if isinstance(solver, Backend):
        backend = solver.spawn()
        if options is not None or kwargs:
            backend.options = dataclasses.replace(options or backend.options, **kwargs)
        return backend
    if options is not None and kwargs:
        options = dataclasses.replace(options, **kwargs)
    elif options is None:
        options = SolverOptions(**kwargs)
    if isinstance(solver, type) and issubclass(solver, Backend):
        return solver(options=options)
    if not isinstance(solver, str):
        raise InvalidInputError(f"solver must be a name, a Backend subclass or a Backend, "
                        f"got {type(solver).__name__}")
    name = solver.strip().lower()
    if name.startswith("pyomo:"):
        return PyomoBackend(solver=name.split(":", 1)[1], options=options)
    if name not in BACKENDS:
        raise InvalidInputError(f"unknown solver {solver!r}{nearest_names(str(solver), list(BACKENDS))}; "
                                f"available: {_names_help()}")
    return BACKENDS[name](options=options)


def available_backends() -> list[str]:
    """Names accepted by :func:`make_backend` whose package (and executable) is installed.

    ``"gurobi"`` is listed when gurobipy is importable; its licence is only checked when a
    model is solved; ``pyomo:NAME`` when the solver's executable is found.

    Returns
    -------
    list of str
        ``"highs"`` first, then what else is installed.

    Examples
    --------
    >>> from groupcf.solvers import available_backends
    >>> available_backends()[0]
    'highs'
    """
    names = ["highs"]
    if importlib.util.find_spec("gurobipy") is not None:
        names.append("gurobi")
    if importlib.util.find_spec("pyomo") is not None:
        from .pyomo import solver_available
        if solver_available("appsi_highs"):
            names.append("pyomo")
        names += [f"pyomo:{s}" for s in _PYOMO_SOLVERS if solver_available(s)]
    return names
