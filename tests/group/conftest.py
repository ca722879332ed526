"""Fixtures of the group tests: the two-triangles case (design: any two types of a triangle
can share a counterfactual with Tmax = 2, no three can, and types of different triangles
cannot), on which the master LP bound is fractional."""
import pandas as pd
import pytest


@pytest.fixture(scope="module")
def triangles(group_ref):
    S, X, y = group_ref.two_triangles()
    models = group_ref.fixed_models(X, y)
    for pipe in models.values():
        assert (pipe.predict(S) == 0).all()
        assert pipe.predict(pd.DataFrame({c: pd.Categorical([1], categories=[0, 1]) for c in S})).item() == 1
    return S, models
