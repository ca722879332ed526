"""Formulations of the group method: the restricted master, the pricing MIP, seed pricing, conflicts."""
