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
from __future__ import annotations

import numbers
import operator
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .exceptions import InvalidInputError

__all__ = ["cf", "x", "If", "Then", "rule", "group", "fixed", "increasing", "decreasing",
           "Constraints", "Rule", "Group", "PLAFError", "PLAFCycleError"]


class PLAFError(InvalidInputError):
    """A PLAF constraint is malformed or does not fit the data (unknown feature, order
    comparison on an unordered categorical, ...)."""


class PLAFCycleError(PLAFError):
    """The rules' dependencies are cyclic; ``cycle`` lists the features, first == last."""

    def __init__(self, message: str, cycle: Sequence[str]):
        super().__init__(message)
        self.cycle = list(cycle)


_ORDER_OPS = {"<", "<=", ">", ">="}
_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}
_FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul}


# ====================================================================== expressions
def _bool_error(self):
    raise PLAFError(f"the PLAF expression {self!r} has no truth value: combine conditions "
                    "with &, |, ~ (not and / or / not), and pass rules to Constraints / "
                    "explain(constraints=...) instead of testing them")


class Expr:
    """A value in a PLAF constraint: a feature reference, a constant, or arithmetic."""

    __hash__ = object.__hash__          # keep identity hashing despite __eq__ overloading
    __bool__ = _bool_error

    def _cmp(self, op, other) -> "Compare":
        return Compare(op, self, _wrap(other))

    def __eq__(self, other): return self._cmp("==", other)          # noqa: E704
    def __ne__(self, other): return self._cmp("!=", other)          # noqa: E704
    def __lt__(self, other): return self._cmp("<", other)           # noqa: E704
    def __le__(self, other): return self._cmp("<=", other)          # noqa: E704
    def __gt__(self, other): return self._cmp(">", other)           # noqa: E704
    def __ge__(self, other): return self._cmp(">=", other)          # noqa: E704
    def __add__(self, other): return Arith("+", self, _wrap(other))   # noqa: E704
    def __radd__(self, other): return Arith("+", _wrap(other), self)  # noqa: E704
    def __sub__(self, other): return Arith("-", self, _wrap(other))   # noqa: E704
    def __rsub__(self, other): return Arith("-", _wrap(other), self)  # noqa: E704
    def __mul__(self, other): return Arith("*", self, _wrap(other))   # noqa: E704
    def __rmul__(self, other): return Arith("*", _wrap(other), self)  # noqa: E704
    def __neg__(self): return Arith("*", Const(-1), self)              # noqa: E704

    def isin(self, values: Iterable) -> "InSet":
        """Condition: the value is one of ``values`` (raw values)."""
        return InSet(self, tuple(values), negate=False)

    def notin(self, values: Iterable) -> "InSet":
        """Condition: the value is none of ``values`` (raw values)."""
        return InSet(self, tuple(values), negate=True)

    def refs(self) -> set[tuple[str, str]]:
        """``{(side, feature)}`` read by this expression (side ``"cf"`` or ``"x"``)."""
        return set()


@dataclass(frozen=True, eq=False, repr=False)
class Ref(Expr):
    side: str        # "cf" or "x"
    name: str

    def refs(self):
        return {(self.side, self.name)}

    def __repr__(self):
        return f"{self.side}({self.name!r})"


@dataclass(frozen=True, eq=False, repr=False)
class Const(Expr):
    value: object

    def __repr__(self):
        return repr(self.value)


@dataclass(frozen=True, eq=False, repr=False)
class Arith(Expr):
    op: str
    a: Expr
    b: Expr

    def refs(self):
        return self.a.refs() | self.b.refs()

    def __repr__(self):
        return f"({self.a!r} {self.op} {self.b!r})"


def _wrap(v) -> Expr:
    if isinstance(v, Expr):
        return v
    if isinstance(v, Cond):
        raise PLAFError(f"a condition ({v!r}) cannot be used as a value")
    return Const(v)


