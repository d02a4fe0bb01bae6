"""Watches over the store's bounded event history: :class:`Watch` and ``Store.watch``.

Every commit (:meth:`~rayqueue_local.storage.storecore.StoreCore._commit`) appends its
:class:`~rayqueue_local.storage.store.Event` to a bounded history (``Store(history=...)``) and offers it
to the open watches, in commit order, under the store lock.
A watch from a resourceVersion replays the history after it, or answers 410 Expired once the history
no longer reaches back that far; a watch without one starts with synthetic ``ADDED`` events for the
current objects. ``Watch`` is re-exported by :mod:`rayqueue_local.storage.store`, its public home.
The examples run with :mod:`rayqueue_local.storage.store`'s doctests.
"""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

from rayqueue_local.apimachinery.patch import deep_copy
from rayqueue_local.apimachinery.selectors import FieldSelector, LabelSelector
from rayqueue_local.storage.reads import StoreReads
from rayqueue_local.storage.storetypes import Event, StoreError


class Watch:
    """A stream of :class:`Event` for one resource, optionally filtered; iterate it or call :meth:`get`.

    Created by :meth:`Store.watch`. Iteration blocks until the next event and ends after
    :meth:`close` (from any thread). Events that make an object enter or leave the selection are
    turned into ``ADDED``/``DELETED``, as the API server's watch cache does.

    Example:
        >>> store = Store()
        >>> w = store.watch("configmaps", "default")
        >>> _ = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
        >>> w.get(timeout=1).type
        'ADDED'
        >>> w.close()
    """

    __module__ = "rayqueue_local.storage.store"  # its public home: reprs, tracebacks, pickles

    _CLOSED = object()

    def __init__(
        self,
        store: StoreWatches,
        key: str,
        namespace: str | None,
        labels: LabelSelector,
        fields: FieldSelector,
    ) -> None:
        self.key = key
        self.namespace = namespace
        self._labels = labels
        self._fields = fields
        self._store = store
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False

    def _selected(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        meta = obj["metadata"]
        if self.namespace and meta.get("namespace") != self.namespace:
            return False
        return self._labels.matches(meta.get("labels")) and self._fields.matches(self.key, obj)

    def _offer(self, event: Event) -> None:
        """Queue ``event`` if selected (called under the store lock, in commit order)."""
        if self._closed or event.key != self.key:
            return
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
            self._store._remove_watch(self)
            self._queue.put(Watch._CLOSED)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StoreWatches(StoreReads):
    """``Store.watch`` (see its example)."""

    def watch(
        self,
        key: str,
        namespace: str | None = None,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watch:
        """A :class:`Watch` of ``key`` from ``resource_version``.

        ``None`` or ``"0"``: synthetic ``ADDED`` events for the current objects, then every change
        (upstream's "get state and start at most recent"). A version: every change after it;
        ``StoreError(410, "Expired", "too old resource version: X (Y)")`` when the history no
        longer reaches back that far.

        Example:
            >>> store = Store()
            >>> rv = store.resource_version
            >>> _ = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
            >>> w = store.watch("configmaps", resource_version=rv)
            >>> w.get(timeout=1).object["metadata"]["name"]; w.close()
            'c'
        """
        rt = self._type(key)
        labels, fields = self._selectors(key, label_selector, field_selector)
        ns = self._ns(rt, namespace) or None
        w = Watch(self, key, ns, labels, fields)
        with self._lock:
            if resource_version in (None, "", "0"):
                for k in sorted(self._objects.get(key, {})):
                    obj = self._objects[key][k]
                    if w._selected(obj):
                        w._queue.put(Event("ADDED", key, deep_copy(obj), None))
            else:
                try:
                    rv = int(resource_version or 0)
                except ValueError:
                    raise StoreError(
                        400, "BadRequest", f"invalid resource version: {resource_version}"
                    ) from None
                if rv < self._compacted_rv:
                    raise StoreError(
                        410, "Expired", f"too old resource version: {rv} ({self._compacted_rv + 1})"
                    )
                for event in self._history:
                    if event.resource_version > rv:
                        w._offer(event)
            self._watches.append(w)
        return w

    def _remove_watch(self, w: Watch) -> None:
        with self._lock:
            self._watches = [x for x in self._watches if x is not w]
