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
