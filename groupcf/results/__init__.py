"""The result family (:class:`~groupcf.results.base.ResultBase`) of every groupcf method."""
from .base import ResultBase, Stats, ValidationReport
from .explanation import Explanation
from .global_actions import GlobalExplanation
from .group import GroupExplanation
from .sequence import SequenceExplanation
from .sets import ExplanationSet, GroupExplanationSet

__all__ = ["ResultBase", "ValidationReport", "Stats", "Explanation", "GroupExplanation", "SequenceExplanation",
           "ExplanationSet", "GroupExplanationSet", "GlobalExplanation"]
