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
    """A value in a PLAF constraint: a feature reference, a constant, or arithmetic.

    Made by :func:`cf` and :func:`x`; ``+ - *`` give expressions, comparisons
    (``== != < <= > >=``) and :meth:`isin` / :meth:`notin` give conditions (:class:`Cond`).
    An expression has no truth value (``and`` / ``or`` / ``if`` raise :class:`PLAFError`).

    Examples
    --------
    >>> p = gcf.plaf
    >>> p.x("age") + 4
    (x('age') + 4)
    >>> p.cf("age") >= p.x("age") + 4
    cf('age') >= (x('age') + 4)
    >>> p.cf("job").isin(["clerk", "manager"])
    cf('job').isin(['clerk', 'manager'])
    """

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
        """Condition: the value is one of ``values``.

        Parameters
        ----------
        values : iterable
            Raw values.

        Returns
        -------
        Cond
            The condition.
        """
        return InSet(self, tuple(values), negate=False)

    def notin(self, values: Iterable) -> InSet:
        """Condition: the value is none of ``values``.

        Parameters
        ----------
        values : iterable
            Raw values.

        Returns
        -------
        Cond
            The condition.
        """
        return InSet(self, tuple(values), negate=True)

    def refs(self) -> set[tuple[str, str]]:
        """``{(side, feature)}`` read by this expression.

        Returns
        -------
        set of tuple
            ``(side, feature)`` pairs, side ``"cf"`` or ``"x"``.
        """
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
    """The counterfactual's value of feature ``name`` (GeCo's ``x_cf.name``).

    Parameters
    ----------
    name : str
        A feature (raw column) name.

    Returns
    -------
    Expr
        A reference to the counterfactual's value.

    Raises
    ------
    PLAFError
        ``name`` is not a non-empty string.

    Examples
    --------
    >>> gcf.plaf.cf("hours_per_week") <= 60
    cf('hours_per_week') <= 60
    """
    return Ref("cf", _name(name))


def x(name: str) -> Ref:
    """The explained instance's value of feature ``name`` (GeCo's ``x.name``).

    Parameters
    ----------
    name : str
        A feature (raw column) name.

    Returns
    -------
    Expr
        A reference to the instance's value.

    Raises
    ------
    PLAFError
        ``name`` is not a non-empty string.

    Examples
    --------
    >>> p = gcf.plaf
    >>> p.cf("age") >= p.x("age")
    cf('age') >= x('age')
    """
    return Ref("x", _name(name))


def _name(name) -> str:
    if not isinstance(name, str) or not name:
        raise PLAFError(f"feature names are non-empty strings, got {name!r}")
    return name


# ====================================================================== conditions
class Cond:
    """A boolean condition over ``cf`` / ``x`` values.

    Made by comparing expressions (:class:`Expr`); combine conditions with ``&``, ``|``
    and ``~`` (not ``and`` / ``or`` / ``not``: a condition has no truth value).

    Examples
    --------
    >>> p = gcf.plaf
    >>> (p.cf("age") > p.x("age")) & ~p.cf("job").isin(["clerk"])
    (cf('age') > x('age') & ~cf('job').isin(['clerk']))
    >>> bool(p.cf("age") > 3)
    Traceback (most recent call last):
    ...
    groupcf.plaf.language.PLAFError: the PLAF expression cf('age') > 3 has no truth value: ...
    """

    __bool__ = _bool_error

    def __and__(self, other): return And((self, _cond(other)))   # noqa: E704
    def __or__(self, other): return Or((self, _cond(other)))     # noqa: E704
    def __invert__(self): return Not(self)                       # noqa: E704

    def refs(self) -> set[tuple[str, str]]:
        """``{(side, feature)}`` read by this condition.

        Returns
        -------
        set of tuple
            ``(side, feature)`` pairs, side ``"cf"`` or ``"x"``.

        Raises
        ------
        NotImplementedError
            Every kind of condition implements it.
        """
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
    """The IF part of a rule; several conditions must all hold.

    Parameters
    ----------
    *conditions : Cond
        At least one condition.

    Returns
    -------
    object
        The IF part, for :func:`rule`.

    Raises
    ------
    PLAFError
        No condition, or an argument that is not a condition.

    Examples
    --------
    >>> p = gcf.plaf
    >>> p.rule(p.If(p.cf("education") > p.x("education"), p.cf("age") < 60),
    ...        p.Then(p.cf("age") >= p.x("age") + 4))
    IF (cf('education') > x('education') & cf('age') < 60) THEN cf('age') >= (x('age') + 4)
    """
    if not conditions:
        raise PLAFError("If() needs at least one condition")
    conds = tuple(_cond(c) for c in conditions)
    return _If(conds[0] if len(conds) == 1 else And(conds))


