"""groupcf.progress: a bar on a terminal, else one INFO line per phase."""
from __future__ import annotations

import logging

import numpy as np
import pytest

from groupcf.progress import Phase, _plain


def test_phase_shows_a_bar_instead_of_the_line_on_a_terminal(monkeypatch, caplog):
    pytest.importorskip("tqdm")
    import io
    import sys

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Tty())
    with caplog.at_level(logging.INFO, logger="groupcf"):
        with Phase("demo", True, total=2, unit="steps") as ph:
            ph.update(lp=1.5)
            ph.update(lp=2.0)
        with Phase("quiet", False, unit="steps") as ph:     # progress=False: the line
            ph.update(lp=2.0)
    assert "demo" in sys.stderr.getvalue()
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == ["quiet: 1 steps, lp 2"]


def test_plain_numbers():
    assert _plain(np.int64(3448)) == "3448"
    assert _plain(np.float64(2.0)) == "2"
    assert _plain(1 / 3) == "0.3333"
    assert _plain(float("inf")) == "inf"
    assert _plain(None) == "None"


def test_discarded_phase_logs_nothing(caplog):
    with caplog.at_level(logging.INFO, logger="groupcf"):
        ph = Phase("unused", False)
        ph.discard()
        ph.close()
    assert caplog.records == []
