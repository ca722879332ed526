"""Global counterfactual actions: ``gcf.explain_global`` (a few shared actions that
explain a whole rejected population, with certified coverage bounds)."""
from ..results.global_actions import GlobalExplanation
from .actions import Action, ActionSpace
from .api import GlobalOptions, explain_global

__all__ = ["Action", "ActionSpace", "GlobalExplanation", "GlobalOptions", "explain_global"]
