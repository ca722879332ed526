"""Values the tests need at collection time (parametrisation, skip conditions), where a
fixture cannot be used."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

#: the one-for-many paper's data files (never committed); tests needing them skip visibly
PAPER_DATA = Path(os.environ.get("GROUPCF_DATA", Path(__file__).resolve().parents[2] / "shared" / "data" / "paper"))


def installed_backends() -> list[str]:
    from groupcf.solvers import available_backends

    return [b for b in ("highs", "pyomo", "gurobi") if b in available_backends()]


def backend_params():
    """highs and pyomo always (their absence fails); gurobi skipped visibly when missing."""
    from groupcf.solvers import available_backends

    have = available_backends()
    out = []
    for name in ("highs", "pyomo", "gurobi"):
        marks = []
        if name == "gurobi" and name not in have:
            marks = [pytest.mark.skip(reason="gurobipy not installed: pip install 'groupcf[gurobi]'")]
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def sweep(values, fast):
    """The parameters of a brute-force sweep over ``values`` (model kinds, seeds, blocks):
    those in ``fast`` (one value or several) run in ``make test``, the others are marked
    ``slow`` and run in ``make test-all`` (CI runs both), so that the quick loop stays under
    five minutes with a case of every sweep. The fast case is chosen per test so that every
    model kind keeps fast tests of its own in each folder."""
    values = list(values)
    fast = (fast,) if isinstance(fast, (str, int)) else tuple(fast)
    unknown = [f for f in fast if f not in values]
    if unknown:
        raise ValueError(f"sweep: fast values {unknown} are not among {list(values)}")
    return [v if v in fast else pytest.param(v, marks=pytest.mark.slow) for v in values]
