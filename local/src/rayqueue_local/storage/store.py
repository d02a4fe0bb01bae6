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

Layout: :class:`Store` is a facade over parts, each a class in its own module that is handed only the
parts it uses, with no lock of its own (they share the core's):
:class:`~rayqueue_local.storage.storecore.StoreCore` (the lock, the objects and their indexes in an
:class:`~rayqueue_local.storage.objectindex.ObjectIndex`, the event history and watches in an
:class:`~rayqueue_local.storage.eventlog.EventLog`, the
:class:`~rayqueue_local.storage.persistence.Persistence`, the resourceVersion counter, hooks and
subscribers; commit and transactions),
:class:`~rayqueue_local.storage.reads.StoreReads` (get, list, pagination),
:class:`~rayqueue_local.storage.watchlog.StoreWatches` (``Store.watch``),
:class:`~rayqueue_local.storage.checks.WriteChecks` (names, metadata, kinds, CRD schemas),
:class:`~rayqueue_local.storage.gc.StoreDeletion` (deletion, finalizers, garbage collection),
:class:`~rayqueue_local.storage.writes.StoreWrites` (create, update),
:class:`~rayqueue_local.storage.patching.StorePatching` (patch, apply) and
:class:`~rayqueue_local.storage.eventrecorder.EventRecorder` (``Store.record_event``).
:mod:`~rayqueue_local.storage.storetypes` holds ``StoreError``, ``Event``, ``ListResult`` and helpers.
The store's public methods are its parts' own, bound in ``Store.__init__``. Every public name stays
importable from here.

Example:
    >>> store = Store()
    >>> rc = store.create("rayclusters.ray.io", {"metadata": {"name": "demo", "namespace": "default"},
    ...                                          "spec": {"rayVersion": "2.40.0"}})
    >>> rc["metadata"]["generation"], rc["apiVersion"]
    (1, 'ray.io/v1')
    >>> store.get("rayclusters.ray.io", "default", "nope")
    Traceback (most recent call last):
    ...
    rayqueue_local.storage.storetypes.StoreError: rayclusters.ray.io "nope" not found
"""

from __future__ import annotations

import inspect
import os
from typing import Any

from rayqueue_local.registry.builtindefaults import DEFAULTED_KEYS, apply_builtin_defaults
from rayqueue_local.registry.registry import Registry
from rayqueue_local.storage.checks import WriteChecks
from rayqueue_local.storage.eventrecorder import EventRecorder
from rayqueue_local.storage.gc import StoreDeletion
from rayqueue_local.storage.patching import StorePatching
from rayqueue_local.storage.persistence import Persistence
from rayqueue_local.storage.reads import StoreReads
from rayqueue_local.storage.storecore import StoreCore
from rayqueue_local.storage.storetypes import AdmissionHook, Event, ListResult, StoreError
from rayqueue_local.storage.storetypes import Objects as Objects
from rayqueue_local.storage.storetypes import (
    ObjKey as ObjKey,  # re-exported: they lived here before the split
)
from rayqueue_local.storage.storetypes import PatchBody as PatchBody
from rayqueue_local.storage.storetypes import invalid as invalid
from rayqueue_local.storage.storetypes import qualified_kind as qualified_kind
from rayqueue_local.storage.watch import Watch
from rayqueue_local.storage.watchlog import StoreWatches
from rayqueue_local.storage.writes import StoreWrites

__all__ = ["AdmissionHook", "Event", "ListResult", "Store", "StoreError", "Watch"]

_DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

#: The parts whose methods are the store's: their examples run with this module's doctests.
_PARTS = (StoreCore, StoreReads, StoreWatches, StoreDeletion, StoreWrites, StorePatching, EventRecorder)


class Store:
    """The in-memory object store (see the module docstring for the semantics).

    ``registry`` defaults to the built-in types (no schemas); ``state_dir`` makes the state survive a
    restart (``fsync=False`` trades crash safety for speed); ``history`` bounds the event log used by
    watches and pagination; ``validate`` checks custom resources against the CRD schemas the
    registry holds and ``prune`` drops the fields those schemas do not declare, as upstream does;
    ``namespaces`` are created when missing.

    Its methods are those of its parts: ``get``, ``get_by_uid``, ``list`` and ``list_page``
    (:class:`~rayqueue_local.storage.reads.StoreReads`); ``watch``
    (:class:`~rayqueue_local.storage.watchlog.StoreWatches`); ``create``, ``update`` and
    ``update_status`` (:class:`~rayqueue_local.storage.writes.StoreWrites`); ``delete`` and
    ``delete_collection`` (:class:`~rayqueue_local.storage.gc.StoreDeletion`); ``patch`` and ``apply``
    (:class:`~rayqueue_local.storage.patching.StorePatching`); ``record_event``
    (:class:`~rayqueue_local.storage.eventrecorder.EventRecorder`); ``subscribe`` and
    ``add_admission_hook`` (:class:`~rayqueue_local.storage.storecore.StoreCore`).

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
        self._checks = checks = WriteChecks(self.registry, validate=validate, prune=prune)
        self._persistence = Persistence(state_dir, fsync=fsync) if state_dir is not None else None
        self._core = core = StoreCore(self.registry, history=history, persistence=self._persistence)
        core.load(checks.default_loaded)
        reads = StoreReads(core)
        deletion = StoreDeletion(core, reads)
        writes = StoreWrites(core, checks, deletion)
        patching = StorePatching(core, writes, checks)
        # The public surface: each method is its part's own.
        self.get, self.get_by_uid = reads.get, reads.get_by_uid
        self.list, self.list_page = reads.list, reads.list_page
        self.watch = StoreWatches(core).watch
        self.create, self.update, self.update_status = writes.create, writes.update, writes.update_status
        self.delete, self.delete_collection = deletion.delete, deletion.delete_collection
        self.patch, self.apply = patching.patch, patching.apply
        self.record_event = EventRecorder(core, writes).record_event
        self.subscribe, self.add_admission_hook = core.subscribe, core.add_admission_hook
        for key in DEFAULTED_KEYS:  # upstream defaults these kinds when it decodes them
            core.add_admission_hook(key, _defaulter(key))
        for ns in namespaces:
            if ("", ns) not in core.index.bucket("namespaces"):
                self.create("namespaces", {"metadata": {"name": ns}})

    # -- introspection -----------------------------------------------------------------------------
    @property
    def resource_version(self) -> str:
        """The current (latest committed) resourceVersion."""
        with self._core.lock:
            return str(self._core.rv)

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
        return self._checks.validating

    def type_changed(self, key: str) -> None:
        """Forget what was derived from ``key``'s type (compiled schemas, list keys): its CRD changed.

        Example:
            >>> store = Store()
            >>> store.registry.remove("rayjobs.ray.io") is not None
            True
            >>> store.type_changed("rayjobs.ray.io")
        """
        with self._core.lock:
            self._checks.type_changed(key)

    def count(self, key: str | None = None) -> int:
        """Number of stored objects (of one resource, or in total).

        Example:
            >>> Store().count("namespaces")
            4
        """
        with self._core.lock:
            return self._core.index.count(key)

    def close(self) -> None:
        """Close every watch and the persistence files."""
        with self._core.lock:
            self._core.events.close_watches()
            if self._persistence is not None:
                self._persistence.close()


def _defaulter(key: str) -> AdmissionHook:
    def hook(op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        return apply_builtin_defaults(key, new)

    return hook


# The examples of the methods Store takes from its parts (and of ``invalid``) run with this module's
# doctests, in this module's namespace, as they did before the store was split.
__test__ = {
    f"{part.__name__}.{name}": member
    for part in _PARTS
    for name, member in vars(part).items()
    if inspect.isfunction(member) and ">>>" in (member.__doc__ or "")
} | {"invalid": invalid}
