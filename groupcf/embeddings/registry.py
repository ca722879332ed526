"""From a trained model to its :class:`~groupcf.embeddings.base.Embedding`.

Converters are registered per model type (``register``) and looked up along the model's
MRO, so subclasses (e.g. ``LogisticRegressionCV``) are found too. Framework converters are
registered lazily: the scikit-learn ones once ``sklearn`` has been imported, the PyTorch
ones once ``torch`` has been imported (a torch model implies that it has), so importing
groupcf never imports torch.
"""
from __future__ import annotations

import importlib
import logging
import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from groupcf.embeddings.base import Embedding, EmbeddingConstr
from groupcf.exceptions import GroupCFWarning, InvalidInputError, UnsupportedModelError

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings._typing import ArrayLike
    from groupcf.features.domain import InputDomain
    from groupcf.features.space import FeatureSpace
    from groupcf.solvers.base import Backend

logger = logging.getLogger(__name__)

#: ``converter(model) -> Embedding`` for one model type
Converter = Callable[[Any], Embedding]
#: :func:`register` as handed to a framework module's ``register_all``
Register = Callable[[type, Converter], None]

_REGISTRY: dict[type, Converter] = {}
# framework module -> groupcf modules holding its converters
_FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "sklearn": ("groupcf.embeddings.sklearn", "groupcf.embeddings.linear", "groupcf.embeddings.sklearn_trees"),
    "torch": ("groupcf.embeddings.torch",),
    "xgboost": ("groupcf.embeddings.xgboost",),
    "lightgbm": ("groupcf.embeddings.lightgbm",),
}
# frameworks whose converters are registered
_LOADED: set[str] = set()


def register(model_type: type, converter: Converter) -> None:
    """Use ``converter(model) -> Embedding`` for models of ``model_type``.

    Subclasses without a converter of their own use it too. Replaces an earlier
    registration.

    Parameters
    ----------
    model_type : type
        The model class.
    converter : callable
        ``converter(model) -> Embedding`` for a fitted model.

    Raises
    ------
    TypeError
        ``model_type`` is not a class.

    Examples
    --------
    >>> from groupcf.embeddings import LinearModel, embedding_for, register
    >>> class MyLinear:                       # a fitted model with coef_ and intercept_
    ...     coef_, intercept_ = np.array([1.0, -1.0]), 0.5
    >>> register(MyLinear, lambda m: LinearModel(m.coef_, m.intercept_))
    >>> embedding_for(MyLinear())
    LinearModel(inputs=2)
    """
    if not isinstance(model_type, type):
        raise TypeError(f"model_type must be a class, got {model_type!r}")
    _REGISTRY[model_type] = converter


def _load_frameworks() -> None:
    for framework, modules in _FRAMEWORKS.items():
        if framework in _LOADED or framework not in sys.modules:
            continue
        _LOADED.add(framework)
        for module in modules:
            try:
                importlib.import_module(module).register_all(register)
            except ImportError as exc:  # pragma: no cover - broken optional install
                warnings.warn(f"could not register {framework} embeddings from {module}: {exc}",
                              GroupCFWarning, stacklevel=2)


def registered_types() -> list[type]:
    """Model types with a registered converter (frameworks already imported).

    Returns
    -------
    list of type
        The classes, in registration order.

    Examples
    --------
    >>> from sklearn.neural_network import MLPClassifier
    >>> from groupcf.embeddings import registered_types
    >>> MLPClassifier in registered_types()
    True
    """
    _load_frameworks()
    return list(_REGISTRY)


def _supported_names() -> str:
    names = [f"{t.__module__.split('.')[0]}.{t.__name__}" for t in registered_types()]
    extra = [f"{fw} models (once {fw} is imported)" for fw in _FRAMEWORKS if fw not in _LOADED]
    return ", ".join(["groupcf ReLUNetwork / Embedding", *names, *extra])


