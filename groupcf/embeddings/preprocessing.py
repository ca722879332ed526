r"""A model behind scikit-learn preprocessing, as an embedding over a FeatureSpace.

:func:`groupcf.features.preprocessing.translate_preprocessing` writes a fitted
``ColumnTransformer`` (one-hot / ordinal encoders, scalers, passthrough) as a
:class:`~groupcf.FeatureSpace` ``z`` and an exact affine map ``y = A z + c`` onto the
transformer's output columns. :func:`compose_affine` folds that map into the classifier's
embedding, so the algorithms see an ordinary embedding over the space's columns:

* ReLU networks (logistic regression, MLP, torch): the first layer becomes
  :math:`W_1 A` with bias :math:`b_1 + W_1 c` — the same network, exactly;
* linear classifiers: :math:`w^\top (A z + c) + b = (A^\top w)^\top z + (w^\top c + b)`;
* tree ensembles: a split ":math:`y_j \le t`" on an output column :math:`y_j = a z_i + c_j`
  with :math:`a > 0` (a one-hot copy, a scaled or passed-through numeric) becomes
  ":math:`z_i \le (t - c_j) / a`". An output column mixing several space columns (an
  ``OrdinalEncoder`` code) cannot be split on one column: :class:`UnsupportedModelError`.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from groupcf.embeddings._typing import ArrayLike, FloatArray
from groupcf.embeddings.base import Embedding
from groupcf.embeddings.linear import LinearModel
from groupcf.embeddings.network import ReLUNetwork
from groupcf.embeddings.trees import TreeEnsemble
from groupcf.exceptions import UnsupportedModelError

__all__ = ["compose_affine"]


def compose_affine(embedding: Embedding, matrix: ArrayLike, offset: ArrayLike,
                   names: Sequence[str] | None = None) -> Embedding:
    """``embedding`` evaluated at ``matrix @ z + offset``, as an embedding of ``z``.

    Parameters
    ----------
    embedding
        The classifier's embedding over the preprocessing's output columns.
    matrix, offset
        The affine map ``(n_out, n_space)``, ``(n_out,)``.
    names
        Output column names, for error messages.

    Returns
    -------
    Embedding
        An embedding of the same type over ``n_space`` inputs.

    Raises
    ------
    UnsupportedModelError
        The model type cannot absorb the map (see the module docstring).

    Examples
    --------
    >>> net = ReLUNetwork([(np.array([[2.0, -1.0]]), np.array([0.5]))])
    >>> compose_affine(net, np.array([[1.0], [3.0]]), np.array([0.0, 1.0])).score(np.array([[1.0]]))
    array([-1.5])
    """
    A = np.asarray(matrix, dtype=np.float64)
    c = np.asarray(offset, dtype=np.float64).reshape(-1)
    if A.ndim != 2 or A.shape[0] != embedding.n_inputs or c.shape != (A.shape[0],):
        raise UnsupportedModelError(
            f"the preprocessing gives {A.shape[0] if A.ndim == 2 else '?'} columns but the classifier takes "
            f"{embedding.n_inputs} inputs; was it fitted after this preprocessing?")
    if isinstance(embedding, ReLUNetwork):
        (W, b), *rest = embedding.layers
        return ReLUNetwork([(W @ A, b + W @ c), *rest])
    if isinstance(embedding, LinearModel):
        return LinearModel(A.T @ embedding.weights, embedding.bias + float(embedding.weights @ c))
    if isinstance(embedding, TreeEnsemble):
        return _trees(embedding, A, c, names)
    raise UnsupportedModelError(
        f"{type(embedding).__name__} cannot be combined with scikit-learn preprocessing; put a groupcf "
        "FeatureSpace first (make_pipeline(gcf.FeatureSpace(), classifier)) or use method='geco'/'pso' with data=")


def _trees(emb: TreeEnsemble, A: FloatArray, c: FloatArray, names: Sequence[str] | None) -> TreeEnsemble:
    feature = emb.feature.copy()
    threshold = emb.threshold.copy()
    for j in np.unique(feature[feature >= 0]):
        nz = np.flatnonzero(A[j])
        if len(nz) != 1 or A[j, nz[0]] <= 0:
            name = names[j] if names is not None and j < len(names) else f"x{j}"
            raise UnsupportedModelError(
                f"the tree model splits on the preprocessed column {name!r}, which combines several encoded "
                "columns (an OrdinalEncoder code) or none: use OneHotEncoder before a tree model, or a groupcf "
                "FeatureSpace")
        at = emb.feature == j
        threshold[at] = (emb.threshold[at] - c[j]) / A[j, nz[0]]
        feature[at] = nz[0]
    return TreeEnsemble(A.shape[1], feature, threshold, emb.left, emb.right, emb.value, emb.roots,
                        scale=emb.scale, base=emb.base, averaging=emb.averaging, name=emb.name)