def Then(*consequences: Cond) -> _Then:  # noqa: N802 - PLAF keyword
    """The THEN part of a rule: one or more ``cf(F) op expression`` constraints.

    Parameters
    ----------
    *consequences : Cond
        Each constrains one counterfactual feature, its *target*: ``cf(F) op expression``
        or ``cf(F).isin([...])``.

    Returns
    -------
    object
        The THEN part, for :func:`rule`.

    Raises
    ------
    PLAFError
        No consequence, or one that does not constrain a ``cf(F)``.

    Examples
    --------
    >>> p = gcf.plaf
    >>> p.rule(p.If(p.cf("education") > p.x("education")), p.Then(p.cf("age") >= p.x("age") + 4)).targets
    ['age']
    """
    if not consequences:
        raise PLAFError("Then() needs at least one consequence")
    return _Then(tuple(_consequence(c) for c in consequences))


@dataclass(frozen=True, eq=False)
class Consequence:
    """``cf(target) op rhs`` (``op`` in ``== != < <= > >=``), or ``cf(target)`` in / not
    in ``values``.

    Made by :func:`Then` and :func:`rule` from a condition on ``cf(target)``.

    Parameters
    ----------
    target : str
        The counterfactual feature constrained.
    op : str
        ``"=="``, ``"!="``, ``"<"``, ``"<="``, ``">"``, ``">="``, ``"isin"`` or ``"notin"``.
    rhs : Expr or None, default None
        The right-hand side of a comparison.
    values : tuple or None, default None
        The values of ``isin`` / ``notin``.

    Examples
    --------
    >>> p = gcf.plaf
    >>> c = p.rule(p.x("age") + 4 <= p.cf("age")).consequences[0]   # flipped onto its target
    >>> c.target, c.op, c
    ('age', '>=', cf('age') >= (x('age') + 4))
    """

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
        """``{(side, feature)}`` read by this consequence.

        Returns
        -------
        set of tuple
            ``(side, feature)`` pairs, side ``"cf"`` or ``"x"``.
        """
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
    """``IF condition THEN consequences`` (``condition`` None: always).

    Made by :func:`rule`, :func:`fixed`, :func:`increasing`, :func:`decreasing`.

    Parameters
    ----------
    condition : Cond or None
        The IF part (``None``: the rule always applies).
    consequences : tuple of Consequence
        The THEN part.
    label : str or None, default None
        A name shown instead of the rule (``fixed('race')``).

    Attributes
    ----------
    targets : list of str
        The counterfactual features the consequences constrain.

    Examples
    --------
    >>> p = gcf.plaf
    >>> r = p.rule(p.If(p.cf("education") > p.x("education")), p.Then(p.cf("age") >= p.x("age") + 4))
    >>> r
    IF cf('education') > x('education') THEN cf('age') >= (x('age') + 4)
    >>> r.targets, r.reads()
    (['age'], {'education'})
    """

    condition: Cond | None
    consequences: tuple
    label: str | None = None

    @property
    def targets(self) -> list[str]:
        return [c.target for c in self.consequences]

    def reads(self) -> set[str]:
        """Counterfactual features the rule reads (condition and right-hand sides).

        Returns
        -------
        set of str
            The features.
        """
        names = {n for s, n in (self.condition.refs() if self.condition is not None else ()) if s == "cf"}
        for c in self.consequences:
            if c.rhs is not None:
                names |= {n for s, n in c.rhs.refs() if s == "cf"}
        return names

    def features(self) -> set[str]:
        """Every feature the rule names, on either side.

        Returns
        -------
        set of str
            The features.
        """
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
    """Features changed jointly: GeCo samples them as one tuple of values from the data.

    Made by :func:`group`.

    Parameters
    ----------
    features : tuple of str
        The features.

    Examples
    --------
    >>> gcf.plaf.group("city", "zip").features
    ('city', 'zip')
    """

    features: tuple

    def __repr__(self):
        return f"group({', '.join(map(repr, self.features))})"


