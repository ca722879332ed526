r"""PLAF — plausibility and feasibility constraints for counterfactuals, as Python.

GeCo (Schleich, Geng, Zhang & Suciu, VLDB 2021) lets the user say which counterfactuals
are *plausible* (look like real data) and *feasible* (reachable by the person) in a small
constraint language, PLAF. This module is a Python version of it::

    import groupcf as gcf
    p = gcf.plaf

    rules = [
        p.group("education", "occupation"),        # sampled together, as tuples seen in the data
        p.fixed("race", "sex"),                     # x_cf.race == x.race, x_cf.sex == x.sex
        p.increasing("age"),                        # x_cf.age >= x.age
        p.rule(p.If(p.cf("education") > p.x("education")),       # more education ...
               p.Then(p.cf("age") >= p.x("age") + 4)),           # ... takes four years
        p.cf("hours_per_week") <= 60,               # a bare constraint always holds
        p.rule(p.If(p.cf("marital_status") != p.x("marital_status")),
               p.Then(p.cf("relationship").isin(["Husband", "Wife", "Unmarried"]))),
    ]
    exp = gcf.explain(x, pipe, method="geco", data=X_train, constraints=rules)

Vocabulary
----------
* ``cf(F)`` is the counterfactual's value of feature ``F``, ``x(F)`` the explained
  instance's. Constants are raw values (``"Bachelors"``, ``40``).
* Comparisons ``== != < <= > >=`` and ``.isin([...])`` build conditions; combine them with
  ``&``, ``|`` and ``~`` (not ``and`` / ``or`` / ``not``). Order comparisons need an
  ordered feature: numeric, binary, or ordinal (an ordered pandas ``Categorical``,
  compared by category order). ``+ - *`` apply to numeric features.
* ``rule(If(cond), Then(c1, c2, ...))``: whenever ``cond`` holds, so must every ``c``.
  Each consequence constrains one counterfactual feature, its *target*:
  ``cf(F) op expression`` (or ``cf(F).isin(...)``). ``rule(c)`` or a bare ``c`` in the
  list holds unconditionally.
* ``fixed(F, ...)`` is ``cf(F) == x(F)``, ``increasing(F, ...)`` is ``cf(F) >= x(F)``,
  ``decreasing(F, ...)`` is ``cf(F) <= x(F)``.
* ``group(F, G, ...)``: GeCo changes these features jointly, sampling their values as
  one tuple from the data (e.g. a city with its zip code).

Semantics and enforcement
-------------------------
A rule makes its target depend on every counterfactual feature it reads (in the IF part
or on the right-hand side). :class:`Constraints` checks at construction that these
dependencies are *acyclic* — a target that depends on itself through other rules raises
:class:`PLAFCycleError` naming the cycle (a rule reading its own target is allowed; the
final check below settles it).

GeCo enforces the rules with an **action cascade**: after a candidate is made (sampled,
mutated or crossed over), the rules are visited in topological order of their targets;
where a rule's IF part holds and its THEN part does not, the target is *repaired* — set
to the instance's own value if that satisfies the consequence, else to the closest value
of the active domain that does (``>=``: the smallest value above the bound, ``<=``: the
largest below it, ``==``: that value, ``!=`` / ``isin``: the most frequent allowed value).
Repairs respect the target's unconditional constraints (``fixed``, ``increasing``, ...).
Because targets come after everything they read, one pass suffices for rules that do not
read their own target. Every rule is then checked once more and a candidate that still
violates one is dropped: **no counterfactual returned by GeCo violates a PLAF rule.**
(``Constraints.check_rows`` re-checks returned rows independently, on raw values.)

A repair changes one feature; it does not re-sample the rest of a ``group`` the target
belongs to.
"""
from .compiled import BoundConstraints, Candidates, FeatureTable
from .language import (
                       Cond,
                       Consequence,
                       Expr,
                       Group,
                       If,
                       PLAFCycleError,
                       PLAFError,
                       Rule,
                       Then,
                       cf,
                       decreasing,
                       fixed,
                       group,
                       increasing,
                       rule,
                       x,
)
from .program import Constraints

__all__ = ["cf", "x", "If", "Then", "rule", "group", "fixed", "increasing", "decreasing",
           "Constraints", "Rule", "Group", "PLAFError", "PLAFCycleError", "Expr", "Cond", "Consequence",
           "BoundConstraints", "Candidates", "FeatureTable"]
