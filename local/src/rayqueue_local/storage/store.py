"""The local control plane's object store: the data layer behind the API server and the controllers.

Objects are plain ``dict``s in the storage version of their resource, addressed by a resource key
(``"pods"``, ``"rayclusters.ray.io"``, see :mod:`rayqueue_local.registry.registry`). The store gives them
the semantics of a real API server (and etcd):

* ``metadata.uid``, ``resourceVersion`` (one global counter, a string), ``generation`` (bumped when
  anything but metadata — and status, where status is a subresource — changes, and when deletion
  starts), ``creationTimestamp`` (RFC 3339), ``generateName`` (prefix + 5 random characters);
* writes that change nothing are no-ops (no new resourceVersion, no event), as upstream;
* optimistic concurrency: a write carrying a stale ``metadata.resourceVersion`` gets 409 Conflict;
* finalizers and ``deletionTimestamp``; ownerReference garbage collection (background
  propagation, cascading; an owner's deletion also removes dependents whose owners are all gone,
  and drops the dangling reference from dependents that still have another owner);
* namespaces: a namespaced object needs its namespace (404 otherwise); a terminating namespace
  refuses new objects (403); deleting a namespace deletes its contents, then the namespace;
* validation with upstream's 422 messages (:mod:`rayqueue_local.registry.schema`): names (DNS-1123
  subdomain; DNS-1123 label for namespaces; DNS-1035 label for services), label keys and values,
  annotation keys, ownerReferences; CRD schemas (after pruning undeclared fields) when the registry
  has them;
* label and field selectors (:mod:`rayqueue_local.apimachinery.selectors`), consistent pagination
  (``limit``/``continue``: a token encodes the list's resourceVersion and the last key; pages are
  served from the state at that version, reconstructed from the event history; 410 Expired once it
  is older than the history kept);
* a bounded event history and :meth:`Store.watch` from a resourceVersion (410 Expired when it is
  older than the history kept);
* merge, JSON, strategic-merge patches and server-side apply (:mod:`rayqueue_local.apimachinery.patch`;
  map-list keys for apply come from the CRD's ``x-kubernetes-list-map-keys``);
* admission hooks (mutating or rejecting, on every write) and subscribers (called after commit,
  outside the lock, in the writer's thread);
* persistence to a state directory (:mod:`rayqueue_local.storage.persistence`: snapshot + fsynced
  log, compacted on load and past 64 MiB).

Differences from upstream, on purpose: a ``DELETED`` watch event and a delete return the object as
last stored (with the deletion's resourceVersion); admission hooks see the final name of a
``generateName`` object; ``Foreground`` propagation is treated as ``Background``; ``Orphan``
strips the ownerReferences of dependents at once. Status sent to the main endpoint of a resource
with a ``status`` subresource is ignored, on create too (controllers use :meth:`Store.update_status`).
An update without ``metadata.resourceVersion`` is unconditional for every resource (upstream
requires one for custom resources over HTTP; the API layer may enforce that).

Contract additions (backward compatible with ``docs/architecture.md``): keyword-only ``dry_run``
and ``field_manager`` on writes, ``force`` on ``patch``; ``propagation_policy`` and preconditions on
``delete``; :meth:`Store.list_page`, :meth:`Store.watch`, :meth:`Store.apply`,
:meth:`Store.delete_collection`, :meth:`Store.get_by_uid`, :attr:`Store.resource_version`; hooks
registered for ``"*"`` run for every resource; ``patch_type="apply"``.

Thread safety: one re-entrant lock guards all state; admission hooks run under it (they may read the
store); subscribers run after the commit, outside it. Returned objects are copies; ``Event`` objects
are shared between subscribers and must be treated as read-only.

Layout: :class:`Store` is the facade. It holds two composed parts, each with its own interface and no
lock of its own: :class:`~rayqueue_local.storage.objectindex.ObjectIndex` (the objects and their uid,
owner and namespace indexes) and :class:`~rayqueue_local.storage.eventlog.EventLog` (the bounded event
history and the watches it feeds), beside :class:`~rayqueue_local.storage.persistence.Persistence` (the
snapshot and log). Its methods come from sibling modules, each a layer over the one below it:
:mod:`~rayqueue_local.storage.storetypes` (``StoreError``, ``Event``, ``ListResult``, helpers),
:mod:`~rayqueue_local.storage.storecore` (state, commit, transactions),
:mod:`~rayqueue_local.storage.reads` (get, list, pagination), :mod:`~rayqueue_local.storage.watchlog`
(``Store.watch``), :mod:`~rayqueue_local.storage.gc` (deletion, finalizers, garbage
collection), :mod:`~rayqueue_local.storage.writes` (create, update) and
:mod:`~rayqueue_local.storage.patching` (patch, apply). Every public name stays importable from here.

Example:
    >>> store = Store()
    >>> rc = store.create("rayclusters.ray.io", {"metadata": {"name": "demo", "namespace": "default"},
    ...                                          "spec": {"rayVersion": "2.40.0"}})
    >>> rc["metadata"]["generation"], rc["apiVersion"]
    (1, 'ray.io/v1')
    >>> store.get("rayclusters.ray.io", "default", "nope")
    Traceback (most recent call last):
    ...
    rayqueue_local.storage.store.StoreError: rayclusters.ray.io "nope" not found
"""

