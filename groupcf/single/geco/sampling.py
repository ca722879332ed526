"""GeCo's group samplers: frequency-weighted re-sampling of a feature group's value tuples.

:class:`_GroupSampler` re-samples one group in some rows; :class:`GroupSamplers` re-samples
each row's own group, all groups in one pass, drawing the same random numbers in the same
order as the loop ``for s: samplers[s].apply(rows of s)``, so the search is unchanged for a
given ``random_state`` (the tests check this against the loop).
"""
from __future__ import annotations

import numpy as np


class _GroupSampler:
    """Frequency-weighted sampling of one group's value tuples, at one instance."""

    __slots__ = ("members", "tuples", "same", "cw_change", "cw_any")

    def __init__(self, members, tuples, same, cw_change, cw_any):
        self.members, self.tuples, self.same = members, tuples, same
        self.cw_change, self.cw_any = cw_change, cw_any

    def apply(self, M, V, rows, rng, allow_revert) -> None:
        """Re-sample the group in ``rows`` of (M, V); where ``allow_revert``, tuples equal
        to the instance's (a change undone) may be drawn too."""
        idx = np.empty(len(rows), dtype=np.int64)
        for flag, cwt in ((True, self.cw_any), (False, self.cw_change)):
            sel = np.flatnonzero(allow_revert == flag)
            if len(sel):
                u = rng.random(len(sel)) * cwt[-1]
                idx[sel] = np.searchsorted(cwt, u, side="right")
        same = self.same[idx]
        mem = np.asarray(self.members)
        M[rows[:, None], mem[None, :]] = ~same
        V[rows[:, None], mem[None, :]] = np.where(same, -1, self.tuples[idx])


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

    def __len__(self) -> int:
        return len(self.samplers)

    def changes_group(self, M, which) -> np.ndarray:
        """Whether each row of ``M`` already changes a member of its group ``which``."""
        mem = self.members[which]
        return (M[np.arange(len(M))[:, None], np.maximum(mem, 0)] & (mem >= 0)).any(axis=1)

    def apply(self, M, V, rows, which, rng, allow_revert) -> None:
        """Re-sample group ``which[i]`` in row ``rows[i]`` of (M, V) (rows distinct), as
        ``samplers[s].apply(M, V, rows[which == s], rng, allow_revert[which == s])`` for
        ``s = 0, 1, ...``: that loop draws, group by group, first for its rows that may revert
        and then for the others (each in row order), one uniform each; here they are drawn
        in one call (one double per draw either way, so the same numbers) and handed out in
        that order."""
        n = len(rows)
        if not n:
            return
        key = 2 * np.asarray(which, dtype=np.int64) + ~np.asarray(allow_revert, dtype=bool)
        order = np.argsort(key, kind="stable")
        ks = key[order]
        u = rng.random(n)
        cuts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1], True])
        idx = np.empty(n, dtype=np.int64)
        for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            s, keep = divmod(int(ks[a]), 2)
            cwt = self.samplers[s].cw_change if keep else self.samplers[s].cw_any
            idx[order[a:b]] = np.searchsorted(cwt, u[a:b] * cwt[-1], side="right")
        g = self.offset[which] + idx
        mem = self.members[which]
        real = mem >= 0
        r = np.broadcast_to(np.asarray(rows)[:, None], mem.shape)[real]
        c = mem[real]
        same = self.same[g][real]
        M[r, c] = ~same
        V[r, c] = np.where(same, -1, self.tuples[g][real])
