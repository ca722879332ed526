"""Scoring GeCo's candidates (Δ-representation) with the model, and decoding them to raw rows."""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import UnsupportedModelError
from ...models import black_box_classifier, logit, resolve_model
from ...utils import cells
from .domain import ActiveDomain


# ====================================================================== models
def _resolve(model, space, threshold):
    """``(space, embedding or None, proba_clf or None, TrainedModel)``: a model with an
    embedding, or a black box (``predict_proba`` on encoded rows behind a FeatureSpace, or
    on raw rows)."""
    try:
        tm = resolve_model(model, space=space, threshold=threshold, allow_black_box=True)
    except UnsupportedModelError as e:
        raise UnsupportedModelError(
            f"GeCo needs a model with an embedding (LogisticRegression, MLPClassifier, torch) or "
            f"any classifier with predict_proba; {type(model).__name__} has neither") from e
    return tm.space, tm.embedding, (black_box_classifier(tm) if tm.is_black_box else None), tm


class _Scorer:
    """Probability of the positive class (and acceptance) of candidates (M, V)."""

    def __init__(self, domain: ActiveDomain, x: pd.Series, z0, embedding, proba_clf,
                 raw_model, threshold: float, evaluation: str):
        self.domain, self.x, self.z0 = domain, x, z0
        self.embedding, self.proba_clf, self.raw_model = embedding, proba_clf, raw_model
        self.threshold = threshold
        # the score from which the model accepts (a forest's score is a probability)
        self.logit_threshold = embedding.score_threshold(threshold) if embedding is not None else logit(threshold)
        self.evaluation = evaluation
        self._sets: dict = {}
        self._anchors: Any = None      # the parents' paths (tree ensembles), see set_parents
        self._pop: tuple | None = None
        self._anchor_of: dict = {}
        self._parent_ids = np.zeros(0, dtype=np.int64)
        self.delta = embedding.delta_evaluator(z0) if embedding is not None else None
        self.n_sets = 0
        self.n_scored = 0
        n = len(domain)
        self._bits = (np.int64(1) << np.arange(n, dtype=np.int64)) if n <= 62 else None
        if embedding is not None:
            self.kind = f"embedding/{evaluation}"
        elif proba_clf is not None:
            self.kind = "black-box/encoded"
        else:
            self.kind = "black-box/raw"

    def __call__(self, M: np.ndarray, V: np.ndarray, parent: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        self.n_scored += len(M)
        if self.embedding is not None:
            s = self.partial_scores(M, V, parent) if self.evaluation == "partial" else \
                self.embedding.score(self.encode(M, V))
            return self.embedding.score_to_proba(s), s >= self.logit_threshold
        if self.proba_clf is not None:
            p = np.asarray(self.proba_clf.predict_proba(self.encode(M, V)))[:, 1]
        else:
            p = np.asarray(self.raw_model.predict_proba(decode(self.domain, self.x, M, V)))[:, 1]
        return p, p >= self.threshold

    # -- full rows ----------------------------------------------------------------------
    def encode(self, M, V) -> np.ndarray:
        """Expanded rows of the candidates (the instance's encoding, changed blocks
        overwritten from the value tables)."""
        Z = np.repeat(self.z0[None, :], len(M), axis=0)
        r, l = cells(M)
        if len(r):                               # every changed block in one assignment
            E, cols, offset = self.domain.encoding_table()
            dst = cols[l]
            real = dst >= 0
            Z[np.broadcast_to(r[:, None], dst.shape)[real], dst[real]] = E[offset[l] + V[r, l]][real]
        return Z

    # -- Δ-sets + partial evaluation -----------------------------------------------------
    def _changed_columns(self, M) -> np.ndarray:
        """Boolean ``(m, n_inputs)``: the expanded columns of each candidate's changed features."""
        if not hasattr(self, "_col_feature"):
            owner = np.full(len(self.z0), len(self.domain), dtype=np.int64)   # no feature: never changed
            for l, f in enumerate(self.domain.features):
                owner[f.cols] = l
            self._col_feature = owner
        pad = np.zeros((len(M), len(self.domain) + 1), dtype=bool)
        pad[:, :-1] = M
        return pad[:, self._col_feature]

    def set_labels(self, M) -> np.ndarray:
        """One int64 label per row, equal for rows with the same changed-feature set (the
        set's bit code up to 62 features, else :meth:`set_ids`' inverse): what ranking within
        sets needs, without sorting the distinct sets."""
        codes = self.set_codes(M)
        return codes if codes is not None else self.set_ids(M)[1].astype(np.int64, copy=False)

    @property
    def has_set_codes(self) -> bool:
        """Whether :meth:`set_codes` gives codes (at most 62 features)."""
        return self._bits is not None

    def set_codes(self, M) -> np.ndarray | None:
        """The bit code of each row's changed-feature set (int64, equal across calls), or
        None with more than 62 features."""
        return M.astype(np.int64) @ self._bits if self._bits is not None else None

    def set_ids(self, M) -> tuple[np.ndarray, np.ndarray]:
        """``(keys, inverse)``: one key per distinct changed-feature set, row -> set."""
        codes = self.set_codes(M)
        if codes is not None:
            return np.unique(codes, return_inverse=True)
        packed = np.packbits(M, axis=1)
        uniq, inv = np.unique(packed, axis=0, return_inverse=True)
        return np.array([u.tobytes() for u in uniq], dtype=object), inv

    def _set(self, key, feats):
        """Per changed-feature set (cached): its encoded value blocks and columns."""
        hit = self._sets.get(key)
        if hit is None:
            blocks = [self.domain.features[l].enc for l in feats]
            cols = np.concatenate([self.domain.features[l].cols for l in feats])
            hit = self._sets[key] = (blocks, cols)
            self.n_sets += 1
        return hit

    #: a tree-ensemble child of at least this many changed features is walked from its
    #: parent (None: never). Off: measured (BENCHMARKS, issue 26 item 2, evening) -10 % CPU on
    #: Credit RF 500x10 / German GBT 500x6 but +25 % on Adult XGBoost, where the parents' paths
    #: cost more than the shorter walks save
    FROM_PARENT: int | None = None

    def set_parents(self, M, V, h) -> None:
        """The population the next candidates come from (``parent`` of :meth:`__call__`
        indexes it). With a tree ensemble, a child that changes ``FROM_PARENT`` or more features is
        walked from its parent's paths (computed once per member, ``h`` its hash, when a
        first such child needs them): only in the trees whose path of the parent tests a
        column the child changed."""
        delta = self.delta
        if delta is None or not delta.by_anchor or self.evaluation != "partial" or self.FROM_PARENT is None:
            return
        self._pop = (M, V, h)
        have = np.array([self._anchor_of.get(k, -1) for k in h.tolist()], dtype=np.int64)
        kept = np.flatnonzero(have >= 0)
        self._anchors = self._anchors.take(have[kept]) if self._anchors is not None and len(kept) else None
        self._parent_ids = np.full(len(h), -1, dtype=np.int64)
        self._parent_ids[kept] = np.arange(len(kept))
        self._anchor_of = {int(h[i]): j for j, i in enumerate(kept.tolist())}

    def _parents(self, parent) -> np.ndarray:
        """Anchor ids of the population members ``parent`` (their paths computed if new)."""
        assert self._pop is not None and self.delta is not None
        M, V, h = self._pop
        new = np.unique(parent[self._parent_ids[parent] < 0])
        if len(new):
            fresh = self.delta.anchors(self.encode(M[new], V[new]))
            base = 0 if self._anchors is None else len(self._anchors.score)
            self._anchors = fresh if self._anchors is None else self._anchors.join(fresh)
            self._parent_ids[new] = base + np.arange(len(new))
            self._anchor_of.update(zip(h[new].tolist(), self._parent_ids[new].tolist()))
        return self._parent_ids[parent]

    def partial_scores(self, M, V, parent=None) -> np.ndarray:
        """Scores of the candidates: per changed-feature set, the changed columns only,
        all sets scored in one batch by the embedding's
        :meth:`~groupcf.embeddings.base.Embedding.delta_evaluator` (for a ReLU network
        the instance folds into the first layer and the hidden layers run once; a tree
        ensemble takes the full rows and their changed columns at once and walks only the
        trees whose path of the instance tests a changed column; a candidate of ``FROM_PARENT``
        or more changed features with a ``parent`` (index into :meth:`set_parents`' population) is walked from its parent's
        paths instead, in the trees whose path of the parent tests a column it changed)."""
        delta = self.delta
        if delta is None:
            raise ValueError("partial evaluation needs the model's embedding")
        if delta.by_rows:
            Z = self.encode(M, V)
            child = None if parent is None or self._pop is None or self.FROM_PARENT is None else \
                (parent >= 0) & (M.sum(axis=1) >= self.FROM_PARENT)
            if child is None or not child.any():
                return delta.score_rows(Z, self._changed_columns(M))
            out = np.empty(len(M))                 # children of 2+ changes: from their parents; the rest from z0
            ids = self._parents(parent[child])
            out[child] = delta.score_from(Z[child], self._anchors, ids)
            if not child.all():
                out[~child] = delta.score_rows(Z[~child], self._changed_columns(M[~child]))
            return out
        keys, inv = self.set_ids(M)
        order = np.argsort(inv, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(inv, minlength=len(keys)))])
        groups, rowsets = [], []
        for g in range(len(keys)):
            rows = order[bounds[g]:bounds[g + 1]]
            feats = np.flatnonzero(M[rows[0]])
            blocks, cols = self._set(keys[g], feats)
            if len(feats) == 1:
                Zc = blocks[0][V[rows, feats[0]]]
            else:
                Zc = np.concatenate([blk[V[rows, l]] for blk, l in zip(blocks, feats)], axis=1)
            groups.append((cols, Zc))
            rowsets.append(rows)
        out = np.empty(len(M))
        for rows, sc in zip(rowsets, delta.score_groups(groups)):
            out[rows] = sc
        return out


