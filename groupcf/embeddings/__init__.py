"""Trained classifiers as MIP constraints, and fast numpy evaluation.

Every supported model is an :class:`Embedding` (a :class:`ReLUNetwork`, a
:class:`LinearModel`, ...) computing one *score* (logit of the positive class, or a
decision function; positive iff ``score >= 0``)::

    space, emb = get_embedding(pipe)             # Pipeline(FeatureSpace, clf) or bare model
    emb.score(Z)                                 # numpy, == decision_function / logit
    emb.partial(fixed_idx, values)               # fixed inputs folded into the first bias
    c = emb.add_to(backend, x_idx, space.domain(), lo=0.0)   # MIP rows; c.score var index
    c.get_error(backend.solve())                 # self-check against emb.score

Supported: scikit-learn ``LogisticRegression`` and ``MLPClassifier(activation="relu")``
(binary), the linear classifiers ``LinearSVC``, ``SGDClassifier``, ``RidgeClassifier``,
``Perceptron`` (binary; :class:`LinearModel`), PyTorch ``nn.Sequential`` of
``Linear``/``ReLU``. Add more with :func:`register`.
"""
from groupcf.embeddings.base import AdditiveForm, DeltaEvaluator, Embedding, EmbeddingCapabilities, EmbeddingConstr
from groupcf.embeddings.linear import LinearModel
from groupcf.embeddings.network import NetworkConstr, ReLUNetwork
from groupcf.embeddings.registry import add_predictor_constr, embedding_for, get_embedding, register, registered_types

__all__ = [
    "AdditiveForm",
    "DeltaEvaluator",
    "Embedding",
    "EmbeddingCapabilities",
    "EmbeddingConstr",
    "LinearModel",
    "NetworkConstr",
    "ReLUNetwork",
    "add_predictor_constr",
    "embedding_for",
    "get_embedding",
    "register",
    "registered_types",
]
