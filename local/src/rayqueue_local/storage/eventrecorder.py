"""core/v1 Events about stored objects, counted up on repeats as client-go's event recorder does.

:class:`EventRecorder` is the part of :class:`~rayqueue_local.storage.store.Store` behind
``Store.record_event``: it creates an Event through the writes, remembers where it stored it, and turns a
repeat of the same type, reason, message and source about the same object into an update of ``count``
and ``lastTimestamp``.
The examples run with :mod:`rayqueue_local.storage.store`'s doctests.
"""

from __future__ import annotations

import time
from typing import Any

from rayqueue_local.apimachinery.patch import deep_copy
from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.storage.storecore import StoreCore
from rayqueue_local.storage.writes import StoreWrites

__all__ = ["EventRecorder"]


class EventRecorder:
    """Records Events through ``writes``, keeping which Event each (object, type, reason, message, source)
    became (``Store.record_event``, see its example)."""

    def __init__(self, core: StoreCore, writes: StoreWrites) -> None:
        self._core = core
        self._writes = writes
        self._event_index: dict[tuple[str, str, str, str, str], tuple[str, str]] = {}

    def record_event(
        self, involved: dict[str, Any], *, type: str, reason: str, message: str, source: str
    ) -> dict[str, Any]:
        """Create (or count up) a core/v1 Event about ``involved`` in its namespace.

        A repeat of the same type/reason/message from the same source about the same object
        increments ``count`` and ``lastTimestamp``, as the client-go event recorder does.

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> rc = store.create("rayclusters.ray.io", {"metadata": {"name": "r", "namespace": "default"}})
            >>> ev = store.record_event(rc, type="Normal", reason="Created", message="ok", source="ray")
            >>> ev["involvedObject"]["kind"], ev["count"]
            ('RayCluster', 1)
            >>> again = store.record_event(rc, type="Normal", reason="Created", message="ok", source="ray")
            >>> again["count"]
            2
        """
        meta = involved.get("metadata") or {}
        ns = meta.get("namespace") or "default"
        stamp = now_rfc3339()
        ident = (meta.get("uid", ""), type, reason, message, source)
        with self._core.txn():
            where = self._event_index.get(ident)
            if where is not None:
                existing = self._core.index.get("events", where)
                if existing is not None:
                    new = deep_copy(existing)
                    new["count"] = int(new.get("count", 1)) + 1
                    new["lastTimestamp"] = stamp
                    return self._writes.replace(self._core.registry.get("events"), existing, new, "")
            event = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": f"{meta.get('name', 'unknown')}.{time.time_ns():x}", "namespace": ns},
                "involvedObject": {
                    k: v
                    for k, v in {
                        "apiVersion": involved.get("apiVersion"),
                        "kind": involved.get("kind"),
                        "name": meta.get("name"),
                        "namespace": meta.get("namespace"),
                        "uid": meta.get("uid"),
                        "resourceVersion": meta.get("resourceVersion"),
                    }.items()
                    if v
                },
                "reason": reason,
                "message": message,
                "type": type,
                "source": {"component": source},
                "reportingComponent": source,
                "reportingInstance": source,
                "firstTimestamp": stamp,
                "lastTimestamp": stamp,
                "count": 1,
            }
            created = self._writes.create("events", event)
            self._event_index[ident] = (ns, created["metadata"]["name"])
            return created