# ====================================================================== decoding
def decode(domain: ActiveDomain, x: pd.Series, M: np.ndarray, V: np.ndarray) -> pd.DataFrame:
    """Raw rows of candidates: the instance's own raw value where a feature is unchanged,
    the active-domain value where it changes; data dtypes kept."""
    return pd.DataFrame({f.name: _column(f, x[f.name], M[:, l], V[:, l]) for l, f in enumerate(domain.features)})


#: per feature domain, its values as category codes or in the data's numpy dtype (:func:`_typed`)
_TYPED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _typed(f) -> np.ndarray | None:
    """The domain values of ``f`` as codes of its Categorical dtype, or converted to its
    numpy dtype (bool, integer, float) as ``pd.array`` converts them; None for any other
    dtype or values it cannot hold (cached per feature)."""
    if f in _TYPED:
        return _TYPED[f]
    dt, out = f.dtype, None
    if isinstance(dt, pd.CategoricalDtype):
        out = np.asarray(dt.categories.get_indexer(list(f.values)), dtype=np.int64)
    elif isinstance(dt, np.dtype) and dt.kind in "biuf":
        try:
            out = np.asarray(pd.array(np.asarray(f.values, dtype=object), dtype=dt))
        except (TypeError, ValueError):
            out = None
    _TYPED[f] = out
    return out


