"""Progress of explain_group: one INFO line per phase with its numbers when no bar is shown
(pytest's standard error is not a terminal), nothing at all with progress=False at WARNING."""
from __future__ import annotations

import logging
import re

import groupcf as gcf


def _phases(caplog) -> dict[str, str]:
    """Phase name -> its line (the text before the first colon names the phase)."""
    out: dict[str, str] = {}
    for rec in caplog.records:
        if rec.levelno == logging.INFO and rec.name.startswith("groupcf"):
            name, _, rest = rec.getMessage().partition(": ")
            assert name not in out, f"phase {name!r} logged twice"
            out[name] = rest
    return out


def test_one_line_per_phase_with_the_numbers(triangles, caplog):
    S, models = triangles
    with caplog.at_level(logging.INFO, logger="groupcf"):
        # one tree over both triangles: the root LP (3) cannot certify the 4 explanations
        res = gcf.explain_group(S, models["lr"], Tmax=2, max_change_sets=0, max_enumerated_sets=0,
                                components=False)
    assert res.n_explanations == 4 and res.is_optimal
    lines = _phases(caplog)
    assert list(lines) == ["initial columns", "column generation", "integer master", "branch and price"]
    n_types = len(S)
    assert re.match(rf"{n_types}/{n_types} types, columns \d+, without counterfactual 0 \(", lines["initial columns"])
    cg = lines["column generation"]
    it = int(re.match(r"(\d+) iterations, ", cg).group(1))
    assert it == res.stats["iterations"]
    assert "lp 3, bound 3, incumbent " in cg and "stopped converged" in cg
    assert re.match(r"explanations \d+, bound 3 \(", lines["integer master"])
    bp = lines["branch and price"]
    nodes = int(re.match(r"(\d+) nodes, ", bp).group(1))
    assert nodes == res.stats["bp_nodes"] >= 2
    assert "incumbent 4, bound 4, gap 0.0%" in bp
    for text in lines.values():
        assert "np." not in text


def test_compact_phases(triangles, caplog):
    S, models = triangles
    with caplog.at_level(logging.INFO, logger="groupcf"):
        res = gcf.explain_group(S, models["lr"], Tmax=2, method="compact")
    lines = _phases(caplog)
    assert list(lines) == ["initial columns", "compact MIP"]
    assert re.match(rf"explanations {res.n_explanations}, bound {res.lower_bound} \(", lines["compact MIP"])


def test_silent_without_progress_at_warning(triangles, caplog, capsys):
    S, models = triangles
    with caplog.at_level(logging.WARNING):
        gcf.explain_group(S, models["lr"], Tmax=2, progress=False, max_change_sets=0, max_enumerated_sets=0,
                          components=False)
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    assert [r for r in caplog.records if r.name.startswith("groupcf")] == []

