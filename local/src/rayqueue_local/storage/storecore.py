"""The store's state and its write path: indexes, resourceVersions, commits, transactions, hooks.

:class:`StoreCore` is the base every part of :class:`~rayqueue_local.storage.store.Store` builds on. It
declares the state (``Store.__init__`` initialises it) and owns the primitives the reads, watches,
writes and deletions share: resolving a resource key (404 for an unknown one), finding a stored
object, the one global resourceVersion counter,
:meth:`StoreCore._commit` (persist first, then index, append to the bounded event history, offer to the
watches, queue for subscribers) and :meth:`StoreCore._txn`, which holds the lock and delivers the
committed events to subscribers once the outermost transaction releases it. The event history and
the watches are a part of their own, :class:`~rayqueue_local.storage.eventlog.EventLog`, and so are
the objects and their indexes, :class:`~rayqueue_local.storage.objectindex.ObjectIndex`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rayqueue_local.apimachinery import patch as patches
from rayqueue_local.apimachinery.patch import deep_copy
from rayqueue_local.registry.registry import Registry, ResourceType
from rayqueue_local.registry.schema import SchemaValidator
from rayqueue_local.storage.eventlog import EventLog
from rayqueue_local.storage.objectindex import ObjectIndex
from rayqueue_local.storage.persistence import Persistence
from rayqueue_local.storage.storetypes import (
    MAX_OBJECT_BYTES,
    AdmissionHook,
    Event,
    StoreError,
    _objkey,
)

__all__ = ["StoreCore"]

# The store's logger keeps the name it always had.
log = logging.getLogger("rayqueue_local.storage.store")


class StoreCore:
    """State and primitives shared by the parts of :class:`~rayqueue_local.storage.store.Store`.

    Not used on its own: ``Store.__init__`` sets every attribute declared here.

    Example:
        >>> from rayqueue_local.storage.store import Store
        >>> issubclass(Store, StoreCore)
        True
        >>> try:  # resolving the resource key is StoreCore's: an unknown one is 404 for every part
        ...     Store().get("widgets", "default", "w")
        ... except StoreError as err:
        ...     err.to_status()["code"], err.to_status()["reason"]
        (404, 'NotFound')
    """

    registry: Registry
    _lock: threading.RLock
    _index: ObjectIndex
    _rv: int
    _events: EventLog
    _subscribers: list[Callable[[Event], None]]
    _hooks: dict[str, list[AdmissionHook]]
    _pending: list[Event]
    _depth: int
    _event_index: dict[tuple[str, str, str, str, str], tuple[str, str]]
    _list_key_tables: dict[str, patches.ListKeys | None]
    _validator: SchemaValidator | None
    _check_schemas: bool
    _prune_unknown: bool
    _persistence: Persistence | None

    # -- lookups -----------------------------------------------------------------------------------
    def _type(self, key: str) -> ResourceType:
        try:
            return self.registry.get(key)
        except KeyError:
            raise StoreError(
                404, "NotFound", "the server could not find the requested resource", details={"kind": key}
            ) from None

    def _ns(self, rt: ResourceType, namespace: str | None) -> str:
        return (namespace or "") if rt.namespaced else ""

    def _not_found(self, key: str, name: str) -> StoreError:
        rt = self._type(key)
        return StoreError(
            404,
            "NotFound",
            f'{key} "{name}" not found',
            details={"name": name, "group": rt.group, "kind": rt.plural},
        )

    def _stored(self, key: str, namespace: str | None, name: str) -> dict[str, Any]:
        rt = self._type(key)
        obj = self._index.get(key, (self._ns(rt, namespace), name))
        if obj is None:
            raise self._not_found(key, name)
        return obj

    # -- the write path ----------------------------------------------------------------------------
    @contextmanager
    def _txn(self) -> Iterator[None]:
        """Hold the lock; deliver the events committed inside to subscribers after releasing it."""
        with self._lock:
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

    def _commit(self, etype: str, key: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Record a write whose object already carries its new resourceVersion (lock held)."""
        k = _objkey(obj)
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
        if self._persistence is not None:  # durable first: a write that cannot be stored changes nothing
            if etype == "DELETED":
                self._persistence.delete(key, k, self._rv)
            else:
                self._persistence.put(key, obj, self._rv, encoded=encoded)
        if etype == "DELETED":
            self._index.remove(key, k, obj)
        else:
            self._index.put(key, k, obj, old)
        if self._persistence is not None and self._persistence.should_compact():
            self._persistence.compact(self._rv, self._index.all_objects())
        event = Event(etype, key, deep_copy(obj), old)
        self._events.record(event)
        self._pending.append(event)

    def _next_rv(self) -> str:
        self._rv += 1
        return str(self._rv)

    def _run_hooks(
        self, key: str, op: str, new: dict[str, Any], old: dict[str, Any] | None
    ) -> dict[str, Any]:
        for hook in (*self._hooks.get(key, ()), *self._hooks.get("*", ())):
            result = hook(op, new, deep_copy(old) if old is not None else None)
            if result is not None:
                new = result
        return new
