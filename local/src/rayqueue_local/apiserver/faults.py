"""Fault injection for tests: make the next N matching requests fail, drop, or slow down.

Faults are matched in the order they were injected against the request method and path (the
path without the query string, matched with :func:`re.match`). A fault with ``times=None``
stays until :meth:`FaultInjector.clear` (or until its ``seconds`` run out: a storm of a given
length). A fault with ``rate`` below 1 hits only that fraction of the matching requests, drawn
from the injector's own seeded random generator (``FaultInjector(seed=...)``), so a storm of
"30 % of requests answered 429" is the same storm on every run; a request it spares goes on to
the next fault that matches, or is served. Thread-safe.

The effects are those a client meets in production: an error status (``429`` with
``Retry-After`` as upstream's API Priority and Fairness sends it, ``5xx``), a connection closed
before the request is handled (``drop``), a connection closed *after* the request was handled
and before the answer was sent (``drop_response``: the write is made and the client never hears
of it, the case that duplicates a non-idempotent retry), a delay, and the end of every open
watch stream (:meth:`FaultInjector.end_watches`, as an API server restart or a load balancer
timeout ends them).

Example:
    >>> f = FaultInjector()
    >>> _ = f.inject(method="GET", path=r"/apis/ray.io/", status=503, times=2)
    >>> f.take("GET", "/apis/ray.io/v1/namespaces/a/rayclusters").status
    503
    >>> f.take("POST", "/apis/ray.io/v1/namespaces/a/rayclusters") is None
    True
    >>> f.take("GET", "/apis/ray.io/v1").status, f.take("GET", "/apis/ray.io/v1")
    (503, None)
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Fault", "FaultInjector"]


@dataclass
class Fault:
    """One injected fault. ``status`` (with ``retry_after`` seconds for a 429/503), ``drop`` (close the
    socket without a response, before handling), ``drop_response`` (handle the request, then close
    the socket without the response) and ``delay`` (seconds, before the response) may be combined.
    ``rate`` is the fraction of matching requests it hits; ``expires`` (a ``time.monotonic()``
    value, or ``None``) is when it stops matching.

    Example:
        >>> Fault(method=None, path=re.compile("/"), status=429, retry_after=1).reason
        'TooManyRequests'
    """

    method: str | None
    path: re.Pattern[str]
    status: int | None = None
    retry_after: int | None = None
    drop: bool = False
    delay: float = 0.0
    message: str | None = None
    times: int | None = 1
    hits: int = field(default=0)
    drop_response: bool = False
    rate: float = 1.0
    expires: float | None = None

    @property
    def reason(self) -> str:
        """The Kubernetes ``Status`` reason for ``status``."""
        return {
            429: "TooManyRequests",
            500: "InternalError",
            503: "ServiceUnavailable",
            504: "Timeout",
            410: "Expired",  # a watch or list from a resourceVersion the history no longer holds
            409: "Conflict",
            404: "NotFound",
            403: "Forbidden",
            401: "Unauthorized",
        }.get(self.status or 500, "InternalError")


class _WatchHandle:
    __slots__ = ("on_end",)

    def __init__(self, on_end: Callable[[], None]) -> None:
        self.on_end = on_end


class FaultInjector:
    """The fault table of one control plane (``cp.faults``).

    Example:
        >>> f = FaultInjector()
        >>> _ = f.inject(path=r"/api/v1/namespaces$", drop=True)
        >>> f.take("GET", "/api/v1/namespaces").drop
        True
    """

    def __init__(self, seed: int | None = 0) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._watches: set[_WatchHandle] = set()
        self._random = random.Random(seed)  # the draws of faults with rate < 1 (seeded: repeatable)

    def inject(
        self,
        method: str | None = None,
        path: str = r"/",
        *,
        status: int | None = None,
        retry_after: int | None = None,
        drop: bool = False,
        delay: float = 0.0,
        message: str | None = None,
        times: int | None = 1,
        drop_response: bool = False,
        rate: float = 1.0,
        seconds: float | None = None,
    ) -> Fault:
        """Make the next ``times`` requests matching ``method`` (None: any) and ``path`` misbehave.

        ``rate``: the fraction of matching requests hit (the others are spared and not counted);
        ``seconds``: the fault stops matching that long after it was injected (with ``times=None``,
        a storm of that length).

        Example:
            >>> FaultInjector().inject("GET", r"/api/", status=429, retry_after=2).retry_after
            2
            >>> storm = FaultInjector(seed=1)
            >>> _ = storm.inject(status=429, retry_after=1, times=None, rate=0.3)
            >>> hit = [storm.take("GET", "/api/v1/pods") is not None for _ in range(1000)]
            >>> 250 < sum(hit) < 350
            True
            >>> _ = storm.inject("DELETE", status=503, times=None, seconds=0)  # already over
            >>> storm.take("DELETE", "/api/v1/namespaces/a/pods/p") is None
            True
        """
        if status is None and not drop and not drop_response and delay <= 0:
            raise ValueError("a fault needs a status, drop=True, drop_response=True or a delay")
        if not 0.0 < rate <= 1.0:
            raise ValueError(f"rate must be in (0, 1], got {rate}")
        fault = Fault(
            method=method.upper() if method else None,
            path=re.compile(path),
            status=status,
            retry_after=retry_after,
            drop=drop,
            delay=delay,
            message=message,
            times=times,
            drop_response=drop_response,
            rate=rate,
            expires=None if seconds is None else time.monotonic() + seconds,
        )
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        """Remove every injected fault."""
        with self._lock:
            self._faults.clear()

    def take(self, method: str, path: str) -> Fault | None:
        """The fault for this request, if any (counts it against the fault's ``times``).

        Example:
            >>> f = FaultInjector()
            >>> _ = f.inject("POST", r"/api/v1/namespaces/a/configmaps$", drop_response=True)
            >>> f.take("POST", "/api/v1/namespaces/a/configmaps").drop_response
            True
        """
        with self._lock:
            if not self._faults:
                return None
            now = time.monotonic()
            self._faults = [f for f in self._faults if f.expires is None or now < f.expires]
            for fault in self._faults:
                if fault.method not in (None, method) or not fault.path.match(path):
                    continue
                if fault.rate < 1.0 and self._random.random() >= fault.rate:
                    continue  # spared: this request goes on to the next fault, or is served
                fault.hits += 1
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                return fault
        return None

    # -- watch streams -------------------------------------------------------------------
    def register_watch(self, on_end: Callable[[], None]) -> object:
        """Called by the server for each open watch; ``on_end()`` ends that stream. Returns a handle."""
        handle = _WatchHandle(on_end)
        with self._lock:
            self._watches.add(handle)
        return handle

    def unregister_watch(self, handle: object) -> None:
        """Called by the server when a watch stream ends."""
        with self._lock:
            if isinstance(handle, _WatchHandle):
                self._watches.discard(handle)

    def end_watches(self) -> int:
        """End every open watch stream now (clients see a normal end of stream); returns how many.

        Example:
            >>> f = FaultInjector(); ended = []
            >>> _ = f.register_watch(lambda: ended.append(1))
            >>> f.end_watches(), ended
            (1, [1])
        """
        with self._lock:
            watches = list(self._watches)
            self._watches.clear()
        for handle in watches:
            handle.on_end()
        return len(watches)

    @property
    def open_watches(self) -> int:
        """How many watch streams are open."""
        with self._lock:
            return len(self._watches)
