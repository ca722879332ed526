"""Progress bars for long calls (``progress=`` arguments).

Bottom layer: imports only the standard library and, lazily, :mod:`tqdm`. A bar is shown
only when asked for (``progress=True``) *and* standard error is a terminal; otherwise the
iterable is returned unchanged, so logs and CI output stay clean.
"""
from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any


def progress_bar(iterable: Iterable[Any], enabled: bool = False, total: int | None = None,
                 desc: str | None = None) -> Iterable[Any]:
    """``iterable`` wrapped in a tqdm bar when ``enabled`` and stderr is a terminal (and
    tqdm is installed); the iterable itself otherwise."""
    if not enabled or not getattr(sys.stderr, "isatty", lambda: False)():
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is optional
        return iterable
    bar: Iterable[Any] = tqdm(iterable, total=total, desc=desc, leave=False)
    return bar


def show_progress(progress: bool) -> bool:
    """Whether a bar would be shown: asked for and standard error is a terminal."""
    return bool(progress) and bool(getattr(sys.stderr, "isatty", lambda: False)())


class _NoBar:
    """What :func:`progress_counter` gives when no bar is shown: the same methods, doing
    nothing."""

    n = 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_counter(total: int | None = None, desc: str | None = None, enabled: bool = False) -> Any:
    """A bar counted by hand (``update``, ``set_postfix``, ``close``; also a context
    manager): tqdm when ``enabled`` and stderr is a terminal, else a silent stand-in."""
    if not show_progress(enabled):
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is optional
        return _NoBar()
    return tqdm(total=total, desc=desc, leave=False)
