"""GeCo's hyper-parameters and distance."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...exceptions import InvalidInputError
from ...formulations.distances import DistanceSpec, parse_distance
from ...options import Options, deprecated_aliases


@dataclass(frozen=True)
class GeCoOptions(Options):
    """GeCo's hyper-parameters (defaults from the paper where it gives them).

    Options of ``gcf.explain(..., method="geco")``, passed as keywords or as this object
    (``options=``). Values are checked when the object is created.

    Parameters
    ----------
    n : int, default 5
        Counterfactuals returned (formerly ``k``).
    q : int, default 100
        Population size.
    m_init : int, default 20
        Initial samples per feature group.
    m_mut : int, default 5
        Children per candidate in MUTATE.
    alpha, beta, gamma : float, default 1/3
        Weights of l0 / n, l1 / n and linf in GeCo's distance (:func:`geco_distance`).
    max_generations : int, default 100
        Safety cap on the generations (reported in ``stats``).
    stable_generations : int, default 2
        Generations the top ``n`` must stay unchanged for the search to stop.
    patience : int, default 10
        Stop a run whose top ``n`` (with at least one counterfactual, not all) has not
        changed for this many generations.
    n_crossover : int or None, default None
        Most parent pairs crossed per generation (``None``: ``q``).
    max_per_set : int or None, default 5
        SELECTFITTEST keeps at most this many of the ``q`` fittest per set of changed
        features first (``None``: the paper's plain top ``q``, whose population collapses
        onto one change set on some instances).
    evaluation : {"partial", "full"}, default "partial"
        ``"partial"``: Δ-sets and partial evaluation of the model; ``"full"``: whole rows,
        one call.
    time_limit : float or None, default None
        Seconds (``None``: no limit).
    distance : str, dict or None, default None
        A MACE distance (``"l0"``, ``"l1"``, ``"linf"`` or weights such as
        ``{"l0": 0.1, "l1": 0.9}``, see :mod:`groupcf.formulations.distances`) that
        replaces GeCo's distance (``alpha``, ``beta``, ``gamma`` are then unused) in the
        fitness and in the reported ``distances``: per-feature distances read from the
        FeatureSpace (ordinal features ``|Δ code| / (k - 1)`` instead of 0/1, numeric
        passthrough features over the space's range), so GeCo optimises exactly what
        :func:`groupcf.metrics.proximity` measures and what the MACE MIP minimises. Needs a
        model with a FeatureSpace. Beyond the paper.
    refine : bool, default False
        After the search, polish the top candidates by coordinate descent over the active
        domain: for each changed numeric or ordinal feature (not in a multi-feature
        ``group``) try the observed values closer to the instance's (and undoing the
        change), keep what stays a counterfactual, satisfies the PLAF rules and is nearer;
        repeated while it improves. It closes most of the gap that frequency-weighted
        sampling leaves on numeric features with many rare values (e.g. a capital gain
        overshooting the decision boundary). Beyond the paper.
    refine_passes : int, default 5
        Most passes of ``refine``.
    Tmax : int or None, default None
        Most changed features (``None``: no limit): every candidate the search creates
        (initial samples, mutations, crossovers, refinements, after the PLAF cascade) that
        changes more than ``Tmax`` features is dropped before it is scored, so no returned
        counterfactual changes more than ``Tmax`` features.

    Raises
    ------
    InvalidInputError
        A count that is not a positive integer, a negative weight, an unknown
        ``evaluation`` or ``distance``, or an invalid ``Tmax``.

    See Also
    --------
    groupcf.explain : ``method="geco"`` takes these options as keywords.

    Examples
    --------
    >>> opts = gcf.GeCoOptions(n=3, Tmax=2, distance="l1")
    >>> opts.n, opts.q, opts.Tmax
    (3, 100, 2)
    >>> gcf.GeCoOptions(q=0)
    Traceback (most recent call last):
    ...
    groupcf.exceptions.InvalidInputError: GeCo parameter q must be a positive integer, got 0
    """

    n: int = 5
    q: int = 100
    m_init: int = 20
    m_mut: int = 5
    alpha: float = 1 / 3
    beta: float = 1 / 3
    gamma: float = 1 / 3
    max_generations: int = 100
    stable_generations: int = 2
    patience: int = 10
    n_crossover: int | None = None
    max_per_set: int | None = 5
    evaluation: str = "partial"
    time_limit: float | None = None
    distance: DistanceSpec | None = None
    refine: bool = False
    refine_passes: int = 5
    Tmax: int | None = None

    _renamed = {"k": "n"}

    def __post_init__(self):
        super().__post_init__()
        self.validate()

    def validate(self) -> GeCoOptions:
        """Check the values (called when the object is created).

        Returns
        -------
        GeCoOptions
            ``self``.

        Raises
        ------
        InvalidInputError
            A value outside its rule (see the class's Raises).
        """
        for name in ("n", "q", "m_init", "m_mut", "max_generations", "stable_generations", "patience",
                     "refine_passes"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise InvalidInputError(f"GeCo parameter {name} must be a positive integer, got {v!r}")
        for name in ("alpha", "beta", "gamma"):
            if not getattr(self, name) >= 0:
                raise InvalidInputError(f"GeCo weight {name} must be >= 0, got {getattr(self, name)!r}")
        if self.evaluation not in ("partial", "full"):
            raise InvalidInputError(f"evaluation must be 'partial' or 'full', got {self.evaluation!r}")
        if self.distance is not None:
            parse_distance(self.distance)          # named InvalidInputError
        if self.Tmax is not None and (int(self.Tmax) != self.Tmax or self.Tmax < 1):
            raise InvalidInputError(f"GeCo parameter Tmax must be a positive integer or None, got {self.Tmax!r}")
        return self


def geco_distance(M: np.ndarray, D: np.ndarray, alpha: float = 1 / 3, beta: float = 1 / 3,
                  gamma: float = 1 / 3) -> np.ndarray:
    r"""GeCo's distance :math:`\alpha\,\ell_0/n + \beta\,\ell_1/n + \gamma\,\ell_\infty` of
    each row, from ``M`` (changed features, bool ``(m, n)``) and ``D`` (per-feature
    distances ``(m, n)``: 0/1 categorical, ``|Δ|/range`` numeric)."""
    n = M.shape[1]
    l0 = M.sum(axis=1)
    l1 = D.sum(axis=1)
    linf = D.max(axis=1) if n else np.zeros(len(M))
    return alpha * l0 / n + beta * l1 / n + gamma * linf


__getattr__ = deprecated_aliases(__name__, {'GeCoParams': GeCoOptions})
