"""Audit of recourse burden: numbers against hand computation; the HTML report."""
from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from groupcf.audit import audit
from groupcf.batch import ExplanationSet
from groupcf.exceptions import GroupCFWarning


def _set():
    t = pd.DataFrame({
        "status": ["OPTIMAL"] * 5 + ["INFEASIBLE", "NotRejectedError"],
        "found": [True, True, True, True, True, False, False],
        "distance": [0.1, 0.3, 0.2, 0.2, 0.5, np.nan, np.nan],
        "n_changed": [1, 3, 2, 2, 5, -1, -1],
        "changed": ["a", "a;b;c", "a;b", "b;c", "a;b;c;d;e", "", ""],
        "probability": [0.6] * 5 + [np.nan, np.nan], "time": [0.0] * 7,
        "error": [""] * 6 + ["NotRejectedError: accepted"]}, index=list("pqrstuv"))
    X = pd.DataFrame({"sex": ["f", "f", "m", "m", "m", "f", "m"]}, index=list("pqrstuv"))
    return ExplanationSet(t), X


def test_numbers_by_hand():
    s, X = _set()
    a = s.audit(X, "sex", n_boot=200)
    # error row v is excluded; m = r, s, t (all found); f = p, q found, u not
    assert a.groups.loc["f", "n"] == 3 and a.groups.loc["m", "n"] == 3
    assert a.groups.loc["f", "share_found"] == pytest.approx(2 / 3)
    assert a.groups.loc["m", "share_found"] == 1.0
    assert a.groups.loc["f", "mean_distance"] == pytest.approx(0.2)
    assert a.groups.loc["m", "mean_distance"] == pytest.approx(0.3)
    assert a.groups.loc["m", "median_distance"] == pytest.approx(0.2)
    assert a.groups.loc["f", "mean_changed"] == pytest.approx(2.0)
    # features: share of the group's found rows changing each one
    assert a.features.loc["a", "f"] == 1.0 and a.features.loc["c", "m"] == pytest.approx(2 / 3)
    assert a.features.loc["d", "f"] == 0.0
    other = next(g for g in a.groups.index if g != a.reference)
    d = a.differences.loc[other]
    sign = 1 if other == "m" else -1
    assert d["diff_share_found"] == pytest.approx(sign * (1 - 2 / 3))
    assert d["diff_mean_distance"] == pytest.approx(sign * 0.1)
    assert d["share_lo"] <= d["diff_share_found"] <= d["share_hi"]
    assert d["distance_lo"] <= d["diff_mean_distance"] <= d["distance_hi"]


def test_no_counterfactual_counts_as_no_recourse():
    """A row whose explanation raised NoCounterfactualError is a person without recourse (not
    found), not a failed row: it stays in its group's share."""
    s, X = _set()
    t = s.table.copy()
    t.loc["u", ["status", "error"]] = ["NoCounterfactualError", "NoCounterfactualError: none within Tmax"]
    t.loc["v", ["status", "error"]] = ["SolverTimeLimitError", "SolverTimeLimitError: 1 s"]
    a = audit(ExplanationSet(t), X, "sex", n_boot=50)
    assert a.groups.loc["f", "n"] == 3 and a.groups.loc["f", "share_found"] == pytest.approx(2 / 3)
    assert a.groups.loc["m", "n"] == 3          # the time-limited row is left out


def test_bootstrap_interval_shrinks_with_data():
    rng = np.random.default_rng(1)
    n = 400
    t = pd.DataFrame({"status": "OPTIMAL", "found": True, "distance": rng.random(n),
                      "n_changed": 1, "changed": "a", "probability": 0.6, "time": 0.0, "error": ""})
    g = pd.Series(np.where(np.arange(n) % 2, "x", "y"), name="g")
    wide = audit(t.iloc[:40], None, g.iloc[:40], n_boot=500)
    narrow = audit(t, None, g, n_boot=500)
    def w(a):
        return float((a.differences["distance_hi"] - a.differences["distance_lo"]).iloc[0])

    assert w(narrow) < w(wide)


class _Tables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self.cell, self.imgs = {}, None, 0
        self._id = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._id = a.get("id")
            self.tables[self._id] = []
        elif tag == "tr" and self._id:
            self.tables[self._id].append([])
        elif tag in ("td", "th"):
            self.cell = ""
        elif tag == "img":
            self.imgs += 1
            assert a["src"].startswith("data:image/png;base64,")

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._id:
            self.tables[self._id][-1].append(self.cell.strip())
            self.cell = None


def test_report_parses_and_renders(tmp_path):
    s, X = _set()
    with pytest.warns(GroupCFWarning, match="fewer than 10 people"):
        a = s.audit(X, "sex", n_boot=100)
    out = tmp_path / "audit.html"
    a.save_report(out)
    text = out.read_text()
    assert "http://" not in text and "https://" not in text
    p = _Tables()
    p.feed(text)
    assert set(p.tables) == {"metadata", "groups", "differences", "features"}
    meta = {r[0]: r[1] for r in p.tables["metadata"] if len(r) == 2}
    assert {"method", "model", "people", "failed rows", "date", "groupcf"} <= set(meta)
    assert int(meta["people"]) == len(s.table)
    body = {r[0]: r for r in p.tables["groups"] if r and r[0] in ("f", "m")}
    header = p.tables["groups"][0]
    col = header.index("share with a counterfactual")          # readable headers
    assert float(body["f"][col]) == pytest.approx(2 / 3, abs=1e-3)
    assert "fewer than 10 people" in text                       # the small-group warning
    chromium = shutil.which("chromium") or (("/usr/bin/chromium") if shutil.os.path.exists("/usr/bin/chromium") else None)
    if chromium is None:
        pytest.skip("chromium not installed: the report was parsed but not rendered")
    png = tmp_path / "shot.png"
    r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        f"--screenshot={png}", "--window-size=900,700", out.as_uri()],
                       check=False, capture_output=True, timeout=120)
    assert png.exists() and png.stat().st_size > 1000, r.stderr.decode()[-500:]
