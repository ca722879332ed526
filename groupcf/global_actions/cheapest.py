r"""The cheapest action covering at least :math:`N` people (``min_coverage``), as one MIP.

Issue 23, item 2: with ``k`` and ``min_coverage=`` the answer is "the cheapest ``k``
actions reaching that share". The integer master picks *which* people to count from the
pooled columns only; the polish then finds the cheapest action for that set only. Neither
chooses the people and the action together. This MIP does (for one action; ``k`` actions
one at a time against the others' assignment, :func:`reach_share`).

**Variables.** The action variables :math:`b, s, \delta` and, per candidate type
:math:`t`, the binary :math:`z_t` "covered" with the model embedded on :math:`t`'s
applied row — all built by :meth:`ActionMIP._build
<groupcf.global_actions.pricing.ActionMIP._build>` (not forced: :math:`z_t` free), the
same rows and the same embedding as the pricing MIP, target :math:`\tau + \varepsilon`
(``z_t = 1`` ⇒ the action covers :math:`t`). With other actions fixed (``k ≥ 2``), a
binary :math:`o_t` "counted through the others" for each type they cover, at their
cheapest cost :math:`d^o_t`, and :math:`z_t + o_t \le 1`. The coverage row
:math:`\sum_t m_t (z_t + o_t) \ge N`.

**The cost** of :math:`t` under the action, linear in the action variables, from each
feature's :class:`~groupcf.global_actions.actions.CostTerm` (the terms of
:meth:`ActionSpace.costs <groupcf.global_actions.actions.ActionSpace.costs>`, times
:math:`m_t`): a one-hot feature :math:`\sum_h P_{th} s_{lh}`; a binary one
:math:`P_{t0} b_l + (P_{t1} - P_{t0}) s_l`; a shift :math:`w_l m_t u_l` with one shared
:math:`u_l \ge |\mathrm{scale}_l\,\delta_l|`; a set value :math:`w_l m_t u_{tl}` with
:math:`u_{tl} \ge \pm(\mathrm{scale}_l\,\delta_l - x_{tl}) - R_{tl}(1 - b_l)`,
:math:`R_{tl} = \max(|x_{tl}|, |1 - x_{tl}|)`. At an optimum each :math:`u` equals its
absolute value (it has a positive cost and no other row).

**Linearisation of** :math:`z_t \cdot \mathrm{cost}_t(a)` (a product of a binary and a
bounded linear form). With :math:`0 \le \mathrm{cost}_t(a) \le M_t` for every action
(:math:`M_t` = the sum over the mutable features of each term's largest value):

.. math::

    c_t \ge 0, \qquad c_t \ge \mathrm{cost}_t(a) - M_t (1 - z_t), \qquad
    \min \sum_t c_t + \sum_t d^o_t o_t .

*Proof.* At :math:`z_t = 1` the rows read :math:`c_t \ge \mathrm{cost}_t(a)`; at
:math:`z_t = 0`, :math:`\mathrm{cost}_t(a) - M_t \le 0`, so they read :math:`c_t \ge 0`.
Hence every feasible point has :math:`c_t \ge z_t\,\mathrm{cost}_t(a)`, and since
:math:`c_t` appears in no other row with a positive objective coefficient, every optimum
has :math:`c_t = z_t\,\mathrm{cost}_t(a)`: the MIP's optimum (and any dual bound on it) is
that of :math:`\min_{a, z} \sum_t z_t\,\mathrm{cost}_t(a)`. ∎

**Which cost.** ``explain_global`` reports the *mean* cost over the people covered (the
curve's ``mean_cost``; the benchmark's scorer, GLOBE-CE's metric, Ley et al. 2023, too).
At a fixed number :math:`N` of people counted the mean is the total over :math:`N`, so the
least total over :math:`N` counted people is their least mean. The MIP asks :math:`\ge N`
(types come with multiplicities :math:`m_t`); with every :math:`m_t = 1` an optimum counts
exactly :math:`N` (costs are :math:`\ge 0`: uncounting a person never raises the total),
and it counts the :math:`N` cheapest people its action covers (else a swap is cheaper).
The answer reports the mean over *everyone* the action covers, :math:`g(a)`; the people
covered beyond the counted ones cost no less than any counted one, so :math:`g(a) \ge
\mathrm{total}/N`, with equality when the action covers exactly the people counted.
**A lower bound on the least** :math:`g`. For every action :math:`a` covering at least
:math:`N` people, its cheapest covered types up to a weight :math:`W \ge N` (so
:math:`W \le N + m_{\max} - 1`) are a feasible choice of :math:`z` here, and their mean is
at most :math:`g(a)` (the cheapest people's mean is at most everyone's): the MIP's dual
bound :math:`\le W g(a)`, so :math:`L = \mathrm{bound}/(N + m_{\max} - 1) \le g(a)` —
``stats["min_coverage"]["mean_cost_bound"]``; the cost is reported *optimal* (``status``)
when the MIP is solved and the answer's mean meets :math:`L`. A second bound needs no MIP:
each person an action covers costs at least their *nearest* action's proven cost
:math:`\ell_t` (:func:`nearest_floor`), so the mean of the :math:`N` smallest
:math:`\ell_t` over the coverable people, counted one by one, is :math:`\le g(a)`
(:math:`L_0`); when the answer meets it, it is optimal and the MIP is skipped
(``proof="nearest actions"``). :math:`\ell_t` also enters the MIP as
:math:`\sum_l c_{tl} \ge m_t \ell_t z_t`. The bound is over actions
that clear :math:`\tau + \varepsilon` on the people they count (the pricing MIP's target,
:mod:`~groupcf.global_actions.pricing`).

**``k`` actions** (:func:`reach_share`): each action in turn is the MIP's action, the
others fixed (their cheapest cover :math:`d^o_t`), twice over: a descent — its answer is
never dearer than the integer master's, but nothing is proven for ``k ≥ 2``.

**After the enumeration** (every action scored, up to dominance): the same choice is an
exact pick over its columns (:func:`pool_pick`), no MIP. **When it declined**, the actions
that only set categories (a finite sub-space, :func:`sets_only`) are enumerated on their
own when small, and the best of them reaching the share is the MIP's incumbent: on the
German credit GBT, Tmax 3, 48 of 55 people, the MIP alone (its LP bound weak: a fractional
:math:`z_t` relaxes every person's model rows) kept the polished 1.833 for 10 minutes, the
16,109 category-set actions give 1.229 in about 5 s.
"""
from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..solvers.base import INF, Status, VarType
from ..utils import Deadline
from .actions import Action, ActionSpace
from .pricing import ActionMIP, OutOfTime


