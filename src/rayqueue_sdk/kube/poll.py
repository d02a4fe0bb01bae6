"""The SDK's one polling loop, for the few places that must ask again until something holds (a Workload
Kueue has not made yet, pods still stopping, an object still being deleted, a dashboard not answering).

:func:`poll_until` asks ``predicate`` until it returns something truthy, pausing ``interval`` seconds
between asks (doubled after each ask up to ``max_interval`` when one is given), and gives up with ``None``
when the next pause would end past ``timeout``. What giving up means (an error, a warning, nothing) is the
caller's to say.

Example:
    >>> answers = iter([None, None, "ready"])
    >>> poll_until(lambda: next(answers), timeout=5.0, interval=0.0)
    'ready'
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["poll_until"]

T = TypeVar("T")


def poll_until(
    predicate: Callable[[], T | None],
    *,
    timeout: float,
    interval: float,
    max_interval: float | None = None,
    wait_first: bool = False,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> T | None:
    """The first truthy answer of ``predicate()``, else ``None`` once ``timeout`` seconds are spent.

    Args:
        predicate: asked once at once (after one pause when ``wait_first``), then after each pause.
        timeout: seconds from the call; no pause is started that would end past it.
        interval: the first pause (seconds).
        max_interval: when given, each pause doubles up to it (a backoff); else every pause is
            ``interval``.
        wait_first: pause once before the first ask (the caller has just asked itself).
        sleep, clock: the pause and the clock (``time.sleep``, ``time.monotonic``).

    Example:
        >>> now = [0.0]
        >>> pauses: list[float] = []
        >>> def sleep(s: float) -> None:
        ...     pauses.append(s)
        ...     now[0] += s
        >>> poll_until(lambda: None, timeout=2.0, interval=0.25, max_interval=1.0, sleep=sleep,
        ...            clock=lambda: now[0]) is None
        True
        >>> pauses
        [0.25, 0.5, 1.0]
    """
    deadline = clock() + timeout
    pause = interval
    if wait_first:
        if clock() + pause > deadline:
            return None
        sleep(pause)
    while True:
        answer = predicate()
        if answer:
            return answer
        if clock() + pause > deadline:
            return None
        sleep(pause)
        if max_interval is not None:
            pause = min(max_interval, pause * 2)
