"""Progress bars for long calls (``progress=`` arguments).

Bottom layer: imports only the standard library and, lazily, :mod:`tqdm`. A bar is shown
only when asked for (``progress=True``) *and* standard error is a terminal; otherwise the
iterable is returned unchanged, so logs and CI output stay clean. A long call reports each
of its phases with a :class:`Phase`: the bar on a terminal, else one INFO log line per
phase with the same numbers.
"""
from __future__ import annotations

import logging
import sys
import time
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


def _plain(value: Any) -> str:
    """A number as a person writes it: ints as ints, floats to 4 significant digits (numpy
    scalars included, never ``np.float64(...)``), anything else by ``str``."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if hasattr(value, "item") and callable(value.item):     # numpy scalar
        value = value.item()
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return str(value)
        if value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.4g}"
    return str(value)


class Phase:
    """One phase of a long call (e.g. "column generation"), reported once through this
    module: a tqdm bar while it runs when ``enabled`` and standard error is a terminal;
    otherwise, when ``logger`` is enabled at INFO, one log line as the phase ends with its
    last numbers (``update(**numbers)``) and its duration. Use as a context manager or
    call :meth:`close` (idempotent).

    Parameters
    ----------
    desc
        The phase's name, first word of its bar and of its log line.
    enabled
        The call's ``progress=`` argument.
    total
        Expected count of ``update`` steps (the bar's length), if known.
    logger
        Where the end-of-phase line goes (default ``groupcf.progress``).
    unit
        What one ``update`` step counts, named in the log line (e.g. ``"iterations"``).

    Examples
    --------
    >>> with Phase("column generation", enabled=False, unit="iterations") as ph:   # doctest: +SKIP
    ...     ph.update(lp=4.25, bound=3.9, incumbent=5)
    """

    def __init__(self, desc: str, enabled: bool = False, total: int | None = None,
                 logger: logging.Logger | None = None, unit: str | None = None) -> None:
        self.desc, self.unit, self.total = desc, unit, total
        self.logger = logger or logging.getLogger(__name__)
        self.bar = progress_counter(total, desc, enabled)
        self.shown = not isinstance(self.bar, _NoBar)
        self.n = 0
        self.numbers: dict[str, Any] = {}
        self._t0 = time.perf_counter()
        self._closed = False

    def update(self, n: int = 1, **numbers: Any) -> None:
        """Count ``n`` steps and record the phase's current numbers (shown on the bar)."""
        self.n += n
        self.set(**numbers)
        self.bar.update(n)

    def set(self, **numbers: Any) -> None:
        """Record numbers without counting a step."""
        if numbers:
            self.numbers.update(numbers)
            self.bar.set_postfix({k: _plain(v) for k, v in self.numbers.items()}, refresh=False)

    def line(self) -> str:
        """The end-of-phase line: name, count, numbers, seconds."""
        parts = []
        if self.unit is not None:
            parts.append(f"{self.n}{'/' + str(self.total) if self.total is not None else ''} {self.unit}")
        parts += [f"{k.replace('_', ' ')} {_plain(v)}" for k, v in self.numbers.items() if v is not None]
        return f"{self.desc}: {', '.join(parts) or 'done'} ({time.perf_counter() - self._t0:.2f} s)"

    def close(self) -> None:
        """End the phase: close the bar, or log its line (INFO) when no bar was shown."""
        if self._closed:
            return
        self._closed = True
        self.bar.close()
        if not self.shown and self.logger.isEnabledFor(logging.INFO):
            self.logger.info("%s", self.line())

    def discard(self) -> None:
        """End a phase that did not apply after all: close the bar, log nothing."""
        self._closed = True
        self.bar.close()

    def __enter__(self) -> Phase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