@dataclass
class Reach:
    """One solve: its status, the action found, the MIP's total cost and its lower bound."""

    status: Status
    action: Action | None = None
    total: float | None = None
    bound: float | None = None
    actions: list = field(default_factory=list)


def cheapest_reaching(mip: ActionMIP, types, need: float, others: np.ndarray | None = None,
                      start: Action | None = None, time_limit: float | None = None,
                      floor: np.ndarray | None = None, n_solutions: int = 5) -> Reach:
    r"""The action of least total cost over the people it counts, counting at least
    ``need`` people (module docstring). ``types``: the candidates the action may cover;
    ``others``: per type, the (per-person) cost of the other actions' cheapest cover
    (``inf``: none), or ``None``; ``start``: an incumbent offered as a MIP start;
    ``floor``: per type, a proven lower bound on its per-person cost under any action
    covering it (its nearest action's bound), added as :math:`\sum_l c_{tl} \ge m_t
    \ell_t z_t`; ``n_solutions``: actions asked of the solver (``actions``, best first).
    ``time_limit`` bounds the whole call, building the MIP included (``TIME_LIMIT`` when
    the building used it up; the solve gets what is left)."""
    a = mip.a
    types = [int(t) for t in types]
    own = Deadline(time_limit)
    try:
        be, V, z, _ = mip._build(types, False, time_limit, deadline=own)
    except OutOfTime:
        return Reach(Status.TIME_LIMIT)
    tt = np.array(list(z.keys()), dtype=np.int64)
    zs = np.array(list(z.values()), dtype=np.int64)
    T = len(tt)
    oo = np.zeros(0, dtype=np.int64) if others is None else np.flatnonzero(np.isfinite(others))
    if T + len(oo) == 0 or float(a.m[tt].sum() + a.m[oo].sum()) < need - 1e-9:
        return Reach(Status.INFEASIBLE)
    c = np.zeros(0, dtype=np.int64)
    if T:
        blocks = _cost_rows(a, be, V, tt)
        c = be.add_vars(T * len(blocks), 0.0, INF).reshape(len(blocks), T)
        for cl, (rows, cols, vals, M) in zip(c, blocks):
            # c_tl - cost_tl(a) - M_tl z_t >= -M_tl
            A = sp.csr_matrix((np.r_[-vals, np.ones(T), -M], (np.r_[rows, np.arange(T), np.arange(T)],
                                                              np.r_[cols, cl, zs])), shape=(T, be.num_vars))
            be.add_rows(A, -M, np.full(T, INF))
        if floor is not None:                 # covered, t costs at least its nearest action: Σ_l c_tl >= ℓ_t z_t
            lt = floor[tt] * a.m[tt]
            A = sp.csr_matrix((np.r_[np.ones(c.size), -lt], (np.r_[np.tile(np.arange(T), len(c)), np.arange(T)],
                                                             np.r_[c.ravel(), zs])), shape=(T, be.num_vars))
            be.add_rows(A, np.zeros(T), np.full(T, INF))
        c = c.ravel()
    o = be.add_vars(len(oo), 0.0, 1.0, VarType.BINARY) if len(oo) else np.zeros(0, dtype=np.int64)
    if len(oo):
        at = {int(t): j for j, t in enumerate(tt)}
        for t, ot in zip(oo, o):             # counted once: z_t + o_t <= 1
            if int(t) in at:
                be.add_row([int(zs[at[int(t)]]), int(ot)], [1.0, 1.0], -INF, 1.0)
    be.add_row(np.r_[zs, o], np.r_[a.m[tt], a.m[oo]], need - 1e-6, INF)
    do = np.zeros(0) if others is None else others[oo] * a.m[oo]
    be.set_objective(np.r_[c, o], np.r_[np.ones(len(c)), do], sense="min")
    if start is not None and be.capabilities.mip_start:
        idx, val = _start_values(mip, V, start, tt, zs, oo, o, others, need)
        be.set_mip_start(idx, val)
    if own.passed:
        return Reach(Status.TIME_LIMIT)
    be.options.time_limit = own.left()
    many = n_solutions > 1 and be.capabilities.multiple_solutions
    sol = be.solve(n_solutions=n_solutions) if many else be.solve()
    bound = sol.dual_bound if sol.dual_bound is not None and math.isfinite(sol.dual_bound) else None
    if not sol.status.has_solution:
        return Reach(sol.status, bound=bound)
    if bound is None and sol.status == Status.OPTIMAL:
        bound = float(sol.objective)
    acts = list({act.key: act for act in (mip._action(x, V, z) for x in [sol.x, *sol.pool])}.values())
    return Reach(sol.status, acts[0], float(sol.objective), bound, acts)


