"""The interface shared by every model embedding.

An :class:`Embedding` is a trained classifier reduced to what counterfactual search needs:

* a fast, vectorised numpy evaluation of its *score* (the logit of the positive class,
  i.e. ``decision_function``; the model predicts positive iff ``score >= 0`` at the usual
  probability threshold 0.5),
* partial evaluation (inputs that never change are folded into the model), and
* optional structure: an exactly additive form (:meth:`Embedding.additive`, used by
  closed-form paths), bounds of the score over a box (:meth:`Embedding.score_bounds`), and
  fast evaluation of points that differ from one point on a few columns
  (:meth:`Embedding.delta_evaluator`),
* a MIP formulation, :meth:`Embedding.add_to`, that adds variables and rows to a solver
  :class:`~groupcf.solvers.base.Backend` so that a new variable equals the score at given
  input variables.

What :meth:`Embedding.add_to` added is recorded in an :class:`EmbeddingConstr`, which can
check itself against the numpy evaluation (:meth:`EmbeddingConstr.get_error`).
"""
from __future__ import annotations

import abc
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from groupcf.embeddings._typing import ArrayLike, FloatArray, IntArray
from groupcf.embeddings.radius import Radius
from groupcf.embeddings.search import Incumbent, SearchProblem, default_radius, default_start, strategy_for
from groupcf.utils import value_key

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.features.domain import InputDomain
    from groupcf.solvers.base import Backend, Solution


@dataclass(frozen=True)
class EmbeddingCapabilities:
    """What an embedding can do beyond the protocol's required methods.

    Algorithms read this (as they read a solver's ``Capabilities``) instead of testing the
    model's type.

    Parameters
    ----------
    line_search : bool, default False
        :meth:`Embedding.first_crossing` is exact (piecewise-linear scores: ReLU
        networks), so MACE can build its numpy incumbent and radius from line searches.
    leaf_cells : bool, default False
        The MIP constraints of :meth:`Embedding.add_to` expose the input cells of the
        chosen leaves (``input_cells``) and can fix tree levels within a box
        (``fix_levels``): tree ensembles, whose MACE incumbent comes from those cells.

    Examples
    --------
    >>> from groupcf.embeddings import LinearModel, ReLUNetwork
    >>> ReLUNetwork.capabilities.line_search, LinearModel.capabilities.line_search
    (True, False)
    """

    line_search: bool = False
    leaf_cells: bool = False


