r"""The numpy incumbent search and the radius of the nearest-counterfactual MIP, as part of
the embedding protocol.

Before MACE solves its MIP it asks the model (:meth:`Embedding.incumbent
<groupcf.embeddings.base.Embedding.incumbent>`) for a good accepted point found in numpy —
an upper bound :math:`U` on the objective — and what :math:`U` implies: the radius box
(:meth:`Embedding.radius <groupcf.embeddings.base.Embedding.radius>`, default
:func:`~groupcf.embeddings.radius.radius_box`, model-independent), and for some models an
embedding tightened over that box. Once the MIP is built,
:meth:`Embedding.start_mip <groupcf.embeddings.base.Embedding.start_mip>` offers the point
as the MIP start (and may restrict the MIP to the radius).

How a model searches depends on the structure it declares in its
:class:`~groupcf.embeddings.base.EmbeddingCapabilities`, not on its type: a
:class:`SearchStrategy` is registered per capability (:func:`register_search`; MACE's
strategies for exact line searches and leaf cells are registered by
:mod:`groupcf.single.searches`, in the algorithm layer that owns those searches). An
embedding without a registered capability gets the defaults: no numpy search, and the
greedy completion as MIP start. A model type may also override the three methods directly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from groupcf.embeddings._typing import BoolArray, FloatArray
from groupcf.embeddings.radius import DistanceWeights, Radius, radius_box
from groupcf.utils import Deadline

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.base import Embedding
    from groupcf.features.space import FeatureSpace

__all__ = ["Incumbent", "SearchProblem", "SearchStrategy", "register_search", "registered_searches"]


@dataclass
class SearchProblem:
    """The nearest-counterfactual problem as a numpy search sees it.

    Parameters
    ----------
    space : FeatureSpace
        The fitted feature space (expanded columns, actionability).
    z0 : numpy.ndarray
        The instance, expanded.
    lb, ub : numpy.ndarray
        Bounds of every expanded column (actionability and the data's ranges).
    can_change : numpy.ndarray
        Per feature, whether it may change.
    distance : DistanceWeights
        MACE's distance (``l0``, ``l1``, ``linf`` weights and ``aggregate``).
    strict : float
        A score bound valid for every margin retry (points returned satisfy it).
    score_lo : float
        The MIP's own score bound.
    Tmax : int or None, default None
        The most changed features.
    radius : bool, default True
        Use the radius (the user's option; only for the best counterfactual).
    single : bool, default True
        Only the best counterfactual is wanted (``n == 1``): the radius is valid.
    upper_bound : bool, default True
        Run the numpy search at all (MACE's ``upper_bound`` option).
    obbt : bool, default True
        Tighten neuron bounds by LP within the radius (networks).
    pairs : bool, default True
        Tree ensembles: the exact scan of two-feature changes before the MIP.
    prune : bool, default True
        Tree ensembles: build the MIP without the leaves farther than the incumbent.
    deadline : Deadline or None, default None
        The call's time budget (:class:`~groupcf.utils.Deadline`): a search stops its
        phases when it passes and returns the best point found so far.
    """

    space: FeatureSpace
    z0: FloatArray
    lb: FloatArray
    ub: FloatArray
    can_change: BoolArray
    distance: DistanceWeights
    strict: float
    score_lo: float
    Tmax: int | None = None
    radius: bool = True
    single: bool = True
    upper_bound: bool = True
    obbt: bool = True
    pairs: bool = True
    prune: bool = True
    deadline: Deadline | None = None

    @property
    def out_of_time(self) -> bool:
        """The deadline has passed (never without one)."""
        return self.deadline is not None and self.deadline.passed


@dataclass
class Incumbent:
    """What a search found.

    Parameters
    ----------
    stats : dict
        Statistics (``upper_bound``: the point's objective; ``single_optimal``: the point
        is the proven optimum; ``lower_bound``; what the radius fixed).
    point : numpy.ndarray or None
        The accepted point (expanded), ``None`` when none was found.
    box : Radius or None
        The radius the MIP is built over, ``None`` without one.
    embedding : Embedding or None
        The embedding the MIP should use (e.g. tightened over ``box``), ``None``: the
        model's own.
    """

    stats: dict[str, Any] = field(default_factory=dict)
    point: FloatArray | None = None
    box: Radius | None = None
    embedding: Embedding | None = None


class SearchStrategy(Protocol):
    """A numpy incumbent search for the models declaring one capability."""

    def incumbent(self, embedding: Embedding, problem: SearchProblem) -> Incumbent:
        """Search before the MIP is built."""

    def start_mip(self, embedding: Embedding, problem: SearchProblem, mip: Any,
                  found: Incumbent) -> Incumbent:
        """Offer ``found`` to the built MIP (start, radius); return what is now known."""


_STRATEGIES: dict[str, SearchStrategy] = {}


def register_search(capability: str, strategy: SearchStrategy) -> None:
    """Register the search of the embeddings whose ``capabilities.<capability>`` is true.

    Parameters
    ----------
    capability : str
        A field of :class:`~groupcf.embeddings.base.EmbeddingCapabilities`.
    strategy : SearchStrategy
        Its ``incumbent`` and ``start_mip``.

    Raises
    ------
    ValueError
        ``capability`` is not a field of ``EmbeddingCapabilities``.

    Examples
    --------
    >>> from groupcf.embeddings.search import registered_searches
    >>> import groupcf.single  # registers MACE's searches
    >>> sorted(registered_searches())
    ['leaf_cells', 'line_search']
    """
    from groupcf.embeddings.base import EmbeddingCapabilities
    if capability not in EmbeddingCapabilities.__dataclass_fields__:
        raise ValueError(f"unknown capability {capability!r}")
    _STRATEGIES[capability] = strategy


def registered_searches() -> dict[str, SearchStrategy]:
    """The registered searches by capability (a copy)."""
    return dict(_STRATEGIES)


def strategy_for(embedding: Embedding) -> SearchStrategy | None:
    """The search registered for a capability the embedding declares (``None``: none)."""
    for capability, strategy in _STRATEGIES.items():
        if getattr(embedding.capabilities, capability, False):
            return strategy
    return None


def default_radius(problem: SearchProblem, bound: float) -> Radius:
    """:func:`~groupcf.embeddings.radius.radius_box` of the problem at objective ``bound``."""
    return radius_box(problem.space, problem.distance, bound, problem.z0, problem.lb, problem.ub,
                      problem.can_change)


def default_start(problem: SearchProblem, mip: Any, found: Incumbent) -> Incumbent:
    """The point as MIP start with the radius' cardinality cut; else the greedy completion."""
    if found.point is None:
        mip.start_greedy()
        return found
    mip.start_from(found.point)
    k = None if found.box is None else found.box.k
    if k is not None and k < len(problem.space):      # sum f <= k
        mip.backend.add_row(mip.f, np.ones(len(mip.f)), hi=float(k))
    return found