def _code(dt: pd.CategoricalDtype, xv) -> int:
    """The code of ``xv`` in ``dt`` (-1, a missing value, when it is not a category), as
    ``pd.Categorical([xv], dtype=dt)`` codes it."""
    try:
        at = dt.categories.get_loc(xv)
    except (KeyError, TypeError):
        return -1
    return int(at) if isinstance(at, (int, np.integer)) else int(dt.categories.get_indexer([xv])[0])


def _scalar(dt: np.dtype, xv):
    """``xv`` converted to ``dt`` as ``pd.array`` converts it, or None when it cannot be
    (a value already of ``dt``'s scalar type, a data frame's row mostly, is itself)."""
    if type(xv) is dt.type:
        return xv
    try:
        return np.asarray(pd.array(np.array([xv], dtype=object), dtype=dt))[0]
    except (TypeError, ValueError):
        return None


def _column(f, xv, ch: np.ndarray, v: np.ndarray):
    """One decoded column (:func:`decode`): a Categorical from its codes, or a numpy column
    of the data's dtype, from the domain values converted once (:func:`_typed`); else (any
    other dtype, or an instance value the dtype cannot hold) the values converted one by one."""
    dt, typed = f.dtype, _typed(f)
    if typed is not None:
        x_at = _code(dt, xv) if isinstance(dt, pd.CategoricalDtype) else _scalar(dt, xv)
        if x_at is not None:
            col = np.where(ch, typed[np.where(ch, v, 0)], x_at)
            return pd.Categorical.from_codes(col, dtype=dt) if isinstance(dt, pd.CategoricalDtype) else col
    vals = np.empty(len(ch), dtype=object)
    vals[:] = [xv] * len(ch)
    if ch.any():
        vals[ch] = f.values[v[ch]]
    if isinstance(dt, pd.CategoricalDtype):
        return pd.Categorical(vals, dtype=dt)
    try:
        return pd.array(vals, dtype=dt) if dt is not None else vals
    except (TypeError, ValueError):
        return vals
