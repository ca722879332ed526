"""The cases ("combos") of the branch-and-bound bound of :mod:`groupcf.sequential.bnb`:
set-action choices times ordered subsets of the interacting actions, each with the affine
map from tweak values to model inputs and, per box of tweak values, the intervals of its
state-dependent quantities (see that module's docstring)."""
from __future__ import annotations

import itertools
import math

import numpy as np

from groupcf.sequential.actions import AbsChange, Condition, Constant, CustomCost, Nonlinear, RelativeSquared
from groupcf.sequential.engine import Problem

MAX_COMBOS = 4096


def _always(cond, lo, hi, idx) -> bool:
    """Whether a constant condition holds for every value of its feature in ``[lo, hi]``."""
    if not isinstance(cond, Condition) or not cond.is_constant:
        return False
    j, c = idx[cond.lhs], float(cond.rhs)
    return {"<": hi[j] < c, "<=": hi[j] <= c, ">": lo[j] > c, ">=": lo[j] >= c}.get(cond.op, False)


def _reads(a, lo=None, hi=None, idx=None) -> set | None:
    """Features whose values before ``a`` change its cost, effect or (given the box
    ``lo, hi`` of reachable states) the outcome of its pre-conditions (``None``: all)."""
    out = set()
    if isinstance(a.cost, RelativeSquared):
        out.add(a.feature)
    for g, eff in a.consequences.items():
        if isinstance(eff, Nonlinear):
            if eff.reads is None:
                return None
            out |= set(eff.reads) | {g}
        elif isinstance(eff, tuple) or callable(eff):
            return None
    if lo is not None:
        for cond in a.pre:
            if isinstance(cond, Condition) and not _always(cond, lo, hi, idx):
                out |= cond.features()
    return out


_OPS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}


def _possible(cond, before, after):
    """Per node: whether ``cond`` can hold for some state in the intervals (``before``,
    ``after``: ``{feature: (lo, hi)}``)."""
    if not isinstance(cond, Condition):
        return True
    ll, lh = (after if cond.lhs_after else before)[cond.lhs]
    if cond.is_constant:
        rl = rh = float(cond.rhs)
    else:
        rl, rh = (after if cond.rhs_after else before)[cond.rhs]
    if cond.op in ("<", "<="):
        return _OPS[cond.op](ll, rh)
    if cond.op in (">", ">="):
        return _OPS[cond.op](lh, rl)
    if cond.op == "==":
        return (ll <= rh) & (rl <= lh)
    return ~((ll == lh) & (rl == rh) & (ll == rl))


