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

from rayqueue_local.registry.pruning import _prune, unknown_fields
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


#: ``metav1.ObjectMeta``'s fields (``k8s.io/apimachinery/pkg/apis/meta/v1/types.go``).
OBJECT_META: dict[str, Any] = _obj(
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "finalizers",
    "managedFields",
    labels=_STRING_MAP,
    annotations=_STRING_MAP,
    ownerReferences=_list_of(_obj("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")),
)

_CONTAINER = _obj(
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "ports",
    "envFrom",
    "env",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
)
_POD_SPEC = _obj(
    "volumes",
    "ephemeralContainers",
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "dnsPolicy",
    "nodeSelector",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "nodeName",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
    "securityContext",
    "imagePullSecrets",
    "hostname",
    "subdomain",
    "affinity",
    "schedulerName",
    "tolerations",
    "hostAliases",
    "priorityClassName",
    "priority",
    "dnsConfig",
    "readinessGates",
    "runtimeClassName",
    "enableServiceLinks",
    "preemptionPolicy",
    "overhead",
    "topologySpreadConstraints",
    "setHostnameAsFQDN",
    "os",
    "hostUsers",
    "schedulingGates",
    "resourceClaims",
    "resources",
    containers=_list_of(_CONTAINER),
    initContainers=_list_of(_CONTAINER),
)
_SERVICE_SPEC = _obj(
    "clusterIP",
    "clusterIPs",
    "type",
    "externalIPs",
    "sessionAffinity",
    "loadBalancerIP",
    "loadBalancerSourceRanges",
    "externalName",
    "externalTrafficPolicy",
    "healthCheckNodePort",
    "publishNotReadyAddresses",
    "sessionAffinityConfig",
    "ipFamilies",
    "ipFamilyPolicy",
    "allocateLoadBalancerNodePorts",
    "loadBalancerClass",
    "internalTrafficPolicy",
    "trafficDistribution",
    selector=_STRING_MAP,
    ports=_list_of(_obj("name", "protocol", "appProtocol", "port", "targetPort", "nodePort")),
)

_POD_TEMPLATE = _obj("metadata", spec=_POD_SPEC)
_POLICY_RULES = _list_of(_obj("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"))
_BINDING = _obj(
    subjects=_list_of(_obj("kind", "apiGroup", "name", "namespace")),
    roleRef=_obj("apiGroup", "kind", "name"),
)

#: The known fields of the built-in kinds served, by store key (the top level of each Go type).
BUILTIN_FIELDS: dict[str, dict[str, Any]] = {
    "namespaces": _obj(spec=_obj("finalizers"), status=_obj("phase", "conditions")),
    "configmaps": _obj("immutable", data=_STRING_MAP, binaryData=_STRING_MAP),
    "secrets": _obj("immutable", "type", data=_STRING_MAP, stringData=_STRING_MAP),
    "serviceaccounts": _obj("secrets", "imagePullSecrets", "automountServiceAccountToken"),
    "services": _obj("status", spec=_SERVICE_SPEC),
    "pods": _obj("status", spec=_POD_SPEC),
    "events": _obj(
        "involvedObject",
        "reason",
        "message",
        "source",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "type",
        "eventTime",
        "series",
        "action",
        "related",
        "reportingComponent",
        "reportingInstance",
    ),
    "roles.rbac.authorization.k8s.io": _obj(rules=_POLICY_RULES),
    "rolebindings.rbac.authorization.k8s.io": _BINDING,
    "clusterroles.rbac.authorization.k8s.io": _obj(
        rules=_POLICY_RULES, aggregationRule=_obj("clusterRoleSelectors")
    ),
    "clusterrolebindings.rbac.authorization.k8s.io": _BINDING,
    "ingresses.networking.k8s.io": _obj("spec", "status"),
    # core/v1 Node [k8s.io/api/core/v1 NodeSpec]
    "nodes": _obj(
        "status",
        spec=_obj(
            "podCIDR", "podCIDRs", "providerID", "unschedulable", "taints", "configSource", "externalID"
        ),
    ),
    # apps/v1 Deployment [k8s.io/api/apps/v1 DeploymentSpec]
    "deployments.apps": _obj(
        "status",
        spec=_obj(
            "replicas",
            "selector",
            "strategy",
            "minReadySeconds",
            "revisionHistoryLimit",
            "paused",
            "progressDeadlineSeconds",
            template=_POD_TEMPLATE,
        ),
    ),
    # batch/v1 Job [k8s.io/api/batch/v1 JobSpec]
    "jobs.batch": _obj(
        "status",
        spec=_obj(
            "parallelism",
            "completions",
            "activeDeadlineSeconds",
            "podFailurePolicy",
            "successPolicy",
            "backoffLimit",
            "backoffLimitPerIndex",
            "maxFailedIndexes",
            "selector",
            "manualSelector",
            "ttlSecondsAfterFinished",
            "completionMode",
            "suspend",
            "podReplacementPolicy",
            "managedBy",
            template=_POD_TEMPLATE,
        ),
    ),
    # apiextensions.k8s.io/v1 CustomResourceDefinition [apiextensions-apiserver CustomResourceDefinitionSpec]
    "customresourcedefinitions.apiextensions.k8s.io": _obj(
        "status", spec=_obj("group", "names", "scope", "versions", "conversion", "preserveUnknownFields")
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
        _prune(OBJECT_META, meta, ["metadata"], dropped)
    schema = field_schema(rt, version)
    if schema is not None:
        _prune(schema, obj, [], dropped, root=True)


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