def cf(name: str) -> Ref:
    """The counterfactual's value of feature ``name`` (GeCo's ``x_cf.name``)."""
    return Ref("cf", _name(name))


def x(name: str) -> Ref:
    """The explained instance's value of feature ``name`` (GeCo's ``x.name``)."""
    return Ref("x", _name(name))


def _name(name) -> str:
    if not isinstance(name, str) or not name:
        raise PLAFError(f"feature names are non-empty strings, got {name!r}")
    return name


# ====================================================================== conditions
class Cond:
    """A boolean condition over ``cf`` / ``x`` values."""

    __bool__ = _bool_error

    def __and__(self, other): return And((self, _cond(other)))   # noqa: E704
    def __or__(self, other): return Or((self, _cond(other)))     # noqa: E704
    def __invert__(self): return Not(self)                       # noqa: E704

    def refs(self) -> set[tuple[str, str]]:
        raise NotImplementedError


def _cond(c) -> Cond:
    if not isinstance(c, Cond):
        raise PLAFError(f"expected a PLAF condition (a comparison such as cf('age') >= x('age')), got {c!r}")
    return c


@dataclass(frozen=True, eq=False, repr=False)
class Compare(Cond):
    op: str
    lhs: Expr
    rhs: Expr

    def refs(self):
        return self.lhs.refs() | self.rhs.refs()

    def __repr__(self):
        return f"{self.lhs!r} {self.op} {self.rhs!r}"


@dataclass(frozen=True, eq=False, repr=False)
class InSet(Cond):
    expr: Expr
    values: tuple
    negate: bool = False

    def refs(self):
        return self.expr.refs()

    def __repr__(self):
        return f"{self.expr!r}.{'notin' if self.negate else 'isin'}({list(self.values)!r})"


@dataclass(frozen=True, eq=False, repr=False)
class And(Cond):
    parts: tuple

    def refs(self):
        return set().union(*(p.refs() for p in self.parts))

    def __repr__(self):
        return "(" + " & ".join(map(repr, self.parts)) + ")"


@dataclass(frozen=True, eq=False, repr=False)
class Or(Cond):
    parts: tuple

    def refs(self):
        return set().union(*(p.refs() for p in self.parts))

    def __repr__(self):
        return "(" + " | ".join(map(repr, self.parts)) + ")"


@dataclass(frozen=True, eq=False, repr=False)
class Not(Cond):
    part: Cond

    def refs(self):
        return self.part.refs()

    def __repr__(self):
        return f"~{self.part!r}"


# ====================================================================== rules
@dataclass(frozen=True, eq=False)
class _If:
    condition: Cond


@dataclass(frozen=True, eq=False)
class _Then:
    consequences: tuple


def If(*conditions: Cond) -> _If:  # noqa: N802 - PLAF keyword
    """The IF part of a rule; several conditions must all hold."""
    if not conditions:
        raise PLAFError("If() needs at least one condition")
    conds = tuple(_cond(c) for c in conditions)
    return _If(conds[0] if len(conds) == 1 else And(conds))


def Then(*consequences: Cond) -> _Then:  # noqa: N802 - PLAF keyword
    """The THEN part of a rule: one or more ``cf(F) op expression`` constraints."""
    if not consequences:
        raise PLAFError("Then() needs at least one consequence")
    return _Then(tuple(_consequence(c) for c in consequences))


@dataclass(frozen=True, eq=False)
class Consequence:
    """``cf(target) op rhs`` (``op`` in ``== != < <= > >=``), or ``cf(target)`` in / not
    in ``values``."""

    target: str
    op: str
    rhs: Expr | None = None
    values: tuple | None = None

    @property
    def cond(self) -> Cond:
        if self.values is not None:
            return InSet(cf(self.target), self.values, negate=self.op == "notin")
        return Compare(self.op, cf(self.target), self.rhs)

    def refs(self) -> set[tuple[str, str]]:
        return self.cond.refs()

    def __repr__(self):
        return repr(self.cond)


