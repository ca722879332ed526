"""The compiled cascade GeCo evaluates: rules bound to an active domain
(:class:`BoundConstraints`) applied to candidates in Δ-representation (:class:`Candidates`)."""
from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .language import _ARITH, _OPS, _ORDER_OPS, And, Arith, Compare, Const, InSet, Not, Or, PLAFError, Ref, Rule, cf
from .program import Constraints


# ====================================================================== compiled form
class FeatureTable(Protocol):
    """What PLAF needs to know about the features to compile against them.

    A protocol, implemented by GeCo's active domain
    (:class:`~groupcf.single.geco.ActiveDomain`): names, kinds, and per feature the sorted
    *keys* of the domain values (the number for numeric features, the category index
    otherwise), their counts, and ``key_of(l, value)``.

    Attributes
    ----------
    names : list of str
        The features.
    kinds : list of str
        Their kinds (``"numeric"``, ``"categorical"``, ``"ordinal"``, ``"binary"``).
    keys : list of numpy.ndarray
        Per feature, the sorted keys of its domain values.
    counts : list of numpy.ndarray
        Per feature, how often each value occurs in the data.

    Examples
    --------
    >>> from groupcf.single.geco import ActiveDomain
    >>> p = gcf.plaf
    >>> dom = ActiveDomain(pd.DataFrame({"age": [20, 30, 40, 50], "hours": [20, 40, 40, 60]}))
    >>> dom.names, dom.keys[1], dom.counts[1], dom.key_of(dom.index("hours"), 40)
    (['age', 'hours'], array([20., 40., 60.]), array([1, 2, 1]), 40.0)
    """

    names: list[str]
    kinds: list[str]
    keys: list[np.ndarray]
    counts: list[np.ndarray]

    def index(self, name: str) -> int:  # pragma: no cover - protocol
        """The position of feature ``name``.

        Parameters
        ----------
        name : str
            A feature.

        Returns
        -------
        int
            Its index in :attr:`names`.

        Raises
        ------
        KeyError
            An unknown feature.
        """
        ...

    def key_of(self, l: int, value) -> float:  # pragma: no cover - protocol
        """The key of a raw ``value`` of feature ``l``.

        Parameters
        ----------
        l : int
            The feature's index.
        value : object
            A raw value.

        Returns
        -------
        float
            The number (numeric features) or the category's index.

        Raises
        ------
        KeyError, ValueError, TypeError
            A value the feature does not have.
        """
        ...


class Candidates:
    """Candidates in Δ-representation, as PLAF sees them.

    Parameters
    ----------
    M : numpy.ndarray
        ``M[i, l]``: whether candidate ``i`` changes feature ``l`` (bool).
    V : numpy.ndarray
        ``V[i, l]``: then the index of its new value in the feature's domain (``-1`` when
        unchanged).
    keys : list of numpy.ndarray
        The feature table's ``keys``.
    xkeys : numpy.ndarray
        ``xkeys[l]``: the instance's key of feature ``l``.

    Examples
    --------
    >>> from groupcf.single.geco import ActiveDomain
    >>> p = gcf.plaf
    >>> dom = ActiveDomain(pd.DataFrame({"age": [20, 30, 40, 50], "hours": [20, 40, 40, 60]}))
    >>> cand = p.Candidates(np.array([[True, False], [False, True]]), np.array([[0, -1], [-1, 2]]),
    ...                     dom.keys, np.array([30.0, 40.0]))
    >>> len(cand), cand.cf(0), cand.cf(1)         # age 30 -> 20; hours 40 -> 60
    (2, array([20., 30.]), array([40., 60.]))
    """

    __slots__ = ("M", "V", "keys", "xkeys")

    def __init__(self, M, V, keys, xkeys):
        self.M, self.V, self.keys, self.xkeys = M, V, keys, xkeys

    def cf(self, l: int) -> np.ndarray:
        """Every candidate's key of feature ``l`` (the instance's where unchanged).

        Parameters
        ----------
        l : int
            The feature's index.

        Returns
        -------
        numpy.ndarray
            One key per candidate.
        """
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
    cond: Callable[[Any], Any] | None   # callable(ctx) -> bool array / bool, or None
    cond_x_only: bool
    target: int
    op: str
    rhs: Callable[[Any], Any] | None    # callable(ctx) -> array / scalar (Compare), None for isin
    rhs_x_only: bool
    keyset: np.ndarray | None  # isin / notin keys


def _x_only(cl: _Clause) -> bool:
    """Whether ``cl`` reads only the instance, in its condition and right-hand side."""
    return cl.rhs_x_only and cl.cond_x_only


def _applies(cl: _Clause, ctx: _XOnly) -> bool:
    """Whether the x-only clause ``cl`` applies at the instance (no condition, or a true one)."""
    return cl.cond is None or bool(cl.cond(ctx))


