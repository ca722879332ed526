r"""Assignment by a decision tree (``explain_global(..., assign="tree")``, CET-style).

By default each person takes the cheapest chosen action that covers them — the best
possible assignment, but one an auditor can only read through the per-action rules. With
``assign="tree"`` the assignment itself is a decision tree of depth :math:`\le d`
(:math:`d \le 2`) over readable atoms of the raw features (``feature = value``,
``feature < t``, :func:`~groupcf.results.subgroups.atoms`): every person in a leaf gets
that leaf's action (or none), and is covered only if that action covers them.

For the chosen actions :math:`a_1 … a_k`, with :math:`w_{ij} = 1 - \varepsilon\,d_{ij}` when
action :math:`j` covers person :math:`i` and :math:`0` otherwise (:math:`\varepsilon` small
enough that coverage comes first, then total cost), the value of a leaf :math:`R` is
:math:`\max(0, \max_j \sum_{i \in R} w_{ij})`. The tree maximising the sum of its leaves'
values is found **exactly** by enumeration: for every root atom :math:`r` the two
subtrees are independent, and the best split of :math:`r` (of :math:`\lnot r`) over every
atom :math:`b` is read off one matrix product :math:`A^\top \mathrm{diag}(r)\, W`
(atoms × actions). What is *not* optimised jointly: the actions are those the master chose
for the free assignment (CET searches actions and tree together, heuristically); the
coverage lost to the tree is reported beside the free assignment's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..results.subgroups import atoms

__all__ = ["AssignmentTree", "fit_tree"]


@dataclass
class AssignmentTree:
    """The leaves of the assignment tree: one rule (conjunction of atoms, ``"everyone"``
    for a single leaf) and its action id (``-1``: none) each; ``leaf_of_row`` per person."""

    rules: list
    actions: list
    leaf_of_row: np.ndarray

    def assignment(self) -> np.ndarray:
        """The action id each person's leaf gives (``-1``: none)."""
        return np.asarray(self.actions)[self.leaf_of_row]

    def frame(self) -> pd.DataFrame:
        """One row per leaf: ``rule``, ``action_id``, ``n`` (people in it)."""
        n = np.bincount(self.leaf_of_row, minlength=len(self.rules))
        return pd.DataFrame({"rule": self.rules, "action_id": self.actions, "n": n}).rename_axis("leaf")


def _best(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``values`` (… × actions): the best leaf value (≥ 0) and its action (-1)."""
    j = values.argmax(axis=-1)
    v = np.take_along_axis(values, j[..., None], axis=-1)[..., 0]
    return np.where(v > 0, v, 0.0), np.where(v > 0, j, -1)


def fit_tree(X: pd.DataFrame, cover: np.ndarray, cost: np.ndarray, max_depth: int = 2,
             n_thresholds: int = 8) -> AssignmentTree:
    """The best assignment tree of depth ``≤ max_depth`` (module docstring).

    Parameters
    ----------
    X
        Raw rows (the people of ``S``).
    cover
        Bool, people × actions: action ``j`` covers person ``i``.
    cost
        People × actions: the cost of action ``j`` for person ``i`` (where it covers).
    max_depth
        0, 1 or 2.
    """
    if max_depth not in (0, 1, 2):
        raise ValueError(f"max_depth must be 0, 1 or 2, got {max_depth!r}")
    cover = np.asarray(cover, dtype=bool)
    n, k = cover.shape
    c = np.where(cover, np.asarray(cost, dtype=float), 0.0)
    eps = 1e-6 / (1.0 + float(c.max(initial=0.0)) * max(n, 1))
    W = np.where(cover, 1.0 - eps * c, 0.0)
    total = W.sum(axis=0)
    v0, j0 = _best(total[None, :])
    best = (float(v0[0]), ["everyone"], [int(j0[0])], np.zeros(n, dtype=int))
    if max_depth == 0 or k == 0:
        return AssignmentTree(*best[1:])
    A, names = atoms(X, n_thresholds)
    if not A.shape[1]:
        return AssignmentTree(*best[1:])
    Af = A.astype(float)
    inside = Af.T @ W                        # atoms × actions: value of each action inside each atom
    outside = total[None, :] - inside
    vin, jin = _best(inside)
    vout, jout = _best(outside)
    depth1 = vin + vout
    r = int(depth1.argmax())
    if depth1[r] > best[0] + 1e-12:
        best = (float(depth1[r]), [names[r], f"not ({names[r]})"], [int(jin[r]), int(jout[r])],
                np.where(A[:, r], 0, 1))
    if max_depth == 1:
        return AssignmentTree(*best[1:])
    for r in range(A.shape[1]):
        side = []
        for mask, leaf_v, leaf_j, label in ((A[:, r], vin[r], jin[r], names[r]),
                                            (~A[:, r], vout[r], jout[r], f"not ({names[r]})")):
            Wm = W * mask[:, None]
            tot = Wm.sum(axis=0)
            sin = Af.T @ Wm                  # atoms × actions, inside this side
            a, ja = _best(sin)
            b, jb = _best(tot[None, :] - sin)
            split = a + b
            s = int(split.argmax())
            if split[s] > leaf_v + 1e-12 and 0 < int((A[:, s] & mask).sum()) < int(mask.sum()):
                side.append((float(split[s]), [f"{label} and {names[s]}", f"{label} and not ({names[s]})"],
                             [int(ja[s]), int(jb[s])], mask & A[:, s], mask & ~A[:, s]))
            else:
                side.append((float(leaf_v), [label], [int(leaf_j)], mask, None))
        value = side[0][0] + side[1][0]
        if value > best[0] + 1e-12:
            rules: list[str] = []
            acts: list[int] = []
            leaf = np.zeros(n, dtype=int)
            for _, rs, js, m1, m2 in side:
                for rule, j, m in zip(rs, js, (m1, m2)):
                    leaf[m] = len(rules)
                    rules.append(rule)
                    acts.append(j)
            best = (value, rules, acts, leaf)
    return AssignmentTree(*best[1:])
