"""The action language of sequential counterfactuals (Naumann & Ntoutsi, ECML-PKDD 2021, §3).

An :class:`Action` changes one feature *directly* — it adds a tweak value ``v`` from a
range (``kind="add"``) or sets one category from a list (``kind="set"``) — and may change
other features as a *consequence* (``consequences={"Age": 2.0}``: age grows by twice the
change of education). Pre-conditions are read on the state before the action,
post-conditions on the state after it (a primed name ``Age'`` is the value after). Its
direct effort ``b(x_{t-1}, x_t)`` is a :class:`Cost`. A :class:`DependencyGraph` holds the
features' dependencies ``k -> h`` with ``tau_kh(x) in [0, 1]`` that discount later actions
(eqs. 1-2, see :mod:`groupcf.sequential.costs`).

Every function here is *vectorised*: a state is a :class:`StateView` over a 2-D array (one
row per individual of the population), so ``before["Age"]`` is a column.
"""
from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from groupcf.exceptions import CyclicConsequenceError, InvalidActionError

_OPS: dict[str, Callable[[Any, Any], Any]] = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
        "==": operator.eq, "!=": operator.ne}


class StateView(Mapping):
    """Read-only mapping ``feature name -> column`` over a 2-D state array."""

    def __init__(self, S: np.ndarray, index: Mapping[str, int]):
        self.S, self.index = S, index

    def __getitem__(self, name: str) -> np.ndarray:
        return self.S[:, self.index[name]]

    def __iter__(self):
        return iter(self.index)

    def __len__(self) -> int:
        return len(self.index)


# --- costs ------------------------------------------------------------------------------
class Cost:
    """Direct effort ``b_i`` of an action; ``delta`` is the change of its direct feature
    and ``old`` that feature's value before the action (both columns)."""

    def __call__(self, before: StateView, after: StateView, delta, old) -> np.ndarray:
        raise NotImplementedError


@dataclass(frozen=True)
class Constant(Cost):
    """``b = c`` (e.g. enlisting costs 5)."""

    c: float

    def __call__(self, before, after, delta, old):
        return np.full(len(delta), float(self.c))


@dataclass(frozen=True)
class AbsChange(Cost):
    """``b = weight * |delta|`` (e.g. ``|Delta loss| / 1000`` is ``AbsChange(1e-3)``)."""

    weight: float = 1.0

    def __call__(self, before, after, delta, old):
        return self.weight * np.abs(delta)


@dataclass(frozen=True)
class RelativeSquared(Cost):
    """``b = (delta / (old - offset))^2`` (relative change, squared; with ``offset`` the
    mean of a z-scoring, this is the relative change of the z-score)."""

    offset: float = 0.0

    def __call__(self, before, after, delta, old):
        base = old - self.offset
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(base != 0, delta / np.where(base != 0, base, 1.0), np.inf)
        return r * r


#: an ``add`` action's range: ``(lo, hi)`` or ``fn(before) -> (lo, hi)`` (columns)
Range = tuple[float, float] | Callable[[StateView], tuple[Any, Any]]


class Nonlinear(NamedTuple):
    """A consequence ``feature := fn(before, after)`` (``after`` holds the direct change)
    with ``box`` = ``(lo, hi)`` containing every value it takes; ``interval(lo, hi,
    dlo, dhi)`` (optional) encloses ``fn`` over states whose features lie in
    ``[lo[f], hi[f]]`` (dicts of columns) and direct changes in ``[dlo, dhi]``, and
    ``reads`` names the features ``fn`` depends on (``None``: all). The certified bound
    uses ``interval`` and ``reads``; a plain tuple ``(fn, (lo, hi))`` also works."""

    fn: Callable
    box: tuple
    interval: Callable | None = None
    reads: tuple | None = None