class Embedding(abc.ABC):
    """A trained binary classifier as a function ``score: R^n -> R``.

    The protocol every model type implements (see :mod:`groupcf.embeddings`): the score is
    the logit of the positive class (or a decision function), positive iff ``score >= 0``,
    over the expanded input columns of a :class:`~groupcf.FeatureSpace`. Subclasses
    implement :attr:`n_inputs`, :meth:`score`, :meth:`partial` and :meth:`add_to`;
    optional structure (an additive form, score bounds, exact line searches, leaf cells)
    is declared by overriding the methods below and :attr:`capabilities`. A new model type
    is done when :func:`groupcf.testing.check_embedding` passes.

    See Also
    --------
    register : make a model type's converter known.
    groupcf.testing.check_embedding : the conformance check.

    Examples
    --------
    >>> from groupcf.embeddings import Embedding, LinearModel
    >>> emb = LinearModel([1.0, -2.0, 0.5], bias=0.25)
    >>> isinstance(emb, Embedding), emb.n_inputs
    (True, 3)
    >>> emb.score(np.array([[1, 0, 1], [0, 1, 0]]))
    array([ 1.75, -1.75])
    >>> emb.predict(np.array([[1, 0, 1], [0, 1, 0]]))
    array([1, 0])
    >>> emb.partial([1], [1.0]).score(np.array([[1, 1]]))      # column 1 fixed to 1
    array([-0.25])
    """

    #: optional structure the algorithms may use (default: none)
    capabilities: EmbeddingCapabilities = EmbeddingCapabilities()
    #: ``True`` when the real model's ``predict`` says positive for every row whose
    #: ``predict_proba`` row has the positive class as its first maximum (set by the
    #: converters whose ``predict`` is that argmax, or implied by it: scikit-learn trees,
    #: forests and boosting, XGBoost, LightGBM); then
    #: :meth:`groupcf.models.TrainedModel.check` reads the verdict from one
    #: ``predict_proba`` pass instead of calling ``predict`` as well
    predict_follows_proba: bool = False
    #: optional ``f(X)``: the real model's own ``predict_proba(X)`` on its inputs, computed by
    #: the model's own fitted parts and equal to it bit for bit, without the per-part cost
    #: of its ``predict_proba`` (set by :func:`groupcf.embeddings.sklearn_trees.forest`: a
    #: scikit-learn forest dispatches each tree as a joblib task, ~0.1 ms a tree on one
    #: row); :meth:`groupcf.models.TrainedModel.check` re-checks with it when set
    model_proba: Callable[[Any], FloatArray] | None = None

    @property
    @abc.abstractmethod
    def n_inputs(self) -> int:
        """Number of (expanded) input columns."""

    @abc.abstractmethod
    def score(self, Z: ArrayLike) -> FloatArray:
        """Score (logit of the positive class) of each row of ``Z``.

        Parameters
        ----------
        Z : numpy.ndarray
            Points, shape ``(m, n_inputs)`` (a 1-D ``Z`` is one point).

        Returns
        -------
        numpy.ndarray
            Shape ``(m,)`` (``(1,)`` for one point).
        """

    def predict(self, Z: ArrayLike, threshold: float = 0.0) -> IntArray:
        """``1`` where ``score >= threshold``, else ``0``.

        Parameters
        ----------
        Z : numpy.ndarray
            Points, shape ``(m, n_inputs)`` (a 1-D ``Z`` is one point).
        threshold : float, default 0.0
            The score cut (0: probability 0.5).

        Returns
        -------
        numpy.ndarray
            Integer labels, shape ``(m,)``.
        """
        return (self.score(Z) >= threshold).astype(np.int64)

    def proba(self, Z: ArrayLike) -> FloatArray:
        """Probability of the positive class (:meth:`score_to_proba` of the score).

        Parameters
        ----------
        Z : numpy.ndarray
            Points, shape ``(m, n_inputs)`` (a 1-D ``Z`` is one point).

        Returns
        -------
        numpy.ndarray
            Shape ``(m,)``.
        """
        return self.score_to_proba(self.score(Z))

    def score_to_proba(self, s: ArrayLike) -> FloatArray:
        """The probability of the positive class at score ``s``.

        Parameters
        ----------
        s : float or array-like
            Scores.

        Returns
        -------
        numpy.ndarray
            ``sigmoid(s)`` (a model whose score is already a probability returns ``s``).
        """
        return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(s, dtype=float)))   # overflow-free sigmoid

    def score_threshold(self, p: float) -> float:
        """The score from which the model predicts positive at probability ``p``.

        Parameters
        ----------
        p : float
            A probability in (0, 1).

        Returns
        -------
        float
            The logit of ``p`` (a model whose score is a probability returns ``p``).
        """
        return math.log(p / (1.0 - p))

    @abc.abstractmethod
    def partial(self, fixed_idx: ArrayLike, fixed_values: ArrayLike) -> Embedding:
        """The same model over the remaining inputs, with some inputs fixed.

        Parameters
        ----------
        fixed_idx : sequence of int
            The inputs to fix.
        fixed_values : sequence of float
            Their values.

        Returns
        -------
        Embedding
            A model over the other inputs, kept in their original order.
        """

    @abc.abstractmethod
    def add_to(self, backend: Backend, x_idx: ArrayLike, domain: InputDomain,
               lo: float | None = None) -> EmbeddingConstr:
        """Add the model to ``backend``.

        A new free continuous variable ``constr.score`` equals the score at the input variables
        ``x_idx`` whose values lie in ``domain``.

        Parameters
        ----------
        backend : Backend
            The MIP.
        x_idx : array-like of int
            Backend indices of the input variables, one per input.
        domain : InputDomain
            Where the inputs lie (for valid big-M constants).
        lo : float or None, default None
            Also add the row ``score >= lo``.

        Returns
        -------
        EmbeddingConstr
            What was added.
        """

    # -- optional structure (defaults: none known) ----------------------------------
    def additive(self) -> AdditiveForm | None:
        """The score as ``bias + z @ weights`` when it is exactly additive over the input columns.

        Returns
        -------
        AdditiveForm or None
            ``None`` (the default): not additive.
        """
        return None

    def score_bounds(self, lb: ArrayLike, ub: ArrayLike) -> tuple[float, float]:
        """Valid bounds of the score over the input box ``[lb, ub]``.

        Parameters
        ----------
        lb, ub : numpy.ndarray
            The box, one bound per input.

        Returns
        -------
        tuple of float
            ``(lo, hi)``.

        Raises
        ------
        NotImplementedError
            The model does not bound its score (the default).
        """
        raise NotImplementedError(f"{type(self).__name__} does not bound its score")

    def box_upper(self, lb: ArrayLike, ub: ArrayLike) -> FloatArray:
        """Valid upper bounds of the score over many input boxes at once.

        The default maximises the linear relaxation of :meth:`linear_upper` over each box
        (exact for an additive score, CROWN for a ReLU network) and falls back to
        :meth:`score_bounds` box by box; tree ensembles take, per tree, the largest leaf
        whose cell meets the box.

        Parameters
        ----------
        lb, ub : numpy.ndarray
            ``(K, n_inputs)``: box ``k`` is ``lb[k] <= z <= ub[k]``.

        Returns
        -------
        numpy.ndarray
            ``(K,)``: ``score(z) <= out[k]`` for every ``z`` in box ``k`` (up to float rounding).
        """
        from groupcf.embeddings.box_bound import box_upper
        return box_upper(self, lb, ub)

    def gradient_bound(self, d: ArrayLike, domain: InputDomain) -> float | None:
        r"""An upper bound of :math:`|\nabla \mathrm{score}(z) \cdot d|` over ``domain``.

        A Lipschitz constant of the score along the direction ``d``.

        Parameters
        ----------
        d : array-like
            The direction, one entry per input.
        domain : InputDomain
            Where ``z`` lies.

        Returns
        -------
        float or None
            The bound; ``None`` when the model does not provide one (the default beyond additive
            scores, where it is exact).
        """
        add = self.additive()
        return None if add is None else float(abs(add.weights @ np.asarray(d, dtype=float)))

    def linear_upper(self, A: ArrayLike, c: ArrayLike, lo: ArrayLike,
                     hi: ArrayLike) -> tuple[FloatArray, FloatArray] | None:
        """Batched linear upper bounds ``score(A_k y + c_k) <= a_k . y + d_k`` over boxes.

        See :func:`groupcf.embeddings.crown.linear_upper`.

        Parameters
        ----------
        A : array-like
            ``(K, n_inputs, p)``: each box's affine map from ``y`` to the inputs.
        c : array-like
            ``(K, n_inputs)``: its offsets.
        lo, hi : array-like
            ``(K, p)``: the boxes ``lo_k <= y <= hi_k``.

        Returns
        -------
        tuple or None
            ``(a, d)`` with ``a`` of shape ``(K, p)`` and ``d`` of shape ``(K,)``, or ``None``
            when the model offers none (ReLU networks and additive scores do).
        """
        from groupcf.embeddings.crown import linear_upper
        return linear_upper(self, np.asarray(A, float), np.asarray(c, float), lo, hi)

    def split_points(self) -> list[FloatArray] | None:
        """Per input column, the values at which the score can change when that column alone moves.

        The sorted distinct values ``t_1 < ... < t_k``: the score is constant on ``(-inf, t_1]``,
        ``(t_1, t_2]``, ..., ``(t_k, inf)`` in that column (a tree's test ``x <= t``).

        Returns
        -------
        list of numpy.ndarray or None
            ``None`` (the default): not known (smooth scores, black boxes).
        """
        return None

    def path_splits(self, z: ArrayLike) -> tuple[IntArray, FloatArray] | None:
        """The split tests the score at the point ``z`` goes through (a tree's nodes on ``z``'s path).

        Moving column ``c`` alone just past ``t`` changes at least one tree's leaf.

        Parameters
        ----------
        z : array-like
            A point.

        Returns
        -------
        tuple of numpy.ndarray or None
            ``(columns, thresholds)``; ``None`` (the default): not known.
        """
        return None

    def column_scores(self, z: ArrayLike, c: int, values: ArrayLike) -> FloatArray:
        """Scores of the point ``z`` with column ``c`` set to each of ``values``.

        The default scores the ``m`` rows; tree ensembles sweep the leaves reachable along the
        column.

        Parameters
        ----------
        z : array-like
            The point.
        c : int
            The column that moves.
        values : array-like
            Its ``m`` values.

        Returns
        -------
        numpy.ndarray
            Shape ``(m,)``.
        """
        v = np.asarray(values, dtype=float).reshape(-1)
        Z = np.repeat(np.asarray(z, dtype=float).reshape(1, -1), len(v), axis=0)
        Z[:, c] = v
        return self.score(Z)

    def prune(self, lb: ArrayLike, ub: ArrayLike, cell_distance: Callable[[FloatArray, FloatArray], FloatArray],
              bound: float) -> Embedding:
        """The model restricted to the inputs of the box ``[lb, ub]`` within distance ``bound``.

        A smaller model, exact at every input of the box within ``bound``, for a search that
        only looks there; the default is the model itself. Tree ensembles fold the box
        and drop the leaves whose cell lies farther.

        Parameters
        ----------
        lb, ub : array-like
            The box (per input column).
        cell_distance : callable
            ``cell_distance(lo, hi)``: a lower bound of the distance of every input in each
            box ``[lo_k, hi_k]`` (rows of column bounds).
        bound : float
            The largest distance the search looks at.

        Returns
        -------
        Embedding
            ``self`` or a smaller model.
        """
        return self

    def pair_scores(self, z: ArrayLike, c1: int, values1: ArrayLike, c2: int, values2: ArrayLike) -> FloatArray:
        """Scores of the point ``z`` with columns ``c1`` and ``c2`` set to every pair of values.

        The default scores the ``m1 * m2`` rows; tree ensembles sweep the leaves reachable
        when the two columns vary.

        Parameters
        ----------
        z : array-like
            The point.
        c1, c2 : int
            The two columns that move (different).
        values1, values2 : array-like
            Their ``m1`` and ``m2`` values.

        Returns
        -------
        numpy.ndarray
            Shape ``(m1, m2)``: row ``i``, column ``j`` is the score with ``values1[i]`` and ``values2[j]``.
        """
        return self.grid_scores(z, [c1, c2], [values1, values2])

    def grid_scores(self, z: ArrayLike, cols: list[int], values: list[ArrayLike]) -> FloatArray:
        """Scores of the point ``z`` with each column ``cols[j]`` set to each of ``values[j]``.

        The default scores every row of the product grid; tree ensembles sweep the leaves
        reachable when those columns vary.

        Parameters
        ----------
        z : array-like
            The point.
        cols : list of int
            The ``k`` columns that move (distinct).
        values : list of array-like
            Their values, ``m_j`` for column ``cols[j]``.

        Returns
        -------
        numpy.ndarray
            Shape ``(m_1, ..., m_k)``.
        """
        vals = [np.asarray(v, dtype=float).reshape(-1) for v in values]
        shape = tuple(len(v) for v in vals)
        grid = np.indices(shape).reshape(len(vals), -1)
        Z = np.repeat(np.asarray(z, dtype=float).reshape(1, -1), grid.shape[1], axis=0)
        for j, c in enumerate(cols):
            Z[:, c] = vals[j][grid[j]]
        out: FloatArray = self.score(Z).reshape(shape)
        return out

    def grid_edges(self, z: ArrayLike, cols: list[int]) -> list[FloatArray] | None:
        """Where the score can change along each of ``cols`` when they vary from ``z``.

        Two values ``v < v'`` of ``cols[j]`` with no edge in ``[v, v')`` give the same score
        whatever the other columns of ``cols`` are set to (the rest of ``z`` fixed), so a
        grid over ``cols`` needs one value per class. Tree ensembles return the ends of the
        intervals of the leaves reachable when ``cols`` vary.

        Parameters
        ----------
        z : array-like
            The point.
        cols : list of int
            The columns that vary (distinct).

        Returns
        -------
        list of numpy.ndarray or None
            Per column, its sorted edges; ``None`` (the default): not known (every value
            its own class).
        """
        return None

    def grid_upper(self, z: ArrayLike, groups: list[tuple[ArrayLike, ArrayLike, ArrayLike]],
                   budget: float) -> float | None:
        """An upper bound of the score over the cheap points of a grid around ``z``.

        The points are ``z`` with, for each group, its columns set to one of its value rows;
        only those whose summed costs (one per chosen row) are below ``budget`` count. A
        grid scan may skip the grid when the bound is below the score it needs. Tree
        ensembles bound each tree by its best leaf holding such a point.

        Parameters
        ----------
        z : array-like
            The point.
        groups : list of tuple
            Per group ``(columns, values, costs)``: its columns (distinct across groups),
            its value rows ``(m, len(columns))`` and each row's cost ``(m,)``.
        budget : float
            Only points costing less count.

        Returns
        -------
        float or None
            The bound (``-inf``: no such point); ``None`` (the default): none known.
        """
        return None

    def first_crossing(self, z: ArrayLike, d: ArrayLike, t_max: float, lo: float) -> float | None:
        """The smallest ``t`` in ``[0, t_max]`` with ``score(z + t d) >= lo``.

        Exact only when ``capabilities.line_search``; the default scans 64 points and bisects
        the first bracket found (a heuristic).

        Parameters
        ----------
        z : array-like
            The start point.
        d : array-like
            The direction.
        t_max : float
            The longest step.
        lo : float
            The score to reach.

        Returns
        -------
        float or None
            ``t``, or ``None`` when there is none.
        """
        z, d = np.asarray(z, dtype=np.float64), np.asarray(d, dtype=np.float64)
        ts = np.linspace(0.0, t_max, 65)
        s = self.score(z[None, :] + ts[:, None] * d[None, :])
        hit = np.flatnonzero(s >= lo)
        if not len(hit):
            return None
        if hit[0] == 0:
            return 0.0
        a, b = ts[hit[0] - 1], ts[hit[0]]
        for _ in range(50):
            m = 0.5 * (a + b)
            a, b = (a, m) if self.score(z + m * d)[0] >= lo else (m, b)
        return float(b)

    # -- the nearest-counterfactual search (groupcf.embeddings.search) ----------------
    def incumbent(self, problem: SearchProblem) -> Incumbent:
        """A good accepted point found in numpy before the MIP, with what it implies.

        The radius box, a tightened embedding (:mod:`groupcf.embeddings.search`). Default: the
        search registered for a declared capability, else nothing.

        Parameters
        ----------
        problem : SearchProblem
            The nearest-counterfactual problem (instance, distance, limits).

        Returns
        -------
        Incumbent
            The point found (empty when none).
        """
        strategy = strategy_for(self)
        return Incumbent() if strategy is None else strategy.incumbent(self, problem)

    def start_mip(self, problem: SearchProblem, mip: Any, found: Incumbent) -> Incumbent:
        """Offer ``found`` to the built nearest-counterfactual MIP ``mip``.

        Default: the registered search's, else the point as MIP start with the radius'
        cardinality cut, or the greedy completion.

        Parameters
        ----------
        problem : SearchProblem
            The nearest-counterfactual problem.
        mip : NearestCounterfactual
            The built MIP.
        found : Incumbent
            What :meth:`incumbent` returned.

        Returns
        -------
        Incumbent
            The incumbent, possibly improved.
        """
        strategy = strategy_for(self)
        return default_start(problem, mip, found) if strategy is None else \
            strategy.start_mip(self, problem, mip, found)

    def radius(self, problem: SearchProblem, bound: float) -> Radius:
        """The box, fixed features, cardinality and l1 budget of every solution of objective ``<= bound``.

        See :func:`~groupcf.embeddings.radius.radius_box` (valid for any model).

        Parameters
        ----------
        problem : SearchProblem
            The nearest-counterfactual problem.
        bound : float
            An upper bound on the optimal distance (an incumbent's).

        Returns
        -------
        Radius
            Where every better solution lies.
        """
        return default_radius(problem, bound)

    def delta_evaluator(self, z0: ArrayLike) -> DeltaEvaluator:
        """Scores of points equal to ``z0`` except on a few columns.

        Parameters
        ----------
        z0 : array-like
            The reference point.

        Returns
        -------
        DeltaEvaluator
            The evaluator (:class:`DeltaEvaluator`, or a cheaper one of the model type).
        """
        return DeltaEvaluator(self, z0)

    # -- helpers for subclasses ------------------------------------------------------
    def _check_points(self, Z: ArrayLike) -> FloatArray:
        P = np.asarray(Z, dtype=np.float64)
        if P.ndim == 1:
            P = P[None, :]
        if P.ndim != 2 or P.shape[1] != self.n_inputs:
            raise ValueError(f"expected points with {self.n_inputs} columns, got shape {P.shape}")
        return P


