"""Consequence-aware sequential counterfactuals (Naumann & Ntoutsi, ECML-PKDD 2021):
an action language, a vectorised BRKGA with non-dominated sorting, and a certified lower
bound on the cost (a MIP on the model's embedding)."""
from groupcf.sequential.actions import (
                                        AbsChange,
                                        Action,
                                        ActionSet,
                                        Condition,
                                        Constant,
                                        Cost,
                                        CustomCost,
                                        DependencyGraph,
                                        Nonlinear,
                                        RelativeSquared,
                                        StateView,
                                        make_cost,
)
from groupcf.sequential.api import SequenceOptions, explain_sequence
from groupcf.sequential.encoding import OneHotEncoding
from groupcf.sequential.result import SequenceExplanation, plot_flow

__all__ = [
                                        "AbsChange",
                                        "Action",
                                        "ActionSet",
                                        "Condition",
                                        "Constant",
                                        "Cost",
                                        "CustomCost",
                                        "DependencyGraph",
                                        "Nonlinear",
                                        "OneHotEncoding",
                                        "RelativeSquared",
                                        "SequenceExplanation",
                                        "SequenceOptions",
                                        "StateView",
                                        "explain_sequence",
                                        "make_cost",
                                        "plot_flow",
]