class _Model:
    """The combos (module docstring) and the map from tweak values to model inputs."""

    def __init__(self, problem: Problem, encoding, ranges: dict, cap: float | None, box=None):
        from groupcf.sequential.bound import _pre_fails
        aset, idx, x0 = problem.actions, problem.actions.index, problem.x0
        self.problem, self.enc = problem, encoding
        cats = encoding.categories
        self.cats = cats
        self.pad = 0.5 * 10.0 ** -problem.decimals if problem.decimals is not None else 0.0
        self.adds = [i for i, a in enumerate(aset) if a.kind == "add" and not _pre_fails(a, aset, x0, idx)]
        sets = [i for i, a in enumerate(aset) if a.kind == "set" and not _pre_fails(a, aset, x0, idx)]
        for i in self.adds:
            a = aset[i]
            if a.feature in cats or any(g in cats for g in a.consequences):
                raise _NotExpressible(f"action {a.name!r} adds to a categorical feature")
        changed_by_add = {f for i in self.adds for f in aset[i].changed_features()}
        for i in sets:
            a = aset[i]
            if a.consequences or (a.feature not in cats and a.feature in changed_by_add):
                raise _NotExpressible(f"set action {a.name!r} interacts with add actions")
        self.var = {i: k for k, i in enumerate(self.adds)}
        if problem.decimals is not None:     # rounding keeps x0 + sum(delta_i d_i) exact only so
            if not np.array_equal(np.round(x0, problem.decimals), x0):
                raise _NotExpressible("the start state is not rounded to `decimals`")
            for i in self.adds:
                for g, eff in aset[i].consequences.items():
                    if not isinstance(eff, tuple) and not callable(eff) and float(eff) != round(float(eff)):
                        raise _NotExpressible(f"rounding after the non-integer consequence factor {eff} on {g!r}")
        # interacting actions: read a feature another (add) action changes
        inter = set()
        bl, bh = box if box is not None else (None, None)
        numeric = {f for f in aset.features if f not in cats}

        def reads(a):
            r = _reads(a, bl, bh, idx)
            return r if r is None else r & numeric

        for i in self.adds:
            r = reads(aset[i])
            others = {f for j in self.adds if j != i for f in aset[j].changed_features()}
            if r is None or r & others or any(isinstance(e, tuple) for e in aset[i].consequences.values()):
                inter.add(i)
        grow = True
        while grow:      # who changes what an interacting action reads interacts too
            grow = False
            for i in list(inter):
                r = reads(aset[i])
                for j in self.adds:
                    if j not in inter and (r is None or r & set(aset[j].changed_features())):
                        inter.add(j)
                        grow = True
        self.inter = sorted(inter)
        self.commuting = [i for i in self.adds if i not in inter]
        n_slots = sum(1 for i in self.inter for e in aset[i].consequences.values() if isinstance(e, tuple))
        self.slot0 = len(self.adds)
        self.p = len(self.adds) + n_slots
        # with ``decimals`` an add action's actual change is a difference of rounded values (the
        # start is rounded, every state after an action too): a multiple of the unit (bnb._snap)
        self.unit = np.zeros(self.p)
        if problem.decimals is not None:
            self.unit[:self.slot0] = 10.0 ** -problem.decimals
        # costs
        self.w = np.zeros(self.p)
        self.const_if_used = np.zeros(self.p)
        for i in self.adds:
            c = aset[i].cost
            if isinstance(c, AbsChange):
                self.w[self.var[i]] = c.weight
            elif isinstance(c, Constant):
                self.const_if_used[self.var[i]] = c.c
            elif isinstance(c, CustomCost):
                self.const_if_used[self.var[i]] = c.min_cost
        for i in self.inter:         # taken for sure in a combo: its constant is in the combo's
            self.const_if_used[self.var[i]] = 0.0
        # root box of the tweak values
        self.lo0, self.hi0 = np.zeros(self.p), np.zeros(self.p)
        self.lo_used, self.hi_used = np.zeros(self.p), np.zeros(self.p)
        changers: dict = {}
        for i, a in enumerate(aset):
            for f in a.changed_features():
                changers.setdefault(f, []).append(i)
        for i in self.adds:
            a = aset[i]
            lo_i, hi_i = ranges[i]
            if changers[a.feature] == [i]:      # its feature's only changer: post-conditions f' op c
                x = float(x0[idx[a.feature]])
                for cond in a.post:
                    if isinstance(cond, Condition) and cond.lhs == a.feature and cond.lhs_after \
                            and cond.is_constant:
                        if cond.op in ("<", "<="):
                            hi_i = min(hi_i, float(cond.rhs) - x + 2 * self.pad)
                        elif cond.op in (">", ">="):
                            lo_i = max(lo_i, float(cond.rhs) - x - 2 * self.pad)
            self.lo_used[self.var[i]], self.hi_used[self.var[i]] = lo_i, hi_i    # when taken
            lo_i, hi_i = min(lo_i, 0.0), max(hi_i, 0.0)   # 0: the action is not taken
            self.lo0[self.var[i]], self.hi0[self.var[i]] = lo_i, hi_i
        # combos: set choices x ordered subsets of the interacting actions
        choices = []
        for i in sets:
            a = aset[i]
            opts: list[float | None] = [None] + [float(v) for v in a.choices if float(v) != float(x0[idx[a.feature]])]
            if cap is not None and isinstance(a.cost, Constant) and a.cost.c > cap:
                opts = [None]
            choices.append([(i, v) for v in opts])
        orders = [o for r in range(len(self.inter) + 1) for o in itertools.permutations(self.inter, r)]
        n = math.prod(len(c) for c in choices) * len(orders)
        if n > MAX_COMBOS:
            raise _NotExpressible(f"{n} combos of set actions and orders (more than {MAX_COMBOS})")
        self.combos = []
        for pick in itertools.product(*choices) if choices else [()]:
            picked = [(i, v) for i, v in pick if v is not None]
            feats = [aset[i].feature for i, _ in picked]
            if len(set(feats)) < len(feats):
                continue
            const = 0.0
            for i, _ in picked:
                c = aset[i].cost
                const += c.c if isinstance(c, Constant) else (c.min_cost if isinstance(c, CustomCost) else 0.0)
            for order in orders:
                self.combos.append(self._combo(picked, order, const))

    def _combo(self, picked, order, const):
        aset = self.problem.actions
        c = const
        for i in order:
            cost = aset[i].cost
            c += cost.c if isinstance(cost, Constant) else (cost.min_cost if isinstance(cost, CustomCost) else 0.0)
        present = np.zeros(self.p, bool)
        for i in [*order, *self.commuting]:
            present[self.var[i]] = True
        x = self.problem.x0.astype(float).copy()
        for i, v in picked:
            x[aset.index[aset[i].feature]] = v
        combo = {"sets": picked, "order": tuple(order), "const": c, "x": x, "present": present}
        A, z0, _, (slot_lo, slot_hi), slots, _ = self._replay(combo, None, None)
        combo.update(A=A, z0=z0, slots=slots)
        lo, hi = np.where(present, self.lo0, 0.0), np.where(present, self.hi0, 0.0)
        for i in order:       # taken for sure: its own range, without 0
            j = self.var[i]
            lo[j], hi[j] = self.lo_used[j], self.hi_used[j]
        for s in slots:       # a nonlinear consequence's value: within its box
            present[s] = True
            lo[s], hi[s] = slot_lo[s][0], slot_hi[s][0]
        combo.update(lo=lo, hi=hi)
        return combo

    def _replay(self, combo, lo, hi):
        """Symbolic run of a combo: final inputs ``z = A y + z0``; with node boxes
        ``lo, hi`` also the intervals of its nonlinear consequences (slots) and the
        quadratic weights ``q`` of relative costs, and whether the conditions of the actions
        taken can hold. Returns ``(A, z0, q, slot_box, slots, ok)``."""
        aset, enc = self.problem.actions, self.enc
        K = 1 if lo is None else lo.shape[0]
        base = {f: np.full(K, combo["x"][j]) for j, f in enumerate(aset.features)}
        coef = {f: np.zeros(self.p) for f in aset.features}
        q = np.zeros((K, self.p))
        slot_lo, slot_hi = {}, {}
        slots, s_next = [], self.slot0

        def interval(f):
            if lo is None:
                return base[f], base[f]
            k = coef[f]
            return (base[f] + np.minimum(k * lo, k * hi).sum(1), base[f] + np.maximum(k * lo, k * hi).sum(1))

        ok = np.ones(K, bool)
        taken = set(combo["order"])
        for i in [*combo["order"], *self.commuting]:
            a, j = aset[i], self.var[i]
            check = lo is not None and i in taken      # conditions of an action taken for sure
            if check:
                before = {f: interval(f) for f in aset.features}
                for cond in a.pre:
                    ok &= _possible(cond, before, before)
            if isinstance(a.cost, RelativeSquared) and lo is not None:
                ol, oh = interval(a.feature)
                m = np.maximum(np.abs(ol - a.cost.offset), np.abs(oh - a.cost.offset))
                q[:, j] = np.where(m > 0, 1.0 / np.where(m > 0, m, 1.0) ** 2, 0.0)
            if any(isinstance(e, tuple) for e in a.consequences.values()) and lo is not None:
                before = {f: interval(f) for f in aset.features}
            coef[a.feature] = coef[a.feature].copy()
            coef[a.feature][j] += 1.0
            written = {}
            for g, eff in a.consequences.items():
                if isinstance(eff, tuple):
                    s = s_next
                    s_next += 1
                    slots.append(s)
                    blo, bhi = float(eff[1][0]) - self.pad, float(eff[1][1]) + self.pad
                    slot_lo[s], slot_hi[s] = np.full(K, blo), np.full(K, bhi)
                    if lo is not None:
                        gl, gh = np.full(K, blo), np.full(K, bhi)
                        if isinstance(eff, Nonlinear) and eff.interval is not None:
                            il, ih = eff.interval({f: v[0] for f, v in before.items()},
                                                  {f: v[1] for f, v in before.items()}, lo[:, j], hi[:, j])
                            gl = np.maximum(gl, np.asarray(il, float) - self.pad)
                            gh = np.minimum(gh, np.asarray(ih, float) + self.pad)
                        slot_lo[s], slot_hi[s] = gl, gh
                    written[g] = s
                    base[g] = np.zeros(K)
                    coef[g] = np.zeros(self.p)
                    coef[g][s] = 1.0
                else:
                    coef[g] = coef[g].copy()
                    coef[g][j] += float(eff)
            if check:
                after = dict(before)
                for f in a.changed_features():
                    after[f] = interval(f)
                    if f in written:     # a nonlinear consequence: its interval, within the node's
                        sw = written[f]
                        after[f] = (np.maximum(after[f][0], slot_lo[sw]), np.minimum(after[f][1], slot_hi[sw]))
                for cond in a.post:
                    ok &= _possible(cond, before, after)
        A = np.zeros((enc.n_inputs, self.p))
        z0 = np.zeros(enc.n_inputs)
        for j, f in enumerate(aset.features):
            cols = enc.columns[j]
            if f in self.cats:
                z0[cols] = (self.cats[f] == combo["x"][j]).astype(float)
            else:
                A[cols[0]] = coef[f]
                z0[cols[0]] = base[f][0]
        return A, z0, q, (slot_lo, slot_hi), slots, ok


class _NotExpressible(Exception):
    pass
