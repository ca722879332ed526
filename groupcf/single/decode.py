"""Raw counterfactual rows from expanded points: changed features decoded, every other
feature kept at the instance's own raw value (so unchanged numerics keep their exact value),
categorical features with the training data's dtype. Shared by MACE and the particle swarm."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..formulations.nearest import change_tol

__all__ = ["decode", "integer_past", "restore_dtypes", "round_away"]


def decode(space, x: pd.Series, v: np.ndarray, z0: np.ndarray, keep=()) -> pd.DataFrame:
    """Raw counterfactual: decoded values for changed features (and the feature indices in
    ``keep``, however small their change), the instance's own raw values elsewhere (so
    unchanged numerics keep their exact value)."""
    decoded = space.inverse_transform(v[None, :])
    values = {}
    for l, f in enumerate(space):
        changed = l in keep or np.any(np.abs(v[f.columns] - z0[f.columns]) > change_tol(f))
        values[f.name] = [decoded.at[0, f.name] if changed else x[f.name]]
    return restore_dtypes(space, pd.DataFrame(values).infer_objects())


def restore_dtypes(space, df: pd.DataFrame) -> pd.DataFrame:
    """Give categorical features back the training data's ``Categorical`` dtype (its
    category order matters to ordered comparisons, e.g. PLAF's ``check_rows``) when every
    value is one of its categories."""
    for f in space:
        dt = getattr(f, "dtype", None)
        if isinstance(dt, pd.CategoricalDtype) and f.name in df.columns and \
                not isinstance(df[f.name].dtype, pd.CategoricalDtype):
            col = pd.Categorical(df[f.name], dtype=dt)
            if not pd.isna(col).any():
                df[f.name] = col
    return df


def round_away(f, v: float, up: bool) -> float:
    """A wide integer column's value rounded away from the instance (to the grid)."""
    rng = f.high - f.low
    if not (f.integer and rng > 0):
        return v
    raw = f.low + v * rng
    raw = math.ceil(raw - 1e-9) if up else math.floor(raw + 1e-9)
    return (raw - f.low) / rng


def integer_past(f, t: float, rng: float, up: bool) -> float:
    """The integer raw value nearest the threshold ``t`` on the side a crossing needs
    (``up``: encoded above ``t``; else at or below it), encoded. A threshold a hair above an
    integer (LightGBM's bin bounds, e.g. 1588.0000000000007) must not round to that integer,
    which encodes at or below ``t`` and crosses nothing."""
    raw = f.low + t * rng
    r = math.ceil(raw - 1e-9) if up else math.floor(raw + 1e-9)
    if up and (r - f.low) / rng <= t:
        r += 1
    elif not up and (r - f.low) / rng > t:
        r -= 1
    return (r - f.low) / rng