def _is_cf_ref(e) -> bool:
    return isinstance(e, Ref) and e.side == "cf"


def _consequence(c) -> Consequence:
    if isinstance(c, Consequence):
        return c
    if isinstance(c, InSet) and _is_cf_ref(c.expr):
        return Consequence(c.expr.name, "notin" if c.negate else "isin", values=c.values)
    if isinstance(c, Compare):
        if _is_cf_ref(c.lhs):
            return Consequence(c.lhs.name, c.op, rhs=c.rhs)
        if _is_cf_ref(c.rhs):
            return Consequence(c.rhs.name, _FLIP[c.op], rhs=c.lhs)
    raise PLAFError(
        f"a THEN part must constrain one counterfactual feature, as cf(F) op expression or "
        f"cf(F).isin([...]); got {c!r}")


@dataclass(frozen=True, eq=False)
class Rule:
    """``IF condition THEN consequences`` (``condition`` None: always)."""

    condition: Cond | None
    consequences: tuple
    label: str | None = None

    @property
    def targets(self) -> list[str]:
        return [c.target for c in self.consequences]

    def reads(self) -> set[str]:
        """Counterfactual features the rule reads (condition and right-hand sides)."""
        names = {n for s, n in (self.condition.refs() if self.condition is not None else ()) if s == "cf"}
        for c in self.consequences:
            if c.rhs is not None:
                names |= {n for s, n in c.rhs.refs() if s == "cf"}
        return names

    def features(self) -> set[str]:
        out = {n for _, n in (self.condition.refs() if self.condition is not None else ())}
        for c in self.consequences:
            out |= {n for _, n in c.refs()}
        return out

    def __repr__(self):
        if self.label:
            return self.label
        then = ", ".join(map(repr, self.consequences))
        return f"IF {self.condition!r} THEN {then}" if self.condition is not None else then


@dataclass(frozen=True, eq=False)
class Group:
    """Features changed jointly: GeCo samples them as one tuple of values from the data."""

    features: tuple

    def __repr__(self):
        return f"group({', '.join(map(repr, self.features))})"


def rule(*parts) -> Rule:
    """``rule(If(cond), Then(c, ...))``, ``rule(Then(c, ...))`` or ``rule(c, ...)``."""
    cond, cons = None, []
    for part in parts:
        if isinstance(part, _If):
            if cond is not None:
                raise PLAFError("a rule has at most one If(...)")
            cond = part.condition
        elif isinstance(part, _Then):
            cons.extend(part.consequences)
        else:
            cons.append(_consequence(part))
    if not cons:
        raise PLAFError("a rule needs a Then(...) part (or bare consequences)")
    return Rule(cond, tuple(cons))


def group(*names: str) -> Group:
    """Features changed jointly (values sampled as a tuple from the data)."""
    if len(names) < 1:
        raise PLAFError("group() needs at least one feature")
    names = tuple(_name(n) for n in names)
    if len(set(names)) != len(names):
        raise PLAFError(f"group{names} repeats a feature")
    return Group(names)


def fixed(*names: str) -> Rule:
    """``cf(F) == x(F)`` for every named feature (immutable)."""
    return _per_feature("fixed", "==", names)


def increasing(*names: str) -> Rule:
    """``cf(F) >= x(F)`` for every named feature (may only increase)."""
    return _per_feature("increasing", ">=", names)


def decreasing(*names: str) -> Rule:
    """``cf(F) <= x(F)`` for every named feature (may only decrease)."""
    return _per_feature("decreasing", "<=", names)


def _per_feature(kind, op, names) -> Rule:
    if not names:
        raise PLAFError(f"{kind}() needs at least one feature")
    cons = tuple(Consequence(_name(n), op, rhs=x(n)) for n in names)
    return Rule(None, cons, label=f"{kind}({', '.join(map(repr, names))})")


