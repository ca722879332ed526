"""Shared test fixtures and brute-force references."""
from __future__ import annotations

import itertools
import os
from pathlib import Path

import pandas as pd
import pytest

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


def all_points(space) -> pd.DataFrame:
    """Every combination of categories of a (discrete) fitted FeatureSpace, as raw rows."""
    cats = []
    for f in space:
        if f.encoding == "continuous":
            raise ValueError("all_points needs a discrete space")
        cats.append(f.categories)
    rows = list(itertools.product(*cats))
    df = pd.DataFrame(rows, columns=[f.name for f in space])
    for f in space:
        if isinstance(f.dtype, pd.CategoricalDtype):
            df[f.name] = pd.Categorical(df[f.name], dtype=f.dtype)
    return df


def brute_force_nearest_l0(space, score_fn, x: pd.Series, Tmax=None, margin=0.0):
    """Minimum number of changed original features over every point of the space that
    ``score_fn`` (expanded rows -> logit) accepts, honouring immutable / increase-only.
    Returns (best distance or None, list of optimal raw rows)."""
    P = all_points(space)
    codes = space.codes(P)
    x_codes = space.codes(x.to_frame().T)[0]
    ok = score_fn(space.transform(P)) >= margin
    dist = (codes != x_codes).sum(axis=1)
    for l, f in enumerate(space):
        if f.immutable:
            ok &= codes[:, l] == x_codes[l]
        if f.increase_only:
            ok &= codes[:, l] >= x_codes[l]
    if Tmax is not None:
        ok &= dist <= Tmax
    if not ok.any():
        return None, []
    best = dist[ok].min()
    return int(best), P[ok & (dist == best)]


@pytest.fixture(scope="session")
def compas_paper():
    import groupcf as gcf

    return gcf.datasets.load("compas", variant="paper")
