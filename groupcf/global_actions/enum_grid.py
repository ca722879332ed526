r"""The enumeration's evaluation, vectorised by feature set: the covers of every action on
one feature set :math:`F` at once, each distinct applied row scored once.

For :math:`F = (l_1, \dots, l_r)` with representatives :math:`V_l`
(:func:`~groupcf.global_actions.enumerate.feature_values`), the actions on :math:`F` are
the product :math:`\prod_{l \in F} V_l`, indexed by :math:`j = (j_1, \dots, j_r)`. Type
:math:`i` under :math:`j` gets the row :math:`x_i \oplus a_j`; whether it respects the rules
(domain, increase-only) is computed per feature and per type exactly, whether the model
accepts it through **cells**.

**Cells.** Per type and feature, each change :math:`j_l` has a key :math:`\kappa_l(i, j_l)`:

* one-hot and binary features: the category (value) set;
* a continuous column on a model with split points (:meth:`Embedding.split_points
  <groupcf.embeddings.base.Embedding.split_points>`, :math:`t_1 < \dots < t_q`): the number
  of :math:`t` strictly below the new value :math:`v` — every test :math:`v \le t` on that
  column has the same outcome for two values with the same count;
* anything else: :math:`j_l` itself (no merging).

**Proposition.** If :math:`\kappa_l(i, j_l) = \kappa_l(i, j'_l)` for every :math:`l \in F`,
the model gives :math:`x_i \oplus a_j` and :math:`x_i \oplus a_{j'}` the same score. *Proof.*
The two rows differ only in the columns of :math:`F`. For a one-hot or binary feature equal
keys mean equal columns. For a continuous column with split points, the split-point contract
holds at every point: the score is constant when that column alone moves inside one interval
:math:`(t_p, t_{p+1}]`, and equal counts put both values in the same interval. Move the
columns of :math:`F` one at a time from :math:`x_i \oplus a_j` to :math:`x_i \oplus a_{j'}`:
each move stays inside one interval of its column (the other columns fixed), so the score
never changes. :math:`\square` Hence the model is evaluated once per distinct
:math:`(i, \kappa(i, j))` among the valid pairs, and its verdict scattered back: the covers
are exactly those of :meth:`ActionSpace.cover_many
<groupcf.global_actions.actions.ActionSpace.cover_many>`. On a tree ensemble a type sees at
most :math:`\prod_{l}(q_l + 1)` cells whatever :math:`\prod_l |V_l|` is (the representatives
come from every type's breakpoints); on other models nothing merges and the gain is only
that no :class:`~groupcf.global_actions.actions.Action` is built per candidate.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .actions import DOMAIN_TOL, ActionSpace

#: relabel a combined cell key when it could pass this (int64 stays exact)
_KEY_LIMIT = 2 ** 40


class FeatureGrid:
    """Per mutable feature ``l`` and its representatives ``values[l]``: the new value per
    type (``new[l]``, ``types × |V_l|``), whether the change respects the rules
    (``valid[l]``) and its cell key (``key[l]``; module docstring)."""

    def __init__(self, aspace: ActionSpace, values: dict):
        self.a = aspace
        self.values = values
        splits = aspace.embedding.split_points()
        self.new: dict = {}
        self.valid: dict = {}
        self.key: dict = {}
        self.n_keys: dict = {}
        n = aspace.n_types
        for l, v in values.items():
            f = aspace.feats[l]
            x = aspace.codes[:, l]
            if f.encoding in ("onehot", "binary"):
                new = np.broadcast_to(v[None, :], (n, len(v)))
                ok = (v[None, :] >= x[:, None] - 1e-9) if f.increase_only else np.ones((n, len(v)), bool)
                key = np.rint(new).astype(np.int64)
            else:
                new = x[:, None] + v[None, :] if aspace.numeric == "shift" else np.broadcast_to(v[None, :], (n, len(v)))
                ok = (new >= -DOMAIN_TOL) & (new <= 1 + DOMAIN_TOL)
                if f.increase_only:
                    ok &= new >= x[:, None] - DOMAIN_TOL
                if splits is not None:
                    t = np.asarray(splits[f.columns[0]], dtype=float)
                    key = np.searchsorted(t, new, side="left").astype(np.int64)
                else:
                    key = np.broadcast_to(np.arange(len(v), dtype=np.int64)[None, :], (n, len(v)))
            self.new[l], self.valid[l], self.key[l] = new, np.asarray(ok, dtype=bool), key
            self.n_keys[l] = int(key.max()) + 1 if key.size else 1

    def covers(self, F: tuple, batch_rows: int = 1_000_000) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
        """Per chunk of the actions on ``F`` (row-major over :math:`\\prod V_l`): ``(J, C,
        scored)`` — the value indices ``(m × |F|)``, the covers ``(m × types)`` and how many
        distinct rows the model scored."""
        a = self.a
        n = a.n_types
        sizes = [len(self.values[l]) for l in F]
        M = int(np.prod(sizes))
        per = max(1, batch_rows // max(n, 1))
        for s in range(0, M, per):
            J = np.stack(np.unravel_index(np.arange(s, min(M, s + per)), sizes), axis=1)
            valid = np.ones((n, len(J)), dtype=bool)
            key = np.zeros((n, len(J)), dtype=np.int64)
            for c, l in enumerate(F):
                valid &= self.valid[l][:, J[:, c]]
                key = key * self.n_keys[l] + self.key[l][:, J[:, c]]
                if c + 1 < len(F) and int(key.max(initial=0)) * max(self.n_keys[m] for m in F) >= _KEY_LIMIT:
                    key = np.unique(key, return_inverse=True)[1].reshape(key.shape)
            C = np.zeros((n, len(J)), dtype=bool)
            ti, ci = np.nonzero(valid)
            scored = 0
            if len(ti):
                width = int(key.max()) + 1
                _, first, inv = np.unique(ti * width + key[ti, ci], return_index=True, return_inverse=True)
                rows = self.rows(F, ti[first], J[ci[first]])
                C[ti, ci] = (a.embedding.score(rows) >= a.tau)[inv.ravel()]
                scored = len(first)
            yield J, C.T.copy(), scored

    def rows(self, F: tuple, types: np.ndarray, J: np.ndarray) -> np.ndarray:
        """The expanded rows of ``types`` under the actions ``J`` (value indices on ``F``)."""
        a = self.a
        Z = a.Z[types].copy()
        r = np.arange(len(types))
        for c, l in enumerate(F):
            f, j = a.feats[l], J[:, c]
            if f.encoding == "onehot":
                Z[:, f.columns] = 0.0
                Z[r, np.asarray(f.columns)[np.rint(self.values[l][j]).astype(np.int64)]] = 1.0
            else:
                Z[:, f.columns[0]] = self.new[l][types, j]
        return Z
