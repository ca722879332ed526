"""The "shared actions" section of the HTML audit report (a
:class:`~groupcf.results.global_actions.GlobalExplanation`), and a report of its own."""
from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["global_section", "save_global_report"]

# ``res``: a GlobalExplanation (groupcf.results sits above this layer, so it is not imported: Any)

_STYLE = ("<style>body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}"
          "td,th{border:1px solid #999;padding:2px 6px}</style>")


def _png(draw: Callable[[], Any]) -> str | None:
    """``draw()`` returns an axis; its figure as an embedded PNG (None without matplotlib)."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - matplotlib is optional
        return None
    ax = draw()
    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(ax.figure)
    return f"<img alt='plot' src='data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}'>"


def global_section(res: Any, groups: pd.Series | None = None, level: float = 0.95, n_boot: int = 1000,
                   random_state: int | np.random.Generator | None = 0) -> str:
    """HTML for one :class:`GlobalExplanation`: what it found (in words), the actions and
    who they are for, the coverage–cost–k curve with its certified bounds, and, with
    ``groups`` (labels indexed like ``res.S``), coverage and cost by group with
    bootstrap intervals; plots embedded."""
    cols = [c for c in ("action", "n_covered", "mean_cost", "for_whom", "precision", "recall")
            if c in res.actions.columns]
    acts = res.actions[cols].rename(columns={"n_covered": "people", "mean_cost": "mean cost",
                                             "for_whom": "for whom (rule)"})
    curve = res.curve.rename(columns={"n_covered": "people covered", "mean_cost": "mean cost",
                                      "upper_bound": "certified upper bound (people)",
                                      "upper_bound_coverage": "certified upper bound (share)"})
    parts = ["<h2>Shared actions (global counterfactual actions)</h2>",
             "<pre>" + html.escape(res.summary().split("\nCurve:")[0]) + "</pre>",
             "<h3>Actions and who they are for</h3>", acts.to_html(float_format="%.3f", table_id="global-actions"),
             "<h3>Coverage–cost–k curve</h3>", curve.to_html(index=False, float_format="%.3f", table_id="global-curve")]
    parts += [p for p in (_png(lambda: res.plot("curve")), _png(lambda: res.plot("actions"))) if p]
    if groups is not None:
        g = pd.Series(groups).loc[res.S.index].astype(str)
        gaps = res.by_group(g, n_boot=n_boot, level=level, random_state=random_state)
        small = gaps.index[gaps["n"] < 10].tolist()
        parts += [f"<h3>Coverage and cost by {html.escape(str(g.name or 'group'))}</h3>",
                  f"<p>{level:.0%} bootstrap intervals; gaps are to the largest group.</p>",
                  gaps.to_html(float_format="%.3f", table_id="global-groups")]
        if small:
            parts.append(f"<p><b>Warning:</b> group(s) {html.escape(str(small))} have fewer than 10 people: "
                         "their intervals are very wide.</p>")
        png = _png(lambda: res.plot("groups", groups=g))
        if png:
            parts.append(png)
    return "\n".join(parts)


def save_global_report(res: Any, path: str | Path, groups: pd.Series | None = None, title: str = "Shared actions") -> None:
    """One self-contained HTML file for a :class:`GlobalExplanation` alone."""
    t = html.escape(title)
    body = global_section(res, groups)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{t}</title>{_STYLE}</head><body>"
                 f"<h1>{t}</h1>\n{body}\n</body></html>")
