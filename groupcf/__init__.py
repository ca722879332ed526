"""groupcf — optimization-based counterfactual explanations.

* ``gcf.explain_group(S, model, Tmax)`` — one-for-many group counterfactuals (column
  generation / compact MIP), certified optimal;
* ``gcf.explain(x, model, method="mace")`` — exact nearest counterfactual of one instance
  (or ``method="geco"``, a genetic search with ``gcf.plaf`` constraints);
* ``gcf.explain_global(S, model, Tmax, k)`` — a few shared actions explaining a whole
  rejected population, with certified coverage bounds;
* ``gcf.metrics`` — coverage, validity, proximity, sparsity, diversity of any method's output;
* ``gcf.FeatureSpace`` — raw features <-> expanded 0/1 space, with actionability;
* ``gcf.datasets.load(name)`` — bundled benchmark datasets;
* ``groupcf.embeddings`` / ``groupcf.solvers`` — trained models as MIP constraints on
  HiGHS (default), Gurobi or Pyomo.
"""
from __future__ import annotations

import logging

from . import datasets, embeddings, exceptions, solvers
from .features import Feature, FeatureSpace, InputDomain
from .group import explain_group
from .results.group import GroupExplanation
from .results.explanation import Explanation
from .single import explain
from .sequential import explain_sequence
from .global_actions import explain_global
from .results.global_actions import GlobalExplanation
from .batch import ExplanationSet, explain_groups, explain_many
from . import metrics, plaf
from .solvers.base import Status

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = ["explain_group", "GroupExplanation", "explain", "Explanation", "explain_sequence", "explain_global",
           "GlobalExplanation",
           "explain_many", "explain_groups", "ExplanationSet", "FeatureSpace", "Feature", "InputDomain", "Status",
           "datasets", "embeddings", "solvers", "exceptions", "metrics", "plaf", "__version__"]
