"""Shared fixtures. The independent references (brute force, toy data) live in
``tests/reference/`` and reach the tests only through these fixtures; collection-time values
(backend parametrisation, the paper's data folder) are in ``tests/params.py``."""
from __future__ import annotations

import pytest

from tests.reference import geco as _geco
from tests.reference import group as _group
from tests.reference import mace as _mace


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
