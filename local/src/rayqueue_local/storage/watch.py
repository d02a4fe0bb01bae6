"""A watch over the store's events: :class:`Watch`, the stream ``Store.watch`` returns.

The store offers every committed event to its open watches (:meth:`Watch.offer`, under the store
lock, in commit order); a watch keeps those of its resource, namespace and selectors. It knows
nothing of the store: closing it calls the ``on_close`` callback the store gave it. ``Watch`` is
re-exported by :mod:`rayqueue_local.storage.store`, where users import it from.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from rayqueue_local.apimachinery.patch import deep_copy
from rayqueue_local.apimachinery.selectors import FieldSelector, LabelSelector
from rayqueue_local.storage.storetypes import Event

__all__ = ["Watch"]


class Watch:
    """A stream of :class:`Event` for one resource, optionally filtered; iterate it or call :meth:`get`.

    Created by :meth:`Store.watch`. Iteration blocks until the next event and ends after
    :meth:`close` (from any thread). Events that make an object enter or leave the selection are
    turned into ``ADDED``/``DELETED``, as the API server's watch cache does.

    Example:
        >>> from rayqueue_local.storage.store import Store
        >>> store = Store()
        >>> w = store.watch("configmaps", "default")
        >>> _ = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
        >>> w.get(timeout=1).type
        'ADDED'
        >>> w.close()
    """

    _CLOSED = object()

    def __init__(
        self,
        key: str,
        namespace: str | None,
        labels: LabelSelector,
        fields: FieldSelector,
        on_close: Callable[[Watch], None],
    ) -> None:
        self.key = key
        self.namespace = namespace
        self._labels = labels
        self._fields = fields
        self._on_close = on_close
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        #: events at or below this resourceVersion are not sent (a watch from a future version)
        self._after = 0
        #: for a watch that started with the current state: how many ADDED events made it, and at
        #: which resourceVersion (the "initial events" of a watch-list)
        self.initial_events = 0
        self.initial_resource_version = ""

    def _selected(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        meta = obj["metadata"]
        if self.namespace and meta.get("namespace") != self.namespace:
            return False
        return self._labels.matches(meta.get("labels")) and self._fields.matches(self.key, obj)

    def start_with(self, objects: Iterable[dict[str, Any]], resource_version: str) -> None:
        """Begin with a synthetic ``ADDED`` event (a copy) for each selected object of ``objects``, the
        state at ``resource_version`` (the store's, under its lock, before any :meth:`offer`)."""
        for obj in objects:
            if self._selected(obj):
                self._queue.put(Event("ADDED", self.key, deep_copy(obj), None))
                self.initial_events += 1
        self.initial_resource_version = resource_version

    def start_after(self, resource_version: int) -> None:
        """Send only the events newer than ``resource_version`` (a watch from a version not reached yet)."""
        self._after = resource_version

    def offer(self, event: Event) -> None:
        """Queue ``event`` if selected (called under the store lock, in commit order)."""
        if self._closed or event.key != self.key:
            return
        if self._after and event.resource_version <= self._after:
            return  # upstream's cacheWatcher: "only send events newer than resourceVersion"
        now = self._selected(event.object)
        if event.type == "MODIFIED":
            before = self._selected(event.old)
            if now and not before:
                event = Event("ADDED", event.key, event.object, event.old)
            elif before and not now:
                event = Event("DELETED", event.key, event.object, event.old)
            elif not now:
                return
        elif not now:
            return
        self._queue.put(event)

    def get(self, timeout: float | None = None) -> Event | None:
        """The next event, or ``None`` on timeout or once closed."""
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if item is Watch._CLOSED:
            self._queue.put(item)  # keep later callers from blocking
            return None
        return item

    def __iter__(self) -> Iterator[Event]:
        while True:
            event = self.get()
            if event is None:
                return
            yield event

    def close(self) -> None:
        """Stop the stream: iteration ends, :meth:`get` returns ``None``."""
        if not self._closed:
            self._closed = True
            self._on_close(self)
            self._queue.put(Watch._CLOSED)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
