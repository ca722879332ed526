"""Helpers shared by :class:`~groupcf.results.explanation.Explanation` and
:class:`~groupcf.results.group.GroupExplanation`: JSON-friendly values, the HTML repr,
and the common statistics shape :class:`Stats`."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..solvers.base import Status

__all__ = ["Stats", "Status", "frame_records", "html_pre", "plain"]


class Stats(dict):
    """Statistics of a search: name -> number (or a short list / string for settings
    such as distance weights). A ``dict`` so existing code keeps working; ``as_dict()``
    gives a JSON-friendly plain dict."""

    def as_dict(self) -> dict:
        return {str(k): plain(v) for k, v in self.items()}

    def __repr__(self) -> str:
        return "Stats(" + ", ".join(f"{k}={v!r}" for k, v in self.items()) + ")"


class ResultBase:
    """What both result types share: ``status`` a :class:`Status` and ``stats`` a
    :class:`Stats`, whatever was passed (strings and dicts, e.g. from ``from_dict``)."""

    def __post_init__(self):
        if not isinstance(self.status, Status):
            self.status = Status(self.status)
        if not isinstance(self.stats, Stats):
            self.stats = Stats(self.stats or {})


def plain(v):
    """JSON-friendly value (numpy scalars to Python, intervals to strings, recursively
    for lists and dicts)."""
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, pd.Interval):
        return str(v)
    if isinstance(v, np.ndarray):
        return [plain(u) for u in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [plain(u) for u in v]
    if isinstance(v, dict):
        return {str(k): plain(u) for k, u in v.items()}
    return v


def frame_records(df: pd.DataFrame) -> list[dict]:
    """Rows of ``df`` as JSON-friendly dicts."""
    return [{c: plain(v) for c, v in row.items()} for _, row in df.iterrows()]


def html_pre(text: str) -> str:
    """``text`` escaped inside a ``<pre>`` block (notebooks' ``_repr_html_``)."""
    return "<pre>" + text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + "</pre>"