@dataclass(frozen=True)
class CustomCost(Cost):
    """Any callable ``fn(before, after) -> costs``; ``min_cost`` is a lower bound on its
    value whenever the action is used (the certified bound counts only that)."""

    fn: Callable
    min_cost: float = 0.0

    def __call__(self, before, after, delta, old):
        return np.asarray(self.fn(before, after), dtype=float) * np.ones(len(delta))


def make_cost(spec) -> Cost:
    """A :class:`Cost` from a number (constant), ``"abs"``, ``"relative_squared"``, a
    :class:`Cost`, or a callable ``fn(before, after)``."""
    if isinstance(spec, Cost):
        return spec
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return Constant(float(spec))
    if spec == "abs":
        return AbsChange(1.0)
    if spec == "relative_squared":
        return RelativeSquared()
    if callable(spec):
        return CustomCost(spec)
    raise InvalidActionError(f"unknown cost {spec!r}: use a number, 'abs', 'relative_squared', "
                             "a groupcf.sequential Cost or a callable fn(before, after)")


# --- conditions ---------------------------------------------------------------------------
def _state(before: StateView, after: StateView | None, primed: bool, cond: Condition) -> StateView:
    """The state a condition side reads: ``after`` when primed (which must then be given)."""
    if not primed:
        return before
    if after is None:
        raise TypeError(f"the condition {cond.text or cond.lhs!r} reads the state after the action")
    return after


_COND = re.compile(r"^\s*(.+?)\s*(')?\s*(<=|>=|==|!=|<|>)\s*(.+?)\s*(')?\s*$")


@dataclass(frozen=True)
class Condition:
    """``lhs op rhs``: ``lhs``/``rhs`` are feature names (``*_after`` says primed, i.e. read
    after the action) or, for ``rhs``, a number. Build it from text: ``"Age' < 120"``,
    ``"Education num' > Education num"``, ``"Capital Gain < 1"``; or pass a callable
    ``fn(before, after) -> bool`` wherever a condition is expected."""

    lhs: str
    op: str
    rhs: str | float                # a feature name or a number
    lhs_after: bool = False
    rhs_after: bool = False
    text: str = ""

    @classmethod
    def parse(cls, text: str, features: Sequence[str]) -> Condition:
        m = _COND.match(text)
        if not m:
            raise InvalidActionError(f"cannot read the condition {text!r}; write e.g. \"Age' < 120\"")
        lhs, lp, op, rhs, rp = m.groups()
        if lhs not in features:
            raise InvalidActionError(f"condition {text!r}: unknown feature {lhs!r}")
        try:
            value: str | float = float(rhs)
        except ValueError:
            if rhs not in features:
                raise InvalidActionError(f"condition {text!r}: {rhs!r} is neither a number nor a feature") from None
            value = rhs
        return cls(lhs, op, value, bool(lp), bool(rp), text.strip())

    @property
    def is_constant(self) -> bool:
        return not isinstance(self.rhs, str)

    def features(self) -> set[str]:
        return {self.lhs} | ({self.rhs} if isinstance(self.rhs, str) else set())

    def __call__(self, before: StateView, after: StateView | None) -> np.ndarray:
        left = _state(before, after, self.lhs_after, self)[self.lhs]
        right = (_state(before, after, self.rhs_after, self)[self.rhs]
                 if isinstance(self.rhs, str) else self.rhs)
        return np.asarray(_OPS[self.op](left, right))

    def __repr__(self) -> str:
        return f"Condition({self.text!r})" if self.text else super().__repr__()


def _condition(spec, features, where: str, action: str):
    if callable(spec) and not isinstance(spec, Condition):
        return spec
    c = spec if isinstance(spec, Condition) else Condition.parse(str(spec), features)
    if where == "pre" and (c.lhs_after or c.rhs_after):
        raise InvalidActionError(f"action {action!r}: the pre-condition {c.text!r} reads a "
                                 "primed (after) value; move it to post")
    return c


