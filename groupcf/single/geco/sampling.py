"""GeCo's group samplers: frequency-weighted re-sampling of a feature group's value tuples.

:class:`_GroupSampler` holds one group's tuples and weights; :class:`GroupSamplers`
re-samples each row's own group, all groups in one pass, drawing the same random numbers in
the same order as a loop over the groups (GeCo's loop before, kept in the tests as the
reference), so the search is unchanged for a given ``random_state``.
"""
from __future__ import annotations

import numpy as np


class _GroupSampler:
    """Frequency-weighted sampling of one group's value tuples, at one instance: the
    tuples, which of their values equal the instance's, and cumulative weights over the
    tuples that change the group (``cw_change``) or over every feasible one (``cw_any``, for
    rows that may undo the group's change). :class:`GroupSamplers` draws from them."""

    __slots__ = ("members", "tuples", "same", "cw_change", "cw_any")

    def __init__(self, members, tuples, same, cw_change, cw_any):
        self.members, self.tuples, self.same = members, tuples, same
        self.cw_change, self.cw_any = cw_change, cw_any


class GroupSamplers:
    """The samplers of one search, stacked: each group's members, tuples and "equals the
    instance" flags padded to the widest group, one table for all groups."""

    def __init__(self, samplers: list[_GroupSampler]) -> None:
        self.samplers = samplers
        S = len(samplers)
        width = max((len(s.members) for s in samplers), default=1)
        sizes = np.array([len(s.tuples) for s in samplers], dtype=np.int64)
        self.offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.members = np.full((S, width), -1, dtype=np.int64)           # -1: padding
        self.tuples = np.zeros((int(sizes.sum()), width), dtype=np.int64)
        self.same = np.zeros((int(sizes.sum()), width), dtype=bool)
        for s, smp in enumerate(samplers):
            L, o = len(smp.members), self.offset[s]
            self.members[s, :L] = smp.members
            self.tuples[o:o + sizes[s], :L] = smp.tuples
            self.same[o:o + sizes[s], :L] = smp.same
        # the draws' table: segment 2s is sampler s's cw_any, 2s + 1 its cw_change, as int64
        # (the weights are counts), each segment shifted by ``base`` (the totals before it, plus
        # one per segment) so that the whole table is nondecreasing and segments do not meet
        segs = [np.asarray(cw, dtype=np.float64) for smp in samplers for cw in (smp.cw_any, smp.cw_change)]
        lens = np.array([len(cw) for cw in segs], dtype=np.int64)
        self.start = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        w = np.concatenate(segs) if segs else np.zeros(0)
        ok = bool(lens.all())
        if ok:
            steps = np.diff(w)
            steps[self.start[1:] - 1] = 0.0              # a segment's first weight follows another's last
            ok = bool(np.isfinite(w).all() and np.array_equal(w, np.floor(w)) and (w >= 0).all()
                      and (w < 2.0 ** 52).all() and (steps >= 0).all())
        if not ok:
            raise ValueError("a group sampler's cumulative weights must be nondecreasing whole "
                             "numbers (counts) below 2**52")
        self.total = w[self.start + lens - 1] if segs else np.zeros(0)          # floats, as drawn
        self.base = np.concatenate([[0], np.cumsum(self.total.astype(np.int64) + 1)[:-1]]).astype(np.int64)
        self.table = w.astype(np.int64) + np.repeat(self.base, lens) if segs else np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.samplers)

    def changes_group(self, M, which) -> np.ndarray:
        """Whether each row of ``M`` already changes a member of its group ``which``."""
        mem = self.members[which]
        return (M[np.arange(len(M))[:, None], np.maximum(mem, 0)] & (mem >= 0)).any(axis=1)

    def apply(self, M, V, rows, which, rng, allow_revert) -> None:
        """Re-sample group ``which[i]`` in row ``rows[i]`` of (M, V) (rows distinct): a tuple
        drawn by weight (``cw_any`` where ``allow_revert``, else ``cw_change``), its members
        set to changed where they differ from the instance. The uniforms are handed out as a
        loop over the groups ``s = 0, 1, ...`` would draw them (first for the group's rows
        that may revert, then for the others, each in row order, one uniform a row), drawn
        here in one call (one double per draw either way, so the same numbers).

        A draw ``x = u * cw[-1]`` picks ``searchsorted(cw, x, side="right")``, the number of
        weights ``<= x``. The weights are whole numbers, so that is the number ``<=
        floor(x)``, which one search of the shifted table finds for every row at once:
        ``base + floor(x)`` lies above every earlier segment and below every later one
        (``x <= cw[-1]``), and counts the same entries of its own."""
        n = len(rows)
        if not n:
            return
        key = 2 * np.asarray(which, dtype=np.int64) + ~np.asarray(allow_revert, dtype=bool)
        order = np.argsort(key, kind="stable")
        ks = key[order]
        u = rng.random(n)
        q = self.base[ks] + np.floor(u * self.total[ks]).astype(np.int64)
        idx = np.empty(n, dtype=np.int64)
        idx[order] = np.searchsorted(self.table, q, side="right") - self.start[ks]
        g = self.offset[which] + idx
        mem = self.members[which]
        real = mem >= 0
        r = np.broadcast_to(np.asarray(rows)[:, None], mem.shape)[real]
        c = mem[real]
        same = self.same[g][real]
        M[r, c] = ~same
        V[r, c] = np.where(same, -1, self.tuples[g][real])
