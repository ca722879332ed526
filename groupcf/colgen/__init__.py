"""A generic column-generation engine: restricted masters written once against the solver
backend interface (:mod:`~groupcf.colgen.masters`: set cover, budgeted maximum coverage,
their integer versions with cost tie-breaks), a column pool (:mod:`~groupcf.colgen.pool`),
pricing levels tried cheapest first (:mod:`~groupcf.colgen.levels`) and the driver loop
(:mod:`~groupcf.colgen.driver`). Algorithms instantiate it with their own columns and
pricing levels: global actions (:mod:`groupcf.global_actions.search`) and one-for-many
groups (:mod:`groupcf.group.colgen`)."""
from .driver import CGRun, column_generation, sync_master
from .levels import LevelStats, PoolLevel, Priced, PricingContext, PricingLevel
from .masters import Duals, IntegerResult, LPResult, MaxCoverageMaster, SetCoverMaster, solve_integer_master
from .pool import Column, ColumnPool

__all__ = ["CGRun", "Column", "ColumnPool", "Duals", "IntegerResult", "LPResult", "LevelStats",
           "MaxCoverageMaster", "PoolLevel", "Priced", "PricingContext", "PricingLevel", "SetCoverMaster",
           "column_generation", "solve_integer_master", "sync_master"]
