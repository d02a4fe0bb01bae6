"""``apiextensions.k8s.io/v1`` CustomResourceDefinitions as objects: the served CRDs, and users' own.

:func:`serve_custom_resource_definitions` makes the store's CRD objects and the registry's types
agree, as kube-apiserver's apiextensions controllers do [staging/src/k8s.io/apiextensions-apiserver/
pkg/apiserver, pkg/controller/establish, pkg/apis/apiextensions/validation]:

* every type the registry read from a CRD file gets its ``CustomResourceDefinition`` object
  (``kubectl get crd``), and a CRD object kept in a state directory from an earlier run is served
  again, unless a CRD file defines the same type: then the file, as this run serves it (e.g. with
  ``kueue_api_versions``), replaces the stored copy;
* creating a CRD validates it (name ``<plural>.<group>``, a group with a dot and, for the
  ``*.k8s.io`` groups, the ``api-approved.kubernetes.io`` annotation, scope, exactly one storage
  version) with upstream's messages, sets its status (``acceptedNames``, ``storedVersions``,
  ``NamesAccepted`` and ``Established`` True) and serves the new type at once: discovery,
  OpenAPI, storage and validation against its ``openAPIV3Schema``;
* updating one serves the new versions and schemas; deleting one deletes its custom resources and
  stops serving the type.

Differences, on purpose: a CRD is established in the same write (upstream: a moment later); a
deleted CRD is gone at once (upstream: the ``customresourcecleanup`` finalizer holds it while the
resources are deleted; a resource with finalizers of its own is left terminating here, no longer
served); name conflicts between CRDs (``NamesAccepted`` False) are not detected beyond the name itself.

Example:
    >>> from rayqueue_local.storage.store import Store
    >>> store = Store()
    >>> serve_custom_resource_definitions(store)
    >>> crd = {"metadata": {"name": "foos.example.com"}, "spec": {"group": "example.com",
    ...     "scope": "Namespaced", "names": {"plural": "foos", "kind": "Foo"},
    ...     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
    ...         "type": "object", "properties": {"spec": {"type": "object",
    ...             "properties": {"size": {"type": "integer"}}}}}}}]}}
    >>> _ = store.create(CRD_KEY, crd)
    >>> try:
    ...     store.create("foos.example.com", {"metadata": {"name": "a", "namespace": "default"},
    ...         "spec": {"size": "big"}})
    ... except StoreError as err:
    ...     print(err.code, err.causes[0]["field"])
    422 spec.size
    >>> _ = store.delete(CRD_KEY, None, "foos.example.com")
    >>> "foos.example.com" in store.registry
    False
"""

from __future__ import annotations

import logging
from typing import Any

from rayqueue_local.apimachinery.patchcore import deep_copy
from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.registry.crds import type_from_crd
from rayqueue_local.registry.resourcetypes import resource_key
from rayqueue_local.storage.store import Event, Store, StoreError
from rayqueue_local.storage.storetypes import invalid

log = logging.getLogger(__name__)

__all__ = ["CRD_KEY", "serve_custom_resource_definitions"]

#: The store key of CustomResourceDefinitions.
CRD_KEY = "customresourcedefinitions.apiextensions.k8s.io"
_APPROVAL = "api-approved.kubernetes.io"


def _cause(field: str, message: str, reason: str = "FieldValueInvalid") -> dict[str, Any]:
    return {"reason": reason, "field": field, "message": message}


def _protected(group: str) -> bool:
    return group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))


