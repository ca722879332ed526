"""The radius helpers, for the single-instance searches (:mod:`groupcf.single.tree_bound`,
:mod:`groupcf.single.net_bound`): they live with the embedding protocol, whose
:meth:`~groupcf.embeddings.base.Embedding.radius` default they implement
(:mod:`groupcf.embeddings.radius`)."""
from __future__ import annotations

from groupcf.embeddings.radius import Radius, category_changes, deltas, max_changes, radius_box

__all__ = ["Radius", "category_changes", "deltas", "max_changes", "radius_box"]