# ====================================================================== programs
class Constraints:
    """A validated PLAF program: groups and rules, with acyclic dependencies.

    Built from a list mixing :func:`group`, :func:`rule`, :func:`fixed`, ... and bare
    consequences (``cf("age") <= 70``); nested lists are flattened. Raises
    :class:`PLAFCycleError` when the rules' dependencies are cyclic.

    Attributes: ``groups`` (list of :class:`Group`), ``rules`` (list of :class:`Rule`),
    ``order`` (features in dependency order: every rule's target after what it reads).
    """

    def __init__(self, items: Iterable = ()):
        self.groups: list[Group] = []
        self.rules: list[Rule] = []
        for item in _flatten(items):
            if isinstance(item, Group):
                self.groups.append(item)
            elif isinstance(item, Rule):
                self.rules.append(item)
            elif isinstance(item, (Cond, Consequence)):
                self.rules.append(rule(item))
            elif isinstance(item, (_If, _Then)):
                raise PLAFError(f"{type(item).__name__.strip('_')}(...) must be wrapped in rule(...)")
            else:
                raise PLAFError(f"not a PLAF constraint: {item!r} (use group, fixed, increasing, "
                                "decreasing, rule or a comparison on cf(...))")
        seen: dict[str, Group] = {}
        for g in self.groups:
            for f in g.features:
                if f in seen:
                    raise PLAFError(f"feature {f!r} is in two groups: {seen[f]!r} and {g!r}")
                seen[f] = g
        self.order = self._check_acyclic()

    @classmethod
    def of(cls, constraints) -> "Constraints":
        """``constraints`` as a :class:`Constraints` (None -> empty)."""
        if isinstance(constraints, Constraints):
            return constraints
        if constraints is None:
            return cls()
        if isinstance(constraints, (Rule, Group, Cond)):
            return cls([constraints])
        return cls(constraints)

    def __add__(self, other) -> "Constraints":
        return Constraints([*self.groups, *self.rules, *Constraints.of(other)])

    def __iter__(self):
        return iter([*self.groups, *self.rules])

    def __len__(self):
        return len(self.groups) + len(self.rules)

    def __repr__(self):
        lines = [f"Constraints({len(self.groups)} group(s), {len(self.rules)} rule(s))"]
        lines += [f"  {item!r}" for item in self]
        return "\n".join(lines)

    @property
    def features(self) -> set[str]:
        """Every feature named by a group or a rule."""
        out = {f for g in self.groups for f in g.features}
        for r in self.rules:
            out |= r.features()
        return out

    def dependencies(self) -> dict[str, set[str]]:
        """``{target: {features it reads}}`` (a rule reading its own target excluded)."""
        deps: dict[str, set[str]] = {}
        for r in self.rules:
            reads = r.reads()
            for t in r.targets:
                deps.setdefault(t, set()).update(reads - {t})
        return deps

    def _check_acyclic(self) -> list[str]:
        deps = self.dependencies()
        nodes = sorted(set(deps) | {n for s in deps.values() for n in s})
        state: dict[str, int] = {}          # 1 on the stack, 2 done
        order: list[str] = []
        for start in nodes:
            if state.get(start):
                continue
            stack = [(start, iter(sorted(deps.get(start, ()))))]
            path = [start]
            state[start] = 1
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    path.pop()
                    state[node] = 2
                    order.append(node)
                    continue
                if state.get(nxt) == 1:           # back edge: a cycle
                    cyc = path[path.index(nxt):] + [nxt]
                    cyc = cyc[::-1]               # in the direction "changing a repairs b"
                    culprits = [r for r in self.rules
                                if any(t in cyc for t in r.targets) and r.reads() & set(cyc)]
                    raise PLAFCycleError(
                        "PLAF rules are cyclic: " + " -> ".join(cyc) + " (each feature's "
                        "repair would change the next one, back to the first). Rules "
                        "involved: " + "; ".join(map(repr, culprits)), cyc)
                if not state.get(nxt):
                    state[nxt] = 1
                    path.append(nxt)
                    stack.append((nxt, iter(sorted(deps.get(nxt, ())))))
        return order

    # ------------------------------------------------------------------ raw re-check
    def check_rows(self, instance: pd.Series, rows: pd.DataFrame) -> np.ndarray:
        """Whether each raw counterfactual row satisfies every rule, evaluated directly on
        raw values (independent of the compiled, vectorised form GeCo uses). Ordered
        categoricals compare by the category order of ``rows``' dtypes (an order comparison
        on a non-numeric column without a Categorical dtype raises :class:`PLAFError`)."""
        out = np.ones(len(rows), dtype=bool)
        for i in range(len(rows)):
            row = rows.iloc[i]
            env = _RawEnv(instance, row, rows.dtypes)
            for r in self.rules:
                if r.condition is not None and not env.cond(r.condition):
                    continue
                if not all(env.cond(c.cond) for c in r.consequences):
                    out[i] = False
                    break
        return out