def _cost_rows(a: ActionSpace, be, V, tt: np.ndarray) -> list:
    """Per mutable feature ``l``: ``(rows, cols, vals, M)``, the linear form of ``m_t
    cost_tl(a)`` for each type ``j`` of ``tt`` in the action variables (module docstring;
    new ``u`` variables and their rows added to ``be``) and ``M_tl``, its largest value
    over all actions."""
    T = len(tt)
    mt = a.m[tt]
    j = np.arange(T)
    out = []
    for l in a.mutable:
        f, d, term = a.feats[l], V[l], a.terms[l]
        parts: list[tuple] = []
        if f.encoding != "continuous":
            P = term.by_category(a.codes[tt, l]) * mt[:, None]
            M = P.max(axis=1)
            if f.encoding == "onehot":
                parts += [(d["s"][h], P[:, h]) for h in range(P.shape[1])]
            else:
                parts += [(d["b"], P[:, 0]), (d["s"][0], P[:, 1] - P[:, 0])]
        elif a.numeric == "shift":            # |scaled δ| <= 1, the same for everyone
            sc = d["scale"]
            u = int(be.add_vars(1, 0.0, INF)[0])
            be.add_row([u, d["d"]], [1.0, -sc], 0.0, INF)
            be.add_row([u, d["d"]], [1.0, sc], 0.0, INF)
            parts.append((u, term.weight * mt))
            M = term.weight * mt
        else:                                 # |v - x_t| when b = 1
            sc = d["scale"]
            x = a.Z[tt, f.columns[0]]
            R = np.maximum(np.abs(x), np.abs(1.0 - x))
            u = be.add_vars(T, 0.0, INF)
            for sign in (1.0, -1.0):          # u - sign sc δ - R b >= -R - sign x
                A = sp.csr_matrix((np.r_[np.ones(T), -sign * sc * np.ones(T), -R],
                                   (np.r_[j, j, j], np.r_[u, np.full(T, d["d"]), np.full(T, d["b"])])),
                                  shape=(T, be.num_vars))
                be.add_rows(A, -R - sign * x, np.full(T, INF))
            parts.append((u, term.weight * mt))
            M = term.weight * mt * R
        out.append((np.concatenate([j for _ in parts]),
                    np.concatenate([np.broadcast_to(np.asarray(v, dtype=np.int64), (T,)) for v, _ in parts]),
                    np.concatenate([np.broadcast_to(np.asarray(c, dtype=float), (T,)) for _, c in parts]),
                    np.asarray(M, dtype=float)))
    return out


