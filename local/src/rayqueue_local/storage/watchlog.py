"""Watches over the store's bounded event history: ``Store.watch``.

The stream itself, :class:`~rayqueue_local.storage.watch.Watch`, lives in its own module.

Every commit (:meth:`~rayqueue_local.storage.storecore.StoreCore.commit`) appends its
:class:`~rayqueue_local.storage.store.Event` to a bounded history (``Store(history=...)``) and offers it
to the open watches, in commit order, under the store lock.
A watch from a resourceVersion replays the history after it, or answers 410 Expired once the history
no longer reaches back that far; a watch without one starts with synthetic ``ADDED`` events for the
current objects. ``Watch`` is re-exported by :mod:`rayqueue_local.storage.store`, its public home.
The examples run with :mod:`rayqueue_local.storage.store`'s doctests.
"""

from __future__ import annotations

from rayqueue_local.storage.reads import parse_selectors
from rayqueue_local.storage.storecore import StoreCore
from rayqueue_local.storage.storetypes import StoreError
from rayqueue_local.storage.watch import Watch

__all__ = ["StoreWatches"]


class StoreWatches:
    """``Store.watch`` over the core's objects and event log (see its example)."""

    def __init__(self, core: StoreCore) -> None:
        self._core = core

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
        longer reaches back that far. A version the store has not reached yet: the changes after it,
        once they happen (upstream's watch cache sends only events newer than the version asked).

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> rv = store.resource_version
            >>> _ = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
            >>> w = store.watch("configmaps", resource_version=rv)
            >>> w.get(timeout=1).object["metadata"]["name"]; w.close()
            'c'
        """
        core = self._core
        rt = core.resolve(key)
        labels, fields = parse_selectors(key, label_selector, field_selector)
        ns = core.scope(rt, namespace) or None
        w = Watch(key, ns, labels, fields, on_close=self._remove_watch)
        with core.lock:
            if resource_version in (None, "", "0"):
                bucket = core.index.bucket(key)
                w.start_with((bucket[k] for k in sorted(bucket)), str(core.rv))
            else:
                try:
                    rv = int(resource_version or 0)
                except ValueError:
                    raise StoreError(
                        400, "BadRequest", f"invalid resource version: {resource_version}"
                    ) from None
                compacted = core.events.compacted_rv
                if rv < compacted:
                    raise StoreError(410, "Expired", f"too old resource version: {rv} ({compacted + 1})")
                if rv > core.rv:
                    w.start_after(rv)  # a future version: wait for it, as upstream's watch cache does
                for event in core.events.oldest_first():
                    if event.resource_version > rv:
                        w.offer(event)
            core.events.add_watch(w)
        return w

    def _remove_watch(self, w: Watch) -> None:
        with self._core.lock:
            self._core.events.remove_watch(w)
