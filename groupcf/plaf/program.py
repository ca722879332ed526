"""A PLAF program: a set of rules and groups, validated (acyclicity of the rules' dependencies) and evaluated on raw rows."""
from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..utils import column_values
from .language import (
    _ARITH,
    _OPS,
    _ORDER_OPS,
    And,
    Arith,
    Compare,
    Cond,
    Consequence,
    Const,
    Group,
    InSet,
    Not,
    Or,
    PLAFCycleError,
    PLAFError,
    Ref,
    Rule,
    _If,
    _Then,
    rule,
)


# ====================================================================== programs
class Constraints:
    """A validated PLAF program: groups and rules, with acyclic dependencies.

    Parameters
    ----------
    items : iterable, default ()
        A list mixing :func:`group`, :func:`rule`, :func:`fixed`, ... and bare
        consequences (``cf("age") <= 70``); nested lists are flattened.

    Attributes
    ----------
    groups : list of Group
        The groups.
    rules : list of Rule
        The rules.
    order : list of str
        Features in dependency order: every rule's target after what it reads.

    Raises
    ------
    PLAFCycleError
        The rules' dependencies are cyclic (the message names the cycle).
    PLAFError
        An item that is not a PLAF constraint, an ``If`` / ``Then`` outside ``rule``, or a
        feature in two groups.

    Examples
    --------
    >>> p = gcf.plaf
    >>> prog = p.Constraints([p.group("education", "occupation"), p.fixed("race"),
    ...                       p.rule(p.If(p.cf("education") > p.x("education")),
    ...                              p.Then(p.cf("age") >= p.x("age") + 4))])
    >>> prog.order
    ['education', 'age', 'race']
    >>> x = pd.Series({"education": 1, "age": 30, "race": "a", "occupation": "clerk"})
    >>> rows = pd.DataFrame({"education": [2, 2], "age": [34, 31], "race": ["a", "a"],
    ...                      "occupation": ["clerk", "clerk"]})
    >>> prog.check_rows(x, rows)        # the second row is too young for more education
    array([ True, False])
    >>> p.Constraints([p.rule(p.If(p.cf("a") > 1), p.Then(p.cf("b") > 1)),
    ...                p.rule(p.If(p.cf("b") > 1), p.Then(p.cf("a") > 1))])
    Traceback (most recent call last):
    ...
    groupcf.plaf.language.PLAFCycleError: ...
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
    def of(cls, constraints) -> Constraints:
        """``constraints`` as a :class:`Constraints`.

        Parameters
        ----------
        constraints : Constraints, list, Rule, Group, Cond or None
            A program, a list of PLAF items, one item, or ``None`` (empty).

        Returns
        -------
        Constraints
            The program.
        """
        if isinstance(constraints, Constraints):
            return constraints
        if constraints is None:
            return cls()
        if isinstance(constraints, (Rule, Group, Cond)):
            return cls([constraints])
        return cls(constraints)

    def __add__(self, other) -> Constraints:
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
        """Every feature named by a group or a rule.

        Returns
        -------
        set of str
            The features.
        """
        out = {f for g in self.groups for f in g.features}
        for r in self.rules:
            out |= r.features()
        return out

    def dependencies(self) -> dict[str, set[str]]:
        """``{target: {features it reads}}`` (a rule reading its own target excluded).

        Returns
        -------
        dict
            Target feature -> the counterfactual features its rules read.
        """
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
        """Whether each raw counterfactual row satisfies every rule, on raw values.

        Independent of the compiled, vectorised form GeCo uses. Ordered categoricals compare by
        the category order of ``rows``' dtypes.

        Parameters
        ----------
        instance : pandas.Series
            The explained instance (raw values).
        rows : pandas.DataFrame
            Counterfactuals (raw values).

        Returns
        -------
        numpy.ndarray
            One bool per row.

        Raises
        ------
        PLAFError
            An order comparison on a non-numeric column without a Categorical dtype.
        """
        out = np.ones(len(rows), dtype=bool)
        columns = _Columns(rows)
        dtypes = dict(zip(rows.columns.tolist(), rows.dtypes.tolist()))
        ranks: dict = {}
        for i in range(len(rows)):
            env = _RawEnv(instance, _Row(columns, i), dtypes, ranks)
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


class _Columns:
    """The columns of ``rows`` as lists of raw values, each read once when first asked for
    (a rule reads a few columns; a row of a mixed-dtype frame costs a pandas Series)."""

    def __init__(self, rows: pd.DataFrame):
        self.rows = rows
        self.cols: dict[str, list] = {}

    def get(self, name):
        col = self.cols.get(name)
        if col is None:
            col = self.cols[name] = column_values(self.rows[name])
        return col


class _Row:
    """Row ``i`` of :class:`_Columns`: ``row[name]`` is what ``rows.iloc[i][name]`` reads."""

    __slots__ = ("columns", "i")

    def __init__(self, columns: _Columns, i: int):
        self.columns, self.i = columns, i

    def __getitem__(self, name):
        return self.columns.get(name)[self.i]


class _RawEnv:
    """Scalar interpreter of PLAF conditions over raw values (for ``check_rows``)."""

    def __init__(self, instance, row, dtypes, ranks=None):
        self.instance, self.row, self.dtypes = instance, row, dtypes
        self.ranks = {} if ranks is None else ranks     # name -> (categories, first index of each)

    def _rank(self, name, v):
        dt = self.dtypes.get(name)
        if isinstance(dt, pd.CategoricalDtype):
            hit = self.ranks.get(name)
            if hit is None or hit[0] is not dt:
                first: dict = {}
                for i, c in enumerate(dt.categories.tolist()):
                    first.setdefault(c, i)
                hit = self.ranks[name] = (dt, first, list(dt.categories))
            try:
                return hit[1][v]
            except (KeyError, TypeError):               # as list.index: equal but not by hash, or absent
                return hit[2].index(v)
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
            elif isinstance(a, numbers.Real) and isinstance(b, numbers.Real):
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
    if isinstance(a, numbers.Real) and isinstance(b, numbers.Real):
        return float(a) == float(b)
    return a == b
