"""Formulations written once against the backend interface: the counterfactual block,
distances, the nearest counterfactual (MACE), the completion service."""
