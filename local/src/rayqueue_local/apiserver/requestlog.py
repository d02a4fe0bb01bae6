"""Who asks the API server what: a per-client count of requests and of open watch streams.

For benchmarks and count-based tests of what a client costs the server (``APIServer.record_requests``).
Each request is recorded with its method, path, whether it is a watch (``?watch=true``) and the client's
``User-Agent``; a watch also counts as open from its first byte to its end, so :meth:`RequestLog.open_watches`
says how many streams a client holds now and :meth:`RequestLog.peak_watches` the most it held at once.

Example:
    >>> log = RequestLog()
    >>> token = log.started("GET", "/apis/ray.io/v1/namespaces/ds/rayclusters", "watch=true", "nb/1")
    >>> log.open_watches("nb/1"), log.count("nb/1"), log.count("nb/1", watches=False)
    (1, 1, 0)
    >>> log.ended(token)
    >>> log.open_watches("nb/1"), log.peak_watches("nb/1")
    (0, 1)
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from urllib.parse import parse_qs

__all__ = ["LoggedRequest", "RequestLog"]


@dataclass
class LoggedRequest:
    """One request: what, from whom, when (``time.monotonic()``), for a watch whether it is still open, and
    its raw query string (label selectors, ``limit``...).

    Example:
        >>> LoggedRequest("GET", "/api/v1/pods", False, "ua", 0.0).watch
        False
    """

    method: str
    path: str
    watch: bool
    user_agent: str
    at: float
    open: bool = False
    query: str = ""


class RequestLog:
    """Every request the server answered since it was made (or :meth:`clear`), thread-safe.

    ``agent`` arguments select the requests whose ``User-Agent`` starts with it (``None``: all).

    Example:
        >>> RequestLog().count()
        0
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: list[LoggedRequest] = []
        self._open: dict[str, int] = {}
        self._peak: dict[str, int] = {}

    def started(self, method: str, path: str, raw_query: str, user_agent: str | None) -> LoggedRequest:
        """Record a request as it arrives (a watch counts as open until :meth:`ended`)."""
        watch = parse_qs(raw_query).get("watch", [""])[-1].lower() in ("true", "1")
        entry = LoggedRequest(
            method, path, watch, user_agent or "", time.monotonic(), open=watch, query=raw_query
        )
        with self._lock:
            self.requests.append(entry)
            if watch:
                now = self._open.get(entry.user_agent, 0) + 1
                self._open[entry.user_agent] = now
                self._peak[entry.user_agent] = max(self._peak.get(entry.user_agent, 0), now)
        return entry

    def ended(self, entry: LoggedRequest) -> None:
        """The request is answered (a watch stream has ended)."""
        with self._lock:
            if entry.open:
                entry.open = False
                self._open[entry.user_agent] -= 1

    def clear(self) -> None:
        """Forget the requests and the peaks (open watches stay counted as open)."""
        with self._lock:
            self.requests = [r for r in self.requests if r.open]
            self._peak = {k: v for k, v in self._open.items() if v}

    def _matching(self, agent: str | None) -> list[LoggedRequest]:
        with self._lock:
            return [r for r in self.requests if agent is None or r.user_agent.startswith(agent)]

    def count(self, agent: str | None = None, *, watches: bool | None = None, since: float = 0.0) -> int:
        """How many requests (``watches=True``: only watch requests, ``False``: only the others)."""
        return sum(
            1 for r in self._matching(agent) if r.at >= since and (watches is None or r.watch == watches)
        )

    def paths(self, agent: str | None = None, *, since: float = 0.0) -> list[str]:
        """``"GET /path"`` (``"WATCH /path"`` for a watch) of each request, in order."""
        return [
            f"{'WATCH' if r.watch else r.method} {r.path}" for r in self._matching(agent) if r.at >= since
        ]

    def open_watches(self, agent: str | None = None) -> int:
        """The watch streams open now."""
        with self._lock:
            return sum(v for k, v in self._open.items() if agent is None or k.startswith(agent))

    def peak_watches(self, agent: str | None = None) -> int:
        """The most watch streams open at once since the last :meth:`clear` (per agent, summed)."""
        with self._lock:
            return sum(v for k, v in self._peak.items() if agent is None or k.startswith(agent))
