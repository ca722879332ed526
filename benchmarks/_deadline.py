"""A hard wall-clock limit per call for the benchmark scripts (SIGALRM, main thread, Unix):
a method that ignores its own time limit is stopped and reported as a timeout."""
from __future__ import annotations

import signal


class Timeout(Exception):
    """Raised inside ``fn`` when its ``seconds`` are up."""


def _alarm(signum, frame):
    raise Timeout()


def with_deadline(fn, seconds: float):
    """Run ``fn()``; raise :class:`Timeout` after ``seconds``."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