def _flatten(items):
    if isinstance(items, (Rule, Group, Cond, Consequence, _If, _Then)):
        yield items
        return
    for it in items:
        if isinstance(it, (list, tuple, Constraints)):
            yield from _flatten(it)
        else:
            yield it


class _RawEnv:
    """Scalar interpreter of PLAF conditions over raw values (for ``check_rows``)."""

    def __init__(self, instance, row, dtypes):
        self.instance, self.row, self.dtypes = instance, row, dtypes

    def _rank(self, name, v):
        dt = self.dtypes.get(name)
        if isinstance(dt, pd.CategoricalDtype):
            return list(dt.categories).index(v)
        if not isinstance(v, numbers.Number):
            # strings would compare alphabetically: a silent wrong answer
            raise PLAFError(f"order comparison on {name!r} needs numbers or an ordered Categorical "
                            f"column in the checked rows; got {v!r} in a column of dtype {dt}")
        return v

    def value(self, e, name_hint=None):
        if isinstance(e, Ref):
            src = self.row if e.side == "cf" else self.instance
            return src[e.name], e.name
        if isinstance(e, Const):
            return e.value, None
        if isinstance(e, Arith):
            a, _ = self.value(e.a)
            b, _ = self.value(e.b)
            return _ARITH[e.op](float(a), float(b)), None
        raise PLAFError(f"cannot evaluate {e!r}")

    def cond(self, c) -> bool:
        if isinstance(c, Compare):
            a, na = self.value(c.lhs)
            b, nb = self.value(c.rhs)
            name = na or nb
            if c.op in _ORDER_OPS and name is not None:
                a, b = self._rank(name, a), self._rank(name, b)
            elif isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                a, b = float(a), float(b)
            return bool(_OPS[c.op](a, b))
        if isinstance(c, InSet):
            v, _ = self.value(c.expr)
            hit = any(_same(v, w) for w in c.values)
            return hit != c.negate
        if isinstance(c, And):
            return all(self.cond(p) for p in c.parts)
        if isinstance(c, Or):
            return any(self.cond(p) for p in c.parts)
        if isinstance(c, Not):
            return not self.cond(c.part)
        raise PLAFError(f"cannot evaluate {c!r}")


def _same(a, b) -> bool:
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return float(a) == float(b)
    return a == b


# ====================================================================== compiled form
class FeatureTable:
    """What PLAF needs to know about the features to compile against them (implemented
    by GeCo's active domain): names, kinds, and per feature the sorted *keys* of the
    domain values (the number for numeric features, the category index otherwise),
    their counts, and ``key_of(l, value)``."""

    names: list[str]
    kinds: list[str]
    keys: list[np.ndarray]
    counts: list[np.ndarray]

    def index(self, name: str) -> int: ...   # pragma: no cover - protocol
    def key_of(self, l: int, value) -> float: ...   # pragma: no cover - protocol