class BoundConstraints:
    """A :class:`Constraints` compiled against a feature table; works on
    :class:`Candidates` in bulk (numpy).

    GeCo's search uses it to repair (:meth:`cascade`) and check (:meth:`check`) every
    candidate.

    Parameters
    ----------
    constraints : Constraints
        The program.
    table : FeatureTable
        The features (GeCo's active domain).

    Raises
    ------
    PLAFError
        A feature the table lacks, a constant that is not a value of its feature, or an
        order comparison on an unordered categorical.

    Examples
    --------
    >>> from groupcf.single.geco import ActiveDomain
    >>> p = gcf.plaf
    >>> dom = ActiveDomain(pd.DataFrame({"age": [20, 30, 40, 50], "hours": [20, 40, 40, 60]}))
    >>> bound = p.BoundConstraints(p.Constraints([p.increasing("age"), p.cf("hours") <= 40]), dom)
    >>> cand = p.Candidates(np.array([[True, False], [False, True], [True, False]]),
    ...                     np.array([[0, -1], [-1, 2], [3, -1]]), dom.keys, np.array([30.0, 40.0]))
    >>> bound.check(cand)          # age 30 -> 20 decreases; hours 40 -> 60 exceeds 40; age -> 50 holds
    array([False, False,  True])
    """

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
        return _OPS[cl.op](value, _rhs(cl, ctx))

    def allowed(self, xkeys) -> list[np.ndarray | None]:
        """Per feature, the domain values every candidate may take at this instance.

        From unconditional x-only constraints: fixed, increasing, bounds, ...

        Parameters
        ----------
        xkeys : numpy.ndarray
            The instance's key per feature.

        Returns
        -------
        list
            Per feature, a bool mask over its domain values, or ``None`` (no restriction).
        """
        ctx = _XOnly(xkeys)
        out: list[np.ndarray | None] = [None] * len(self.table.names)
        for cl in self.clauses:
            if not _x_only(cl) or not _applies(cl, ctx):
                continue
            ok = np.asarray(self._holds(cl, ctx, self.table.keys[cl.target]), dtype=bool)
            out[cl.target] = ok if out[cl.target] is None else out[cl.target] & ok
        return out

    def open_clauses(self, xkeys) -> list[_Clause]:
        """The clauses that candidates whose changed values are all :meth:`allowed` may still
        break at this instance: every clause but the unconditional (or x-only conditioned)
        ones with an x-only right-hand side that the instance's own values satisfy, or whose
        x-only condition is false. :meth:`allowed` holds each changed value to such a clause,
        the instance's value holds it where the target is unchanged, so :meth:`cascade` would
        repair nothing for it and :meth:`check` would find it true.

        Parameters
        ----------
        xkeys : numpy.ndarray
            The instance's key per feature.

        Returns
        -------
        list
            The clauses to pass to :meth:`cascade` and :meth:`check` (``clauses=``), in order.
        """
        ctx = _XOnly(xkeys)
        return [cl for cl in self.clauses if not _x_only(cl) or (
            _applies(cl, ctx) and not bool(np.all(self._holds(cl, ctx, np.asarray(xkeys[cl.target])))))]

    def cascade(self, cand: Candidates, allowed, clauses: list[_Clause] | None = None) -> None:
        """Repair ``cand`` in place, clause by clause in dependency order (see :mod:`groupcf.plaf`).

        Parameters
        ----------
        cand : Candidates
            The candidates (changed in place).
        allowed : list
            What :meth:`allowed` returned for the instance.
        clauses : list, optional
            The clauses to apply (default: all); :meth:`open_clauses` for candidates whose
            changed values are all allowed.
        """
        for cl in self.clauses if clauses is None else clauses:
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

    def check(self, cand: Candidates, clauses: list[_Clause] | None = None) -> np.ndarray:
        """Whether each candidate satisfies every rule.

        Parameters
        ----------
        cand : Candidates
            The candidates.
        clauses : list, optional
            The clauses to check (default: all); :meth:`open_clauses` for candidates whose
            changed values are all allowed.

        Returns
        -------
        numpy.ndarray
            One bool per candidate.
        """
        ok = np.ones(len(cand), dtype=bool)
        for cl in self.clauses if clauses is None else clauses:
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
        keyset = cl.keyset
        if keyset is None:
            rhs = np.broadcast_to(np.asarray(_rhs(cl, sub), dtype=float), (len(rows),))
            x_ok = _OPS[cl.op](xk, rhs)
        else:
            rhs = np.full(len(rows), np.nan)    # isin / notin: no right-hand side (not read)
            x_ok = np.full(len(rows), bool(np.isin(xk, keyset) != (cl.op == "notin")))
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
            elif keyset is not None:
                good = np.isin(fk, keyset) != (cl.op == "notin")
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


def _rhs(cl: _Clause, ctx: Any) -> Any:
    """The right-hand side of a comparison clause at ``ctx``."""
    if cl.rhs is None:                          # pragma: no cover - the compiler sets one
        raise PLAFError(f"{cl.rule!r}: a comparison without a right-hand side")
    return cl.rhs(ctx)


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