from __future__ import annotations

import inspect
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from rayqueue_local.apimachinery.patch import deep_copy
from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.registry.builtindefaults import DEFAULTED_KEYS, apply_builtin_defaults
from rayqueue_local.registry.registry import Registry
from rayqueue_local.registry.schema import SchemaValidator
from rayqueue_local.storage.eventlog import EventLog
from rayqueue_local.storage.objectindex import ObjectIndex
from rayqueue_local.storage.patching import StorePatching
from rayqueue_local.storage.persistence import Persistence
from rayqueue_local.storage.storetypes import (
    AdmissionHook,
    Event,
    ListResult,
    StoreError,
    _objkey,
)
from rayqueue_local.storage.storetypes import Objects as Objects
from rayqueue_local.storage.storetypes import (
    ObjKey as ObjKey,  # re-exported: they lived here before the split
)
from rayqueue_local.storage.storetypes import PatchBody as PatchBody
from rayqueue_local.storage.storetypes import invalid as invalid
from rayqueue_local.storage.storetypes import qualified_kind as qualified_kind
from rayqueue_local.storage.watch import Watch
from rayqueue_local.storage.watchlog import StoreWatches

__all__ = ["AdmissionHook", "Event", "ListResult", "Store", "StoreError", "Watch"]

_DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class Store(StorePatching, StoreWatches):
    """The in-memory object store (see the module docstring for the semantics).

    ``registry`` defaults to the built-in types (no schemas); ``state_dir`` makes the state survive a
    restart (``fsync=False`` trades crash safety for speed); ``history`` bounds the event log used by
    watches and pagination; ``validate`` checks custom resources against the CRD schemas the
    registry holds and ``prune`` drops the fields those schemas do not declare, as upstream does;
    ``namespaces`` are created when missing.

    Example:
        >>> store = Store()
        >>> _ = store.create("configmaps", {"metadata": {"generateName": "cfg-", "namespace": "default"}})
        >>> [c["metadata"]["name"].startswith("cfg-") for c in store.list("configmaps", "default")]
        [True]
    """

    def __init__(
        self,
        registry: Registry | None = None,
        *,
        state_dir: str | os.PathLike[str] | None = None,
        history: int = 10_000,
        validate: bool = True,
        prune: bool = True,
        namespaces: tuple[str, ...] = _DEFAULT_NAMESPACES,
        fsync: bool = True,
    ) -> None:
        self.registry = registry if registry is not None else Registry()
        self._lock = threading.RLock()
        self._index = ObjectIndex()
        self._rv = 0
        self._events = EventLog(history)
        self._subscribers = []
        self._hooks = {}
        self._pending = []
        self._depth = 0
        self._event_index = {}
        self._list_key_tables = {}
        self._validator = None
        self._check_schemas, self._prune_unknown = validate, prune
        if (validate or prune) and any(t.schemas for t in self.registry.types()):
            self._validator = SchemaValidator()
        self._persistence = None
        if state_dir is not None:
            self._persistence = Persistence(state_dir, fsync=fsync)
            rv, loaded = self._persistence.load()
            self._rv = rv
            for key, objs in loaded.items():
                rt = self.registry.get(key) if key in self.registry else None
                for obj in objs:
                    if self._validator is not None and rt is not None:
                        # Upstream defaults a custom resource read from etcd too: a default the CRD
                        # gained after the object was written shows up on read.
                        self._validator.default(rt, obj)
                    self._index.put(key, _objkey(obj), obj, None)
        self._events.start_at(self._rv)
        for key in DEFAULTED_KEYS:  # upstream defaults these kinds when it decodes them
            self._hooks[key] = [_defaulter(key)]
        for ns in namespaces:
            if ("", ns) not in self._index.bucket("namespaces"):
                self.create("namespaces", {"metadata": {"name": ns}})

    # -- introspection -----------------------------------------------------------------------------
    @property
    def resource_version(self) -> str:
        """The current (latest committed) resourceVersion."""
        with self._lock:
            return str(self._rv)

    @property
    def recovery_notes(self) -> list[str]:
        """What loading the state directory had to repair (damaged log records set aside), if anything.

        Example:
            >>> Store().recovery_notes
            []
        """
        return list(self._persistence.recovery_notes) if self._persistence is not None else []

    @property
    def validating(self) -> bool:
        """True when custom resources are checked against CRD schemas."""
        return self._validator is not None and self._check_schemas

    def type_changed(self, key: str) -> None:
        """Forget what was derived from ``key``'s type (compiled schemas, list keys): its CRD changed.

        Example:
            >>> store = Store()
            >>> store.registry.remove("rayjobs.ray.io") is not None
            True
            >>> store.type_changed("rayjobs.ray.io")
        """
        with self._lock:
            self._list_key_tables.pop(key, None)
            rt = self.registry.lookup_key(key)
            wanted = rt is not None and bool(rt.schemas) and (self._check_schemas or self._prune_unknown)
            if self._validator is None and wanted:
                self._validator = SchemaValidator()
            if self._validator is not None:
                self._validator.forget(key)

    def count(self, key: str | None = None) -> int:
        """Number of stored objects (of one resource, or in total).

        Example:
            >>> Store().count("namespaces")
            4
        """
        with self._lock:
            return self._index.count(key)

    def close(self) -> None:
        """Close every watch and the persistence files."""
        with self._lock:
            self._events.close_watches()
            if self._persistence is not None:
                self._persistence.close()

    # -- hooks and subscribers ---------------------------------------------------------------------
    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``callback(event)`` after every committed write; returns the unsubscribe function.

        Example:
            >>> store, seen = Store(), []
            >>> unsubscribe = store.subscribe(seen.append)
            >>> _ = store.create("secrets", {"metadata": {"name": "s", "namespace": "default"}})
            >>> unsubscribe(); [e.type for e in seen]
            ['ADDED']
        """
        with self._lock:
            self._subscribers = [*self._subscribers, callback]

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers = [s for s in self._subscribers if s is not callback]

        return unsubscribe

    def add_admission_hook(self, key: str, hook: AdmissionHook) -> None:
        """Run ``hook(operation, new, old) -> new`` on every write of ``key`` (``"*"``: every resource).

        ``operation`` is ``"CREATE"`` or ``"UPDATE"`` (updates, status updates, patches, applies).
        The hook returns the object to store (it may mutate it) or raises ``StoreError`` to reject.

        Example:
            >>> store = Store()
            >>> def label(op, new, old):
            ...     new["metadata"].setdefault("labels", {})["seen"] = op.lower()
            ...     return new
            >>> store.add_admission_hook("configmaps", label)
            >>> cm = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
            >>> cm["metadata"]["labels"]
            {'seen': 'create'}
        """
        with self._lock:
            self._hooks.setdefault(key, []).append(hook)

    # -- events ------------------------------------------------------------------------------------
    def record_event(
        self, involved: dict[str, Any], *, type: str, reason: str, message: str, source: str
    ) -> dict[str, Any]:
        """Create (or count up) a core/v1 Event about ``involved`` in its namespace.

        A repeat of the same type/reason/message from the same source about the same object
        increments ``count`` and ``lastTimestamp``, as the client-go event recorder does.

        Example:
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
        with self._txn():
            where = self._event_index.get(ident)
            if where is not None:
                existing = self._index.get("events", where)
                if existing is not None:
                    new = deep_copy(existing)
                    new["count"] = int(new.get("count", 1)) + 1
                    new["lastTimestamp"] = stamp
                    return self._replace(self.registry.get("events"), existing, new, "")
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
            created = self.create("events", event)
            self._event_index[ident] = (ns, created["metadata"]["name"])
            return created


def _defaulter(key: str) -> AdmissionHook:
    def hook(op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        return apply_builtin_defaults(key, new)

    return hook


# The examples of the methods Store inherits from its parts (and of ``invalid``) run with this
# module's doctests, in this module's namespace, as they did before the store was split.
__test__ = {
    f"{part.__name__}.{name}": member
    for part in Store.__mro__[1:-1]
    for name, member in vars(part).items()
    if inspect.isfunction(member) and ">>>" in (member.__doc__ or "")
} | {"invalid": invalid}