def rule(*parts) -> Rule:
    """``rule(If(cond), Then(c, ...))``, ``rule(Then(c, ...))`` or ``rule(c, ...)``.

    Parameters
    ----------
    *parts
        At most one :func:`If`, then :func:`Then` parts and/or bare consequences
        (``cf(F) op expression``).

    Returns
    -------
    Rule
        The rule (no IF part: it always applies).

    Raises
    ------
    PLAFError
        Two IF parts, no consequence, or a consequence that does not constrain a
        ``cf(F)``.

    Examples
    --------
    >>> p = gcf.plaf
    >>> p.rule(p.If(p.cf("marital_status") != p.x("marital_status")),
    ...        p.Then(p.cf("relationship").isin(["Husband", "Wife", "Unmarried"])))
    IF cf('marital_status') != x('marital_status') THEN cf('relationship').isin(['Husband', 'Wife', 'Unmarried'])
    >>> p.rule(p.cf("hours") <= 60)
    cf('hours') <= 60
    """
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
    """Features changed jointly (values sampled as a tuple from the data).

    Parameters
    ----------
    *names : str
        At least one feature, each once.

    Returns
    -------
    Group
        The group.

    Raises
    ------
    PLAFError
        No feature, or a feature named twice.

    Examples
    --------
    >>> gcf.plaf.group("education", "occupation")
    group('education', 'occupation')
    """
    if len(names) < 1:
        raise PLAFError("group() needs at least one feature")
    names = tuple(_name(n) for n in names)
    if len(set(names)) != len(names):
        raise PLAFError(f"group{names} repeats a feature")
    return Group(names)


def fixed(*names: str) -> Rule:
    """``cf(F) == x(F)`` for every named feature (immutable).

    Parameters
    ----------
    *names : str
        At least one feature.

    Returns
    -------
    Rule
        One unconditional rule with a consequence per feature.

    Raises
    ------
    PLAFError
        No feature.

    Examples
    --------
    >>> r = gcf.plaf.fixed("race", "sex")
    >>> r, r.targets
    (fixed('race', 'sex'), ['race', 'sex'])
    """
    return _per_feature("fixed", "==", names)


def increasing(*names: str) -> Rule:
    """``cf(F) >= x(F)`` for every named feature (may only increase).

    Parameters
    ----------
    *names : str
        At least one feature (ordered: numeric, binary or ordinal).

    Returns
    -------
    Rule
        One unconditional rule with a consequence per feature.

    Raises
    ------
    PLAFError
        No feature.

    Examples
    --------
    >>> gcf.plaf.increasing("age").consequences
    (cf('age') >= x('age'),)
    """
    return _per_feature("increasing", ">=", names)


def decreasing(*names: str) -> Rule:
    """``cf(F) <= x(F)`` for every named feature (may only decrease).

    Parameters
    ----------
    *names : str
        At least one feature (ordered: numeric, binary or ordinal).

    Returns
    -------
    Rule
        One unconditional rule with a consequence per feature.

    Raises
    ------
    PLAFError
        No feature.

    Examples
    --------
    >>> gcf.plaf.decreasing("debt").consequences
    (cf('debt') <= x('debt'),)
    """
    return _per_feature("decreasing", "<=", names)


def _per_feature(kind, op, names) -> Rule:
    if not names:
        raise PLAFError(f"{kind}() needs at least one feature")
    cons = tuple(Consequence(_name(n), op, rhs=x(n)) for n in names)
    return Rule(None, cons, label=f"{kind}({', '.join(map(repr, names))})")
