"""``pyomo:NAME`` backends: a solver that crashes when given a MIP start is solved again without it."""
from __future__ import annotations

import logging

import numpy as np
import pytest
import scipy.sparse as sp

from groupcf.exceptions import SolverError
from groupcf.solvers import Status, VarType, available_backends, make_backend

pytestmark = pytest.mark.skipif("pyomo:cbc" not in available_backends(), reason="cbc not installed: apt-get install coinor-cbc")


def knapsack(be):
    """max 5a + 4b + 3c s.t. 2a + 3b + c <= 4, binary: optimum 8 (a, c)."""
    x = be.add_vars(3, 0.0, 1.0, vtype=VarType.BINARY)
    be.add_rows(sp.csr_matrix([[2.0, 3.0, 1.0]]), [-np.inf], [4.0])
    be.set_objective(x, [5.0, 4.0, 3.0], sense="max")
    return x


def test_a_crash_with_a_mip_start_is_retried_without_it(monkeypatch, caplog):
    """CBC 2.10 aborts when its preprocessing finds an SOS and a start is given (seen on the
    German global-actions master); the start is a hint, so the backend solves again without
    it, says so in the log, and gives no start to later solves."""
    be = make_backend("pyomo:cbc")
    x = knapsack(be)
    real = be._opt.solve
    calls = []

    def crash_on_start(model, **kw):
        calls.append(bool(kw.get("warmstart")))
        if kw.get("warmstart"):
            raise RuntimeError("Solver (cbc) did not exit normally")
        return real(model, **kw)

    monkeypatch.setattr(be._opt, "solve", crash_on_start)
    be.set_mip_start(x, [0.0, 1.0, 0.0])
    with caplog.at_level(logging.WARNING, logger="groupcf.solvers.pyomo_factory"):
        sol = be.solve()
    assert calls == [True, False]
    assert sol.status is Status.OPTIMAL and sol.objective == pytest.approx(8.0)
    assert "solving again without it" in caplog.text
    assert not be.capabilities.mip_start
    be.set_mip_start(x, [1.0, 0.0, 1.0])
    assert be.solve().status is Status.OPTIMAL and calls == [True, False, False]


def test_a_crash_without_a_start_is_a_solver_error(monkeypatch):
    be = make_backend("pyomo:cbc")
    knapsack(be)

    def crash(model, **kw):
        raise RuntimeError("Solver (cbc) did not exit normally")

    monkeypatch.setattr(be._opt, "solve", crash)
    with pytest.raises(SolverError, match="pyomo:cbc failed"):
        be.solve()