# --- actions ------------------------------------------------------------------------------
@dataclass
class Action:
    """One action: a direct change of ``feature`` plus consequences.

    Parameters
    ----------
    name, feature
        The action's name and the feature it changes directly.
    range
        ``kind="add"``: ``(lo, hi)`` of the tweak value added to the feature, or a callable
        ``fn(before) -> (lo, hi)`` (state-dependent range; give ``outer=(lo, hi)`` for the
        certified bound, else the bound cannot use the action).
    values
        ``kind="set"``: the categories the action may set (the value gene picks one).
    cost
        Direct effort: a number, ``"abs"``, ``"relative_squared"``, a :class:`Cost` or a
        callable (see :func:`make_cost`).
    consequences
        ``{feature: factor}`` (the feature changes by ``factor`` times the direct change) or
        ``{feature: fn(before, after) -> new value}`` (``after`` already holds the direct
        change); a callable may be given as ``(fn, (lo, hi))`` with the box of the new
        value, used by the certified bound.
    pre, post
        Conditions (text, :class:`Condition` or callables) that must hold.
    """

    name: str
    feature: str
    range: Range | None = None
    cost: object = 1.0
    kind: str = "add"
    values: Sequence[float] | np.ndarray | None = None
    consequences: dict = field(default_factory=dict)
    pre: list = field(default_factory=list)
    post: list = field(default_factory=list)
    outer: tuple[float, float] | None = None

    def value_range(self, before: StateView) -> tuple[np.ndarray, np.ndarray]:
        if self.range is None:
            raise InvalidActionError(f"action {self.name!r}: give range=(lo, hi)")
        lo, hi = self.range(before) if callable(self.range) else self.range
        m = before.S.shape[0]
        return np.broadcast_to(np.asarray(lo, float), (m,)), np.broadcast_to(np.asarray(hi, float), (m,))

    @property
    def static_range(self) -> tuple[float, float] | None:
        """``(lo, hi)`` valid in every state, or ``None``."""
        if self.kind == "set":
            return None
        if callable(self.range):
            return None if self.outer is None else (float(self.outer[0]), float(self.outer[1]))
        if self.range is None:
            return None
        return float(self.range[0]), float(self.range[1])

    @property
    def choices(self) -> np.ndarray:
        """``kind="set"``: the categories it may set, as floats."""
        if self.values is None:
            raise InvalidActionError(f"action {self.name!r} sets no value; give values=[...]")
        return np.asarray(self.values, dtype=float)

    def changed_features(self) -> list[str]:
        return [self.feature, *self.consequences]

    def __repr__(self) -> str:
        what = (f"{self.feature} += v, v in {self.range if not callable(self.range) else 'f(state)'}"
                if self.kind == "add" else f"{self.feature} := one of {np.asarray(self.values).tolist()}")
        extra = f", consequences on {list(self.consequences)}" if self.consequences else ""
        return f"Action({self.name!r}: {what}, cost {self.cost!r}{extra})"


