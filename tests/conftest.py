"""Shared fixtures. The independent references (brute force, toy data) live in
``tests/reference/`` and reach the tests only through these fixtures; collection-time values
(backend parametrisation, the paper's data folder) are in ``tests/params.py``."""
from __future__ import annotations

import os

# One thread per process, set before numpy / scikit-learn / xgboost / lightgbm / torch load their
# BLAS and OpenMP runtimes: `make test` runs two xdist workers on two cores, and a worker whose
# HistGradientBoosting or MLP fit spins up threads on cores the other worker uses is many times
# slower (a 240-row HistGradientBoosting fit: 0.5 s with one thread, 10 s with the default on a
# busy 2-core machine). An explicit setting in the environment is kept.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402

from tests.reference import geco as _geco  # noqa: E402
from tests.reference import group as _group  # noqa: E402
from tests.reference import mace as _mace  # noqa: E402


@pytest.fixture(scope="session")
def group_ref():
    """Group / nearest-l0 references (``tests/reference/group.py``): ``brute_force_group``,
    ``coverable_sets``, ``all_points``, ``brute_force_nearest_l0``, ``real_logit``,
    ``random_case``, ``two_triangles``, ``fixed_models``."""
    return _group


@pytest.fixture(scope="session")
def mace_ref():
    """MACE references (``tests/reference/mace.py``): ``data``, ``pipe``, ``all_points``,
    ``brute_force``, ``matches_brute_force``, ``check_cf``, ``allowed``, ``TOL``, ``ORD``."""
    return _mace


@pytest.fixture(scope="session")
def geco_toy():
    """GeCo / PLAF toy data (``tests/reference/geco.py``): ``toy``, ``toy_pipe``,
    ``rejected``, ``EDU``, ``JOBS``."""
    return _geco


@pytest.fixture(scope="session")
def compas_paper():
    import groupcf as gcf

    return gcf.datasets.load("compas", variant="paper")


@pytest.fixture(scope="session")
def german_binned():
    """German credit, a logistic regression where only the binned numerics ``duration`` and
    ``credit_amount`` may change (every answer is a bin): ``(pipe, rejected test rows, X_train)``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    import groupcf as gcf

    ds = gcf.datasets.load("german")
    X_tr, X_te, y_tr, _ = ds.split(test_size=0.3, random_state=0)
    fixed = [c for c in X_tr.columns if c not in ("duration", "credit_amount")]
    pipe = make_pipeline(gcf.FeatureSpace(immutable=fixed), LogisticRegression(max_iter=2000)).fit(X_tr, y_tr)
    return pipe, X_te[pipe.predict(X_te) == 0], X_tr
