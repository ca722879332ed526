"""The group counterfactual problem: instances, their types, and what a column covers.

Instances of ``S`` that are equal on every feature are always covered together, so the
algorithms work on the distinct *types* of ``S`` (with their multiplicity) and map the
answer back to the rows at the end.

A *column* is a counterfactual point ``v`` (expanded, classified positive) with a change
set ``F`` of at most ``Tmax`` original features. Type ``i`` is covered by ``(v, F)`` iff
``x_i`` equals ``v`` on every feature outside ``F`` and, for increase-only features in
``F``, ``v`` is not below ``x_i`` (coverage is exact agreement).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..colgen.pool import Column as PoolColumn
from ..embeddings.base import Embedding
from ..exceptions import InvalidInputError, NotRejectedError, UnsupportedModelError
from ..formulations.completion import Completions
from ..models import DEFAULT_MARGIN, TrainedModel
from ..utils import TOL, value_key

log = logging.getLogger(__name__)


def expanded_to_codes(space, V: np.ndarray) -> np.ndarray:
    """Expanded rows -> per original feature the category code (binary: 0/1, one-hot:
    column index within the group, continuous: the scaled value)."""
    V = np.atleast_2d(V)
    out = np.empty((len(V), len(space)))
    for l, f in enumerate(space):
        block = V[:, f.columns]
        if f.encoding == "onehot":
            out[:, l] = block.argmax(axis=1)
        elif f.encoding == "binary":
            out[:, l] = block[:, 0] >= 0.5
        else:
            out[:, l] = block[:, 0]
    return out


class Column(PoolColumn):
    """A counterfactual ``v`` with change set ``F`` and the types it covers: a column of
    the generic engine (:class:`groupcf.colgen.Column`, elements = types, weight 1, no
    element costs) whose ``key`` is read from ``v`` and the *current* ``cover`` (seed
    pricing narrows covers in place); equality is identity."""

    def __init__(self, v: np.ndarray, F: frozenset, cover: np.ndarray, source: str = "?"):
        self.v = v              # expanded point (exact 0/1 on discrete columns)
        self.F = F              # indices of original features allowed to change
        self.cover = cover      # bool over types
        self.source = source    # which generator produced it (initial, pricing, aux-v, ...)

    @property
    def key(self) -> bytes:  # type: ignore[override]  # read from v and the current cover
        return value_key(self.v, self.cover)

    def value(self, pi: np.ndarray) -> float:
        """``cover · π``: the column's dual value (as the group levels compute it)."""
        return float(self.cover @ pi)

    def __repr__(self) -> str:
        return f"Column(v={self.v!r}, F={self.F!r}, cover={self.cover!r}, source={self.source!r})"

    __eq__ = object.__eq__
    __hash__ = object.__hash__


