"""Does a bare model (fitted on a matrix) belong to the ``space=`` it is explained with?

A bare classifier is explained through a :class:`~groupcf.FeatureSpace` given as
``space=``: raw rows are encoded by the space, then scored. Nothing ties the two together,
so :func:`check_model_space` checks what can be checked, before any work:

1. width: the model's inputs equal the space's expanded columns (a model taking as many
   inputs as there are *raw* features is said to be probably fitted on raw values);
2. names: a model fitted on a DataFrame (``feature_names_in_``) must have been fitted on
   the space's columns (``get_feature_names_out``), not on the raw columns;
3. a sample, for a model fitted on a numpy array (or whose names cannot tell, as with a
   passthrough space, whose columns are named like the raw ones) over an all-numeric space (where a raw row
   and an encoded row have the same width): on points of the space's domain, a model fitted
   on the encoding varies with them, and gives extreme scores on the raw values; a model
   fitted on the raw values gives one decision on nearly every encoded point but varied,
   moderate scores on the raw values. The latter is reported as a
   :class:`~groupcf.exceptions.GroupCFWarning` naming the evidence.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from groupcf.exceptions import GroupCFWarning, InvalidInputError

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.base import Embedding
    from groupcf.features.space import FeatureSpace

__all__ = ["check_model_space"]

#: points of the domain sampled by the check
N_SAMPLE = 256


def check_model_space(model: Any, embedding: Embedding, space: FeatureSpace, stacklevel: int = 4) -> None:
    """Check a bare ``model`` (with its ``embedding``) against a fitted ``space``.

    Parameters
    ----------
    model
        The user's classifier (fitted on encoded rows, a matrix).
    embedding
        Its :class:`~groupcf.embeddings.base.Embedding`.
    space
        The fitted :class:`~groupcf.FeatureSpace` given as ``space=``.
    stacklevel
        Of the warning.

    Raises
    ------
    InvalidInputError
        The widths differ, or the model was fitted on the raw columns (by name).

    Examples
    --------
    >>> check_model_space(lr, get_embedding(lr)[1], space)   # doctest: +SKIP
    """
    width, n_raw = int(space.n_features_out_), int(space.n_features_in_)
    if width != embedding.n_inputs:
        hint = (f"it takes {n_raw} = the number of raw features, so it was probably fitted on the raw "
                "values; " if embedding.n_inputs == n_raw else "")
        raise InvalidInputError(
            f"{type(model).__name__} takes {embedding.n_inputs} inputs but the space encodes rows into {width} "
            f"columns: {hint}fit it on space.transform(X_train), or put both in a Pipeline "
            "(make_pipeline(space, model)) and fit that")
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        names = [str(n) for n in names]
        expected = [str(n) for n in space.get_feature_names_out()]
        raw = [str(n) for n in space.feature_names_in_]
        if names != expected and names == raw:
            raise InvalidInputError(
                f"{type(model).__name__} was fitted on the raw columns {raw[:8]}{' ...' if len(raw) > 8 else ''} "
                "(its feature_names_in_), not on the space's encoding: fit it on space.transform(X_train), or "
                "explain a Pipeline (make_pipeline(space, model), or your ColumnTransformer pipeline)")
        if names == expected and names != raw:
            return                          # fitted on the encoded columns, by name
    _sample_check(model, embedding, space, stacklevel + 1)


def _sample_check(model: Any, embedding: Embedding, space: FeatureSpace, stacklevel: int) -> None:
    feats = list(space)
    if not feats or any(f.encoding != "continuous" for f in feats):
        return                              # raw rows are not numeric vectors of this width
    rng = np.random.default_rng(0)
    Z = space.domain().sample(N_SAMPLE, rng)
    low = np.array([f.low for f in feats])
    span = np.array([f.high - f.low for f in feats])
    R = low + Z * span
    if np.allclose(R, Z):
        return                              # the space does not rescale: nothing to tell apart
    cut = embedding.score_threshold(0.5)
    s_enc, s_raw = embedding.score(Z), embedding.score(R)
    pos_enc, pos_raw = float(np.mean(s_enc >= cut)), float(np.mean(s_raw >= cut))
    constant_encoded = min(pos_enc, 1 - pos_enc) < 0.01
    varied_raw = min(pos_raw, 1 - pos_raw) >= 0.05
    moderate_raw = float(np.median(np.abs(s_raw - cut))) < 20.0
    if constant_encoded and varied_raw and moderate_raw:
        warnings.warn(
            f"{type(model).__name__} looks fitted on raw values, not on the space's encoding: on "
            f"{N_SAMPLE} points of the space's domain it predicts {'positive' if pos_enc > 0.5 else 'negative'} "
            f"for {max(pos_enc, 1 - pos_enc):.0%} of the encoded rows, but {pos_raw:.0%} positive with moderate "
            "scores on the same rows' raw values. The space rescales every numeric feature (e.g. "
            f"{feats[0].name!r}: [{feats[0].low:g}, {feats[0].high:g}] -> [0, 1]): fit the model on "
            "space.transform(X_train), or explain a Pipeline (make_pipeline(space, model))",
            GroupCFWarning, stacklevel=stacklevel)
