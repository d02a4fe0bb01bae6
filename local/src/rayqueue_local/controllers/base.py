"""The controller runtime shared by the Kueue, KubeRay and KEDA emulations.

A controller subscribes to the store, turns events into work items on its own queue, and works
them off in its own daemon thread, with a periodic resync so that a missed event never wedges it.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Protocol

from rayqueue_local.storage.store import StoreError

log = logging.getLogger(__name__)

__all__ = ["Controller", "QueueController", "get_or_none"]


def get_or_none(store: Any, key: str, namespace: str | None, name: str) -> dict[str, Any] | None:
    """The object ``store.get`` reads, or None where there is none (a 404); other errors raise.

    Example:
        >>> class Empty:
        ...     def get(self, key, namespace, name):
        ...         raise StoreError(404, "NotFound", f'{key} "{name}" not found')
        >>> get_or_none(Empty(), "pods", "default", "p") is None
        True
    """
    try:
        obj: dict[str, Any] = store.get(key, namespace, name)
    except StoreError as err:
        if err.code == 404:
            return None
        raise
    return obj


class Controller(Protocol):
    """What :class:`~rayqueue_local.LocalControlPlane` needs of a controller.

    Example:
        >>> class Noop:
        ...     name = "noop"
        ...     def start(self, store): pass
        ...     def stop(self): pass
        >>> isinstance(Noop().name, str)
        True
    """

    name: str

    def start(self, store: Any) -> None:
        """Subscribe to ``store`` and start working."""

    def stop(self) -> None:
        """Stop working and release everything started (threads, processes)."""


class QueueController:
    """A controller with a work queue, one worker thread and a periodic resync.

    Subclasses set ``name`` and ``watches`` (resource keys) and implement :meth:`keys_for`
    (event -> work items) and :meth:`reconcile` (one work item). ``resync()`` returns the work
    items to enqueue every ``resync_seconds``.

    Example:
        >>> class Echo(QueueController):
        ...     name, watches = "echo", ("pods",)
        ...     def reconcile(self, item): pass
        >>> Echo().resync_seconds
        2.0
    """

    name = "controller"
    watches: tuple[str, ...] = ()
    resync_seconds = 2.0

    def __init__(self) -> None:
        self.store: Any = None
        self._queue: queue.Queue[Any] = queue.Queue()
        self._pending: set[Any] = set()
        self._pending_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._unsubscribe: Any = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self, store: Any) -> None:
        """Subscribe to ``store`` and start the worker thread."""
        self.store = store
        self._unsubscribe = store.subscribe(self._on_event)
        self._thread = threading.Thread(target=self._run, name=f"ctrl-{self.name}", daemon=True)
        self._thread.start()
        for item in self.resync():
            self.enqueue(item)

    def stop(self) -> None:
        """Unsubscribe and stop the worker thread (waits briefly for the current item)."""
        self._stop.set()
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout=10)

    # -- hooks for subclasses ----------------------------------------------------------------
    def keys_for(self, event: Any) -> list[Any]:
        """Work items for a store event; by default ``(key, namespace, name)`` of the object."""
        meta = event.object.get("metadata", {})
        return [(event.key, meta.get("namespace"), meta.get("name"))]

    def resync(self) -> list[Any]:
        """Work items to (re)check periodically; none by default."""
        return []

    def reconcile(self, item: Any) -> None:  # pragma: no cover - abstract
        """Bring the world in line with one work item."""
        raise NotImplementedError

    # -- machinery --------------------------------------------------------------------------
    def enqueue(self, item: Any) -> None:
        """Queue ``item`` unless it is already waiting (deduplicated)."""
        with self._pending_lock:
            if item in self._pending:
                return
            self._pending.add(item)
        self._queue.put(item)

    def _on_event(self, event: Any) -> None:
        if event.key in self.watches:
            for item in self.keys_for(event):
                self.enqueue(item)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                item = self._queue.get(timeout=self.resync_seconds)
            except queue.Empty:
                for resynced in self.resync():
                    self.enqueue(resynced)
                continue
            if item is None:
                break
            with self._pending_lock:
                self._pending.discard(item)
            try:
                self.reconcile(item)
            except Exception:  # a controller must survive its own bugs; log and go on
                log.exception("%s: reconcile of %r failed", self.name, item)