def embedding_for(model: Any) -> Embedding:
    """The embedding of a bare (non-pipeline) model.

    Parameters
    ----------
    model : object
        A fitted classifier of a registered type, a torch module, or an
        :class:`~groupcf.embeddings.base.Embedding` (returned as is).

    Returns
    -------
    Embedding
        Its embedding.

    Raises
    ------
    UnsupportedModelError
        No converter is registered for the model's type (the message lists the
        supported ones).

    Examples
    --------
    >>> from groupcf.embeddings import embedding_for
    >>> from sklearn.linear_model import LogisticRegression
    >>> lr = LogisticRegression().fit([[0, 1], [1, 0], [1, 1], [0, 0]], [0, 1, 1, 0])
    >>> embedding_for(lr)                   # a logistic regression: a network without hidden layers
    ReLUNetwork(inputs=2, hidden=[])
    """
    if isinstance(model, Embedding):
        return model
    _load_frameworks()
    for cls in type(model).__mro__:
        converter = _REGISTRY.get(cls)
        if converter is not None:
            return converter(model)
    raise UnsupportedModelError(
        f"no embedding for models of type {type(model).__module__}.{type(model).__name__}; "
        f"supported: {_supported_names()}")


def get_embedding(model: Any, space: FeatureSpace | None = None) -> tuple[FeatureSpace | None, Embedding]:
    """``(space, embedding)`` of a trained model.

    Parameters
    ----------
    model : object
        A fitted ``Pipeline(FeatureSpace, classifier)`` — its FeatureSpace is returned (a
        ``space`` argument is then ignored) —, a fitted Pipeline of scikit-learn
        preprocessing (``ColumnTransformer`` of encoders and scalers, see
        :mod:`groupcf.features.preprocessing`) then a classifier — the space is derived
        from the transformer, ``space`` supplying numeric ranges and actionability —, or a
        bare classifier / torch module / :class:`~groupcf.embeddings.base.Embedding`,
        returned with ``space`` as given (possibly ``None``).
    space : FeatureSpace or None, default None
        The fitted feature space of a bare model (or, with a preprocessing pipeline, one
        fitted on the training rows).

    Returns
    -------
    tuple
        ``(space, embedding)``.

    Raises
    ------
    UnsupportedModelError
        An unsupported model, or a pipeline with other steps.
    InvalidInputError
        The space's width differs from the model's number of inputs, or a bare model was
        fitted on the raw columns (:func:`groupcf.embeddings.space_check.check_model_space`,
        which also warns when a sample suggests a numpy-fitted model saw raw values).

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from groupcf.embeddings import get_embedding
    >>> X = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": ["u", "v", "u", "v"]})
    >>> pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), LogisticRegression()).fit(X, [0, 0, 1, 1])
    >>> space, emb = get_embedding(pipe)
    >>> space is pipe[0], emb
    (True, ReLUNetwork(inputs=2, hidden=[]))
    >>> bool(np.allclose(emb.proba(space.transform(X)), pipe.predict_proba(X)[:, 1]))
    True
    """
    steps = _pipeline_steps(model)
    if steps is not None:
        from groupcf.features.space import FeatureSpace

        if len(steps) < 2:
            raise UnsupportedModelError(
                "a Pipeline needs preprocessing and a classifier (FeatureSpace or a ColumnTransformer, "
                f"then the classifier); its steps are {[type(s).__name__ for s in steps]}")
        if not isinstance(steps[0], FeatureSpace):
            return _preprocessed(steps, space)
        if len(steps) > 2:
            raise UnsupportedModelError(
                "a Pipeline must have exactly two steps, (FeatureSpace, classifier); the "
                f"steps {[type(s).__name__ for s in steps[1:-1]]} in between are not supported")
        if space is not None and space is not steps[0]:
            warnings.warn("the pipeline has its own FeatureSpace; the space argument is ignored",
                          GroupCFWarning, stacklevel=3)
        space, model = steps[0], steps[-1]
    embedding = embedding_for(model)
    if steps is None and space is not None and hasattr(space, "features_") and model is not embedding:
        from groupcf.embeddings.space_check import check_model_space

        check_model_space(model, embedding, space)    # width, names, a sample (a bare model)
        return space, embedding
    width = getattr(space, "n_features_out_", None) if space is not None else None
    if width is not None and width != embedding.n_inputs:
        raise InvalidInputError(
            f"the feature space has {width} columns but the model takes "
            f"{embedding.n_inputs} inputs; was the model trained on this space?")
    return space, embedding