class Candidates:
    """Candidates in Δ-representation, as PLAF sees them: ``M[i, l]`` says whether
    candidate ``i`` changes feature ``l``, ``V[i, l]`` is then the index of its new value
    in the feature's domain (``-1`` when unchanged). ``xkeys[l]`` is the instance's key."""

    __slots__ = ("M", "V", "keys", "xkeys")

    def __init__(self, M, V, keys, xkeys):
        self.M, self.V, self.keys, self.xkeys = M, V, keys, xkeys

    def cf(self, l: int) -> np.ndarray:
        return np.where(self.M[:, l], self.keys[l][self.V[:, l]], self.xkeys[l])

    def __len__(self):
        return self.M.shape[0]


class _XOnly:
    """Evaluation context with the instance only (conditions / bounds without cf)."""

    def __init__(self, xkeys):
        self.xkeys = xkeys

    def cf(self, l):  # pragma: no cover - guarded by the compiler
        raise AssertionError("cf() in an x-only expression")


@dataclass
class _Clause:
    rule: Rule
    cond: object               # callable(ctx) -> bool array / bool, or None
    cond_x_only: bool
    target: int
    op: str
    rhs: object                # callable(ctx) -> array / scalar (Compare)
    rhs_x_only: bool
    keyset: np.ndarray | None  # isin / notin keys