def _start_values(mip: ActionMIP, V, act: Action, tt, zs, oo, o, others, need):
    """A (partial) MIP start from ``act``: its action variables, and the cheapest types it
    covers at ``τ + ε`` (and the others') counted until ``need``."""
    a = mip.a
    vi, vv = mip._start_values(V, act)            # the action variables
    idx: list[int] = vi.tolist()
    val: list[float] = vv.tolist()
    Zp, ok = a.apply(act, a.Z[tt], a.codes[tt])
    cov = np.zeros(len(tt), dtype=bool)
    if ok.any():
        cov[ok] = a.embedding.score(Zp[ok]) >= mip.target()
    mine = np.where(cov, a.costs(act, a.codes[tt], a.Z[tt]), np.inf)
    theirs = np.full(len(tt), np.inf) if others is None else others[tt]
    # counted: each type by its cheaper cover, cheapest first, until need
    cand = [(float(min(mi, th)), int(t), mi <= th) for t, mi, th in zip(tt, mine, theirs) if min(mi, th) < np.inf]
    mine_types = set(tt.tolist())
    cand += [(float(others[t]), int(t), False) for t in oo if int(t) not in mine_types]
    cand.sort()
    zval, oval = np.zeros(len(tt)), np.zeros(len(oo))
    pos_t = {int(t): j for j, t in enumerate(tt)}
    pos_o = {int(t): j for j, t in enumerate(oo)}
    got = 0.0
    for _, t, by_me in cand:
        if got >= need - 1e-9:
            break
        if by_me:
            zval[pos_t[t]] = 1.0
        else:
            oval[pos_o[t]] = 1.0
        got += float(a.m[t])
    return np.r_[idx, zs, o].astype(np.int64), np.r_[val, zval, oval]


