"""The local control plane's object store: the data layer behind the API server and the controllers.

Objects are plain ``dict``s in the storage version of their resource, addressed by a resource key
(``"pods"``, ``"rayclusters.ray.io"``, see :mod:`rayqueue_sdk.local.registry`). The store gives them
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
* validation with upstream's 422 messages (:mod:`rayqueue_sdk.local.schema`): names (DNS-1123
  subdomain; DNS-1123 label for namespaces; DNS-1035 label for services), label keys and values,
  annotation keys, ownerReferences; CRD schemas (after pruning undeclared fields) when the registry
  has them;
* label and field selectors (:mod:`rayqueue_sdk.local.selectors`), consistent pagination
  (``limit``/``continue``: a token encodes the list's resourceVersion and the last key; pages are
  served from the state at that version, reconstructed from the event history; 410 Expired once it
  is older than the history kept);
* a bounded event history and :meth:`Store.watch` from a resourceVersion (410 Expired when it is
  older than the history kept);
* merge, JSON, strategic-merge patches and server-side apply (:mod:`rayqueue_sdk.local.patch`;
  map-list keys for apply come from the CRD's ``x-kubernetes-list-map-keys``);
* admission hooks (mutating or rejecting, on every write) and subscribers (called after commit,
  outside the lock, in the writer's thread);
* persistence to a state directory (:mod:`rayqueue_sdk.local.persistence`: snapshot + fsynced
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

Example:
    >>> store = Store()
    >>> rc = store.create("rayclusters.ray.io", {"metadata": {"name": "demo", "namespace": "default"},
    ...                                          "spec": {"rayVersion": "2.40.0"}})
    >>> rc["metadata"]["generation"], rc["apiVersion"]
    (1, 'ray.io/v1')
    >>> store.get("rayclusters.ray.io", "default", "nope")
    Traceback (most recent call last):
    ...
    rayqueue_sdk.local.store.StoreError: rayclusters.ray.io "nope" not found
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import queue
import secrets
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from rayqueue_sdk.local import patch as patches
from rayqueue_sdk.local.patch import PatchError, deep_copy, interned_copy
from rayqueue_sdk.local.registry import Registry, ResourceType
from rayqueue_sdk.local.schema import metadata_causes, name_causes
from rayqueue_sdk.local.selectors import (
    FieldSelector,
    LabelSelector,
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)

if TYPE_CHECKING:
    from rayqueue_sdk.local.persistence import Persistence
    from rayqueue_sdk.local.schema import SchemaValidator

__all__ = ["AdmissionHook", "Event", "ListResult", "Store", "StoreError", "Watch"]

log = logging.getLogger(__name__)

AdmissionHook = Callable[[str, dict[str, Any], "dict[str, Any] | None"], dict[str, Any]]
ObjKey = tuple[str, str]  # (namespace or "", name)
Objects = list[dict[str, Any]]
PatchBody = dict[str, Any] | list[Any]

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # upstream's: no vowels, no confusable digits


class StoreError(Exception):
    """An API error carrying what a Kubernetes ``Status`` needs (``to_status()`` renders it).

    Example:
        >>> err = StoreError(409, "Conflict", "boom", details={"name": "x"})
        >>> err.to_status()["code"], err.to_status()["details"]
        (409, {'name': 'x'})
    """

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        causes: list[dict[str, Any]] | None = None,
        *,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.causes: list[dict[str, Any]] = list(causes or [])
        self.details: dict[str, Any] = dict(details or {})

    def to_status(self) -> dict[str, Any]:
        """The ``meta/v1 Status`` body for this error."""
        details = dict(self.details)
        if self.causes:
            details["causes"] = self.causes
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if details:
            status["details"] = details
        return status

    def __repr__(self) -> str:
        return f"StoreError({self.code}, {self.reason!r}, {self.message!r})"


@dataclass(frozen=True)
class Event:
    """A committed write: ``type`` is ``ADDED``, ``MODIFIED`` or ``DELETED``.

    ``object`` is the object after the write (as last stored for ``DELETED``), ``old`` the object
    before it. Both are shared: treat them as read-only.

    Example:
        >>> Event("ADDED", "pods", {"metadata": {"name": "p"}}, None).type
        'ADDED'
    """

    type: str
    key: str
    object: dict[str, Any]
    old: dict[str, Any] | None = None

    @property
    def resource_version(self) -> int:
        """The resourceVersion of the write, as an int."""
        return int(self.object["metadata"]["resourceVersion"])


class ListResult(NamedTuple):
    """One page of a list: items, the list's resourceVersion, the continue token and what remains."""

    items: list[dict[str, Any]]
    resource_version: str
    continue_token: str | None
    remaining_item_count: int | None


# -- helpers ----------------------------------------------------------------------------------------------


