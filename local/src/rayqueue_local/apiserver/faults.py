"""Fault injection for tests: make the next N matching requests fail, drop, or slow down.

Faults are matched in the order they were injected against the request method and path (the
path without the query string, matched with :func:`re.match`). A fault with ``times=None``
stays until :meth:`FaultInjector.clear`. Thread-safe.

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

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Fault", "FaultInjector"]


@dataclass
class Fault:
    """One injected fault. ``status`` (with ``retry_after`` seconds for a 429/503), ``drop`` (close the
    socket without a response) and ``delay`` (seconds, before the response) may be combined.

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

    @property
    def reason(self) -> str:
        """The Kubernetes ``Status`` reason for ``status``."""
        return {
            429: "TooManyRequests",
            500: "InternalError",
            503: "ServiceUnavailable",
            504: "Timeout",
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

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._watches: set[_WatchHandle] = set()

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
    ) -> Fault:
        """Make the next ``times`` requests matching ``method`` (None: any) and ``path`` misbehave.

        Example:
            >>> FaultInjector().inject("GET", r"/api/", status=429, retry_after=2).retry_after
            2
        """
        if status is None and not drop and delay <= 0:
            raise ValueError("a fault needs a status, drop=True or a delay")
        fault = Fault(
            method=method.upper() if method else None,
            path=re.compile(path),
            status=status,
            retry_after=retry_after,
            drop=drop,
            delay=delay,
            message=message,
            times=times,
        )
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        """Remove every injected fault."""
        with self._lock:
            self._faults.clear()

    def take(self, method: str, path: str) -> Fault | None:
        """The fault for this request, if any (counts it against the fault's ``times``)."""
        with self._lock:
            if not self._faults:
                return None
            for fault in self._faults:
                if fault.method not in (None, method) or not fault.path.match(path):
                    continue
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