def nearest_floor(mip: ActionMIP) -> np.ndarray:
    """Per type, the proven lower bound of its nearest action's per-person cost (the
    nearest-action MIPs :meth:`ActionMIP.cheapest` solved for it alone, remembered by
    ``mip``; 0 where none was solved): no action covering it costs it less."""
    a = mip.a
    out = np.zeros(a.n_types)
    for key, hit in list(mip._cheapest_seen.items()):
        if len(key) == 2 and not key[0] and hit.status == Status.OPTIMAL:
            lb = hit.bound if hit.bound is not None else hit.objective
            if lb is not None:
                out[key[1]] = max(0.0, float(lb)) / float(a.m[key[1]])
    return out


def selection(aspace: ActionSpace, acts: list, memo: dict | None = None) -> tuple[float, float]:
    """``(people covered, their mean cost)`` of ``acts`` with each type assigned to its
    cheapest covering action (as :func:`~groupcf.explain_global` reports); ``memo``: as
    :func:`_served`'s."""
    if not acts:
        return 0.0, math.nan
    best = _served(aspace, acts, memo)
    ok = np.isfinite(best)
    got_w = float(aspace.m[ok].sum())
    return got_w, float((aspace.m[ok] * best[ok]).sum() / got_w) if got_w else math.nan


def pool_pick(aspace: ActionSpace, actions: list, C: np.ndarray, D: np.ndarray, need: float,
              others: np.ndarray | None = None, chunk: int = 2048) -> tuple[Action | None, float, float]:
    """Over every action of ``actions`` (covers ``C``, per-person costs ``D``, actions ×
    types) as the action (with ``others``, :func:`cheapest_reaching`'s argument, the other
    actions' cheapest covers): ``(the action of least mean cost reaching need, that mean,
    the least total over the need cheapest people served)``. When ``actions`` are every
    action up to dominance (:class:`~groupcf.global_actions.enumerate.Enumeration`: a kept
    column covers what a dropped one covers at no higher cost per person), that least total
    is the one over every action, people picked one by one: with one action, divided by
    ``need`` it is a lower bound on the least mean (module docstring) without the
    multiplicity term."""
    m = aspace.m
    best: tuple[Action | None, float] = (None, math.inf)
    least = math.inf
    for s0 in range(0, len(actions), chunk):
        pos = np.arange(s0, min(len(actions), s0 + chunk))
        Dc = np.where(C[pos], D[pos], np.inf)
        if others is not None:
            Dc = np.minimum(Dc, others[None, :])
        ok = np.isfinite(Dc)
        got = ok @ m
        keep = got >= need - 1e-9
        if not keep.any():
            continue
        Dc, ok, got, pos = Dc[keep], ok[keep], got[keep], pos[keep]
        g = np.where(ok, Dc, 0.0) @ m / got
        j = int(np.argmin(g))
        if g[j] < best[1]:
            best = (actions[int(pos[j])], float(g[j]))
        order = np.argsort(Dc, axis=1, kind="stable")
        ds, ms = np.take_along_axis(Dc, order, axis=1), m[order]
        take = np.clip(need - (np.cumsum(ms, axis=1) - ms), 0.0, ms)      # people counted per type, cheapest first
        least = min(least, float(np.where(take > 0, take * np.where(np.isfinite(ds), ds, 0.0), 0.0).sum(axis=1).min()))
    return best[0], best[1], least


#: the most rows the category-set enumeration of ``min_coverage`` may score
SETS_WORK = 5_000_000


