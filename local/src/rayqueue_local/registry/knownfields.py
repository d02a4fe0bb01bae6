"""Which fields a resource knows: what ``fieldValidation`` calls an unknown field, for every type served.

A custom resource knows what its CRD's structural schema declares (``x-kubernetes-preserve-unknown-fields``
keeps a subtree open). A built-in kind knows the fields of its Go type: the server has no schema for them,
so :data:`BUILTIN_FIELDS` lists them as small structural schemas, exact at the levels clients write
(``ConfigMap.data``, ``RoleBinding.roleRef``, the fields of a ``PodSpec`` and of a container, ...) and open
below (``x-kubernetes-preserve-unknown-fields``) where listing every Go field would add nothing. Every
kind shares ``ObjectMeta`` (:data:`OBJECT_META`).

:func:`unknown_paths` lists the unknown fields of an object; :func:`unknown_patch_paths` those a JSON
patch (RFC 6902) would add. Paths are written as upstream's strict decoder writes them
(``spec.workerGroupSpecs[0].foo``).

Example:
    >>> from rayqueue_local.registry.registry import Registry
    >>> rt = Registry().get("configmaps")
    >>> unknown_paths(rt, "v1", {"metadata": {"name": "c", "labelz": {}}, "data": {}, "dta": {}})
    ['dta', 'metadata.labelz']
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.apimachinery.gotypes import json_fields
from rayqueue_local.registry.pruning import prune_in_place, unknown_fields
from rayqueue_local.registry.resourcetypes import ResourceType

__all__ = [
    "BUILTIN_FIELDS",
    "OBJECT_META",
    "field_schema",
    "prune_unknown",
    "unknown_patch_paths",
    "unknown_paths",
]

_OPEN: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}
_STRING_MAP: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}}


def _obj(*names: str, **typed: Any) -> dict[str, Any]:
    """An object schema: ``names`` open (any value), ``typed`` with their own schemas."""
    return {"type": "object", "properties": {**{n: _OPEN for n in names}, **typed}}


def _list_of(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


def _go(message: str, **typed: Any) -> dict[str, Any]:
    """The schema of Go type ``message``: every field it has (:func:`json_fields`, the one table the
    protobuf codec reads too) open, but ``typed``, which have their own schemas."""
    return _obj(*(name for name in json_fields(message) if name not in typed), **typed)


#: ``metav1.ObjectMeta``'s fields.
OBJECT_META: dict[str, Any] = _go(
    "meta/v1.ObjectMeta",
    labels=_STRING_MAP,
    annotations=_STRING_MAP,
    ownerReferences=_list_of(_go("meta/v1.OwnerReference")),
)

_CONTAINER = _go("core/v1.Container")
_POD_SPEC = _go("core/v1.PodSpec", containers=_list_of(_CONTAINER), initContainers=_list_of(_CONTAINER))
_SERVICE_SPEC = _go("core/v1.ServiceSpec", selector=_STRING_MAP, ports=_list_of(_go("core/v1.ServicePort")))
_POD_TEMPLATE = _go("core/v1.PodTemplateSpec", spec=_POD_SPEC)
_POLICY_RULES = _list_of(_go("rbac/v1.PolicyRule"))
_BINDING_FIELDS = {"subjects": _list_of(_go("rbac/v1.Subject")), "roleRef": _go("rbac/v1.RoleRef")}

#: The known fields of the built-in kinds served, by store key (the top level of each Go type), all from
#: the generated Go-type tables (:mod:`rayqueue_local.apimachinery.gotypes`).
BUILTIN_FIELDS: dict[str, dict[str, Any]] = {
    "namespaces": _go(
        "core/v1.Namespace", spec=_go("core/v1.NamespaceSpec"), status=_go("core/v1.NamespaceStatus")
    ),
    "configmaps": _go("core/v1.ConfigMap", data=_STRING_MAP, binaryData=_STRING_MAP),
    "secrets": _go("core/v1.Secret", data=_STRING_MAP, stringData=_STRING_MAP),
    "serviceaccounts": _go("core/v1.ServiceAccount"),
    "services": _go("core/v1.Service", spec=_SERVICE_SPEC),
    "pods": _go("core/v1.Pod", spec=_POD_SPEC),
    "events": _go("core/v1.Event"),
    "roles.rbac.authorization.k8s.io": _go("rbac/v1.Role", rules=_POLICY_RULES),
    "rolebindings.rbac.authorization.k8s.io": _go("rbac/v1.RoleBinding", **_BINDING_FIELDS),
    "clusterroles.rbac.authorization.k8s.io": _go(
        "rbac/v1.ClusterRole", rules=_POLICY_RULES, aggregationRule=_go("rbac/v1.AggregationRule")
    ),
    "clusterrolebindings.rbac.authorization.k8s.io": _go("rbac/v1.ClusterRoleBinding", **_BINDING_FIELDS),
    "ingresses.networking.k8s.io": _go("networking/v1.Ingress"),
    "nodes": _go("core/v1.Node", spec=_go("core/v1.NodeSpec")),
    "deployments.apps": _go("apps/v1.Deployment", spec=_go("apps/v1.DeploymentSpec", template=_POD_TEMPLATE)),
    "jobs.batch": _go("batch/v1.Job", spec=_go("batch/v1.JobSpec", template=_POD_TEMPLATE)),
    "customresourcedefinitions.apiextensions.k8s.io": _go(
        "apiextensions/v1.CustomResourceDefinition", spec=_go("apiextensions/v1.CustomResourceDefinitionSpec")
    ),
}


def field_schema(rt: ResourceType, version: str) -> dict[str, Any] | None:
    """The structural schema unknown fields are judged by: the CRD's, else the built-in table's.

    None when the type has neither (nothing is called unknown then).

    Example:
        >>> from rayqueue_local.registry.registry import Registry
        >>> field_schema(Registry().get("secrets"), "v1")["properties"]["type"]
        {'x-kubernetes-preserve-unknown-fields': True}
    """
    schema = rt.schemas.get(version)
    if schema is not None:
        return schema
    return BUILTIN_FIELDS.get(rt.key)


def unknown_paths(rt: ResourceType, version: str, obj: dict[str, Any]) -> list[str]:
    """The unknown fields of ``obj`` (at ``version``), ``metadata`` included, sorted.

    Example:
        >>> from rayqueue_local.registry.registry import Registry
        >>> unknown_paths(Registry().get("pods"), "v1",
        ...     {"spec": {"containers": [{"name": "a", "imagee": "x"}], "nodeNmae": "n"}})
        ['spec.containers[0].imagee', 'spec.nodeNmae']
    """
    found: list[str] = []
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        found += unknown_fields(OBJECT_META, meta, ["metadata"])
    schema = field_schema(rt, version)
    if schema is not None:
        found += unknown_fields(schema, obj)
    return sorted(found)


def prune_unknown(rt: ResourceType, version: str, obj: dict[str, Any]) -> None:
    """Drop, in place, the unknown fields :func:`unknown_paths` lists (what decoding into a Go type does).

    Example:
        >>> from rayqueue_local.registry.registry import Registry
        >>> cm = {"metadata": {"name": "c", "labelz": {}}, "data": {}, "dta": {}}
        >>> prune_unknown(Registry().get("configmaps"), "v1", cm); cm
        {'metadata': {'name': 'c'}, 'data': {}}
    """
    dropped: list[str] = []
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        prune_in_place(OBJECT_META, meta, ["metadata"], dropped)
    schema = field_schema(rt, version)
    if schema is not None:
        prune_in_place(schema, obj, [], dropped, root=True)


def _pointer(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]] if path else []


def _descend(schema: Any, key: str) -> tuple[bool, Any]:
    """``(known, sub-schema)`` of one step down a schema; the sub-schema is None when anything goes."""
    if not isinstance(schema, dict):
        return True, None
    if schema.get("type") == "array" or "items" in schema:
        return True, schema.get("items") if isinstance(schema.get("items"), dict) else None
    props = schema.get("properties")
    if props is not None and key in props:
        return True, props[key]
    if isinstance(schema.get("additionalProperties"), dict):
        return True, schema["additionalProperties"]
    if schema.get("x-kubernetes-preserve-unknown-fields") or (props is None and not schema.get("type")):
        return True, None
    return False, None


def unknown_patch_paths(rt: ResourceType, version: str, ops: list[Any]) -> list[str]:
    """The unknown fields the ``add``/``replace``/``move``/``copy`` operations of a JSON patch write.

    Example:
        >>> from rayqueue_local.registry.registry import Registry
        >>> unknown_patch_paths(Registry().get("configmaps"), "v1",
        ...     [{"op": "add", "path": "/dat", "value": {}}, {"op": "add", "path": "/data/x", "value": "1"}])
        ['dat']
    """
    top = {"apiVersion": _OPEN, "kind": _OPEN, "metadata": OBJECT_META}
    root: dict[str, Any] = {"type": "object", "properties": {**top, **_schema_props(rt, version)}}
    if field_schema(rt, version) is None:
        root = {"type": "object", "properties": top, **_OPEN}
    found: list[str] = []
    for op in ops:
        if not isinstance(op, dict) or op.get("op") not in ("add", "replace", "move", "copy"):
            continue
        parts = _pointer(str(op.get("path") or ""))
        schema: Any = root
        walked: list[Any] = []
        for depth, part in enumerate(parts):
            is_index = part == "-" or part.isdigit()
            known, sub = _descend(schema, part)
            walked.append(int(part) if part.isdigit() else part)
            if not known:
                found.append(_path(walked))
                break
            if sub is None:
                break
            schema = sub
            if depth == len(parts) - 1 and op.get("op") in ("add", "replace") and not is_index:
                found += unknown_fields(schema, op.get("value"), walked)
            elif depth == len(parts) - 1 and op.get("op") in ("add", "replace"):
                found += unknown_fields(schema, op.get("value"), walked[:-1] + [0])
    return sorted(set(found))


def _schema_props(rt: ResourceType, version: str) -> dict[str, Any]:
    schema = field_schema(rt, version) or {}
    return {k: v for k, v in (schema.get("properties") or {}).items() if k != "metadata"}


def _path(parts: list[Any]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out