class BoundConstraints:
    """A :class:`Constraints` compiled against a feature table; works on
    :class:`Candidates` in bulk (numpy)."""

    def __init__(self, constraints: Constraints, table):
        self.constraints = constraints
        self.table = table
        self.groups = [[self._index(f) for f in g.features] for g in constraints.groups]
        pos = {name: i for i, name in enumerate(constraints.order)}
        clauses = []
        for r in constraints.rules:
            cond, cond_x = (None, True) if r.condition is None else self._cond(r.condition)
            for c in r.consequences:
                t = self._index(c.target)
                if c.values is not None:
                    keyset = np.array(sorted({self._key(t, v) for v in c.values}), dtype=float)
                    clauses.append(_Clause(r, cond, cond_x, t, c.op, None, True, keyset))
                else:
                    self._check_cmp(c.op, cf(c.target), c.rhs)
                    rhs, kind = self._expr(c.rhs, anchor=t)
                    clauses.append(_Clause(r, cond, cond_x, t, c.op, rhs,
                                           not any(s == "cf" for s, _ in c.rhs.refs()), None))
        clauses.sort(key=lambda cl: pos.get(table.names[cl.target], -1))
        self.clauses = clauses

    # -------------------------------------------------------------- compilation
    def _index(self, name):
        try:
            return self.table.index(name)
        except KeyError:
            raise PLAFError(f"PLAF names feature {name!r}, which is not in the data; "
                            f"features: {list(self.table.names)}") from None

    def _key(self, l, value):
        try:
            return self.table.key_of(l, value)
        except (KeyError, ValueError, TypeError):
            raise PLAFError(f"{value!r} is not a value of feature {self.table.names[l]!r} "
                            "(constants in PLAF are raw values seen in the data)") from None

    def _anchor(self, e):
        """A categorical feature that ``e`` refers to directly, else None."""
        if isinstance(e, Ref):
            l = self._index(e.name)
            return l if self.table.kinds[l] != "numeric" else None
        return None

    def _check_cmp(self, op, lhs, rhs):
        for e in (lhs, rhs):
            l = self._anchor(e)
            if l is not None and op in _ORDER_OPS and self.table.kinds[l] == "categorical":
                raise PLAFError(
                    f"'{op}' on feature {self.table.names[l]!r}, which is an unordered "
                    "categorical: use ==, != or isin, or make it ordinal (an ordered pandas "
                    "Categorical)")
        la, lb = self._anchor(lhs), self._anchor(rhs)
        if la is not None and lb is not None and la != lb:
            raise PLAFError(f"cannot compare categorical features {self.table.names[la]!r} and "
                            f"{self.table.names[lb]!r} with each other")

    def _expr(self, e, anchor=None):
        """``(fn(ctx), is_numeric)``; constants are keys of ``anchor`` when it is categorical."""
        if isinstance(e, Ref):
            l = self._index(e.name)
            if e.side == "cf":
                return (lambda ctx, l=l: ctx.cf(l)), self.table.kinds[l] == "numeric"
            return (lambda ctx, l=l: ctx.xkeys[l]), self.table.kinds[l] == "numeric"
        if isinstance(e, Const):
            if anchor is not None and self.table.kinds[anchor] != "numeric":
                k = self._key(anchor, e.value)
            else:
                if not isinstance(e.value, numbers.Real) or isinstance(e.value, bool):
                    raise PLAFError(f"constant {e.value!r} compared with a numeric feature must be a number")
                k = float(e.value)
            return (lambda ctx, k=k: k), True
        if isinstance(e, Arith):
            fa, na = self._expr(e.a)
            fb, nb = self._expr(e.b)
            if not (na and nb):
                raise PLAFError(f"arithmetic {e!r} needs numeric features")
            f = _ARITH[e.op]
            return (lambda ctx: f(fa(ctx), fb(ctx))), True
        raise PLAFError(f"not a PLAF value: {e!r}")

    def _cond(self, c):
        """``(fn(ctx) -> bool array or bool, x_only)``."""
        x_only = not any(s == "cf" for s, _ in c.refs())
        if isinstance(c, Compare):
            self._check_cmp(c.op, c.lhs, c.rhs)
            anchor = self._anchor(c.lhs)
            anchor = self._anchor(c.rhs) if anchor is None else anchor
            fa, _ = self._expr(c.lhs, anchor)
            fb, _ = self._expr(c.rhs, anchor)
            f = _OPS[c.op]
            return (lambda ctx: f(fa(ctx), fb(ctx))), x_only
        if isinstance(c, InSet):
            anchor = self._anchor(c.expr)
            fe, _ = self._expr(c.expr)
            ks = np.array(sorted({self._key(anchor, v) if anchor is not None else float(v)
                                  for v in c.values}), dtype=float)
            neg = c.negate
            return (lambda ctx: np.isin(fe(ctx), ks) != neg), x_only
        if isinstance(c, And):
            fs = [self._cond(p)[0] for p in c.parts]
            return (lambda ctx: _all(f(ctx) for f in fs)), x_only
        if isinstance(c, Or):
            fs = [self._cond(p)[0] for p in c.parts]
            return (lambda ctx: _any(f(ctx) for f in fs)), x_only
        if isinstance(c, Not):
            f, _ = self._cond(c.part)
            return (lambda ctx: np.logical_not(f(ctx))), x_only
        raise PLAFError(f"not a PLAF condition: {c!r}")

    # -------------------------------------------------------------- evaluation
    @staticmethod
    def _holds(cl: _Clause, ctx, value) -> np.ndarray:
        if cl.keyset is not None:
            return np.isin(value, cl.keyset) != (cl.op == "notin")
        return _OPS[cl.op](value, cl.rhs(ctx))

    def allowed(self, xkeys) -> list[np.ndarray | None]:
        """Per feature, the domain values every candidate may take at this instance
        (from unconditional x-only constraints: fixed, increasing, bounds, ...), or None."""
        ctx = _XOnly(xkeys)
        out: list[np.ndarray | None] = [None] * len(self.table.names)
        for cl in self.clauses:
            if not cl.rhs_x_only or not cl.cond_x_only:
                continue
            if cl.cond is not None and not bool(cl.cond(ctx)):
                continue
            ok = np.asarray(self._holds(cl, ctx, self.table.keys[cl.target]), dtype=bool)
            out[cl.target] = ok if out[cl.target] is None else out[cl.target] & ok
        return out

    def cascade(self, cand: Candidates, allowed) -> None:
        """Repair ``cand`` in place, clause by clause in dependency order (module doc)."""
        for cl in self.clauses:
            if len(cand) == 0:
                return
            active = np.ones(len(cand), dtype=bool) if cl.cond is None else \
                np.broadcast_to(np.asarray(cl.cond(cand), dtype=bool), (len(cand),))
            if not active.any():
                continue
            ok = np.broadcast_to(np.asarray(self._holds(cl, cand, cand.cf(cl.target))), (len(cand),))
            bad = np.flatnonzero(active & ~ok)
            if len(bad):
                self._repair(cl, cand, bad, allowed[cl.target])

    def check(self, cand: Candidates) -> np.ndarray:
        """Whether each candidate satisfies every rule."""
        ok = np.ones(len(cand), dtype=bool)
        for cl in self.clauses:
            holds = np.asarray(self._holds(cl, cand, cand.cf(cl.target)), dtype=bool)
            if cl.cond is not None:
                holds = holds | ~np.asarray(cl.cond(cand), dtype=bool)
            ok &= holds
        return ok

    def _repair(self, cl: _Clause, cand: Candidates, rows: np.ndarray, allowed) -> None:
        l = cl.target
        keys = self.table.keys[l]
        xk = cand.xkeys[l]
        sub = Candidates(cand.M[rows], cand.V[rows], cand.keys, cand.xkeys)
        if cl.keyset is None:
            rhs = np.broadcast_to(np.asarray(cl.rhs(sub), dtype=float), (len(rows),))
            x_ok = _OPS[cl.op](xk, rhs)
        else:
            rhs = None
            x_ok = np.full(len(rows), bool(np.isin(xk, cl.keyset) != (cl.op == "notin")))
        idx = np.full(len(rows), -1, dtype=np.int64)
        cand_idx = np.flatnonzero(allowed) if allowed is not None else np.arange(len(keys))
        ak = keys[cand_idx]
        if cl.op in (">=", ">"):
            j = np.searchsorted(ak, rhs, side="left" if cl.op == ">=" else "right")
            hit = j < len(ak)
            idx[hit] = cand_idx[j[hit]]
        elif cl.op in ("<=", "<"):
            j = np.searchsorted(ak, rhs, side="right" if cl.op == "<=" else "left") - 1
            hit = j >= 0
            idx[hit] = cand_idx[j[hit]]
        elif cl.op == "==":
            j = np.minimum(np.searchsorted(ak, rhs), max(len(ak) - 1, 0))
            hit = (len(ak) > 0) & (ak[j] == rhs) if len(ak) else np.zeros(len(rows), bool)
            idx[hit] = cand_idx[j[hit]]
        else:                                   # != / isin / notin: most frequent allowed
            by_freq = cand_idx[np.argsort(-self.table.counts[l][cand_idx], kind="stable")]
            fk = keys[by_freq]
            if cl.op == "!=":
                for pos in range(min(2, len(by_freq))):
                    fill = (idx < 0) & (fk[pos] != rhs)
                    idx[fill] = by_freq[pos]
            else:
                good = np.isin(fk, cl.keyset) != (cl.op == "notin")
                if good.any():
                    idx[:] = by_freq[np.argmax(good)]
        M, V = cand.M, cand.V
        to_x = rows[x_ok]
        M[to_x, l] = False
        V[to_x, l] = -1
        set_rows = ~x_ok & (idx >= 0)
        r, v = rows[set_rows], idx[set_rows]
        same = keys[v] == xk
        M[r, l] = ~same
        V[r, l] = np.where(same, -1, v)


def _all(it):
    out = True
    for v in it:
        out = np.logical_and(out, v)
    return out


def _any(it):
    out = False
    for v in it:
        out = np.logical_or(out, v)
    return out