def sets_only(aspace: ActionSpace, deadline: Deadline, max_work: int = SETS_WORK):
    """The actions that only set categories (one-hot and binary features: a finite space),
    enumerated exactly (:func:`~groupcf.global_actions.enumerate.enumerate_actions` on
    those features alone, within ``max_work`` rows and half the time left), or ``None``:
    an exact answer over that sub-space, an incumbent for the MIP over all actions. Only
    when some mutable feature is continuous (else it is the enumeration that declined)."""
    from .enumerate import Declined, enumerate_actions

    keep = [l for l in aspace.mutable if aspace.feats[l].encoding != "continuous"]
    if not keep or len(keep) == len(aspace.mutable):
        return None
    sub = copy.copy(aspace)
    sub.mutable = keep
    sub.Tmax = None if aspace.Tmax is None else min(aspace.Tmax, len(keep))
    out = enumerate_actions(sub, max_work, deadline)
    return None if isinstance(out, Declined) else out


def _floor_bound(aspace: ActionSpace, floor: np.ndarray, types: np.ndarray, need: float) -> float:
    """The mean of the ``need`` smallest nearest-action costs (:func:`nearest_floor`) over
    the coverable people, one by one: every person an action covers costs them at least
    their own, so every action covering ``need`` people has a mean at least this."""
    order = types[np.argsort(floor[types], kind="stable")]
    m = aspace.m[order]
    take = np.clip(need - (np.cumsum(m) - m), 0.0, m)
    return float((take * floor[order]).sum() / need) if need > 0 else 0.0


def _better(aspace: ActionSpace, acts: list, j: int, cands: list, need: float, mean: float,
            memo: dict | None = None):
    """``(acts, mean, improved)``: ``acts`` with action ``j`` replaced by the candidate of
    least reported mean that still reaches ``need``, when that lowers ``mean`` (``memo``:
    as :func:`_served`'s)."""
    improved = False
    for cand in cands:
        if cand.key == acts[j].key:
            continue
        new = acts[:j] + [cand] + acts[j + 1:]
        got, mean2 = selection(aspace, new, memo)
        if got >= need - 1e-9 and mean2 < mean - 1e-9:
            acts, mean, improved = new, mean2, True
    return acts, mean, improved


def _served(aspace: ActionSpace, acts: list, memo: dict | None = None) -> np.ndarray:
    """Per type, the per-person cost of its cheapest covering action of ``acts`` (``inf``: none).
    ``memo`` (action key → that action's costs, ``inf`` where it does not cover) keeps each
    action's cover from being scored again: the descent re-scores every selection it tries."""
    memo = {} if memo is None else memo
    for act in acts:
        if act.key not in memo:
            memo[act.key] = np.where(aspace.cover(act), aspace.costs(act), np.inf)
    return np.stack([memo[act.key] for act in acts]).min(axis=0)


#: ``stats["min_coverage"]["status"]`` when the time limit stopped it before a proof
TIME_LIMIT = "time limit"


