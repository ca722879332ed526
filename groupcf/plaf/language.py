"""PLAF's rule language: expressions, conditions, If/Then rules, groups and the builders
``fixed``, ``increasing``, ``decreasing``."""
from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeGuard

from ..exceptions import InvalidInputError


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

    def _cmp(self, op, other) -> Compare:
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

    def isin(self, values: Iterable) -> InSet:
        """Condition: the value is one of ``values`` (raw values)."""
        return InSet(self, tuple(values), negate=False)

    def notin(self, values: Iterable) -> InSet:
        """Condition: the value is none of ``values`` (raw values)."""
        return InSet(self, tuple(values), negate=True)

    def refs(self) -> set[tuple[str, str]]:
        """``{(side, feature)}`` read by this expression (side ``"cf"`` or ``"x"``)."""
        return set()


@dataclass(frozen=True, eq=False, repr=False)
class Ref(Expr):
    """A feature's value on the counterfactual (``cf``) or the instance (``x``) side."""

    side: str        # "cf" or "x"
    name: str

    def refs(self):
        return {(self.side, self.name)}

    def __repr__(self):
        return f"{self.side}({self.name!r})"


@dataclass(frozen=True, eq=False, repr=False)
class Const(Expr):
    """A constant."""

    value: object

    def __repr__(self):
        return repr(self.value)


@dataclass(frozen=True, eq=False, repr=False)
class Arith(Expr):
    """An arithmetic expression ``a op b``."""

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
    """A comparison ``lhs op rhs``."""

    op: str
    lhs: Expr
    rhs: Expr

    def refs(self):
        return self.lhs.refs() | self.rhs.refs()

    def __repr__(self):
        return f"{self.lhs!r} {self.op} {self.rhs!r}"


@dataclass(frozen=True, eq=False, repr=False)
class InSet(Cond):
    """Membership of an expression's value in a set of values."""

    expr: Expr
    values: tuple
    negate: bool = False

    def refs(self):
        return self.expr.refs()

    def __repr__(self):
        return f"{self.expr!r}.{'notin' if self.negate else 'isin'}({list(self.values)!r})"


@dataclass(frozen=True, eq=False, repr=False)
class And(Cond):
    """Conjunction of conditions."""

    parts: tuple

    def refs(self):
        return set().union(*(p.refs() for p in self.parts))

    def __repr__(self):
        return "(" + " & ".join(map(repr, self.parts)) + ")"


@dataclass(frozen=True, eq=False, repr=False)
class Or(Cond):
    """Disjunction of conditions."""

    parts: tuple

    def refs(self):
        return set().union(*(p.refs() for p in self.parts))

    def __repr__(self):
        return "(" + " | ".join(map(repr, self.parts)) + ")"


@dataclass(frozen=True, eq=False, repr=False)
class Not(Cond):
    """Negation of a condition."""

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
        if self.rhs is None:
            raise PLAFError(f"the consequence on {self.target!r} has neither values nor a right-hand side")
        return Compare(self.op, cf(self.target), self.rhs)

    def refs(self) -> set[tuple[str, str]]:
        return self.cond.refs()

    def __repr__(self):
        return repr(self.cond)


def _is_cf_ref(e: object) -> TypeGuard[Ref]:
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
    cond = None
    cons: list[Consequence] = []
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