@dataclass
class GroupProblem:
    """``S`` reduced to its distinct types, with everything the algorithms need."""

    S: pd.DataFrame
    tm: TrainedModel
    Tmax: int
    margin: float = DEFAULT_MARGIN
    Z: np.ndarray = field(init=False)          # expanded rows of the types
    codes: np.ndarray = field(init=False)      # per-type feature codes
    type_of_row: np.ndarray = field(init=False)  # row of S -> type index
    #: types the time limit left without any counterfactual (set by ``initial_columns``)
    unreached: np.ndarray = field(init=False)

    def __post_init__(self):
        space = self.tm.space
        if not isinstance(self.S, pd.DataFrame):
            raise InvalidInputError(f"S must be a pandas DataFrame of raw features, got {type(self.S).__name__}")
        if len(self.S) == 0:
            raise InvalidInputError("S is empty: nothing to explain")
        if not self.S.index.is_unique:
            raise InvalidInputError("S has duplicate index labels; the assignment is indexed like S")
        if int(self.Tmax) != self.Tmax or self.Tmax < 1:
            raise InvalidInputError(f"Tmax must be a positive integer, got {self.Tmax!r}")
        Zs = space.transform(self.S)           # raises on NaN / unknown categories
        accepted = self.tm.is_positive(self.S)
        if accepted.any():
            rows = self.S.index[accepted].tolist()
            raise NotRejectedError(
                f"{len(rows)} instance(s) of S are already accepted by the model, rows {rows[:20]}"
                f"{' ...' if len(rows) > 20 else ''}; S must contain rejected instances only")
        self.Z, self.type_of_row = np.unique(np.round(Zs, 12), axis=0, return_inverse=True)
        self.type_of_row = self.type_of_row.ravel()
        self.codes = expanded_to_codes(space, self.Z)
        self.unreached = np.zeros(len(self.Z), dtype=bool)
        self._increase_only = np.array([f.increase_only for f in space])
        log.debug("S: %d rows, %d distinct types", len(self.S), len(self.Z))

    # ------------------------------------------------------------------ sizes
    @property
    def space(self):
        return self.tm.space

    @property
    def embedding(self) -> Embedding:
        """The model's embedding (the group methods work on models groupcf embeds)."""
        if self.tm.embedding is None:
            raise UnsupportedModelError("the group methods need a model groupcf can embed, not a black box")
        return self.tm.embedding

    @property
    def n_types(self) -> int:
        return len(self.Z)

    @property
    def n_features(self) -> int:
        return self.codes.shape[1]

    @property
    def score_lo(self) -> float:
        return self.tm.logit_threshold + self.margin

    def completions(self, solver="highs") -> Completions:
        """The completion service for this problem's model and threshold (a MIP's point
        is accepted at the bare threshold, below the margin the MIP enforced)."""
        return Completions(self.space, self.embedding, self.score_lo, solver,
                           accept=self.tm.logit_threshold)

    # ------------------------------------------------------------------ classes
    def outside_keys(self, F) -> np.ndarray:
        """A 64-bit key per type, equal for two types iff (up to a collision probability
        about ``n² / 2⁶⁴``) they agree on every feature outside ``F``: the classes of
        ``F``. Tabulation hashing: a random value per (feature, code), summed
        (wrapping) over the features outside ``F``."""
        if not hasattr(self, "_hash"):
            rng = np.random.default_rng(12345)
            H = np.empty(self.codes.shape, dtype=np.uint64)
            for l in range(self.n_features):
                _, ids = np.unique(np.round(self.codes[:, l], 9), return_inverse=True)
                H[:, l] = rng.integers(1, 2**63, size=ids.max() + 1, dtype=np.uint64)[ids.ravel()]
            self._hash = (H, H.sum(axis=1, dtype=np.uint64))
        H, total = self._hash
        return total - H[:, sorted(F)].sum(axis=1, dtype=np.uint64)

    # ------------------------------------------------------------------ coverage
    def differences(self, v: np.ndarray) -> np.ndarray:
        """Bool ``(types × features)``: where each type differs from ``v``."""
        vc = expanded_to_codes(self.space, v)[0]
        return np.abs(self.codes - vc) > TOL

    def coverable(self, v: np.ndarray) -> np.ndarray:
        """Types that ``v`` could cover with some change set (increase-only respected)."""
        vc = expanded_to_codes(self.space, v)[0]
        return ~np.any((self.codes > vc + TOL) & self._increase_only, axis=1)

    def cover(self, v: np.ndarray, F) -> np.ndarray:
        """Types covered by ``(v, F)``."""
        outside = np.ones(self.n_features, dtype=bool)
        outside[list(F)] = False
        diff = self.differences(v)
        return ~np.any(diff[:, outside], axis=1) & self.coverable(v)

    def make_column(self, v: np.ndarray, F, source: str) -> Column:
        v = np.asarray(v, dtype=float).copy()
        dom = self.space.domain()
        v[dom.integer] = np.round(v[dom.integer])
        return Column(v, frozenset(int(l) for l in F), self.cover(v, F), source)

    def is_positive(self, v: np.ndarray) -> bool:
        """The embedding's exact numpy score accepts ``v`` (at the threshold itself; the MIPs
        add a small safety margin on top)."""
        return bool(self.embedding.score(v[None, :])[0] >= self.tm.logit_threshold)