def _validate(store: Store, crd: dict[str, Any], old: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Upstream's checks of a CRD that matter here (validation.ValidateCustomResourceDefinition)."""
    meta = crd.get("metadata") or {}
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return [_cause("spec", "Required value", "FieldValueRequired")]
    causes = []
    group = spec.get("group") or ""
    names = spec.get("names")
    if not isinstance(names, dict):
        names = {}
    plural, kind = names.get("plural") or "", names.get("kind") or ""
    if not group:
        causes.append(_cause("spec.group", "Required value", "FieldValueRequired"))
    elif "." not in group:
        causes.append(
            _cause("spec.group", f'Invalid value: "{group}": should be a domain with at least one dot')
        )
    elif _protected(group) and not (meta.get("annotations") or {}).get(_APPROVAL):
        causes.append(
            _cause(
                f"metadata.annotations[{_APPROVAL}]",
                f'Required value: protected groups must have approval annotation "{_APPROVAL}", '
                "see https://github.com/kubernetes/enhancements/pull/1111",
                "FieldValueRequired",
            )
        )
    if not plural:
        causes.append(_cause("spec.names.plural", "Required value", "FieldValueRequired"))
    if not kind:
        causes.append(_cause("spec.names.kind", "Required value", "FieldValueRequired"))
    if plural and group and meta.get("name") != f"{plural}.{group}":
        causes.append(
            _cause(
                "metadata.name",
                f'Invalid value: "{meta.get("name")}": must be spec.names.plural+"."+spec.group',
            )
        )
    scope = spec.get("scope")
    if scope not in ("Cluster", "Namespaced"):
        causes.append(
            _cause(
                "spec.scope",
                f'Unsupported value: "{scope or ""}": supported values: "Cluster", "Namespaced"',
                "FieldValueNotSupported",
            )
        )
    versions = spec.get("versions")
    if not isinstance(versions, list) or not versions:
        causes.append(
            _cause(
                "spec.versions",
                "Invalid value: null: must have exactly one version marked as storage version",
            )
        )
    else:
        if sum(1 for v in versions if isinstance(v, dict) and v.get("storage")) != 1:
            causes.append(
                _cause(
                    "spec.versions",
                    "Invalid value: ...: must have exactly one version marked as storage version",
                )
            )
        for i, v in enumerate(versions):
            if not isinstance(v, dict) or not v.get("name"):
                causes.append(_cause(f"spec.versions[{i}].name", "Required value", "FieldValueRequired"))
    if old is not None:
        for field, before, after in (
            ("spec.group", (old.get("spec") or {}).get("group"), group),
            ("spec.scope", (old.get("spec") or {}).get("scope"), scope),
        ):
            if before != after:
                causes.append(_cause(field, f'Invalid value: "{after}": field is immutable'))
    key = resource_key(group, plural) if group and plural else ""
    existing = store.registry.lookup_key(key) if key else None
    if existing is not None and not existing.from_crd and old is None:
        causes.append(
            _cause("metadata.name", f'Invalid value: "{meta.get("name")}": {key} is built into this server')
        )
    return causes


def _status(crd: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    spec = crd["spec"]
    names = dict(spec["names"])
    names.setdefault("singular", names["kind"].lower())
    names.setdefault("listKind", names["kind"] + "List")
    storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
    before = (old or {}).get("status") or {}
    stored = list(before.get("storedVersions") or [])
    if storage not in stored:
        stored.append(storage)
    now = now_rfc3339()
    previous = {c.get("type"): c for c in before.get("conditions") or [] if isinstance(c, dict)}
    conditions = [
        previous.get("NamesAccepted")
        or {
            "type": "NamesAccepted",
            "status": "True",
            "reason": "NoConflicts",
            "message": "no conflicts found",
            "lastTransitionTime": now,
        },
        previous.get("Established")
        or {
            "type": "Established",
            "status": "True",
            "reason": "InitialNamesAccepted",
            "message": "the initial names have been accepted",
            "lastTransitionTime": now,
        },
    ]
    return {"acceptedNames": names, "conditions": conditions, "storedVersions": stored}


def _document(crd: dict[str, Any]) -> dict[str, Any]:
    """A CRD file's document as an object to create: apiVersion/kind, name and spec only."""
    meta = crd.get("metadata") or {}
    out = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {k: deep_copy(meta[k]) for k in ("name", "labels", "annotations") if k in meta},
        "spec": deep_copy(crd["spec"]),
    }
    return out


def serve_custom_resource_definitions(store: Store) -> None:
    """Keep ``store``'s CRD objects and its registry's types in step (see the module docstring)."""
    registry = store.registry

    def admit(op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        causes = _validate(store, new, old)
        if causes:
            raise invalid(registry.get(CRD_KEY), (new.get("metadata") or {}).get("name", ""), causes)
        new["status"] = _status(new, old)
        return new

    def serve(crd: dict[str, Any]) -> None:
        rt = type_from_crd(crd)
        current = registry.lookup_key(rt.key)
        if current is not None and current.crd is not None and current.crd.get("spec") == crd.get("spec"):
            return  # already served as this CRD says (the registry's type may carry more, e.g. scale hooks)
        registry.add(rt)
        store.type_changed(rt.key)

    def on_event(event: Event) -> None:
        if event.key != CRD_KEY:
            return
        crd = event.object
        if event.type == "DELETED":
            spec = crd.get("spec") or {}
            key = resource_key(spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
            if key in registry:
                try:
                    store.delete_collection(key, None)
                except StoreError:
                    log.exception("deleting the resources of the deleted CRD %s failed", key)
                registry.remove(key)
                store.type_changed(key)
            return
        serve(crd)

    store.add_admission_hook(CRD_KEY, admit)
    store.subscribe(on_event)
    from_files = {rt.key for rt in registry.types() if rt.crd is not None}
    for stored in store.list(CRD_KEY):  # kept from an earlier run: serve them again
        spec = stored.get("spec") or {}
        if resource_key(spec.get("group", ""), (spec.get("names") or {}).get("plural", "")) in from_files:
            continue  # a CRD file (with the versions this run serves) wins over its stored copy: below
        serve(stored)
    for rt in registry.types():
        if rt.crd is None:
            continue
        name = f"{rt.plural}.{rt.group}"
        try:
            stored = store.get(CRD_KEY, None, name)
        except StoreError:
            store.create(CRD_KEY, _document(rt.crd))
            continue
        if stored.get("spec") != rt.crd.get("spec"):  # the CRD file changed since: the file wins
            store.update(CRD_KEY, {**stored, "spec": deep_copy(rt.crd["spec"])})
