"""The search box and the mixed-discrete snapping (groupcf.single.pso.box): valid, actionable
encodings; tolerances in MADs with scale="mad"."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import groupcf as gcf
from groupcf.single.pso.box import Box


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(row=st.integers(0, 399), eps=st.floats(0.01, 1.0), seed=st.integers(0, 10**6))
def test_snapping_keeps_encodings_valid_and_actionable(pso_rf, row, eps, seed):
    X, _, pipe, _ = pso_rf
    space = pipe[0]
    z0 = space.transform(X.iloc[[row]])[0]
    active = np.array([l for l, f in enumerate(space) if not f.immutable])
    box = Box(space, z0, active, eps, 1e-3)
    rng = np.random.default_rng(seed)
    P = box.snap(rng.uniform(-0.5, 1.5, size=(40, box.dim)))
    assert np.all(box.lo - 1e-12 <= P) and np.all(box.hi + 1e-12 >= P)
    Z = box.full(P)
    raw = space.inverse_transform(Z)
    for f in space:
        block = Z[:, f.columns]
        if f.encoding == "onehot":
            assert np.all(block.sum(axis=1) == 1) and set(np.unique(block)) <= {0.0, 1.0}
        elif f.encoding == "binary":
            assert set(np.unique(block)) <= {0.0, 1.0}
        elif f.integer:
            v = f.low + block[:, 0] * (f.high - f.low)
            assert np.allclose(v, np.round(v), atol=1e-9)
    # round trip: the decoded rows encode back to the same point
    assert np.allclose(space.transform(raw), Z, atol=1e-9)
    xc, C = space.codes(X.iloc[[row]])[0], space.codes(raw)
    for l, f in enumerate(space):
        if f.immutable:
            assert np.all(C[:, l] == xc[l])
        if f.increase_only:
            assert np.all(C[:, l] >= xc[l] - 1e-12)


def test_mad_scale_measures_tolerance_and_separation_in_mads(pso_line):
    """With scale="mad", change_tol and min_separation are in MADs: on a feature whose MAD
    is 1/500 of its range, a change of 0.2 MAD survives snapping (it is 4e-4 of the
    range, below the range-scaled change_tol 1e-3) and two points 0.5 MAD apart are
    separated (0.001 of the range, below the range-scaled min_separation 0.01)."""
    from groupcf.single.pso.params import PSOOptions
    from groupcf.single.pso.select import distances

    space = pso_line[0]
    z0 = np.array([0.2, 0.5, 0.5])
    mad = 1.0 / 500
    scale = np.full(3, 1.0 / mad)                   # _mad_scale's form: range / MAD (z units)
    prm_r, prm_m = PSOOptions(scale="range"), PSOOptions().validate()        # "mad" is the default
    assert (prm_r.change_tol, prm_r.min_separation) == (1e-3, 0.01)
    assert (prm_m.change_tol, prm_m.min_separation) == (1e-4, 0.1)
    moved = np.array([[0.2 + 0.2 * mad, 0.5, 0.5]])
    rng_box = Box(space, z0, np.arange(3), 0.25, prm_r.change_tol)
    mad_box = Box(space, z0, np.arange(3), 0.25, prm_m.change_tol, scale, mad_units=True)
    assert rng_box.snap(moved)[0, 0] == pytest.approx(0.2)                  # snapped back
    assert mad_box.snap(moved)[0, 0] == pytest.approx(0.2 + 0.2 * mad)      # kept
    a, b = np.array([[0.3, 0.5, 0.5]]), np.array([0.3 + 0.5 * mad, 0.5, 0.5])
    _, sep_r = distances(rng_box, a, b, 1.0, 1.0)
    _, sep_m = distances(mad_box, a, b, 1.0, 1.0)
    assert sep_r[0] < prm_r.min_separation and sep_m[0] == pytest.approx(0.5)
    assert sep_m[0] > prm_m.min_separation
    with pytest.raises(gcf.exceptions.InvalidInputError, match="scale"):
        PSOOptions(scale="z").validate()


def test_mad_scale_counts_a_zero_mad_as_one_raw_unit():
    """range / MAD per continuous feature; a zero MAD is one raw unit, as in the reported
    metric (groupcf.metrics_hd.mad), so its scale is the range itself."""
    import pandas as pd

    from groupcf.single.pso import _mad_scale

    X = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0], "b": [0.0, 0.0, 0.0, 0.0, 0.0, 20.0, 50.0]})
    space = gcf.FeatureSpace(numeric="passthrough").fit(X)
    scale = _mad_scale(space, space.transform(X))
    assert scale[0] == pytest.approx(10.0 / 2.0)          # MAD of a: 2; range 10
    assert scale[1] == pytest.approx(50.0)                # zero MAD: 1 raw unit, range 50
    assert scale[1] == pytest.approx(50.0 / gcf.metrics.mad(X)["b"])
