"""Benchmark datasets for counterfactual explanations.

>>> import groupcf as gcf
>>> ds = gcf.datasets.load("compas")                  # bundled, readable raw features
>>> ds
Dataset(name='compas', variant='default', shape=(6172, 8), positive_rate=0.545)
>>> X_tr, X_te, y_tr, y_te = ds.split(test_size=0.5, random_state=0)
>>> gcf.datasets.load("german", variant="paper")     # the one-for-many paper's encoding
Dataset(name='german', variant='paper', shape=(1000, 20), positive_rate=0.700)

Datasets (``list_datasets()``): ``compas``, ``german``, ``adult``, ``credit`` (bundled,
with provenance, licence and sha256 in ``data/PROVENANCE.md``) and ``students`` (read
from ``data_home`` / ``$GROUPCF_DATA`` or downloaded from UCI). ``y`` is always 1 for the
favourable outcome. ``variant="paper"`` (compas, german, students) reproduces the
discretised encodings of Lodi & Ramírez-Ayerbe (arXiv 2402.09473): 15, 59 and 85
expanded columns; see ``PAPER_NOTES.md`` in this folder for the bins and the corrected
slips of the authors' preprocessing.
"""
from ..exceptions import DatasetNotAvailableError
from . import adult, compas, credit, german, students  # noqa: F401  (registers loaders)
from ._core import (
                    DATA_DIR,
                    ENV_DATA_HOME,
                    VARIANTS,
                    Dataset,
                    DatasetChecksumError,
                    cache_dir,
                    describe_datasets,
                    list_datasets,
                    load,
                    provenance,
)

__all__ = ["load", "list_datasets", "describe_datasets", "Dataset", "DatasetChecksumError",
           "DatasetNotAvailableError", "provenance", "cache_dir", "DATA_DIR", "ENV_DATA_HOME",
           "VARIANTS"]
