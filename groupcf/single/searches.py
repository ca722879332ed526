"""MACE's numpy incumbent searches, registered with the embedding protocol
(:mod:`groupcf.embeddings.search`) by the capability they need.

* ``line_search`` (exact line searches: ReLU networks): :func:`groupcf.single.net_bound.search`
  before the MIP (the best single change, pairs, the radius through
  :meth:`~groupcf.embeddings.base.Embedding.radius`) and the network tightened over the
  radius (:func:`~groupcf.single.net_bound.tightened_embedding`); the MIP start and the
  cardinality cut are the protocol's default.
* ``leaf_cells`` (tree ensembles): :func:`groupcf.single.tree_bound.search` before the MIP
  (the search and its radius: the MIP is built over the radius box, the ensemble folded
  over it), then :func:`~groupcf.single.tree_bound.start` (the MIP start with split levels
  and leaves, the cardinality cut).

MACE calls only the protocol (``emb.incumbent``, ``emb.start_mip``); a new model type
either declares one of these capabilities, registers its own search for a new one, or
overrides those methods.
"""
from __future__ import annotations

from typing import Any

from groupcf.embeddings.base import Embedding
from groupcf.embeddings.search import Incumbent, SearchProblem, default_start, register_search

from . import net_bound, tree_bound


class LineSearch:
    """The ReLU-network search (:mod:`groupcf.single.net_bound`)."""

    def incumbent(self, embedding: Embedding, problem: SearchProblem) -> Incumbent:
        """Steps 1–3 of :mod:`groupcf.single.net_bound`, and the network over the radius."""
        if not problem.upper_bound or embedding.additive() is not None:
            return Incumbent()
        p = problem
        stats, point, box = net_bound.search(p.space, embedding, p.z0, p.lb, p.ub, p.can_change, p.distance,
                                             p.strict, p.score_lo, Tmax=p.Tmax, radius=p.radius and p.single)
        tight = None if box is None else net_bound.tightened_embedding(p.space, embedding, p.z0, box, lp=p.obbt)
        return Incumbent(stats, point, box, tight)

    def start_mip(self, embedding: Embedding, problem: SearchProblem, mip: Any, found: Incumbent) -> Incumbent:
        """The point as MIP start with the radius' cardinality cut (the default)."""
        return default_start(problem, mip, found)


class LeafCellSearch:
    """The tree-ensemble search (:mod:`groupcf.single.tree_bound`)."""

    def incumbent(self, embedding: Embedding, problem: SearchProblem) -> Incumbent:
        """Search and radius before the MIP (the radius for the best counterfactual only):
        the MIP is built over the radius box, the ensemble folded over it."""
        if not problem.upper_bound:
            return Incumbent()
        stats, point, box = tree_bound.search(embedding, problem)
        return Incumbent(stats, point, box, tree_bound.pruned(embedding, problem, stats, box))

    def start_mip(self, embedding: Embedding, problem: SearchProblem, mip: Any, found: Incumbent) -> Incumbent:
        """The point as MIP start, with the radius' cardinality cut."""
        tree_bound.start(problem, mip, found.stats, found.point)
        return found


register_search("line_search", LineSearch())
register_search("leaf_cells", LeafCellSearch())