@dataclass(frozen=True)
class AdditiveForm:
    """An exactly additive score, ``score(z) = bias + z @ weights``.

    Each input column contributes independently (logistic regression, linear classifiers,
    a network without hidden layers). Closed-form paths (best completion, per-feature
    gains) use it; :meth:`Embedding.additive` returns it when it exists.

    Parameters
    ----------
    weights : numpy.ndarray
        One weight per input column.
    bias : float
        The intercept.

    Examples
    --------
    >>> from groupcf.embeddings import LinearModel
    >>> form = LinearModel([1.0, -2.0], bias=0.5).additive()
    >>> form, form.score(np.array([1.0, 1.0]))
    (AdditiveForm(n_inputs=2, bias=0.5), array([-0.5]))
    """

    weights: FloatArray
    bias: float

    def score(self, Z: ArrayLike) -> FloatArray:
        """``bias + Z @ weights`` per row of ``Z``.

        Parameters
        ----------
        Z : array-like
            Points (a 1-D ``Z`` is one point).

        Returns
        -------
        numpy.ndarray
            One score per row.
        """
        P: FloatArray = np.atleast_2d(np.asarray(Z, dtype=np.float64))
        return P @ self.weights + self.bias

    def __repr__(self) -> str:
        return f"AdditiveForm(n_inputs={len(self.weights)}, bias={self.bias:.4g})"


