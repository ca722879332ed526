"""groupcf — optimization-based counterfactual explanations.

* ``gcf.explain_group(S, model, Tmax=...)`` — one-for-many group counterfactuals (column
  generation / compact MIP), certified optimal;
* ``gcf.explain(x, model, method="mace")`` — exact nearest counterfactual of one instance
  (or ``method="geco"``, a genetic search with ``gcf.plaf`` constraints, or
  ``method="pso"``, a mixed-discrete particle swarm);
* ``gcf.explain_sequence`` — sequential counterfactuals (which actions, in which order);
* ``gcf.explain_many`` / ``gcf.explain_groups`` — populations, on joblib or Dask;
* ``gcf.explain_global(S, model, Tmax=..., k=...)`` — a few shared actions explaining a whole
  rejected population, with certified coverage bounds;
* ``gcf.metrics`` — coverage, validity, proximity, sparsity, diversity of any method's output;
* ``gcf.FeatureSpace`` — raw features <-> expanded 0/1 space, with actionability;
* ``gcf.datasets.load(name)`` — bundled benchmark datasets;
* ``groupcf.embeddings`` / ``groupcf.solvers`` — trained models as MIP constraints on
  HiGHS (default), Gurobi or Pyomo.

Every result shares one interface (:class:`groupcf.results.base.ResultBase`): ``status``,
``is_optimal``, ``lower_bound``, ``solve_time``, ``summary()``, ``to_dict``/``from_dict``/
``to_json``, ``to_frame()``, ``plot()`` and ``validate()`` → :class:`ValidationReport`.
"""
import logging as _logging
from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from . import datasets, embeddings, exceptions, solvers
from .features import Feature, FeatureSpace, InputDomain
from .group import ColgenOptions, CompactOptions, explain_group
from .results.base import ValidationReport
from .results.group import GroupExplanation
from .results.explanation import Explanation
from .results.sets import ExplanationSet, GroupExplanationSet
from .results.sequence import SequenceExplanation
from .single import MaceOptions, explain
from .single.geco import GeCoOptions
from .single.pso import PSOOptions
from .sequential import SequenceOptions, explain_sequence
from .global_actions import GlobalOptions, explain_global
from .results.global_actions import GlobalExplanation
from .batch import explain_groups, explain_many
from . import metrics, plaf
from .solvers.base import Status

try:
    __version__ = _version("groupcf")
except _PackageNotFoundError:  # pragma: no cover - running from a source tree without installing
    __version__ = "0+unknown"

_logging.getLogger(__name__).addHandler(_logging.NullHandler())

__all__ = ["explain_group", "GroupExplanation", "explain", "Explanation", "explain_sequence",
           "explain_global", "GlobalExplanation", "GlobalOptions",
           "explain_many", "explain_groups", "ExplanationSet", "GroupExplanationSet", "ValidationReport",
           "SequenceExplanation", "SequenceOptions",
           "MaceOptions", "GeCoOptions", "PSOOptions", "ColgenOptions", "CompactOptions",
           "FeatureSpace", "Feature", "InputDomain", "Status",
           "datasets", "embeddings", "solvers", "exceptions", "metrics", "plaf", "__version__"]
