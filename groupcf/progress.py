"""Progress bars for long calls (``progress=`` arguments).

Bottom layer: imports only the standard library and, lazily, :mod:`tqdm`. A bar is shown
only when asked for (``progress=True``) *and* standard error is a terminal; otherwise the
iterable is returned unchanged, so logs and CI output stay clean.
"""
from __future__ import annotations

import sys


def progress_bar(iterable, enabled: bool = False, total: int | None = None, desc: str | None = None):
    """``iterable`` wrapped in a tqdm bar when ``enabled`` and stderr is a terminal (and
    tqdm is installed); the iterable itself otherwise."""
    if not enabled or not getattr(sys.stderr, "isatty", lambda: False)():
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is optional
        return iterable
    return tqdm(iterable, total=total, desc=desc, leave=False)