class DeltaEvaluator:
    """Scores of points equal to ``z0`` except on a few columns.

    The default evaluates each distinct set of changed columns with
    ``embedding.partial(other columns, z0[other])`` (cached per column set); embeddings
    with a cheaper fold override it (:meth:`Embedding.delta_evaluator`). GeCo and PSO
    score their candidates through it.

    Parameters
    ----------
    embedding : Embedding
        The model.
    z0 : array-like
        The reference point (expanded columns).

    Raises
    ------
    ValueError
        ``z0`` does not have ``embedding.n_inputs`` columns.

    Examples
    --------
    >>> from groupcf.embeddings import LinearModel
    >>> ev = LinearModel([1.0, -2.0, 0.5], bias=0.25).delta_evaluator([0.0, 1.0, 0.0])
    >>> ev.score([1], [[0.0], [1.0]])          # z0 with column 1 set to 0, then 1
    array([ 0.25, -1.75])
    >>> ev.score_rows(np.array([[1.0, 1.0, 0.0]]), np.array([[True, False, False]]))
    array([-0.75])
    """

    def __init__(self, embedding: Embedding, z0: ArrayLike) -> None:
        self.embedding = embedding
        self.z0: FloatArray = np.asarray(z0, dtype=np.float64).reshape(-1)
        if len(self.z0) != embedding.n_inputs:
            raise ValueError(f"z0 has {len(self.z0)} columns, the model {embedding.n_inputs} inputs")
        self._cache: dict[bytes, Any] = {}   # column set -> what _prepare made of it
        self.n_sets = 0        # distinct column sets prepared

    def _prepared(self, cols: IntArray) -> Any:
        key = value_key(cols)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._prepare(cols)
            self._cache[key] = hit
            self.n_sets += 1
        return hit

    def _prepare(self, cols: IntArray) -> Any:
        keep = np.ones(len(self.z0), dtype=bool)
        keep[cols] = False
        fixed = np.flatnonzero(keep)
        return self.embedding.partial(fixed, self.z0[fixed])

    @staticmethod
    def _args(cols: ArrayLike, Zc: ArrayLike) -> tuple[IntArray, FloatArray]:
        c = np.asarray(cols, dtype=np.int64).reshape(-1)
        V = np.asarray(Zc, dtype=np.float64)
        if V.ndim == 1:
            V = V.reshape(-1, len(c)) if len(c) else V.reshape(-1, 0)
        if V.shape[1] != len(c):
            raise ValueError(f"{len(c)} columns but values of shape {V.shape}")
        return c, V

    def score(self, cols: ArrayLike, Zc: ArrayLike) -> FloatArray:
        """Scores of ``z0`` with the columns ``cols`` replaced by each row of ``Zc``.

        Parameters
        ----------
        cols : array-like of int
            The changed columns.
        Zc : array-like
            Their values, shape ``(m, len(cols))``.

        Returns
        -------
        numpy.ndarray
            Shape ``(m,)``.
        """
        return self.score_groups([(cols, Zc)])[0]

    #: ``True`` when :meth:`score_rows` (full rows and a mask of changed columns) is
    #: cheaper than grouping the rows by their set of changed columns
    by_rows = False
    #: ``True`` when the evaluator also scores rows from other reference rows than ``z0``
    #: (``anchors(Z)`` / ``score_from(Z, anchors, ids)``; tree ensembles)
    by_anchor = False

    def score_rows(self, Z: ArrayLike, changed: ArrayLike) -> FloatArray:
        """Scores of full rows that equal ``z0`` outside the columns marked in ``changed``.

        The default groups the rows by their changed columns (:meth:`score_groups`).

        Parameters
        ----------
        Z : array-like
            Full rows, shape ``(m, n_inputs)``.
        changed : array-like of bool
            Same shape: which columns differ from ``z0``.

        Returns
        -------
        numpy.ndarray
            Shape ``(m,)``.
        """
        P, mask = np.asarray(Z, dtype=np.float64), np.asarray(changed, dtype=np.bool_)
        out = np.empty(len(P))
        if not len(P):
            return out
        keys, inv = np.unique(mask, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        rows = [np.flatnonzero(inv == g) for g in range(len(keys))]
        groups = [(np.flatnonzero(k), P[r][:, np.flatnonzero(k)]) for k, r in zip(keys, rows)]
        for r, s in zip(rows, self.score_groups(groups)):
            out[r] = s
        return out

    def score_groups(self, groups: Iterable[tuple[ArrayLike, ArrayLike]]) -> list[FloatArray]:
        """:meth:`score` for each ``(cols, Zc)`` of ``groups``, in one batch where the embedding allows it.

        Parameters
        ----------
        groups : list of tuple
            ``(cols, Zc)`` pairs.

        Returns
        -------
        list of numpy.ndarray
            One score array per pair.
        """
        out: list[FloatArray] = []
        for group_cols, group_Zc in groups:
            cols, Zc = self._args(group_cols, group_Zc)
            if len(cols) == 0:
                out.append(np.repeat(self.embedding.score(self.z0), len(Zc)))
            else:
                out.append(self._prepared(cols).score(Zc))
        return out


@dataclass
class EmbeddingConstr:
    """What :meth:`Embedding.add_to` added to a backend.

    Model types subclass it with their own auxiliary variables, e.g.
    :class:`~groupcf.embeddings.network.NetworkConstr`.

    Parameters
    ----------
    embedding : Embedding
        The embedding that was added.
    inputs : numpy.ndarray
        Backend indices of the input variables (as given).
    score : int
        Backend index of the score variable.
    rows : numpy.ndarray
        Backend indices of every row added (including the threshold row).
    lo_row : int or None, default None
        Backend index of the row ``score >= lo`` (``None`` without ``lo``); change the
        threshold later with ``backend.set_row_bounds``.

    Attributes
    ----------
    n_binaries : int
        Binary variables added for the model (none for an additive model).

    Examples
    --------
    >>> from groupcf.embeddings import LinearModel
    >>> from groupcf.solvers import make_backend
    >>> b = make_backend("highs")
    >>> x = b.add_vars(2, ub=1, vtype="B")
    >>> c = LinearModel([1.0, -2.0], bias=0.5).add_to(b, x, gcf.InputDomain.box(2), lo=0.0)
    >>> b.set_objective(x, [-1.0, -1.0])          # as many ones as the model accepts
    >>> sol = b.solve()
    >>> sol.x[x], float(sol.x[c.score]), c.get_error(sol)
    (array([1., 0.]), 1.5, 0.0)
    """

    embedding: Embedding
    inputs: IntArray
    score: int
    rows: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    lo_row: int | None = None

    @property
    def n_binaries(self) -> int:
        """Binary variables added for the model (none for an additive model)."""
        return 0

    def get_error(self, x: Solution | ArrayLike) -> float:
        """``|score variable − embedding.score(input values)|`` at a solution.

        Parameters
        ----------
        x : Solution or array-like
            A :class:`~groupcf.solvers.base.Solution` or the vector of all backend variable
            values.

        Returns
        -------
        float
            The absolute error (0 up to solver tolerances when the embedding is exact).

        Raises
        ------
        ValueError
            The solution has no variable values.
        """
        values = getattr(x, "x", x)
        if values is None:
            raise ValueError("the solution has no variable values "
                             f"(status {getattr(x, 'status', None)})")
        v = np.asarray(values, dtype=np.float64)
        expected = self.embedding.score(v[self.inputs])[0]
        return float(abs(v[self.score] - expected))

    def input_cells(self, x: Solution | ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Per input column, the interval every input reaching the same model pieces as the solution ``x`` lies in.

        A tree's leaf cells: offered by the records of embeddings declaring
        ``capabilities.leaf_cells``; none by default.

        Parameters
        ----------
        x : Solution or array-like
            A solution, or the vector of all backend variable values.

        Returns
        -------
        tuple of numpy.ndarray
            ``(lo, hi)``, one bound per input column.

        Raises
        ------
        NotImplementedError
            The embedding exposes no input cells (the default).
        """
        raise NotImplementedError(f"{type(self).__name__} does not expose input cells")

    def query_sides(self, z0: ArrayLike) -> list[tuple[int, int, bool]]:
        """Binary indicators that decide which side of a model threshold an input column is on.

        ``(c, var, z0_side)`` means "``var`` ≠ ``z0_side`` ⇒ column ``c`` differs from
        ``z0[c]``". A formulation links them to its change indicators, so that crossing a
        threshold that sits closer to ``z0`` than the solver's tolerance still counts as a
        change.

        Parameters
        ----------
        z0 : array-like
            The instance's point.

        Returns
        -------
        list of tuple
            ``(c, var, z0_side)``; empty for models without thresholds.
        """
        return []

    def distance_cuts(self, cell_distance: Callable[[FloatArray, FloatArray], FloatArray]
                      ) -> list[tuple[IntArray, FloatArray]]:
        """Rows ``sum_j d_j x[idx_j] <= distance`` valid at every solution.

        For groups of this record's 0/1 variables of which exactly one is 1 and which each
        confine the inputs to a box (a tree's leaves): ``d_j = cell_distance(lo, hi)`` bounds the
        distance from the query of any input in box ``j``.

        Parameters
        ----------
        cell_distance : callable
            ``cell_distance(lo, hi)``, with ``lo``, ``hi`` of shape ``(m, n_inputs)``: a lower
            bound of the distance from the query per box.

        Returns
        -------
        list of tuple
            ``[(idx, d), ...]``; none by default (no such structure).
        """
        return []

    def move_cuts(self, z0: ArrayLike) -> list[tuple[int, IntArray, FloatArray, float]]:
        """Lower bounds on how far an input column moved from ``z0``, in this record's variables.

        Parameters
        ----------
        z0 : array-like
            The query point.

        Returns
        -------
        list of tuple
            ``(column, idx, coefs, constant)`` meaning ``|x_c - z0_c| >= constant + coefs @
            x[idx]`` at every solution (tree ensembles: the split levels passed); none by
            default.
        """
        return []

    def start_values(self, x_values: ArrayLike) -> tuple[IntArray, FloatArray]:
        """Values of every variable this record added, at input values ``x_values``.

        E.g. to complete a MIP start. The base record has only the score variable; subclasses
        add their auxiliary variables.

        Parameters
        ----------
        x_values : array-like
            The input values.

        Returns
        -------
        tuple of numpy.ndarray
            ``(idx, values)``: backend indices and their values.
        """
        s = float(self.embedding.score(np.asarray(x_values, dtype=float)[None, :])[0])
        return np.array([int(self.score)], dtype=np.int64), np.array([s])

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({type(self.embedding).__name__}, inputs={len(self.inputs)}, "
                f"binaries={self.n_binaries}, score=x[{self.score}], rows={len(self.rows)})")
