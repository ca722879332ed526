"""Progress of explain_global: one INFO line per phase with its numbers."""
from __future__ import annotations

import logging
import re

import groupcf as gcf


def test_global_phases(german_lr, caplog):
    pipe, S = german_lr
    with caplog.at_level(logging.INFO, logger="groupcf"):
        res = gcf.explain_global(S, pipe, Tmax=2, k=2)
    names = [r.getMessage().split(": ")[0] for r in caplog.records if r.levelno == logging.INFO
             and r.name != "groupcf.global_actions.enumerate"        # its own line: enumerated or declined
             and not r.name.startswith("groupcf.solvers")]            # a backend's own notes (HiGHS's MIP start)
    # k's column generation is skipped once k - 1 actions (or, at k = 1, one seed) cover
    # everyone coverable
    first = res.curve.iloc[0]
    skip2 = int(first["n_covered"]) == res.n_coverable
    ran1 = res.stats["curve_iterations"][0] > 0
    assert names == ["nearest actions"] + (["column generation (k=1)"] if ran1 else []) \
        + ([] if skip2 else ["column generation (k=2)"]) + ["coverage curve"]
    assert ran1 or skip2           # k = 1 skipped: a seed covers everyone, so k = 2 is skipped too
    curve = [r.getMessage() for r in caplog.records if r.getMessage().startswith("coverage curve")][0]
    last = res.curve.iloc[-1]
    assert re.match(rf"coverage curve: 2/2 k, covered {int(last['n_covered'])}, upper {int(last['upper_bound'])}",
                    curve)
    cgs = [r.getMessage() for r in caplog.records if r.getMessage().startswith("column generation (k=")]
    for cg in cgs:
        assert re.match(r"column generation \(k=\d\): \d+ iterations, lp [\d.]+, bound [\d.]+, columns \d+, stopped", cg)