def _preprocessed(steps: list[Any], reference: FeatureSpace | None) -> tuple[FeatureSpace, Embedding]:
    """``(space, embedding)`` of a Pipeline of scikit-learn preprocessing then a classifier
    (:mod:`groupcf.features.preprocessing`, :mod:`groupcf.embeddings.preprocessing`); a
    fitted FeatureSpace given as ``reference`` supplies numeric ranges and actionability."""
    from groupcf.embeddings.preprocessing import compose_affine
    from groupcf.features.preprocessing import translate_preprocessing

    inner = embedding_for(steps[-1])      # an unsupported classifier is named first
    pre = translate_preprocessing(steps[:-1], reference=reference)
    if pre.estimated:
        rng = ", ".join(f"{n} in [{lo:.4g}, {hi:.4g}]" for n, (lo, hi) in pre.estimated.items())
        warnings.warn(f"numeric ranges estimated from the scalers' statistics: {rng}; pass "
                      "space=gcf.FeatureSpace(numeric='passthrough').fit(X_train) for the training ranges "
                      "(and integer values)", GroupCFWarning, stacklevel=4)
    return pre.space, compose_affine(inner, pre.matrix, pre.offset, pre.output_names)


def _pipeline_steps(model: Any) -> list[Any] | None:
    """The non-passthrough steps of an sklearn Pipeline, or None for other models."""
    if "sklearn" not in sys.modules:
        return None
    from sklearn.pipeline import Pipeline

    if not isinstance(model, Pipeline):
        return None
    return [est for _, est in model.steps if est is not None and not isinstance(est, str)]


def add_predictor_constr(backend: Backend, model: Any, x_idx: ArrayLike, domain: InputDomain,
                         lo: float | None = None) -> EmbeddingConstr:
    """Embed ``model`` in ``backend`` at the input variables ``x_idx`` over ``domain``.

    Parameters
    ----------
    backend : Backend
        The MIP (:func:`groupcf.solvers.make_backend`).
    model : object
        Anything :func:`get_embedding` accepts.
    x_idx : array-like of int
        Backend indices of the input variables, one per expanded column.
    domain : InputDomain
        Where the inputs lie (for valid big-M constants).
    lo : float or None, default None
        Also require ``score >= lo`` (``0``: the model accepts at probability 0.5).

    Returns
    -------
    EmbeddingConstr
        What was added: the score variable, the rows, the auxiliary variables.

    Raises
    ------
    UnsupportedModelError
        No embedding for the model.

    Examples
    --------
    >>> from groupcf.embeddings import add_predictor_constr
    >>> from groupcf.solvers import make_backend
    >>> from sklearn.linear_model import LogisticRegression
    >>> lr = LogisticRegression().fit([[0, 1], [1, 0], [1, 1], [0, 0]], [0, 1, 1, 0])
    >>> b = make_backend("highs")
    >>> x = b.add_vars(2, ub=1, vtype="B")
    >>> c = add_predictor_constr(b, lr, x, gcf.InputDomain.box(2), lo=0.0)
    >>> b.set_objective(x, [1.0, 1.0])        # the fewest ones the model accepts
    >>> sol = b.solve()
    >>> sol.x[x], lr.predict([sol.x[x]])
    (array([1., 0.]), array([1]))
    """
    _, embedding = get_embedding(model)
    return embedding.add_to(backend, x_idx, domain, lo=lo)
