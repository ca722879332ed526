"""The :class:`Dataset` container, the loader registry and file handling.

File lookup rules shared by every loader:

* **bundled files** live in ``groupcf/datasets/data/``; their sha256 sums are recorded in
  ``data/provenance.json`` and checked before every read
  (:class:`DatasetChecksumError` if a file was altered);
* the **data home** is the ``data_home=`` argument of :func:`load`, else the environment
  variable ``GROUPCF_DATA``. It is where users put files that are not bundled (the
  students data) or the one-for-many paper's own files (``compas_processed.csv``,
  ``german.data``, ``Students-Performance-MAT.csv``), which ``variant="paper"`` then
  reads instead of the bundled copies;
* the **cache** (``$XDG_CACHE_HOME/groupcf``, default ``~/.cache/groupcf``) receives
  downloaded files.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import logging
import os
import tempfile
import urllib.request
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import DatasetNotAvailableError, GroupCFError, GroupCFWarning, InvalidInputError

log = logging.getLogger(__name__)

DATA_DIR = Path(__file__).resolve().parent / "data"
ENV_DATA_HOME = "GROUPCF_DATA"
VARIANTS = ("default", "paper")


class DatasetChecksumError(GroupCFError):
    """A bundled data file does not match the sha256 recorded in ``provenance.json``."""


# ----------------------------------------------------------------------------- Dataset
@dataclass(repr=False, eq=False)
class Dataset:
    """A tabular classification dataset ready for counterfactual explanation.

    Returned by :func:`load`.

    Parameters
    ----------
    X : pandas.DataFrame
        Raw features, one column per original feature, readable values. In
        ``variant="paper"`` every column is a pandas ``Categorical`` whose declared
        categories fix the one-hot size (two categories = one binary column).
    y : pandas.Series
        Integer labels, **1 = favourable outcome** (no recidivism, good credit, income
        above 50K, no default, pass), indexed like ``X``.
    name, variant : str
        Registry name and encoding variant (``"default"`` or ``"paper"``).
    sensitive : list of str
        Protected attributes (for audits).
    immutable, increase_only : list of str
        Suggested actionability: features a counterfactual should not change / may only
        increase (ordered features only). :meth:`space` gives a ``FeatureSpace`` that
        applies them.
    description, source : str
        What the rows and the label are; where the data came from (provenance).

    Raises
    ------
    InvalidInputError
        ``X`` and ``y`` indexed differently, or ``sensitive`` / ``immutable`` /
        ``increase_only`` naming columns ``X`` lacks.

    Examples
    --------
    >>> ds = gcf.datasets.load("compas")
    >>> ds.shape, ds.sensitive
    ((6172, 8), ['race', 'sex', 'age'])
    >>> X_tr, X_te, y_tr, y_te = ds.split(test_size=0.5, random_state=0)
    >>> len(X_tr), len(X_te)
    (3086, 3086)
    >>> toy = gcf.datasets.Dataset(pd.DataFrame({"a": [1, 2]}), pd.Series([0, 1]), "toy", "default")
    >>> toy
    Dataset(name='toy', variant='default', shape=(2, 1), positive_rate=0.500)
    """

    X: pd.DataFrame
    y: pd.Series
    name: str
    variant: str
    sensitive: list[str] = field(default_factory=list)
    immutable: list[str] = field(default_factory=list)
    increase_only: list[str] = field(default_factory=list)
    description: str = ""
    source: str = ""

    def __post_init__(self):
        if not self.X.index.equals(self.y.index):
            raise InvalidInputError(f"{self.name}: X and y have different indices")
        for what in ("sensitive", "immutable", "increase_only"):
            unknown = [c for c in getattr(self, what) if c not in self.X.columns]
            if unknown:
                raise InvalidInputError(f"{self.name}: {what} names unknown columns {unknown}")

    @property
    def shape(self) -> tuple[int, int]:
        return self.X.shape

    @property
    def positive_rate(self) -> float:
        """Share of rows with the favourable outcome (``y == 1``)."""
        return float(self.y.mean()) if len(self.y) else float("nan")

    @property
    def feature_names(self) -> list[str]:
        return list(self.X.columns)

    def space(self, **kwargs):
        """A :class:`~groupcf.FeatureSpace` with this dataset's actionability rules.

        Parameters
        ----------
        **kwargs
            Further ``FeatureSpace`` arguments (``numeric="passthrough"``, ``n_bins``,
            ...); ``immutable=`` / ``increase_only=`` given here are *added* to the
            dataset's own.

        Returns
        -------
        FeatureSpace
            Unfitted; use it as the first step of a pipeline.

        Examples
        --------
        >>> ds = gcf.datasets.load("compas")
        >>> space = ds.space(numeric="passthrough", immutable=["age"])
        >>> space.immutable, space.numeric
        (['race', 'sex', 'age'], 'passthrough')
        """
        from ..features import FeatureSpace

        immutable = list(dict.fromkeys([*self.immutable, *kwargs.pop("immutable", [])]))
        increase_only = list(dict.fromkeys([*self.increase_only, *kwargs.pop("increase_only", [])]))
        return FeatureSpace(immutable=immutable, increase_only=increase_only, **kwargs)

    def split(self, test_size: float = 0.5, random_state=0, stratify: bool = False):
        """``(X_train, X_test, y_train, y_test)`` by scikit-learn's ``train_test_split``.

        Parameters
        ----------
        test_size : float, default 0.5
            Share of the rows in the test part.
        random_state : int, numpy.random.RandomState or None, default 0
            The shuffle's randomness (as scikit-learn's ``train_test_split`` takes it).
        stratify : bool, default False
            Keep the label's proportions in both parts.

        Returns
        -------
        tuple
            ``(X_train, X_test, y_train, y_test)``; DataFrame / Series indices are kept, so
            rows can be traced back to ``X``.
        """
        from sklearn.model_selection import train_test_split

        return train_test_split(self.X, self.y, test_size=test_size, random_state=random_state,
                                stratify=self.y if stratify else None)

    def __len__(self) -> int:
        return len(self.X)

    def __repr__(self) -> str:
        n, d = self.shape
        return (f"Dataset(name={self.name!r}, variant={self.variant!r}, shape=({n}, {d}), "
                f"positive_rate={self.positive_rate:.3f})")


# ----------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class _Entry:
    name: str
    loader: Callable[..., Dataset]
    variants: tuple[str, ...]
    bundled: bool
    summary: str


_REGISTRY: dict[str, _Entry] = {}
_ALIASES: dict[str, str] = {}


def register(name: str, *, variants: Sequence[str], bundled: bool, summary: str,
             aliases: Iterable[str] = ()):
    """Decorator registering ``loader(variant, data_home, download) -> Dataset``."""
    def deco(fn):
        _REGISTRY[name] = _Entry(name, fn, tuple(variants), bundled, summary)
        for a in aliases:
            _ALIASES[a] = name
        return fn
    return deco


def list_datasets() -> list[str]:
    """Names accepted by :func:`load`.

    Returns
    -------
    list of str
        The registered dataset names, sorted.

    Examples
    --------
    >>> gcf.datasets.list_datasets()
    ['adult', 'compas', 'credit', 'german', 'students']
    """
    return sorted(_REGISTRY)


def describe_datasets() -> pd.DataFrame:
    """One row per dataset: variants, whether it is bundled, a one-line summary.

    Returns
    -------
    pandas.DataFrame
        Indexed by name, columns ``variants``, ``bundled``, ``summary``.

    Examples
    --------
    >>> gcf.datasets.describe_datasets()[["variants", "bundled"]]
                     variants  bundled
    name
    adult             default     True
    compas     default, paper     True
    credit            default     True
    german     default, paper     True
    students   default, paper    False
    """
    rows = [{"name": e.name, "variants": ", ".join(e.variants), "bundled": e.bundled,
             "summary": e.summary} for e in sorted(_REGISTRY.values(), key=lambda e: e.name)]
    return pd.DataFrame(rows).set_index("name")


def load(name: str, variant: str = "default", data_home=None, *, download: bool = True) -> Dataset:
    """Load a benchmark dataset.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets` (``"compas"``, ``"german"``, ``"adult"``,
        ``"credit"``, ``"students"``); case-insensitive.
    variant : {"default", "paper"}, default "default"
        ``"default"``: readable raw features with natural dtypes (numbers stay numbers).
        ``"paper"``: the discretised, all-categorical encoding of Lodi & Ramírez-Ayerbe,
        "One-for-many counterfactual explanations by column generation" (compas, german,
        students only); see ``groupcf/datasets/PAPER_NOTES.md``.
    data_home : str, path or None, default None
        Folder with user-supplied files (default: ``$GROUPCF_DATA``). Needed for the
        students data when offline; with ``variant="paper"`` the authors' own files found
        there are read instead of the bundled copies.
    download : bool, default True
        Allow downloading a file that is neither bundled nor in the data home (students).

    Returns
    -------
    Dataset
        The features ``X``, labels ``y`` (1 = favourable) and suggested actionability.

    Raises
    ------
    InvalidInputError
        An unknown dataset name (the message suggests the nearest one) or variant.
    DatasetNotAvailableError
        A file that is neither bundled, in the data home, nor downloadable (students
        offline), or a data home that is not a folder.
    DatasetChecksumError
        A bundled file whose sha256 differs from the one recorded.

    Examples
    --------
    >>> ds = gcf.datasets.load("german", variant="paper")
    >>> ds
    Dataset(name='german', variant='paper', shape=(1000, 20), positive_rate=0.700)
    >>> gcf.datasets.load("compass")
    Traceback (most recent call last):
    ...
    groupcf.exceptions.InvalidInputError: unknown dataset 'compass'; available: [...]. Did you mean 'compas'?
    """
    if not isinstance(name, str):
        raise InvalidInputError(f"dataset name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _REGISTRY:
        close = difflib.get_close_matches(key, list(_REGISTRY) + list(_ALIASES), n=1)
        hint = f" Did you mean {_ALIASES.get(close[0], close[0])!r}?" if close else ""
        raise InvalidInputError(f"unknown dataset {name!r}; available: {list_datasets()}.{hint}")
    entry = _REGISTRY[key]
    if variant not in VARIANTS:
        raise InvalidInputError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if variant not in entry.variants:
        raise InvalidInputError(
            f"dataset {key!r} has no {variant!r} variant (it has {list(entry.variants)}); "
            "the paper variant exists for " + ", ".join(
                n for n, e in sorted(_REGISTRY.items()) if "paper" in e.variants))
    ds = entry.loader(variant=variant, data_home=data_home, download=download)
    log.debug("loaded %r", ds)
    return ds


# ----------------------------------------------------------------------------- files
def sha256_file(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@lru_cache(maxsize=1)
def _provenance() -> dict:
    path = DATA_DIR / "provenance.json"
    if not path.is_file():
        raise DatasetNotAvailableError(
            f"{path} is missing: the groupcf installation is incomplete; reinstall groupcf")
    return json.loads(path.read_text(encoding="utf-8"))


def provenance(filename: str) -> dict:
    """The provenance record of a bundled file (see ``data/PROVENANCE.md``).

    Parameters
    ----------
    filename : str
        A file in ``groupcf/datasets/data/``.

    Returns
    -------
    dict
        Its original source, distribution, licence, the changes made, row count and
        sha256.

    Raises
    ------
    DatasetNotAvailableError
        No record for ``filename`` (or the installation lacks ``provenance.json``).

    Examples
    --------
    >>> rec = gcf.datasets.provenance("compas.csv.gz")
    >>> rec["dataset"], rec["rows"], len(rec["sha256"])
    ('compas', 7214, 64)
    """
    files = _provenance()["files"]
    if filename not in files:
        raise DatasetNotAvailableError(f"no provenance record for bundled file {filename!r}")
    return files[filename]


def bundled_file(filename: str) -> Path:
    """Path of a bundled file after checking its sha256 against ``provenance.json``."""
    path = DATA_DIR / filename
    if not path.is_file():
        raise DatasetNotAvailableError(
            f"bundled data file {path} is missing: the groupcf installation is incomplete; "
            "reinstall groupcf")
    expected = provenance(filename)["sha256"]
    actual = sha256_file(path)
    if actual != expected:
        raise DatasetChecksumError(
            f"bundled data file {path} has sha256 {actual}, but provenance.json records "
            f"{expected}: the file was modified or corrupted; reinstall groupcf (or rebuild "
            "the bundle with tools/bundle_datasets.py in the repository)")
    return path


def read_bundled(filename: str, reader: Callable[[Path], pd.DataFrame]) -> pd.DataFrame:
    """Verify a bundled file, parse it with ``reader`` (parsed once per process), copy."""
    path = bundled_file(filename)
    return _parsed(str(path), provenance(filename)["sha256"], reader).copy()


@lru_cache(maxsize=16)
def _parsed(path: str, sha: str, reader) -> pd.DataFrame:
    return reader(Path(path))


def data_home_dir(data_home=None) -> Path | None:
    """The data home: ``data_home`` if given, else ``$GROUPCF_DATA``, else ``None``."""
    if data_home is None:
        env = os.environ.get(ENV_DATA_HOME, "").strip()
        if not env:
            return None
        where, path = f"${ENV_DATA_HOME}", Path(env).expanduser()
    else:
        where, path = "data_home", Path(data_home).expanduser()
    if not path.is_dir():
        raise DatasetNotAvailableError(f"{where} = {str(path)!r} is not an existing folder")
    return path


def cache_dir() -> Path:
    """Folder for downloaded files: ``$XDG_CACHE_HOME/groupcf`` (``~/.cache/groupcf``).

    Returns
    -------
    pathlib.Path
        The folder (not created here).

    Examples
    --------
    >>> gcf.datasets.cache_dir().name
    'groupcf'
    """
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "groupcf"


def find_file(folder: Path | None, names: Sequence[str]) -> Path | None:
    """First of ``names`` that exists in ``folder`` (``None`` if none or no folder)."""
    if folder is None:
        return None
    for n in names:
        p = folder / n
        if p.is_file():
            return p
    return None


def check_known_file(path: Path, known_sha256: str, what: str) -> None:
    """Warn (:class:`GroupCFWarning`) when a user-supplied file differs from the published one."""
    actual = sha256_file(path)
    if actual != known_sha256:
        warnings.warn(f"{path} differs from the published {what} (sha256 {actual}, expected "
                      f"{known_sha256}); results may not match the paper", GroupCFWarning, stacklevel=3)


def download_file(url: str, dest: Path, timeout: float = 60.0) -> Path:
    """Download ``url`` to ``dest`` (atomically: a temporary file is renamed)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    log.info("downloading %s", url)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            while True:
                chunk = resp.read(1 << 16)
                if not chunk:
                    break
                out.write(chunk)
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return dest


# ----------------------------------------------------------------------------- helpers
def categorical(values, categories: Sequence, *, ordered: bool = False, name: str = "") -> pd.Categorical:
    """``pd.Categorical`` with declared categories; raises if a value is not one of them."""
    values = pd.Series(values)
    cat = pd.Categorical(values, categories=list(categories), ordered=ordered)
    bad = pd.isna(cat) & values.notna().to_numpy()
    if bad.any():
        unknown = sorted(set(values[bad].astype(str)))[:10]
        raise InvalidInputError(f"column {name!r}: unexpected values {unknown}; "
                                f"expected one of {list(categories)}")
    if pd.isna(cat).any():
        raise InvalidInputError(f"column {name!r} has missing values")
    return cat


def map_codes(values: pd.Series, mapping: dict, name: str) -> pd.Series:
    """Map raw codes to readable labels; raises on a code missing from ``mapping``."""
    out = values.map(mapping)
    bad = out.isna() & values.notna()
    if bad.any():
        raise InvalidInputError(f"column {name!r}: unknown codes {sorted(set(values[bad].astype(str)))[:10]}; "
                                f"known: {list(mapping)}")
    return out


def binary_label(values, name: str) -> pd.Series:
    """An ``int64`` 0/1 Series (checks that only 0 and 1 occur)."""
    s = pd.Series(values).astype(np.int64)
    if not s.isin([0, 1]).all():
        raise InvalidInputError(f"label {name!r} must be 0/1")
    s.name = name
    return s
