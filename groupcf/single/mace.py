"""MACE-style exact nearest counterfactual of one instance (l0 for now)."""
from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from ..exceptions import InvalidInputError, NoCounterfactualError, SolverTimeLimitError, ValidationError
from ..formulations.nearest import NearestL0
from ..models import DEFAULT_MARGIN, TrainedModel
from ..results.explanation import Explanation
from ..solvers import make_backend
from ..solvers.base import Status

log = logging.getLogger(__name__)

#: how many times the logit margin is enlarged (x10) when the real model disagrees
MAX_MARGIN_RETRIES = 3


def mace_l0(x: pd.Series, tm: TrainedModel, *, Tmax: int | None, solver, n: int = 1,
            time_limit: float | None = None, mip_gap: float | None = None,
            margin: float = DEFAULT_MARGIN, **options) -> Explanation:
    """Nearest counterfactual(s) of ``x`` changing the fewest original features.

    Raises :class:`NoCounterfactualError` when none exists within ``Tmax`` (and the
    actionability constraints), :class:`SolverTimeLimitError` when the time limit passes
    before any counterfactual is found.
    """
    t_start = time.perf_counter()
    space = tm.space
    z0 = space.transform(x.to_frame().T)[0]
    backend = make_backend(solver, time_limit=time_limit, mip_gap=mip_gap, **options)
    mip = NearestL0(space, tm.embedding, z0, backend, score_lo=tm.logit_threshold + margin, Tmax=Tmax).build()

    rows, changes, statuses, dual_bound = [], [], [], None
    retries = 0
    while len(rows) < n:
        if time_limit is not None:
            left = time_limit - (time.perf_counter() - t_start)
            if left <= 0:
                break
            backend.options.time_limit = left
        sol = backend.solve()
        if not sol.status.has_solution:
            if sol.status == Status.INFEASIBLE:
                if rows:
                    break  # no further distinct counterfactual
                within = f" within Tmax={Tmax} changed features" if Tmax is not None else ""
                raise NoCounterfactualError(
                    f"no counterfactual exists for instance {x.name!r}{within} under the "
                    "actionability constraints (immutable / increase-only features)", rows=[x.name])
            if sol.status == Status.TIME_LIMIT and not rows:
                raise SolverTimeLimitError(
                    f"time limit ({time_limit}s) reached before any counterfactual was found; "
                    "raise time_limit")
            break
        v = np.round(sol.x[mip.v], 9)
        v[space.domain().integer] = np.round(v[space.domain().integer])
        cf = _decode(space, x, v, z0)
        if not tm.is_positive(cf)[0]:
            # the solver's tolerance let a point through that the real model rejects
            retries += 1
            if retries > MAX_MARGIN_RETRIES:
                raise ValidationError(
                    f"the real model rejects the MIP's counterfactual even with margin {margin:g}; "
                    "the embedding may not match the model")
            margin *= 10
            log.info("real model rejected a counterfactual; re-solving with logit margin %g", margin)
            backend.set_row_bounds([mip.constr.lo_row], [tm.logit_threshold + margin], [np.inf])
            continue
        if not rows:
            dual_bound = sol.dual_bound
        rows.append(cf.iloc[0])
        changes.append([space.features_[l].name for l in mip.changed(v)])
        statuses.append(sol.status)
        if len(rows) < n:
            mip.exclude(v)
    if not rows:
        raise SolverTimeLimitError(f"time limit ({time_limit}s) reached before any counterfactual was found")
    cfs = pd.DataFrame(rows).reset_index(drop=True)
    return Explanation(
        instance=x, counterfactuals=cfs, changes=changes,
        distances=[float(len(c)) for c in changes], probabilities=tm.proba(cfs),
        status=statuses[0], is_optimal=all(s == Status.OPTIMAL for s in statuses),
        solve_time=time.perf_counter() - t_start, method="mace", distance="l0",
        solver=backend.name, dual_bound=dual_bound,
        stats={"margin": margin, "binaries": mip.constr.n_binaries})


def _decode(space, x: pd.Series, v: np.ndarray, z0: np.ndarray) -> pd.DataFrame:
    """Raw counterfactual: decoded values for changed features, the instance's own raw
    values elsewhere (so unchanged numerics keep their exact value)."""
    decoded = space.inverse_transform(v[None, :])
    values = {}
    for f in space:
        changed = np.any(np.abs(v[f.columns] - z0[f.columns]) > 1e-6)
        values[f.name] = [decoded.at[0, f.name] if changed else x[f.name]]
    out = pd.DataFrame(values)
    return out.infer_objects()


def validate_instance(x, space) -> pd.Series:
    """One raw instance as a Series (from a one-row DataFrame or a Series)."""
    if isinstance(x, pd.DataFrame):
        if len(x) != 1:
            raise InvalidInputError(f"explain() takes one instance (a one-row DataFrame or a Series), got {len(x)} rows")
        x = x.iloc[0]
    if not isinstance(x, pd.Series):
        raise InvalidInputError(f"the instance must be a pandas Series or one-row DataFrame, got {type(x).__name__}")
    space.transform(x.to_frame().T)  # raises on NaN / unknown category / missing column
    return x