def reach_share(aspace: ActionSpace, mip: ActionMIP, acts: list, need: float, coverable: np.ndarray,
                deadline: Deadline, k: int = 1, enum=None, max_work: int = SETS_WORK) -> tuple[list, dict]:
    """``acts`` (covering at least ``need`` people) improved by :func:`cheapest_reaching`:
    for one action, the MIP over every coverable type, warm-started from it; for several,
    each action in turn against the others' assignment (a descent: no proof), twice over.
    A candidate replaces the answer only when it still reaches ``need`` and lowers the
    mean cost. Returns the actions and ``stats["min_coverage"]`` (``status`` ``"optimal"``
    only when proven, ``"time limit"`` when the time limit stopped a MIP or skipped a
    stage — listed in ``skipped``: ``"sets"``, ``"mip"`` — before a proof, else
    ``"feasible"``; ``mean_cost_bound`` the lower bound :math:`L` when one holds). Every
    stage checks ``deadline``: a MIP's time share bounds its building too.
    ``enum``: the complete enumeration (an exact pick, no MIP); ``max_work``: the cap of
    :func:`sets_only` (``0``: not run). Without a time limit the MIP runs until it proves
    its optimum, which can take long (minutes or more on tree ensembles)."""
    t0 = time.perf_counter()
    types = np.flatnonzero(coverable)
    memo: dict = {}                           # each action's costs, scored once (_served)
    got_w, mean = selection(aspace, acts, memo)
    info: dict = {"need": int(math.ceil(need - 1e-9)), "mips": 0, "status": "feasible", "mean_cost_bound": None}
    if got_w < need - 1e-9 or not len(types) or not acts:
        info.update(status="unreachable" if got_w < need - 1e-9 else info["status"])
        return acts, info
    if deadline.passed:                       # nothing run: the answer as it came
        info.update(status=TIME_LIMIT, mean_cost=mean, skipped=["sets", "mip"])
        return list(acts), info
    acts = list(acts)
    info["method"] = "mip" if enum is None else "enumerated"
    floor = nearest_floor(mip)
    # an exact answer over the category sets (max_work 0: never enumerate)
    sub = sets_only(aspace, deadline, max_work) if enum is None and max_work > 0 else None
    if sub is not None:
        info["sets_enumerated"] = sub.candidates
    skipped: list[str] = ["sets"] if sub is None and enum is None and max_work > 0 and deadline.passed else []
    L0 = _floor_bound(aspace, floor, types, need)
    if k == 1 and enum is None:
        info["mean_cost_bound"] = L0
    rounds = [(0, j) for j in range(len(acts))] if len(acts) == 1 else \
        [(r, j) for r in range(2) for j in range(len(acts))]
    stalled, timed_out = 0, False
    for i, (_, j) in enumerate(rounds):
        if deadline.passed:
            skipped.append("mip")
            break
        if len(acts) > 1 and stalled >= len(acts):
            break
        left = deadline.left()
        others = None
        if len(acts) > 1:
            others = _served(aspace, acts[:j] + acts[j + 1:], memo)
        if enum is not None:                  # every action enumerated: an exact pick
            act, _, least = pool_pick(aspace, enum.actions, enum.C, enum.D, need, others)
            res = Reach(Status.OPTIMAL, act, least, least, [] if act is None else [act])
        else:
            if sub is not None:               # the best category-set action joins the answer when cheaper
                act, _, _ = pool_pick(aspace, sub.actions, sub.C, sub.D, need, others)
                acts, mean = _better(aspace, acts, j, [] if act is None else [act], need, mean, memo)[:2]
            if k == 1 and mean <= L0 * (1 + 1e-4) + 1e-9:      # the nearest actions' bound is met
                info.update(status="optimal", mean_cost_bound=L0, proof="nearest actions")
                break
            res = cheapest_reaching(mip, types, need, others, acts[j],
                                    None if left is None else left / (len(rounds) - i), floor=floor)
            info["mips"] += 1
            timed_out = timed_out or res.status in (Status.TIME_LIMIT, Status.FEASIBLE) or deadline.passed
        acts, mean, better = _better(aspace, acts, j, res.actions, need, mean, memo)
        stalled = 0 if better else stalled + 1
        if k == 1:                            # a bound on one action only
            info.update(mip_status=res.status.value, mip_total=res.total, mip_bound=res.bound)
            if res.bound is not None:
                L = res.bound / (need + (0.0 if enum is not None else float(aspace.m.max()) - 1.0))
                L = L if enum is not None else max(L, L0)
                info["mean_cost_bound"] = L
                if res.status == Status.OPTIMAL and mean <= L * (1 + 1e-4) + 1e-9:
                    info["status"] = "optimal"
    if info["status"] != "optimal" and (timed_out or skipped):
        info["status"] = TIME_LIMIT           # stopped by the time limit before a proof
    if skipped:
        info["skipped"] = skipped
    info.update(mean_cost=mean, seconds=round(time.perf_counter() - t0, 3))
    return acts, info
