"""Data / feature-space layer: raw features <-> expanded 0/1 space, input domains."""
from .domain import InputDomain
from .space import Feature, FeatureSpace
from .validation import validate_instance

__all__ = ["Feature", "FeatureSpace", "InputDomain", "validate_instance"]