def now_rfc3339() -> str:
    """The current time as the API server writes timestamps (``2026-01-02T03:04:05Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_NAME_RULE_OF = {"namespaces": "label", "services": "dns1035"}


def qualified_kind(rt: ResourceType) -> str:
    """``Kind.group`` (or ``Kind`` for core), as 422 messages name a resource."""
    return f"{rt.kind}.{rt.group}" if rt.group else rt.kind


def invalid(rt: ResourceType, name: str, causes: list[dict[str, Any]]) -> StoreError:
    """A 422 Invalid error in the upstream shape: ``Kind.group "name" is invalid: field: msg, ...``.

    Example:
        >>> from rayqueue_sdk.local.registry import Registry
        >>> invalid(Registry().get("pods"), "p", [{"reason": "FieldValueRequired",
        ...     "message": "Required value", "field": "spec.containers"}]).message
        'Pod "p" is invalid: spec.containers: Required value'
    """
    parts = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes]
    joined = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return StoreError(
        422,
        "Invalid",
        f'{qualified_kind(rt)} "{name}" is invalid: {joined}',
        causes,
        details={"name": name, "group": rt.group, "kind": rt.kind},
    )


def _encode_continue(rv: int, start: ObjKey) -> str:
    raw = json.dumps(
        {"v": "meta.k8s.io/v1", "rv": rv, "start": f"{start[0]}/{start[1]}"}, separators=(",", ":")
    )
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, ObjKey]:
    try:
        raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        ns, _, name = raw["start"].partition("/")
        return int(raw["rv"]), (ns, name)
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise StoreError(400, "BadRequest", f"continue key is not valid: {exc}") from None


def _body(obj: Any) -> dict[str, Any]:
    """An interned private copy of a request body; 400 for anything but an object with string names."""
    if not isinstance(obj, dict):
        raise StoreError(400, "BadRequest", f"the body must be an object, not {type(obj).__name__}")
    meta = obj.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise StoreError(400, "BadRequest", "metadata must be an object")
    for field in ("name", "namespace", "generateName", "resourceVersion"):
        value = (meta or {}).get(field)
        if value is not None and not isinstance(value, str):
            raise StoreError(
                400,
                "BadRequest",
                f"json: cannot unmarshal {type(value).__name__} into Go struct field "
                f"ObjectMeta.metadata.{field} of type string",
            )
    return interned_copy(obj)


def _objkey(obj: dict[str, Any]) -> ObjKey:
    meta = obj["metadata"]
    return meta.get("namespace") or "", meta["name"]


def _owner_uids(obj: dict[str, Any]) -> set[str]:
    return {r["uid"] for r in (obj.get("metadata") or {}).get("ownerReferences") or () if r.get("uid")}


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

    _CLOSED = object()

    def __init__(
        self,
        store: Store,
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


class Store:
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
        namespaces: tuple[str, ...] = DEFAULT_NAMESPACES,
        fsync: bool = True,
    ) -> None:
        self.registry = registry if registry is not None else Registry()
        self._lock = threading.RLock()
        self._objects: dict[str, dict[ObjKey, dict[str, Any]]] = {}
        self._uids: dict[str, tuple[str, str, str]] = {}
        self._dependents: dict[str, set[tuple[str, str, str]]] = {}
        self._ns_counts: dict[str, int] = {}
        self._rv = 0
        self._history: deque[Event] = deque()
        self._history_size = max(1, history)
        self._compacted_rv = 0
        self._watches: list[Watch] = []
        self._subscribers: list[Callable[[Event], None]] = []
        self._hooks: dict[str, list[AdmissionHook]] = {}
        self._pending: list[Event] = []
        self._depth = 0
        self._event_index: dict[tuple[str, str, str, str, str], tuple[str, str]] = {}
        self._list_key_tables: dict[str, patches.ListKeys | None] = {}
        self._validator: SchemaValidator | None = None
        self._check_schemas, self._prune_unknown = validate, prune
        if (validate or prune) and any(t.schemas for t in self.registry.types()):
            from rayqueue_sdk.local.schema import SchemaValidator

            self._validator = SchemaValidator()
        self._persistence: Persistence | None = None
        if state_dir is not None:
            from rayqueue_sdk.local.persistence import Persistence

            self._persistence = Persistence(state_dir, fsync=fsync)
            rv, loaded = self._persistence.load()
            self._rv = rv
            for key, objs in loaded.items():
                for obj in objs:
                    self._index_put(key, _objkey(obj), obj, None)
        self._compacted_rv = self._rv
        for ns in namespaces:
            if ("", ns) not in self._objects.get("namespaces", {}):
                self.create("namespaces", {"metadata": {"name": ns}})

    # -- introspection -----------------------------------------------------------------------------
    @property
    def resource_version(self) -> str:
        """The current (latest committed) resourceVersion."""
        with self._lock:
            return str(self._rv)

    @property
    def validating(self) -> bool:
        """True when custom resources are checked against CRD schemas."""
        return self._validator is not None and self._check_schemas

    def count(self, key: str | None = None) -> int:
        """Number of stored objects (of one resource, or in total).

        Example:
            >>> Store().count("namespaces")
            4
        """
        with self._lock:
            if key is not None:
                return len(self._objects.get(key, {}))
            return sum(len(v) for v in self._objects.values())

    def close(self) -> None:
        """Close every watch and the persistence files."""
        with self._lock:
            for w in list(self._watches):
                w.close()
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

    # -- reads -------------------------------------------------------------------------------------
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
        obj = self._objects.get(key, {}).get((self._ns(rt, namespace), name))
        if obj is None:
            raise self._not_found(key, name)
        return obj

    def get(self, key: str, namespace: str | None, name: str, *, copy: bool = True) -> dict[str, Any]:
        """A copy of one object; ``StoreError(404)`` if absent.

        Example:
            >>> Store().get("namespaces", None, "default")["metadata"]["name"]
            'default'
        """
        with self._lock:
            obj = self._stored(key, namespace, name)
            return deep_copy(obj) if copy else obj

    def get_by_uid(self, uid: str) -> tuple[str, dict[str, Any]] | None:
        """``(key, object copy)`` of the object with ``uid``, or ``None``.

        Example:
            >>> store = Store()
            >>> uid = store.get("namespaces", None, "default")["metadata"]["uid"]
            >>> store.get_by_uid(uid)[0]
            'namespaces'
        """
        with self._lock:
            where = self._uids.get(uid)
            if where is None:
                return None
            key, ns, name = where
            return key, deep_copy(self._objects[key][(ns, name)])

    def list(
        self,
        key: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        copy: bool = True,
    ) -> list[dict[str, Any]]:
        """Copies of the matching objects, sorted by namespace and name.

        ``copy=False`` (also on :meth:`get` and :meth:`list_page`) returns the stored objects
        themselves, which the store never changes in place (every write stores a new dict): for
        callers that only read or serialise them, such as the API layer. Never mutate them.

        Example:
            >>> store = Store()
            >>> meta = {"name": "p", "namespace": "default", "labels": {"a": "b"}}
            >>> _ = store.create("pods", {"metadata": meta})
            >>> [p["metadata"]["name"] for p in store.list("pods", label_selector="a in (b,c)")]
            ['p']
        """
        return self.list_page(
            key, namespace, label_selector=label_selector, field_selector=field_selector, copy=copy
        ).items

    def list_page(
        self,
        key: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        copy: bool = True,
    ) -> ListResult:
        """One page of a list (``limit``/``continue`` as the API server does them).

        Pages after the first are taken from the state at the first page's resourceVersion, so
        writes in between neither duplicate nor skip objects. A token older than the event history
        gets ``StoreError(410, "Expired")``.

        Example:
            >>> store = Store()
            >>> for n in "abc":
            ...     _ = store.create("configmaps", {"metadata": {"name": n, "namespace": "default"}})
            >>> page = store.list_page("configmaps", "default", limit=2)
            >>> [c["metadata"]["name"] for c in page.items], page.remaining_item_count
            (['a', 'b'], 1)
            >>> rest = store.list_page("configmaps", continue_token=page.continue_token)
            >>> [c["metadata"]["name"] for c in rest.items]
            ['c']
        """
        rt = self._type(key)
        labels, fields = self._selectors(key, label_selector, field_selector)
        ns = self._ns(rt, namespace)
        with self._lock:
            start: ObjKey | None = None
            list_rv = self._rv
            objects = self._objects.get(key, {})
            if continue_token:
                list_rv, start = _decode_continue(continue_token)
                if list_rv < self._compacted_rv:
                    raise StoreError(
                        410,
                        "Expired",
                        "The provided continue parameter is too old to display a consistent list "
                        "result. You can "
                        "start a new list without the continue parameter, or use the continue token in this "
                        "response to retrieve the remainder of the results. Continuing with the "
                        "provided token "
                        "results in an inconsistent list - objects that were created, modified, or "
                        "deleted between "
                        "the time the first chunk was returned and now may show up in the list.",
                    )
                if list_rv < self._rv:
                    objects = self._state_at(key, list_rv)
            name_eq = fields.equals("metadata.name")
            if name_eq is not None and ns:
                candidates = [(ns, name_eq)] if (ns, name_eq) in objects else []
            else:
                candidates = [k for k in objects if not ns or k[0] == ns]
            candidates.sort()
            selected: list[tuple[ObjKey, dict[str, Any]]] = []
            for k in candidates:
                if start is not None and k <= start:
                    continue
                obj = objects[k]
                if not labels.empty and not labels.matches(obj["metadata"].get("labels")):
                    continue
                if not fields.empty and not fields.matches(key, obj):
                    continue
                selected.append((k, obj))
            token: str | None = None
            remaining: int | None = None
            if limit is not None and limit > 0 and len(selected) > limit:
                remaining = len(selected) - limit
                selected = selected[:limit]
                token = _encode_continue(list_rv, selected[-1][0])
            items = [deep_copy(obj) for _k, obj in selected] if copy else [obj for _k, obj in selected]
        return ListResult(items, str(list_rv), token, remaining)

    def _state_at(self, key: str, rv: int) -> dict[ObjKey, dict[str, Any]]:
        """The objects of ``key`` as they were at resourceVersion ``rv`` (undoing later events)."""
        state = dict(self._objects.get(key, {}))
        for event in reversed(self._history):
            if event.resource_version <= rv:
                break
            if event.key != key:
                continue
            k = _objkey(event.object)
            if event.type == "ADDED":
                state.pop(k, None)
            elif event.old is not None:
                state[k] = event.old
        return state

    def _selectors(
        self, key: str, label_selector: str | None, field_selector: str | None
    ) -> tuple[LabelSelector, FieldSelector]:
        try:
            return parse_label_selector(label_selector), parse_field_selector(field_selector, key)
        except SelectorError as exc:
            raise StoreError(400, "BadRequest", str(exc)) from None

    # -- watch -------------------------------------------------------------------------------------
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

    def _index_put(self, key: str, k: ObjKey, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        bucket = self._objects.setdefault(key, {})
        bucket[k] = obj
        ident = (key, k[0], k[1])
        uid = obj["metadata"].get("uid")
        if old is None:
            if uid:
                self._uids[uid] = ident
            if k[0]:
                self._ns_counts[k[0]] = self._ns_counts.get(k[0], 0) + 1
        old_owners = _owner_uids(old) if old is not None else set()
        new_owners = _owner_uids(obj)
        for o in old_owners - new_owners:
            self._dependents.get(o, set()).discard(ident)
        for o in new_owners - old_owners:
            self._dependents.setdefault(o, set()).add(ident)

    def _index_remove(self, key: str, k: ObjKey, obj: dict[str, Any]) -> None:
        del self._objects[key][k]
        ident = (key, k[0], k[1])
        self._uids.pop(obj["metadata"].get("uid", ""), None)
        for o in _owner_uids(obj):
            self._dependents.get(o, set()).discard(ident)
        if k[0]:
            self._ns_counts[k[0]] -= 1

    def _commit(self, etype: str, key: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Record a write whose object already carries its new resourceVersion (lock held)."""
        k = _objkey(obj)
        if etype == "DELETED":
            self._index_remove(key, k, obj)
        else:
            self._index_put(key, k, obj, old)
        if self._persistence is not None:
            if etype == "DELETED":
                self._persistence.delete(key, k, self._rv)
            else:
                self._persistence.put(key, obj, self._rv)
            if self._persistence.should_compact():
                self._persistence.compact(self._rv, {k2: list(b.values()) for k2, b in self._objects.items()})
        event = Event(etype, key, deep_copy(obj), old)
        if len(self._history) >= self._history_size:
            self._compacted_rv = self._history.popleft().resource_version
        self._history.append(event)
        for w in self._watches:
            w._offer(event)
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

    def _check_meta(self, rt: ResourceType, meta: dict[str, Any], *, with_name: bool) -> None:
        """Name, labels, annotations and ownerReferences, as every API server write checks them."""
        name = meta.get("name", "")
        causes = name_causes(name, _NAME_RULE_OF.get(rt.key, "subdomain")) if with_name else []
        try:
            causes += metadata_causes(meta)
        except TypeError as exc:
            raise StoreError(400, "BadRequest", str(exc)) from None
        if causes:
            raise invalid(rt, name, causes)

    def _list_keys(self, rt: ResourceType) -> patches.ListKeys | None:
        """Map-list keys for server-side apply: from the CRD schema, else the built-in table."""
        if rt.key not in self._list_key_tables:
            resolver: patches.ListKeys | None = None
            schema = rt.schemas.get(rt.storage_version)
            if schema is not None:
                from rayqueue_sdk.local.schema import list_map_keys

                resolver = list_map_keys(schema).get
            self._list_key_tables[rt.key] = resolver
        return self._list_key_tables[rt.key]

    def _validate(self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None = None) -> None:
        """Prune undeclared fields, then check the object against its CRD schema (422 Invalid)."""
        if self._validator is None or not rt.schemas:
            return
        if self._prune_unknown:
            self._validator.prune(rt, obj)
        if self._check_schemas:
            causes = self._validator.validate(rt, obj, old=old)
            if causes:
                raise invalid(rt, obj["metadata"].get("name", ""), causes)

    def _check_kind(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        kind, api_version = obj.get("kind"), obj.get("apiVersion")
        if kind not in (None, "", rt.kind):
            raise StoreError(
                400,
                "BadRequest",
                f"the kind in the data ({kind}) does not match the expected kind ({rt.kind}) of {rt.key}",
            )
        if api_version not in (None, "", rt.api_version):
            raise StoreError(
                400,
                "BadRequest",
                f"the API version in the data ({api_version}) does not match the "
                f"expected API version ({rt.api_version}); convert to the storage version first",
            )
        obj["apiVersion"] = rt.api_version
        obj["kind"] = rt.kind

    def create(
        self, key: str, obj: dict[str, Any], *, dry_run: bool = False, field_manager: str | None = None
    ) -> dict[str, Any]:
        """Create an object; returns the stored copy (uid, resourceVersion, ... filled in).

        Errors: 404 (missing namespace), 403 (terminating namespace), 409 AlreadyExists, 422 Invalid
        (name, schema, admission), or whatever an admission hook raises.

        Example:
            >>> store = Store()
            >>> _ = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
            >>> store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
            Traceback (most recent call last):
            ...
            rayqueue_sdk.local.store.StoreError: configmaps "c" already exists
        """
        rt = self._type(key)
        new = _body(obj)
        if not isinstance(new.get("metadata"), dict):
            new["metadata"] = {}
        self._check_kind(rt, new)
        meta = new["metadata"]
        for field in (
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "selfLink",
        ):
            meta.pop(field, None)
        if rt.namespaced:
            if not meta.get("namespace"):
                raise StoreError(
                    400, "BadRequest", "the namespace of the object is required for a namespaced resource"
                )
        else:
            meta.pop("namespace", None)
        if rt.has_status:
            new.pop("status", None)
        with self._txn():
            ns = meta.get("namespace", "")
            if rt.namespaced:
                self._check_namespace_open(rt, ns, meta.get("name") or meta.get("generateName", ""))
            if not meta.get("name"):
                prefix = meta.get("generateName")
                if not prefix:
                    raise invalid(
                        rt,
                        "",
                        [
                            {
                                "reason": "FieldValueRequired",
                                "field": "metadata.name",
                                "message": "Required value: name or generateName is required",
                            }
                        ],
                    )
                bucket = self._objects.get(key, {})
                while True:
                    name = prefix[:58] + "".join(secrets.choice(_GENERATE_ALPHABET) for _ in range(5))
                    if (ns, name) not in bucket:
                        break
                meta["name"] = name
            name = meta["name"]
            self._check_meta(rt, meta, with_name=True)
            if (ns, name) in self._objects.get(key, {}):
                raise StoreError(
                    409,
                    "AlreadyExists",
                    f'{key} "{name}" already exists',
                    details={"name": name, "group": rt.group, "kind": rt.plural},
                )
            new = self._run_hooks(key, "CREATE", new, None)
            new["metadata"]["name"], new["metadata"]["namespace"] = name, ns
            if not rt.namespaced:
                new["metadata"].pop("namespace", None)
            self._check_meta(rt, new["metadata"], with_name=False)
            self._validate(rt, new)
            meta = new["metadata"]
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = now_rfc3339()
            if rt.has_generation:
                meta["generation"] = 1
            if key == "namespaces":
                new.setdefault("spec", {"finalizers": ["kubernetes"]})
                new["status"] = {"phase": "Active"}
                meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = name
            if field_manager:
                meta["managedFields"] = patches.record_update(
                    None,
                    new,
                    field_manager,
                    api_version=rt.api_version,
                    now=meta["creationTimestamp"],
                    list_keys=self._list_keys(rt),
                )
            if dry_run:
                meta["resourceVersion"] = str(self._rv)
                return deep_copy(new)
            meta["resourceVersion"] = self._next_rv()
            self._commit("ADDED", key, new, None)
            if meta.get("ownerReferences") and not any(u in self._uids for u in _owner_uids(new)):
                self._collect(key, new, set())  # every owner is gone already: the GC takes it
            return deep_copy(new)

    def _check_namespace_open(self, rt: ResourceType, ns: str, name: str) -> None:
        ns_obj = self._objects.get("namespaces", {}).get(("", ns))
        if ns_obj is None:
            raise StoreError(
                404, "NotFound", f'namespaces "{ns}" not found', details={"name": ns, "kind": "namespaces"}
            )
        if ns_obj["metadata"].get("deletionTimestamp"):
            raise StoreError(
                403,
                "Forbidden",
                f'{rt.key} "{name}" is forbidden: unable to create new content in namespace {ns} '
                "because it is "
                "being terminated",
                details={"name": name, "group": rt.group, "kind": rt.plural},
                causes=[
                    {
                        "reason": "NamespaceTerminating",
                        "message": f"namespace {ns} is being terminated",
                        "field": "metadata.namespace",
                    }
                ],
            )

    def update(
        self, key: str, obj: dict[str, Any], *, dry_run: bool = False, field_manager: str | None = None
    ) -> dict[str, Any]:
        """Replace an object (spec and metadata); its status is kept where status is a subresource.

        A ``metadata.resourceVersion`` in ``obj`` must match the stored one (else 409 Conflict).

        Example:
            >>> store = Store()
            >>> cm = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
            >>> cm["data"] = {"k": "v"}
            >>> _ = store.update("configmaps", cm)
            >>> try:
            ...     store.update("configmaps", cm)
            ... except StoreError as err:
            ...     print(err.code, err.reason)
            409 Conflict
        """
        rt = self._type(key)
        new = _body(obj)
        meta = new.get("metadata") or {}
        with self._txn():
            old = self._stored(key, meta.get("namespace"), meta.get("name", ""))
            return self._replace(rt, old, new, "", dry_run=dry_run, field_manager=field_manager)

    def update_status(
        self, key: str, obj: dict[str, Any], *, dry_run: bool = False, field_manager: str | None = None
    ) -> dict[str, Any]:
        """Replace only ``.status`` (the status subresource); resourceVersion checked as for update.

        Example:
            >>> store = Store()
            >>> rc = store.create("rayclusters.ray.io", {"metadata": {"name": "r", "namespace": "default"}})
            >>> rc["status"] = {"state": "ready"}
            >>> store.update_status("rayclusters.ray.io", rc)["metadata"]["generation"]
            1
        """
        rt = self._type(key)
        new = _body(obj)
        meta = new.get("metadata") or {}
        with self._txn():
            old = self._stored(key, meta.get("namespace"), meta.get("name", ""))
            return self._replace(rt, old, new, "status", dry_run=dry_run, field_manager=field_manager)

    def _replace(
        self,
        rt: ResourceType,
        old: dict[str, Any],
        new: dict[str, Any],
        subresource: str,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        check_rv: bool = True,
        managed_fields: Objects | None = None,
    ) -> dict[str, Any]:
        """The common update path (lock held): merge server fields, hooks, validation, commit.

        ``managed_fields`` (from server-side apply) replaces ``metadata.managedFields``, also on
        the status subresource, whose writes otherwise keep all of the stored metadata.
        """
        key = rt.key
        ometa = old["metadata"]
        name = ometa["name"]
        if not isinstance(new.get("metadata"), dict):
            new["metadata"] = {}
        rv = new["metadata"].get("resourceVersion")
        if check_rv and rv not in (None, "") and str(rv) != ometa["resourceVersion"]:
            raise StoreError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {key} "{name}": the object has been modified; '
                "please apply your "
                "changes to the latest version and try again",
                details={"name": name, "group": rt.group, "kind": rt.plural},
            )
        if subresource == "status":
            if not rt.has_status:
                raise StoreError(404, "NotFound", "the server could not find the requested resource")
            candidate = deep_copy(old)
            if "status" in new:
                candidate["status"] = new["status"]
            else:
                candidate.pop("status", None)
            new = candidate
        else:
            self._check_kind(rt, new)
            if rt.has_status:
                if "status" in old:
                    new["status"] = deep_copy(old["status"])
                else:
                    new.pop("status", None)
            meta = new["metadata"]
            meta["name"] = name
            if rt.namespaced:
                meta["namespace"] = ometa["namespace"]
            else:
                meta.pop("namespace", None)
            for field in (
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
            ):
                if field in ometa:
                    meta[field] = ometa[field]
                else:
                    meta.pop(field, None)
            if "managedFields" not in meta and "managedFields" in ometa:
                meta["managedFields"] = deep_copy(ometa["managedFields"])
            if ometa.get("deletionTimestamp"):
                added = set(meta.get("finalizers") or ()) - set(ometa.get("finalizers") or ())
                if added:
                    raise invalid(
                        rt,
                        name,
                        [
                            {
                                "reason": "FieldValueForbidden",
                                "field": "metadata.finalizers",
                                "message": "Forbidden: no new finalizers can be added if the object "
                                "is being deleted, found new finalizers " + json.dumps(sorted(added)),
                            }
                        ],
                    )
        new["metadata"]["resourceVersion"] = ometa["resourceVersion"]
        new = self._run_hooks(key, "UPDATE", new, old)
        nmeta = new["metadata"]
        # Hooks may not move the object or change what the server owns.
        for field in ("name", "uid", "creationTimestamp", "resourceVersion"):
            nmeta[field] = ometa[field]
        if rt.namespaced:
            nmeta["namespace"] = ometa["namespace"]
        if subresource != "status":
            self._check_meta(rt, nmeta, with_name=False)
        self._validate(rt, new, old)
        if rt.has_generation:
            nmeta["generation"] = ometa.get("generation", 1) + (1 if self._spec_changed(rt, old, new) else 0)
        if managed_fields is not None:
            nmeta["managedFields"] = managed_fields
        elif field_manager:
            nmeta["managedFields"] = patches.record_update(
                old,
                new,
                field_manager,
                api_version=rt.api_version,
                now=now_rfc3339(),
                subresource=subresource,
                list_keys=self._list_keys(rt),
            )
        if new == old:
            return deep_copy(old)  # a no-op write: no new version, no event
        if dry_run:
            return deep_copy(new)
        nmeta["resourceVersion"] = self._next_rv()
        if nmeta.get("deletionTimestamp") and not nmeta.get("finalizers"):
            self._commit("MODIFIED", key, new, old)
            self._finalize(key, new, set())
            return deep_copy(new)
        self._commit("MODIFIED", key, new, old)
        return deep_copy(new)

    @staticmethod
    def _spec_changed(rt: ResourceType, old: dict[str, Any], new: dict[str, Any]) -> bool:
        skip = ("metadata", "status") if rt.has_status else ("metadata",)
        keys = (set(old) | set(new)) - set(skip)
        return any(old.get(k) != new.get(k) for k in keys)

    # -- patches -----------------------------------------------------------------------------------
    def patch(
        self,
        key: str,
        namespace: str | None,
        name: str,
        patch: PatchBody,
        *,
        patch_type: str = "merge",
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        """Patch an object: ``patch_type`` is ``merge``, ``json``, ``strategic`` or ``apply``.

        ``subresource="status"`` patches only the status. A ``metadata.resourceVersion`` in a merge or
        strategic patch is a precondition (409 on mismatch). ``apply`` needs ``field_manager`` (see
        :meth:`apply`).

        Example:
            >>> store = Store()
            >>> _ = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"},
            ...                                 "data": {"a": "1"}})
            >>> ops = [{"op": "replace", "path": "/data/a", "value": "2"}]
            >>> store.patch("configmaps", "default", "c", ops, patch_type="json")["data"]
            {'a': '2'}
        """
        if patch_type == "apply":
            if not isinstance(patch, dict):
                raise StoreError(400, "BadRequest", "an apply patch must be an object")
            body = interned_copy(patch)
            meta = body.setdefault("metadata", {})
            meta.setdefault("name", name)
            if namespace:
                meta.setdefault("namespace", namespace)
            return self.apply(
                key,
                body,
                field_manager=field_manager or "",
                force=force,
                subresource=subresource,
                dry_run=dry_run,
            )
        rt = self._type(key)
        if subresource not in (None, "", "status"):
            raise StoreError(404, "NotFound", "the server could not find the requested resource")
        patch = interned_copy(patch)
        with self._txn():
            old = self._stored(key, namespace, name)
            try:
                if patch_type == "merge":
                    if not isinstance(patch, dict):
                        raise PatchError(400, "BadRequest", "a merge patch must be a JSON object")
                    new = patches.merge_patch(old, patch)
                elif patch_type == "strategic":
                    if not isinstance(patch, dict):
                        raise PatchError(400, "BadRequest", "a strategic merge patch must be a JSON object")
                    new = patches.strategic_merge_patch(old, patch)
                elif patch_type == "json":
                    new = patches.json_patch(old, patch)  # type: ignore[arg-type]
                else:
                    raise StoreError(415, "UnsupportedMediaType", f"unsupported patch type: {patch_type}")
            except PatchError as exc:
                raise self._patch_error(rt, name, exc) from None
            if not isinstance(new, dict):
                raise StoreError(422, "Invalid", "the patched object is not an object")
            precondition = isinstance(patch, dict) and "resourceVersion" in (patch.get("metadata") or {})
            if not precondition:
                new.setdefault("metadata", {})["resourceVersion"] = old["metadata"]["resourceVersion"]
            return self._replace(
                rt, old, new, subresource or "", dry_run=dry_run, field_manager=field_manager
            )

    def _patch_error(self, rt: ResourceType, name: str, exc: PatchError) -> StoreError:
        if exc.code == 422 and not exc.causes:
            return StoreError(
                422, "Invalid", exc.message, details={"name": name, "group": rt.group, "kind": rt.kind}
            )
        return StoreError(
            exc.code,
            exc.reason,
            exc.message,
            exc.causes,
            details={"name": name, "group": rt.group, "kind": rt.plural},
        )

    def apply(
        self,
        key: str,
        obj: dict[str, Any],
        field_manager: str,
        force: bool = False,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Server-side apply ``obj`` as ``field_manager``: create if missing, else merge and track ownership.

        A field owned by another manager with a different value -> ``StoreError(409, "Conflict")``
        whose causes name the fields, unless ``force``.

        Example:
            >>> store = Store()
            >>> body = {"metadata": {"name": "c", "namespace": "default"}, "data": {"a": "1"}}
            >>> _ = store.apply("configmaps", body, "alice")
            >>> try:
            ...     store.apply("configmaps", {**body, "data": {"a": "2"}}, "bob")
            ... except StoreError as err:
            ...     print(err.message)
            Apply failed with 1 conflict: conflict with "alice" using v1: .data.a
            >>> store.apply("configmaps", {**body, "data": {"a": "2"}}, "bob", force=True)["data"]
            {'a': '2'}
        """
        rt = self._type(key)
        if not field_manager:
            raise StoreError(
                422,
                "Invalid",
                'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                "is required for apply patch",
            )
        obj = _body(obj)
        meta = obj.get("metadata") or {}
        name = meta.get("name", "")
        ns = meta.get("namespace") if rt.namespaced else None
        if subresource not in (None, "", "status"):
            raise StoreError(404, "NotFound", "the server could not find the requested resource")
        with self._txn():
            existing = self._objects.get(key, {}).get((self._ns(rt, ns), name))
            stamp = now_rfc3339()
            try:
                merged = patches.server_side_apply(
                    existing,
                    obj,
                    field_manager,
                    force=force,
                    api_version=rt.api_version,
                    now=stamp,
                    subresource=subresource or "",
                    list_keys=self._list_keys(rt),
                )
            except PatchError as exc:
                raise self._patch_error(rt, name, exc) from None
            if existing is None:
                if subresource:
                    raise self._not_found(key, name)
                return self.create(key, merged, dry_run=dry_run)
            rv = meta.get("resourceVersion")
            merged["metadata"]["resourceVersion"] = rv if rv else existing["metadata"]["resourceVersion"]
            return self._replace(
                rt,
                existing,
                merged,
                subresource or "",
                dry_run=dry_run,
                managed_fields=merged["metadata"].get("managedFields"),
            )

    # -- deletion ----------------------------------------------------------------------------------
    def delete(
        self,
        key: str,
        namespace: str | None,
        name: str,
        *,
        propagation_policy: str = "Background",
        resource_version: str | None = None,
        uid: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any] | None:
        """Delete an object; returns it (with ``deletionTimestamp`` when finalizers keep it).

        With finalizers the object stays, marked for deletion, until the last finalizer is removed.
        Dependents (ownerReferences) are garbage-collected once it is gone; ``Orphan`` strips their
        ownerReferences instead. ``resource_version``/``uid`` are preconditions (409 on mismatch).

        Example:
            >>> store = Store()
            >>> cm = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default",
            ...                                               "finalizers": ["x/y"]}})
            >>> "deletionTimestamp" in store.delete("configmaps", "default", "c")["metadata"]
            True
            >>> _ = store.patch("configmaps", "default", "c", {"metadata": {"finalizers": None}})
            >>> store.list("configmaps", "default")
            []
        """
        rt = self._type(key)
        with self._txn():
            old = self._stored(key, namespace, name)
            ometa = old["metadata"]
            if (resource_version and resource_version != ometa["resourceVersion"]) or (
                uid and uid != ometa["uid"]
            ):
                which = (
                    "ResourceVersion"
                    if resource_version and resource_version != ometa["resourceVersion"]
                    else "UID"
                )
                have = ometa["resourceVersion"] if which == "ResourceVersion" else ometa["uid"]
                want = resource_version if which == "ResourceVersion" else uid
                raise StoreError(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on {key} "{name}": the {which} in the '
                    f"precondition ({want}) does "
                    f"not match the {which} in record ({have}). The object might have been modified",
                    details={"name": name, "group": rt.group, "kind": rt.plural},
                )
            if dry_run:
                return deep_copy(old)
            if propagation_policy == "Orphan":
                self._orphan(ometa["uid"])
            result = self._delete(key, old, set())
            return deep_copy(result)

    def delete_collection(
        self,
        key: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        propagation_policy: str = "Background",
    ) -> Objects:
        """Delete every matching object; returns what each delete returned.

        Example:
            >>> store = Store()
            >>> for n in "ab":
            ...     _ = store.create("configmaps", {"metadata": {"name": n, "namespace": "default"}})
            >>> len(store.delete_collection("configmaps", "default")), store.list("configmaps")
            (2, [])
        """
        with self._txn():
            out = []
            for obj in self.list(
                key, namespace, label_selector=label_selector, field_selector=field_selector
            ):
                meta = obj["metadata"]
                try:
                    result = self.delete(
                        key, meta.get("namespace"), meta["name"], propagation_policy=propagation_policy
                    )
                except StoreError as exc:  # already collected by a cascade
                    if exc.code != 404:
                        raise
                    continue
                if result is not None:
                    out.append(result)
            return out

    def _delete(self, key: str, old: dict[str, Any], seen: set[str]) -> dict[str, Any]:
        """Start deleting ``old`` (lock held): mark it if finalizers hold it, else remove it."""
        meta = old["metadata"]
        if key == "namespaces":
            return self._delete_namespace(old, seen)
        if meta.get("finalizers"):
            if meta.get("deletionTimestamp"):
                return old
            rt = self.registry.get(key)
            new = deep_copy(old)
            new["metadata"]["deletionTimestamp"] = now_rfc3339()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            if rt.has_generation:
                new["metadata"]["generation"] = meta.get("generation", 1) + 1
            new["metadata"]["resourceVersion"] = self._next_rv()
            self._commit("MODIFIED", key, new, old)
            return new
        return self._finalize(key, old, seen)

    def _finalize(self, key: str, obj: dict[str, Any], seen: set[str]) -> dict[str, Any]:
        """Remove ``obj`` for good, then collect its dependents and maybe its namespace (lock held)."""
        gone = deep_copy(obj)
        gone["metadata"]["resourceVersion"] = self._next_rv()
        self._commit("DELETED", key, gone, obj)
        uid = obj["metadata"].get("uid", "")
        seen.add(uid)
        for dep_key, dep_ns, dep_name in sorted(self._dependents.pop(uid, set())):
            dependent = self._objects.get(dep_key, {}).get((dep_ns, dep_name))
            if dependent is not None:
                self._collect(dep_key, dependent, seen)
        ns = gone["metadata"].get("namespace")
        if ns and self._ns_counts.get(ns, 0) == 0:
            ns_obj = self._objects.get("namespaces", {}).get(("", ns))
            if (
                ns_obj is not None
                and ns_obj["metadata"].get("deletionTimestamp")
                and not ns_obj["metadata"].get("finalizers")
            ):
                self._finalize("namespaces", ns_obj, seen)
        return gone

    def _collect(self, key: str, dependent: dict[str, Any], seen: set[str]) -> None:
        """Garbage-collect a dependent whose owner went away (lock held)."""
        refs = dependent["metadata"].get("ownerReferences") or []
        alive = [r for r in refs if r.get("uid") in self._uids and r.get("uid") not in seen]
        if alive:
            if len(alive) != len(refs):  # drop the dangling references, keep the object
                new = deep_copy(dependent)
                new["metadata"]["ownerReferences"] = alive
                new["metadata"]["resourceVersion"] = self._next_rv()
                self._commit("MODIFIED", key, new, dependent)
            return
        self._delete(key, dependent, seen)

    def _orphan(self, uid: str) -> None:
        for dep_key, dep_ns, dep_name in sorted(self._dependents.get(uid, set())):
            dependent = self._objects[dep_key][(dep_ns, dep_name)]
            new = deep_copy(dependent)
            refs = [r for r in new["metadata"].get("ownerReferences", []) if r.get("uid") != uid]
            if refs:
                new["metadata"]["ownerReferences"] = refs
            else:
                new["metadata"].pop("ownerReferences", None)
            new["metadata"]["resourceVersion"] = self._next_rv()
            self._commit("MODIFIED", dep_key, new, dependent)

    def _delete_namespace(self, old: dict[str, Any], seen: set[str]) -> dict[str, Any]:
        name = old["metadata"]["name"]
        current = old
        if not old["metadata"].get("deletionTimestamp"):
            current = deep_copy(old)
            current["metadata"]["deletionTimestamp"] = now_rfc3339()
            current["metadata"]["deletionGracePeriodSeconds"] = 0
            current["status"] = {"phase": "Terminating"}
            current["metadata"]["resourceVersion"] = self._next_rv()
            self._commit("MODIFIED", "namespaces", current, old)
        for key in list(self._objects):
            for k in sorted(k for k in self._objects[key] if k[0] == name):
                obj = self._objects[key].get(k)
                if obj is not None and not obj["metadata"].get("deletionTimestamp"):
                    self._delete(key, obj, seen)
        latest = self._objects.get("namespaces", {}).get(("", name))
        if latest is None:  # the last object's removal already finalized the namespace
            gone = deep_copy(current)
            gone["metadata"]["resourceVersion"] = str(self._rv)
            return gone
        if self._ns_counts.get(name, 0) == 0 and not latest["metadata"].get("finalizers"):
            return self._finalize("namespaces", latest, seen)
        return latest

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
                existing = self._objects.get("events", {}).get(where)
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
