"""The rules a global search ran under — each feature's numeric domain, immutable and
increase-only flags — kept with its :class:`~groupcf.results.global_actions.GlobalExplanation`
(and in its JSON), so that a result read back from JSON validates exactly as the original.

Without them, ``validate(model=pipe)`` on a result read back from JSON would re-derive the
rules from ``pipe`` alone: for a ``ColumnTransformer`` pipeline that means the scalers'
estimated ranges (``StandardScaler``: mean ± 3 standard deviations) instead of the
``space=`` the search was given, and no immutable or increase-only feature at all."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..features._values import _key, _numbers
from .base import plain

if TYPE_CHECKING:  # pragma: no cover
    from ..features.space import FeatureSpace


@dataclass(frozen=True)
class Rule:
    """One feature's rules as :meth:`GlobalExplanation.validate` checks them.

    Parameters
    ----------
    name : str
        The raw column.
    encoding : str
        ``"binary"``, ``"onehot"`` or ``"continuous"`` (the feature space's).
    immutable, increase_only : bool
        The feature's actionability.
    low, high : float or None
        A continuous feature's domain (``None`` for the others).
    categories : list or None
        The ordered values of an increase-only categorical / ordinal / binary feature.
    edges : list or None
        The inner bin edges of an increase-only binned numeric feature.
    """

    name: str
    encoding: str
    immutable: bool = False
    increase_only: bool = False
    low: float | None = None
    high: float | None = None
    categories: list[Any] | None = None
    edges: list[float] | None = None

    def order(self, col: pd.Series) -> np.ndarray:
        """Each value's position along the feature's order (raw values for a continuous
        feature, the category's or bin's index otherwise), for increase-only checks."""
        if self.encoding == "continuous":
            return _numbers(col, self.name)
        if self.edges is not None:
            inner = np.asarray(self.edges, dtype=float)
            # a bin given as itself (a decoded counterfactual) is placed by its left edge
            x = np.array([v.left if isinstance(v, pd.Interval) else float(v) for v in col.tolist()], dtype=float)
            return np.searchsorted(inner, x, side="right").astype(float)
        lookup = {_key(c): i for i, c in enumerate(self.categories or [])}
        return np.array([lookup.get(_key(v), np.nan) for v in col.tolist()], dtype=float)


def rules_of(space: FeatureSpace) -> dict[str, Rule]:
    """The rules of every feature of a fitted :class:`~groupcf.features.space.FeatureSpace`.

    Parameters
    ----------
    space : FeatureSpace
        The search's feature space (``TrainedModel.space``).

    Returns
    -------
    dict
        ``{feature name: Rule}``, in the space's order.
    """
    out = {}
    for f in space:
        cont = f.encoding == "continuous"
        ordered = f.increase_only and not cont
        edges = f.edges if ordered else None
        out[f.name] = Rule(
            name=f.name, encoding=f.encoding, immutable=bool(f.immutable), increase_only=bool(f.increase_only),
            low=float(f.low) if cont else None, high=float(f.high) if cont else None,
            categories=plain(list(f.categories)) if ordered and edges is None else None,
            edges=None if edges is None else [float(e) for e in edges[1:-1]])
    return out


def rules_to_json(rules: dict[str, Rule]) -> list[dict[str, Any]]:
    """The rules as JSON-friendly dicts (one per feature, in order)."""
    return [plain(asdict(r)) for r in rules.values()]


def rules_from_json(d: list[dict[str, Any]] | None) -> dict[str, Rule] | None:
    """:func:`rules_to_json`'s output back as rules (``None``: a JSON written before they were kept)."""
    if d is None:
        return None
    return {r["name"]: Rule(**r) for r in d}
