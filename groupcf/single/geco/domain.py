"""GeCo's view of the data: the *active domain* of every feature.

GeCo never invents values: a counterfactual takes, for each feature it changes, a value
seen in the reference data (for a numeric feature, an observed number), sampled with the
data's frequencies; a feature group takes a tuple of values seen together in one row.

:class:`ActiveDomain` holds, per original feature, its distinct observed values sorted by
*key* (the number itself for numeric features, the category index otherwise), their
counts, and — when a :class:`~groupcf.FeatureSpace` is known — each value's expanded
encoding, so that candidates are encoded by table look-ups instead of
``FeatureSpace.transform``. It is independent of the explained instance and is cached
(by identity of the data and space) across explanations.
"""
from __future__ import annotations

import logging
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...exceptions import InvalidInputError

log = logging.getLogger(__name__)


@dataclass(eq=False)
class FeatureDomain:
    """Observed values of one original feature."""

    name: str
    kind: str                      # "numeric", "ordinal", "categorical" or "binary"
    values: np.ndarray             # raw values, sorted by key
    keys: np.ndarray               # float key of each value (ascending)
    counts: np.ndarray             # frequency of each value in the data
    span: float = 1.0              # max - min for numeric features (distance scale)
    categories: list | None = None  # full category list (key = index), non-numeric only
    dtype: object = None           # pandas dtype of the data column
    enc: np.ndarray | None = None  # (n_values, n_columns) expanded encoding of each value
    cols: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # its expanded columns
    codes: np.ndarray | None = None  # (n_values,) FeatureSpace.codes of each value
    _lookup: dict = field(default_factory=dict, repr=False)

    def key_of(self, value) -> float:
        """Key of a raw value (raises KeyError for an unknown category)."""
        if self.kind == "numeric":
            return float(value)
        return float(self._lookup[_hkey(value)])

    @property
    def size(self) -> int:
        return len(self.values)

    def encoding(self) -> np.ndarray:
        """``enc``, set once the domain is encoded by its FeatureSpace."""
        if self.enc is None:
            raise ValueError(f"feature {self.name!r} has no encoding (a domain without its FeatureSpace)")
        return self.enc

    def space_codes(self) -> np.ndarray:
        """``codes``, set once the domain is encoded by its FeatureSpace."""
        if self.codes is None:
            raise ValueError(f"feature {self.name!r} has no codes (a domain without its FeatureSpace)")
        return self.codes


