"""A watch response body: line-delimited JSON events from a store watch, as the API server streams them.

Each event is one line ``{"type": "ADDED|MODIFIED|DELETED|BOOKMARK", "object": {...}}``. With
bookmarks asked for (``allowWatchBookmarks``), an idle stream gets a ``BOOKMARK`` carrying the
current resourceVersion every ``bookmark_interval`` seconds and one just before the timeout, so a
client can resume from there. The stream ends at ``timeoutSeconds``, when the store watch closes,
or when :meth:`~rayqueue_local.apiserver.faults.FaultInjector.end_watches` is called. While idle it
yields an empty chunk at least every second (not written to the client) so that the HTTP layer
can notice a client that went away.

Example:
    >>> import json
    >>> from rayqueue_local.storage.store import Store
    >>> from rayqueue_local.apiserver.faults import FaultInjector
    >>> store = Store()
    >>> rv = store.resource_version
    >>> _ = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
    >>> stream = WatchStream(store.watch("configmaps", "default", rv),
    ...     encode=lambda o: json.dumps(o).encode(), current_version=lambda: store.resource_version,
    ...     faults=FaultInjector(), kind="ConfigMap", api_version="v1", timeout=0.2, bookmark_interval=None)
    >>> [line for line in stream if line][0][:30]
    b'{"type":"ADDED","object":{"met'
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any

from rayqueue_local.apiserver.faults import FaultInjector

__all__ = ["TICK_SECONDS", "WatchStream", "event_line"]

#: The longest an idle stream waits before yielding an (unwritten) empty chunk.
TICK_SECONDS = 1.0


def event_line(event: dict[str, Any]) -> bytes:
    """One watch event as a JSON line.

    Example:
        >>> event_line({"type": "ERROR", "object": {}})
        b'{"type":"ERROR","object":{}}\\n'
    """
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


class WatchStream:
    """An iterator of event lines over a store :class:`~rayqueue_local.storage.store.Watch`.

    ``encode(obj)`` is the JSON of a stored object in the requested version; ``current_version()`` is the
    store's latest resourceVersion (for bookmarks); ``bookmark_interval=None`` sends no bookmarks.
    """

    def __init__(
        self,
        watch: Any,
        *,
        encode: Callable[[dict[str, Any]], bytes],
        current_version: Callable[[], str],
        faults: FaultInjector,
        kind: str,
        api_version: str,
        timeout: float,
        bookmark_interval: float | None,
        initial_events_end: bool = False,
    ) -> None:
        self._watch = watch
        self._encode = encode
        self._current_version = current_version
        self._faults = faults
        self._kind = kind
        self._api_version = api_version
        self._deadline = time.monotonic() + timeout
        self._interval = bookmark_interval
        self._initial_end = initial_events_end
        self._handle = faults.register_watch(on_end=watch.close)
        self._done = False
        self._gen: Generator[bytes, None, None] = self._run()

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        return next(self._gen)

    def _run(self) -> Generator[bytes, None, None]:
        watch = self._watch
        bookmarks = self._interval is not None
        interval = self._interval if self._interval is not None else float("inf")
        next_bookmark = time.monotonic() + interval
        # A watch-list (sendInitialEvents=true) ends its initial ADDED events with a bookmark
        # annotated k8s.io/initial-events-end (KEP-3157; the cacher's cacheWatcher).
        pending = watch.initial_events if self._initial_end else -1
        try:
            if pending == 0:
                yield self._bookmark(watch.initial_resource_version, initial_end=True)
            while True:
                now = time.monotonic()
                if now >= self._deadline:
                    if bookmarks:
                        yield self._bookmark(self._current_version())
                    return
                wait = max(0.0, min(self._deadline - now, next_bookmark - now, TICK_SECONDS))
                event = watch.get(timeout=wait)
                if event is None:
                    if watch.closed:
                        return
                    now = time.monotonic()
                    if now < next_bookmark or now >= self._deadline:
                        yield b""  # a tick
                        continue
                    rv = self._current_version()
                    event = watch.get(timeout=0)  # anything committed up to rv is queued already
                    if event is None:
                        if watch.closed:
                            return
                        yield self._bookmark(rv)
                        next_bookmark = time.monotonic() + interval
                        continue
                yield b'{"type":"%s","object":%s}\n' % (event.type.encode(), self._encode(event.object))
                if pending > 0:
                    pending -= 1
                    if pending == 0:
                        yield self._bookmark(watch.initial_resource_version, initial_end=True)
        finally:
            self._release()

    def _bookmark(self, rv: str, *, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": rv}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return event_line(
            {
                "type": "BOOKMARK",
                "object": {"kind": self._kind, "apiVersion": self._api_version, "metadata": meta},
            }
        )

    def close(self) -> None:
        """End the stream and release the store watch (called by the HTTP layer when done)."""
        self._gen.close()
        self._release()

    def _release(self) -> None:
        if not self._done:
            self._done = True
            self._watch.close()
            self._faults.unregister_watch(self._handle)
