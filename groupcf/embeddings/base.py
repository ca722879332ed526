"""The interface shared by every model embedding.

An :class:`Embedding` is a trained classifier reduced to what counterfactual search needs:

* a fast, vectorised numpy evaluation of its *score* (the logit of the positive class,
  i.e. ``decision_function``; the model predicts positive iff ``score >= 0`` at the usual
  probability threshold 0.5),
* partial evaluation (inputs that never change are folded into the model), and
* a MIP formulation, :meth:`Embedding.add_to`, that adds variables and rows to a solver
  :class:`~groupcf.solvers.base.Backend` so that a new variable equals the score at given
  input variables.

What :meth:`Embedding.add_to` added is recorded in an :class:`EmbeddingConstr`, which can
check itself against the numpy evaluation (:meth:`EmbeddingConstr.get_error`).
"""
from __future__ import annotations

import abc
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.features.domain import InputDomain
    from groupcf.solvers.base import Backend


class Embedding(abc.ABC):
    """A trained binary classifier as a function ``score: R^n -> R``.

    Subclasses implement :meth:`score`, :meth:`partial` and :meth:`add_to`.
    """

    @property
    @abc.abstractmethod
    def n_inputs(self) -> int:
        """Number of (expanded) input columns."""

    @abc.abstractmethod
    def score(self, Z: np.ndarray) -> np.ndarray:
        """Score (logit of the positive class) of each row of ``Z`` (shape ``(m, n)``);
        returns shape ``(m,)``. A 1-D ``Z`` is one point (result of shape ``(1,)``)."""

    def predict(self, Z: np.ndarray, threshold: float = 0.0) -> np.ndarray:
        """``1`` where ``score >= threshold`` (default: probability ``>= 0.5``), else ``0``."""
        return (self.score(Z) >= threshold).astype(np.int64)

    def proba(self, Z: np.ndarray) -> np.ndarray:
        """Probability of the positive class, ``sigmoid(score)``."""
        s = self.score(Z)
        return 0.5 * (1.0 + np.tanh(0.5 * s))   # overflow-free sigmoid

    def score_threshold(self, p: float) -> float:
        """The score from which the model predicts positive at probability ``p`` (the
        logit; a model whose score is a probability returns ``p``)."""
        return math.log(p / (1.0 - p))

    @abc.abstractmethod
    def partial(self, fixed_idx: Sequence[int], fixed_values: Sequence[float]) -> "Embedding":
        """The same model over the remaining inputs (kept in their original order), with
        the inputs ``fixed_idx`` fixed to ``fixed_values``."""

    @abc.abstractmethod
    def add_to(self, backend: "Backend", x_idx, domain: "InputDomain",
               lo: float | None = None) -> "EmbeddingConstr":
        """Add the model to ``backend``: a new free continuous variable ``constr.score``
        equals the score at the input variables ``x_idx`` (backend indices, one per
        input) whose values lie in ``domain``. With ``lo``, also add ``score >= lo``."""

    # -- helpers for subclasses ------------------------------------------------------
    def _check_points(self, Z) -> np.ndarray:
        Z = np.asarray(Z, dtype=float)
        if Z.ndim == 1:
            Z = Z[None, :]
        if Z.ndim != 2 or Z.shape[1] != self.n_inputs:
            raise ValueError(f"expected points with {self.n_inputs} columns, got shape {Z.shape}")
        return Z


@dataclass
class EmbeddingConstr:
    """What :meth:`Embedding.add_to` added to a backend.

    Attributes
    ----------
    embedding
        The embedding that was added.
    inputs
        Backend indices of the input variables (as given).
    score
        Backend index of the score variable.
    hidden
        Per hidden layer, the backend indices of the post-activation variables ``h``;
        ``-1`` for a neuron proven always inactive (its output is the constant 0 and no
        variable was created).
    binaries
        Per hidden layer, the backend indices of the activation binaries ``s``; ``-1`` for
        a neuron whose state is known from its bounds (no binary needed).
    bounds
        Per layer (hidden layers then the output), the pre-activation bounds ``(L, U)``
        used for the big-M constants.
    rows
        Backend indices of every row added (including the threshold row).
    lo_row
        Backend index of the row ``score >= lo`` (``None`` without ``lo``); change the
        threshold later with ``backend.set_row_bounds``.
    """

    embedding: Embedding
    inputs: np.ndarray
    score: int
    hidden: list[np.ndarray] = field(default_factory=list)
    binaries: list[np.ndarray] = field(default_factory=list)
    bounds: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    lo_row: int | None = None

    @property
    def n_binaries(self) -> int:
        return int(sum(int(np.count_nonzero(b >= 0)) for b in self.binaries))

    @property
    def n_fixed_inactive(self) -> int:
        """Neurons proven always inactive (no variable, no binary)."""
        return int(sum(int(np.count_nonzero(h < 0)) for h in self.hidden))

    @property
    def n_fixed_active(self) -> int:
        """Neurons proven always active (a variable, no binary)."""
        return int(sum(int(np.count_nonzero((h >= 0) & (b < 0)))
                       for h, b in zip(self.hidden, self.binaries)))

    def get_error(self, x) -> float:
        """``|score variable − embedding.score(input values)|`` at a solution.

        ``x`` is a :class:`~groupcf.solvers.base.Solution` or the vector of all backend
        variable values.
        """
        values = getattr(x, "x", x)
        if values is None:
            raise ValueError("the solution has no variable values "
                             f"(status {getattr(x, 'status', None)})")
        values = np.asarray(values, dtype=float)
        expected = self.embedding.score(values[self.inputs])[0]
        return float(abs(values[self.score] - expected))

    def start_values(self, x_values) -> tuple[np.ndarray, np.ndarray]:
        """Values of every variable this record added, at input values ``x_values``
        (``idx, values``), e.g. to complete a MIP start: hidden outputs, activation
        binaries and the score."""
        pre = self.embedding.preactivations(np.asarray(x_values, dtype=float)[None, :])
        idx, vals = [int(self.score)], [float(pre[-1][0, 0])]
        for h, s, a in zip(self.hidden, self.binaries, pre[:-1]):
            a = a[0]
            on = h >= 0
            idx.extend(h[on].tolist()); vals.extend(np.maximum(a[on], 0.0).tolist())
            on = s >= 0
            idx.extend(s[on].tolist()); vals.extend((a[on] > 0).astype(float).tolist())
        return np.array(idx, dtype=np.int64), np.array(vals)

    def __repr__(self) -> str:
        widths = [len(h) for h in self.hidden]
        return (f"EmbeddingConstr({type(self.embedding).__name__}, inputs={len(self.inputs)}, "
                f"hidden={widths}, binaries={self.n_binaries}, score=x[{self.score}], "
                f"rows={len(self.rows)})")
