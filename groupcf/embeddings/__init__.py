"""Trained classifiers as MIP constraints, and fast numpy evaluation.

Every supported model reduces to a :class:`ReLUNetwork` with one linear output, the
*score* (logit of the positive class; positive iff ``score >= 0``)::

    space, emb = get_embedding(pipe)             # Pipeline(FeatureSpace, clf) or bare model
    emb.score(Z)                                 # numpy, == decision_function / logit
    emb.partial(fixed_idx, values)               # fixed inputs folded into the first bias
    c = emb.add_to(backend, x_idx, space.domain(), lo=0.0)   # MIP rows; c.score var index
    c.get_error(backend.solve())                 # self-check against emb.score

Supported: scikit-learn ``LogisticRegression`` and ``MLPClassifier(activation="relu")``
(binary), PyTorch ``nn.Sequential`` of ``Linear``/``ReLU``. Add more with :func:`register`.
"""
from groupcf.embeddings.base import Embedding, EmbeddingConstr
from groupcf.embeddings.network import ReLUNetwork
from groupcf.embeddings.registry import (add_predictor_constr, embedding_for, get_embedding,
                                         register, registered_types)

__all__ = [
    "Embedding",
    "EmbeddingConstr",
    "ReLUNetwork",
    "add_predictor_constr",
    "embedding_for",
    "get_embedding",
    "register",
    "registered_types",
]