class ActionSet:
    """Validated actions over named features (the order of ``features`` is the order of
    the state vector).

    Raises :class:`~groupcf.exceptions.InvalidActionError` for an unknown or immutable
    feature, an empty range, duplicate names or a bad condition, and
    :class:`~groupcf.exceptions.CyclicConsequenceError` when consequences form a cycle.
    """

    def __init__(self, actions: Sequence[Action], features: Sequence[str], immutable=()):
        self.features = [str(f) for f in features]
        self.index = {f: i for i, f in enumerate(self.features)}
        self.immutable = set(immutable)
        if unknown := self.immutable - set(self.features):
            raise InvalidActionError(f"immutable features {sorted(unknown)} are not features")
        self.actions = list(actions)
        if not self.actions:
            raise InvalidActionError("no actions given")
        names = [a.name for a in self.actions]
        if len(set(names)) != len(names):
            raise InvalidActionError(f"action names must be distinct, got {names}")
        for a in self.actions:
            self._validate(a)
        self._check_acyclic()

    def _validate(self, a: Action) -> None:
        for f in a.changed_features():
            if f not in self.index:
                raise InvalidActionError(f"action {a.name!r} changes the unknown feature {f!r}; "
                                         f"features are {self.features}")
            if f in self.immutable:
                raise InvalidActionError(f"action {a.name!r} changes the immutable feature {f!r}")
        if a.kind == "add":
            if a.range is None:
                raise InvalidActionError(f"action {a.name!r}: give range=(lo, hi)")
            if not callable(a.range):
                lo, hi = a.range
                if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi or lo == hi == 0:
                    raise InvalidActionError(f"action {a.name!r} has the empty range {a.range}")
        elif a.kind == "set":
            if a.values is None or len(a.values) == 0:
                raise InvalidActionError(f"action {a.name!r} sets no value; give values=[...]")
            a.values = np.asarray(a.values, dtype=float)
        else:
            raise InvalidActionError(f"action {a.name!r}: kind must be 'add' or 'set', not {a.kind!r}")
        a.cost = make_cost(a.cost)
        a.pre = [_condition(c, self.features, "pre", a.name) for c in a.pre]
        a.post = [_condition(c, self.features, "post", a.name) for c in a.post]

    def _check_acyclic(self) -> None:
        edges = {(a.feature, g) for a in self.actions for g in a.consequences}
        for f, g in edges:
            if f == g:
                raise CyclicConsequenceError(f"feature {f!r} is a consequence of itself")
        _assert_dag(edges, "consequences")

    def __len__(self) -> int:
        return len(self.actions)

    def __iter__(self):
        return iter(self.actions)

    def __getitem__(self, i) -> Action:
        return self.actions[i]

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.actions]

    @property
    def mutable(self) -> list[str]:
        """Features some action can change, in state order."""
        ch = {f for a in self.actions for f in a.changed_features()}
        return [f for f in self.features if f in ch]

    def __repr__(self) -> str:
        return "ActionSet(\n  " + ",\n  ".join(map(repr, self.actions)) + "\n)"


def _assert_dag(edges, what: str) -> None:
    succ: dict[str, set] = {}
    for f, g in edges:
        succ.setdefault(f, set()).add(g)
    state: dict[str, int] = {}

    def visit(v, path):
        state[v] = 1
        for w in succ.get(v, ()):
            if state.get(w) == 1:
                raise CyclicConsequenceError(f"the {what} form a cycle: {' -> '.join(path + [v, w])}")
            if w not in state:
                visit(w, path + [v])
        state[v] = 2

    for v in list(succ):
        if v not in state:
            visit(v, [])


class DependencyGraph:
    """Feature dependencies ``k -> h`` with ``tau_kh(before) in [0, 1]`` (paper eq. 1).

    ``edges`` maps ``(k, h)`` to a callable ``tau(before) -> column`` or a constant.
    """

    def __init__(self, edges: Mapping[tuple[str, str], object], features: Sequence[str] | None = None):
        self.edges = dict(edges)
        if features is not None:
            for k, h in self.edges:
                for f in (k, h):
                    if f not in features:
                        raise InvalidActionError(f"dependency {k!r} -> {h!r}: unknown feature {f!r}")
        self.incoming: dict[str, list] = {}
        for (_, h), tau in self.edges.items():
            self.incoming.setdefault(h, []).append(tau)
        _assert_dag(self.edges.keys(), "dependencies")

    def g_hat(self, h: str, before: StateView) -> np.ndarray:
        """Eq. (1): the mean of ``tau_kh`` over the incoming edges of ``h``."""
        vals = [np.asarray(t(before) if callable(t) else t, float) for t in self.incoming[h]]
        return np.mean(np.broadcast_arrays(*vals), axis=0)

    def __repr__(self) -> str:
        return f"DependencyGraph({[f'{k} -> {h}' for k, h in self.edges]})"
