"""The store's core state and its write path: objects, resourceVersions, commits, transactions, hooks.

:class:`StoreCore` is the part of :class:`~rayqueue_local.storage.store.Store` every other part is given.
It owns the state they share (the lock, the objects and their indexes, the event log, the persistence,
the one global resourceVersion counter, the admission hooks and the subscribers) and the primitives
over it: resolving a resource key (404 for an unknown one), finding a stored object,
:meth:`StoreCore.commit` (persist first, then index, append to the bounded event history, offer to the
watches, queue for subscribers) and :meth:`StoreCore.txn`, which holds the lock and delivers the
committed events to subscribers once the outermost transaction releases it. The event history and the
watches are a part of their own, :class:`~rayqueue_local.storage.eventlog.EventLog`, and so are the
objects and their indexes, :class:`~rayqueue_local.storage.objectindex.ObjectIndex`.

Example:
    >>> from rayqueue_local.registry.registry import Registry
    >>> core = StoreCore(Registry(), history=10)
    >>> seen = []
    >>> _ = core.subscribe(seen.append)
    >>> with core.txn():
    ...     obj = {"metadata": {"name": "default", "uid": "u", "resourceVersion": core.next_rv()}}
    ...     core.commit("ADDED", "namespaces", obj, None)
    ...     delivered_inside = len(seen)
    >>> delivered_inside, [e.type for e in seen], core.rv
    (0, ['ADDED'], 1)
    >>> try:  # resolving the resource key is the core's: an unknown one is 404 for every part
    ...     core.resolve("widgets")
    ... except StoreError as err:
    ...     err.to_status()["code"], err.to_status()["reason"]
    (404, 'NotFound')
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rayqueue_local.apimachinery.patch import deep_copy
from rayqueue_local.registry.registry import Registry, ResourceType
from rayqueue_local.storage.eventlog import EventLog
from rayqueue_local.storage.objectindex import ObjectIndex
from rayqueue_local.storage.persistence import Persistence
from rayqueue_local.storage.storetypes import (
    MAX_OBJECT_BYTES,
    AdmissionHook,
    Event,
    StoreError,
    object_key,
)

__all__ = ["StoreCore"]

# The store's logger keeps the name it always had.
log = logging.getLogger("rayqueue_local.storage.store")


class StoreCore:
    """The state the store's parts share, and the primitives of its write path.

    ``persistence`` (optional) is the state directory's snapshot and log; :meth:`load` reads it once.
    One re-entrant lock (:attr:`lock`) guards all state; every other part holds it through
    :meth:`txn` (writes) or directly (reads).

    Example:
        >>> from rayqueue_local.registry.registry import Registry
        >>> core = StoreCore(Registry(), history=10)
        >>> core.scope(core.resolve("namespaces"), "default"), core.scope(core.resolve("pods"), "default")
        ('', 'default')
    """

    def __init__(self, registry: Registry, *, history: int, persistence: Persistence | None = None) -> None:
        self.registry = registry
        self.lock = threading.RLock()
        self.index = ObjectIndex()
        self.events = EventLog(history)
        self.persistence = persistence
        self._rv = 0
        self._subscribers: list[Callable[[Event], None]] = []
        self._hooks: dict[str, list[AdmissionHook]] = {}
        self._pending: list[Event] = []
        self._depth = 0

    @property
    def rv(self) -> int:
        """The latest committed resourceVersion (read it with the lock held)."""
        return self._rv

    def load(self, prepare: Callable[[str, dict[str, Any]], None]) -> None:
        """Index what the persistence holds, each object passed to ``prepare(key, obj)`` first, and
        start the event history at the version loaded (at 0 without persistence)."""
        if self.persistence is not None:
            self._rv, loaded = self.persistence.load()
            for key, objs in loaded.items():
                for obj in objs:
                    prepare(key, obj)
                    self.index.put(key, object_key(obj), obj, None)
        self.events.start_at(self._rv)

    # -- lookups -----------------------------------------------------------------------------------
    def resolve(self, key: str) -> ResourceType:
        """The resource type of ``key``; ``StoreError(404)`` for one the registry does not serve."""
        try:
            return self.registry.get(key)
        except KeyError:
            raise StoreError(
                404, "NotFound", "the server could not find the requested resource", details={"kind": key}
            ) from None

    def scope(self, rt: ResourceType, namespace: str | None) -> str:
        """The namespace part of an object's key: ``namespace`` for a namespaced resource, else ``""``."""
        return (namespace or "") if rt.namespaced else ""

    def not_found(self, key: str, name: str) -> StoreError:
        """The 404 of an object of ``key`` named ``name`` that is not stored."""
        rt = self.resolve(key)
        return StoreError(
            404,
            "NotFound",
            f'{key} "{name}" not found',
            details={"name": name, "group": rt.group, "kind": rt.plural},
        )

    def stored(self, key: str, namespace: str | None, name: str) -> dict[str, Any]:
        """The stored object itself (lock held; never mutate it); ``StoreError(404)`` if absent."""
        rt = self.resolve(key)
        obj = self.index.get(key, (self.scope(rt, namespace), name))
        if obj is None:
            raise self.not_found(key, name)
        return obj

    # -- hooks and subscribers ---------------------------------------------------------------------
    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``callback(event)`` after every committed write; returns the unsubscribe function.

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store, seen = Store(), []
            >>> unsubscribe = store.subscribe(seen.append)
            >>> _ = store.create("secrets", {"metadata": {"name": "s", "namespace": "default"}})
            >>> unsubscribe(); [e.type for e in seen]
            ['ADDED']
        """
        with self.lock:
            self._subscribers = [*self._subscribers, callback]

        def unsubscribe() -> None:
            with self.lock:
                self._subscribers = [s for s in self._subscribers if s is not callback]

        return unsubscribe

    def add_admission_hook(self, key: str, hook: AdmissionHook) -> None:
        """Run ``hook(operation, new, old) -> new`` on every write of ``key`` (``"*"``: every resource).

        ``operation`` is ``"CREATE"`` or ``"UPDATE"`` (updates, status updates, patches, applies).
        The hook returns the object to store (it may mutate it) or raises ``StoreError`` to reject.

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> def label(op, new, old):
            ...     new["metadata"].setdefault("labels", {})["seen"] = op.lower()
            ...     return new
            >>> store.add_admission_hook("configmaps", label)
            >>> cm = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
            >>> cm["metadata"]["labels"]
            {'seen': 'create'}
        """
        with self.lock:
            self._hooks.setdefault(key, []).append(hook)

    def run_hooks(self, key: str, op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        """``new`` as the admission hooks of ``key`` (then those of ``"*"``) leave it (lock held)."""
        for hook in (*self._hooks.get(key, ()), *self._hooks.get("*", ())):
            result = hook(op, new, deep_copy(old) if old is not None else None)
            if result is not None:
                new = result
        return new

    # -- the write path ----------------------------------------------------------------------------
    @contextmanager
    def txn(self) -> Iterator[None]:
        """Hold the lock; deliver the events committed inside to subscribers after releasing it."""
        with self.lock:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                pending: list[Event] = []
                if self._depth == 0:
                    pending, self._pending = self._pending, []
                subscribers = self._subscribers
        for event in pending:
            for callback in subscribers:
                try:
                    callback(event)
                except Exception:  # the write is committed; a subscriber's bug must not undo its success
                    log.exception("store subscriber %r failed on %s %s", callback, event.type, event.key)

    def next_rv(self) -> str:
        """The next resourceVersion, taken (lock held)."""
        self._rv += 1
        return str(self._rv)

    def commit(self, etype: str, key: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Record a write whose object already carries its new resourceVersion (lock held)."""
        k = object_key(obj)
        if etype != "DELETED":
            # Every write path ends here, so the limit holds after YAML/patch expansion too.
            encoded = json.dumps(obj, separators=(",", ":"))
            if len(encoded) > MAX_OBJECT_BYTES:
                raise StoreError(
                    413,
                    "RequestEntityTooLarge",
                    f"Request entity too large: the object is {len(encoded)} bytes; "
                    f"limit is {MAX_OBJECT_BYTES}",
                )
        if self.persistence is not None:  # durable first: a write that cannot be stored changes nothing
            if etype == "DELETED":
                self.persistence.delete(key, k, self._rv)
            else:
                self.persistence.put(key, obj, self._rv, encoded=encoded)
        if etype == "DELETED":
            self.index.remove(key, k, obj)
        else:
            self.index.put(key, k, obj, old)
        if self.persistence is not None and self.persistence.should_compact():
            self.persistence.compact(self._rv, self.index.all_objects())
        event = Event(etype, key, deep_copy(obj), old)
        self.events.record(event)
        self._pending.append(event)