class ActiveDomain:
    """Per-feature active domains of ``data`` (see module docstring).

    Implements the feature table PLAF compiles against (``names``, ``kinds``, ``keys``,
    ``counts``, ``index``, ``key_of``).
    """

    def __init__(self, data: pd.DataFrame, space=None, features=None):
        if not isinstance(data, pd.DataFrame) or len(data) == 0:
            raise InvalidInputError("GeCo samples values from the data's active domain: pass "
                                    "data= a non-empty DataFrame of raw rows (e.g. the training set)")
        if features is None:
            features = [f.name for f in space] if space is not None else list(data.columns)
        missing = [f for f in features if f not in data.columns]
        if missing:
            raise InvalidInputError(f"data lacks the model's features {missing}")
        self.space = space
        self.names = list(features)
        self._index = {n: i for i, n in enumerate(self.names)}
        self.features: list[FeatureDomain] = []
        codes = np.empty((len(data), len(self.names)), dtype=np.int32)
        for l, name in enumerate(self.names):
            col = data[name]
            if col.isna().any():
                raise InvalidInputError(f"missing value (NaN) in data column {name!r}")
            sf = space[name] if space is not None else None
            fd, codes[:, l] = _feature_domain(name, col, sf)
            self.features.append(fd)
        self.codes = codes
        self.n_rows = len(data)
        self.kinds = [f.kind for f in self.features]
        self.keys = [f.keys for f in self.features]
        self.counts = [f.counts for f in self.features]
        self.dtypes = {f.name: f.dtype for f in self.features}
        if space is not None:
            self._encode_values(data)
        self._tuples: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._enc_table: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    # ------------------------------------------------------------------ PLAF table
    def index(self, name: str) -> int:
        return self._index[name]

    def key_of(self, l: int, value) -> float:
        return self.features[l].key_of(value)

    def __len__(self) -> int:
        return len(self.names)

    # ------------------------------------------------------------------ groups
    def tuples(self, members: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Distinct tuples of value indices of ``members`` seen in one data row, with their
        counts: ``(T (u, len(members)) int32, counts (u,))``."""
        members = tuple(members)
        hit = self._tuples.get(members)
        if hit is None:
            if len(members) == 1:
                l = members[0]
                n = self.features[l].size
                hit = (np.arange(n, dtype=np.int32)[:, None], self.features[l].counts)
            else:
                uniq, counts = np.unique(self.codes[:, list(members)], axis=0, return_counts=True)
                hit = (uniq.astype(np.int32), counts)
            self._tuples[members] = hit
        return hit

    def encoding_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every feature's value encodings stacked, to write many candidates' changed blocks
        in one assignment: ``(E, cols, offset)``, value ``v`` of feature ``l`` encoded by row
        ``offset[l] + v`` of ``E`` into the columns ``cols[l]`` (both padded to the widest
        feature, ``cols`` with -1). Built on first use, read only."""
        if self._enc_table is None:
            width = max(len(f.cols) for f in self.features)
            sizes = np.array([f.size for f in self.features], dtype=np.int64)
            offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
            E = np.zeros((int(sizes.sum()), width))
            cols = np.full((len(self.features), width), -1, dtype=np.int64)
            for l, f in enumerate(self.features):
                enc = f.encoding()
                E[offset[l]:offset[l] + f.size, :enc.shape[1]] = enc
                cols[l, :len(f.cols)] = f.cols
            for a in (E, cols, offset):
                a.flags.writeable = False
            self._enc_table = (E, cols, offset)
        return self._enc_table

    # ------------------------------------------------------------------ instance
    def instance_keys(self, x: pd.Series) -> np.ndarray:
        """Key of the instance's value of every feature (``-1`` for a category the data
        never shows and the space does not know)."""
        out = np.empty(len(self.names))
        for l, f in enumerate(self.features):
            try:
                out[l] = f.key_of(x[f.name])
            except KeyError:
                out[l] = -1.0
            except (TypeError, ValueError):
                raise InvalidInputError(f"value {x[f.name]!r} of numeric feature {f.name!r} "
                                        "is not a number") from None
        return out

    def _encode_values(self, data: pd.DataFrame) -> None:
        """Each value's expanded encoding and its :meth:`FeatureSpace.codes` (category
        code / scaled number, what MACE's per-feature distances read), from one
        ``transform`` / ``codes`` over a frame whose column ``l`` lists feature ``l``'s
        values (padded with its last value)."""
        n = max(f.size for f in self.features)
        cols = {}
        for f in self.features:
            idx = np.minimum(np.arange(n), f.size - 1)
            vals = f.values[idx]
            if isinstance(f.dtype, pd.CategoricalDtype):
                cols[f.name] = pd.Categorical(vals, dtype=f.dtype)
            else:
                cols[f.name] = pd.array(vals, dtype=f.dtype) if f.dtype is not None else vals
        frame = pd.DataFrame(cols)
        Z = self.space.transform(frame)
        C = self.space.codes(frame)
        for l, f in enumerate(self.features):
            sf = self.space[f.name]
            f.cols = np.asarray(sf.columns, dtype=np.int64)
            f.enc = np.ascontiguousarray(Z[: f.size][:, f.cols])
            f.codes = C[: f.size, l].copy()


# ====================================================================== helpers
def _hkey(v):
    """Hashable key equating 1, 1.0 and np.int64(1), keeping strings apart."""
    if isinstance(v, (bool, np.bool_)):
        return ("b", bool(v))
    if isinstance(v, (int, float, np.integer, np.floating)):
        return ("n", float(v))
    return ("o", v)


def _kind(col: pd.Series, sf) -> str:
    if sf is not None:
        return sf.kind
    dt = col.dtype
    if pd.api.types.is_bool_dtype(dt) or col.nunique() == 2:
        return "binary"
    if isinstance(dt, pd.CategoricalDtype):
        return "ordinal" if dt.ordered else "categorical"
    if pd.api.types.is_numeric_dtype(dt):
        return "numeric"
    return "categorical"


def _feature_domain(name: str, col: pd.Series, sf) -> tuple[FeatureDomain, np.ndarray]:
    kind = _kind(col, sf)
    if kind == "numeric":
        arr = col.to_numpy()
        values, inverse, counts = np.unique(arr, return_inverse=True, return_counts=True)
        keys = values.astype(float)
        span = float(keys[-1] - keys[0]) if len(keys) > 1 else 1.0
        return (FeatureDomain(name, kind, values, keys, counts, span=span or 1.0, dtype=col.dtype),
                inverse.reshape(-1).astype(np.int32))
    # categorical-like: key = index in the full category list
    if sf is not None and sf.encoding != "continuous" and sf.edges is None:
        cats = list(sf.categories)
    elif isinstance(col.dtype, pd.CategoricalDtype):
        cats = list(col.dtype.categories)
    else:
        cats = sorted(pd.unique(col).tolist(), key=lambda v: (0, float(v), "") if isinstance(
            v, (int, float, np.integer, np.floating)) else (1, 0.0, str(v)))
    lookup = {_hkey(c): i for i, c in enumerate(cats)}
    if isinstance(col.dtype, pd.CategoricalDtype) and list(col.dtype.categories) == cats:
        full = col.cat.codes.to_numpy().astype(np.int64)
    else:
        try:
            full = np.fromiter((lookup[_hkey(v)] for v in col.tolist()), dtype=np.int64, count=len(col))
        except KeyError as exc:
            raise InvalidInputError(f"data column {name!r} has a value the feature space does not "
                                    f"know: {exc.args[0][1]!r}") from None
    observed, inverse, counts = np.unique(full, return_inverse=True, return_counts=True)
    values = np.empty(len(observed), dtype=object)
    for i, c in enumerate(observed):
        values[i] = cats[c]
    fd = FeatureDomain(name, kind, values, observed.astype(float), counts, span=1.0,
                       categories=cats, dtype=col.dtype, _lookup=lookup)
    return fd, inverse.reshape(-1).astype(np.int32)


# ====================================================================== cache
class _DomainCache:
    """A few recent :class:`ActiveDomain` objects, keyed by the identity of the data
    frame and the fitted space (held by weak references, so a collected frame never
    matches a new one with a recycled id). Modifying ``data`` in place between calls is
    not detected: pass a new frame (or use :class:`~groupcf.single.geco.GeCo`)."""

    def __init__(self, size: int = 8):
        self.size = size
        self._items: OrderedDict = OrderedDict()

    def get(self, data: pd.DataFrame, space, features) -> ActiveDomain:
        key = (id(data), id(space), id(getattr(space, "features_", None)), tuple(features or ()))
        hit = self._items.get(key)
        if hit is not None:
            ref_data, ref_space, dom = hit
            if ref_data() is data and (space is None or ref_space() is space):
                self._items.move_to_end(key)
                return dom
        dom = ActiveDomain(data, space=space, features=features)
        self._items[key] = (weakref.ref(data), weakref.ref(space) if space is not None else None, dom)
        while len(self._items) > self.size:
            self._items.popitem(last=False)
        return dom


DOMAIN_CACHE = _DomainCache()
