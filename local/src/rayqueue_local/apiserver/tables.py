"""Server-side printing: ``Accept: application/json;as=Table;g=meta.k8s.io;v=v1`` answered with a ``Table``.

kubectl asks every ``get`` for a ``meta.k8s.io`` ``Table`` (``v1``, then ``v1beta1``, then plain JSON) and
prints the server's columns. As upstream (``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go``
``asTable``; ``pkg/printers/internalversion/printers.go`` for built-ins;
``apiextensions-apiserver/pkg/registry/customresource/tableconvertor`` for CRDs):

* a CRD's columns are ``Name`` then its version's ``additionalPrinterColumns`` (a version without them
  gets ``Age``); cells are evaluated with :mod:`~rayqueue_local.apimachinery.jsonpath` (first match),
  typed as the column says, ``date`` cells shown as an age (``5m``) and a missing value as ``null``;
* built-ins get upstream's columns (pods: Ready, Status, Restarts, Age, IP/Node wide; services:
  Type, Cluster-IP, External-IP, Port(s), Age, Selector wide; ...); any other type ``Name`` and
  ``Created At``;
* ``priority`` is passed through: kubectl shows priority > 0 columns only with ``-o wide``;
* each row carries ``object``: by default (``includeObject=Metadata``) a ``PartialObjectMetadata``
  (so ``--show-labels`` works), ``Object`` for the whole object, ``None`` for nothing;
* a watch sends one single-row ``Table`` per event, the column definitions only in the first.

``as=PartialObjectMetadata`` / ``as=PartialObjectMetadataList`` (the metadata-only client) are served too.

Example:
    >>> negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
    ('Table', 'meta.k8s.io/v1')
    >>> negotiate("application/json") is None
    True
    >>> human_duration(3 * 3600 + 120)
    '3h2m'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from rayqueue_local.apimachinery import jsonpath
from rayqueue_local.apimachinery.status import HTTPError
from rayqueue_local.apimachinery.time import parse_rfc3339
from rayqueue_local.registry.resourcetypes import ResourceType

__all__ = [
    "TableTarget",
    "columns_for",
    "human_duration",
    "include_object_option",
    "negotiate",
    "partial_metadata",
    "table",
]

#: ``(kind, apiVersion)`` of a transformed answer: ``("Table", "meta.k8s.io/v1")``, ...
TableTarget = tuple[str, str]

_META_VERSIONS = ("v1", "v1beta1")
_TRANSFORM_KINDS = ("Table", "PartialObjectMetadata", "PartialObjectMetadataList")
_NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically. "
    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_AGE_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is not guaranteed to be set in happens-before order across separate operations. Clients "
    "may not set this value. It is represented in RFC3339 form and is in UTC."
)


def negotiate(accept: str | None) -> TableTarget | None:
    """The transformation an ``Accept`` header asks for first, or None for the plain object.

    Media ranges are tried in order; ``as=Table`` (or ``PartialObjectMetadata[List]``) with
    ``g=meta.k8s.io`` and ``v=v1|v1beta1`` is served, as is any plain JSON or ``*/*`` range. A header
    with nothing the server can produce is a 406 NotAcceptable, as upstream.

    Example:
        >>> negotiate("application/json;as=Table;v=v1beta1;g=meta.k8s.io")
        ('Table', 'meta.k8s.io/v1beta1')
        >>> negotiate("application/json;as=Table;v=v9;g=meta.k8s.io")
        Traceback (most recent call last):
        ...
        rayqueue_local.apimachinery.status.HTTPError: only the following media types are accepted: ...
    """
    if not accept:
        return None
    for media_range in accept.split(","):
        media, *params = (p.strip() for p in media_range.split(";"))
        media = media.lower()
        args = {}
        for param in params:
            key, _, value = param.partition("=")
            args[key.strip().lower()] = value.strip().strip('"')
        if media not in ("application/json", "application/*", "*/*", "application/vnd.kubernetes.protobuf"):
            continue
        kind = args.get("as")
        if kind is None:
            if media == "application/vnd.kubernetes.protobuf":
                continue  # a protobuf client also accepts JSON further on (or gets 406 below)
            return None
        if kind in _TRANSFORM_KINDS and args.get("g") == "meta.k8s.io" and args.get("v") in _META_VERSIONS:
            if media == "application/vnd.kubernetes.protobuf":
                continue
            return kind, f"meta.k8s.io/{args['v']}"
    raise HTTPError.make(
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf",
    )


def human_duration(seconds: float) -> str:
    """An age as kubectl shows it (``k8s.io/apimachinery/pkg/util/duration.HumanDuration``).

    Example:
        >>> [human_duration(s) for s in (-5, 0.4, 119, 125, 600, 7200, 9 * 3600, 3 * 86400 + 3600)]
        ['<invalid>', '0s', '119s', '2m5s', '10m', '120m', '9h', '3d1h']
    """
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        rest = secs % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = secs // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if rest == 0 else f"{hours // 24 // 365}y{rest}d"
    return f"{hours // 24 // 365}y"


def _since(stamp: Any, now: float) -> str:
    """``translateTimestampSince``: the age of an RFC 3339 time, ``<unknown>`` when there is none."""
    when = parse_rfc3339(stamp) if isinstance(stamp, str) and stamp else None
    return "<unknown>" if when is None else human_duration(now - when)


def _column(
    name: str, type_: str = "string", description: str = "", priority: int = 0, fmt: str = ""
) -> dict[str, Any]:
    return {"name": name, "type": type_, "format": fmt, "description": description, "priority": priority}


_NAME = _column("Name", fmt="name", description=_NAME_DESCRIPTION)
_AGE = _column("Age", description=_AGE_DESCRIPTION)

# -- built-in printers ------------------------------------------------------------------------------
_Cells = Callable[[dict[str, Any], float], list[Any]]


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _age(obj: dict[str, Any], now: float) -> str:
    return _since(_meta(obj).get("creationTimestamp"), now)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _namespace_cells(obj: dict[str, Any], now: float) -> list[Any]:
    return [_dict(obj.get("status")).get("phase", ""), _age(obj, now)]


def _pod_cells(obj: dict[str, Any], now: float) -> list[Any]:
    spec, status = _dict(obj.get("spec")), _dict(obj.get("status"))
    containers = _list(spec.get("containers"))
    statuses = [_dict(s) for s in _list(status.get("containerStatuses"))]
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    reason = status.get("reason") or status.get("phase") or ""
    for s in statuses:
        state = _dict(s.get("state"))
        waiting, terminated = _dict(state.get("waiting")), _dict(state.get("terminated"))
        if waiting.get("reason"):
            reason = waiting["reason"]
        elif terminated.get("reason"):
            reason = terminated["reason"]
    if _meta(obj).get("deletionTimestamp"):
        reason = "Terminating"
    gates = _list(spec.get("readinessGates"))
    return [
        f"{ready}/{len(containers)}",
        reason,
        str(restarts),
        _age(obj, now),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        f"0/{len(gates)}" if gates else "<none>",
    ]


def _ports(ports: list[Any]) -> str:
    out = []
    for port in (_dict(p) for p in ports):
        text = str(port.get("port", ""))
        if port.get("nodePort"):
            text += f":{port['nodePort']}"
        out.append(f"{text}/{port.get('protocol') or 'TCP'}")
    return ",".join(out) or "<none>"


def _selector(selector: Any) -> str:
    pairs = _dict(selector)
    return ",".join(f"{k}={pairs[k]}" for k in sorted(pairs)) or "<none>"


def _service_cells(obj: dict[str, Any], now: float) -> list[Any]:
    spec, status = _dict(obj.get("spec")), _dict(obj.get("status"))
    kind = spec.get("type") or "ClusterIP"
    external = ",".join(str(ip) for ip in _list(spec.get("externalIPs")))
    if kind == "LoadBalancer":
        ingress = [_dict(i) for i in _list(_dict(status.get("loadBalancer")).get("ingress"))]
        found = [str(i.get("ip") or i.get("hostname") or "") for i in ingress]
        external = ",".join([*found, *([external] if external else [])]) or "<pending>"
    elif kind == "ExternalName":
        external = spec.get("externalName") or ""
    return [
        kind,
        spec.get("clusterIP") or "<none>",
        external or "<none>",
        _ports(_list(spec.get("ports"))),
        _age(obj, now),
        _selector(spec.get("selector")),
    ]


def _configmap_cells(obj: dict[str, Any], now: float) -> list[Any]:
    return [len(_dict(obj.get("data"))) + len(_dict(obj.get("binaryData"))), _age(obj, now)]


def _secret_cells(obj: dict[str, Any], now: float) -> list[Any]:
    count = len(_dict(obj.get("data")) | _dict(obj.get("stringData")))
    return [obj.get("type") or "Opaque", count, _age(obj, now)]


def _serviceaccount_cells(obj: dict[str, Any], now: float) -> list[Any]:
    return [len(_list(obj.get("secrets"))), _age(obj, now)]


def _event_cells(obj: dict[str, Any], now: float) -> list[Any]:
    involved = _dict(obj.get("involvedObject"))
    source = _dict(obj.get("source"))
    series = _dict(obj.get("series"))
    last = obj.get("lastTimestamp") or series.get("lastObservedTime") or obj.get("eventTime")
    first = obj.get("firstTimestamp") or obj.get("eventTime")
    count = int(obj.get("count") or series.get("count") or 1)
    component = source.get("component") or obj.get("reportingComponent") or ""
    host = source.get("host") or obj.get("reportingInstance") or ""
    return [
        _since(last, now),
        obj.get("type", ""),
        obj.get("reason", ""),
        f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}",
        involved.get("fieldPath", ""),
        ", ".join(p for p in (component, host) if p),
        str(obj.get("message", "")).strip(),
        _since(first, now),
        count,
        _meta(obj).get("name", ""),
    ]


def _role_cells(obj: dict[str, Any], now: float) -> list[Any]:
    return [_meta(obj).get("creationTimestamp")]


def _rolebinding_cells(obj: dict[str, Any], now: float) -> list[Any]:
    ref = _dict(obj.get("roleRef"))
    subjects = [_dict(s) for s in _list(obj.get("subjects"))]

    def names(kind: str) -> str:
        found = [
            f"{s.get('namespace')}/{s.get('name')}" if kind == "ServiceAccount" else str(s.get("name"))
            for s in subjects
            if s.get("kind") == kind
        ]
        return ", ".join(found)

    return [
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        _age(obj, now),
        names("User"),
        names("Group"),
        names("ServiceAccount"),
    ]


def _ingress_cells(obj: dict[str, Any], now: float) -> list[Any]:
    spec, status = _dict(obj.get("spec")), _dict(obj.get("status"))
    hosts = [str(_dict(r).get("host")) for r in _list(spec.get("rules")) if _dict(r).get("host")]
    ingress = [_dict(i) for i in _list(_dict(status.get("loadBalancer")).get("ingress"))]
    ports = "80, 443" if spec.get("tls") else "80"
    return [
        spec.get("ingressClassName") or "<none>",
        ",".join(hosts) or "*",
        ",".join(str(i.get("ip") or i.get("hostname") or "") for i in ingress),
        ports,
        _age(obj, now),
    ]


def _created_at(obj: dict[str, Any], now: float) -> list[Any]:
    return [_meta(obj).get("creationTimestamp")]


_BUILTIN: dict[str, tuple[tuple[dict[str, Any], ...], _Cells]] = {
    "namespaces": ((_column("Status", description="The status of the namespace"), _AGE), _namespace_cells),
    "pods": (
        (
            _column("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
            _column("Status", description="The aggregate status of the containers in this pod."),
            _column(
                "Restarts",
                description="The number of times the containers in this pod have been restarted "
                "and when the last container in this pod has restarted.",
            ),
            _AGE,
            _column("IP", priority=1, description="IP address allocated to the pod."),
            _column("Node", priority=1, description="Name of the node the pod is scheduled on."),
            _column("Nominated Node", priority=1, description="Name of the node the pod is nominated to."),
            _column("Readiness Gates", priority=1, description="The readiness gates of the pod."),
        ),
        _pod_cells,
    ),
    "services": (
        (
            _column("Type", description="The type of the service."),
            _column("Cluster-IP", description="The IP address of the service, usually assigned randomly."),
            _column(
                "External-IP", description="The list of IP addresses for which nodes also accept traffic."
            ),
            _column("Port(s)", description="The list of ports that are exposed by this service."),
            _AGE,
            _column(
                "Selector",
                priority=1,
                description="Route service traffic to pods with label keys and values "
                "matching this selector.",
            ),
        ),
        _service_cells,
    ),
    "configmaps": ((_column("Data", "integer", "The number of data entries."), _AGE), _configmap_cells),
    "secrets": (
        (
            _column("Type", description="The type of secret"),
            _column("Data", "integer", "The number of data entries."),
            _AGE,
        ),
        _secret_cells,
    ),
    "serviceaccounts": (
        (_column("Secrets", "integer", "The number of secrets."), _AGE),
        _serviceaccount_cells,
    ),
    "events": (
        (
            _column(
                "Last Seen",
                description="The time at which the most recent occurrence of this event was recorded.",
            ),
            _column(
                "Type",
                description="Type of this event (Normal, Warning), new types could be added in the future.",
            ),
            _column(
                "Reason",
                description="This should be a short, machine understandable string that gives the "
                "reason for the transition into the object's current status.",
            ),
            _column("Object", description="The object that this event is about."),
            _column("Subobject", priority=1, description="The part of the object this event is about."),
            _column("Source", priority=1, description="The component reporting this event."),
            _column("Message", description="A human-readable description of the status of this operation."),
            _column("First Seen", priority=1, description="The time at which the event was first recorded."),
            _column("Count", "integer", "The number of times this event has occurred.", priority=1),
            _column("Name", priority=1, description=_NAME_DESCRIPTION),
        ),
        _event_cells,
    ),
    "roles.rbac.authorization.k8s.io": (
        (_column("Created At", "date", _AGE_DESCRIPTION),),
        _role_cells,
    ),
    "rolebindings.rbac.authorization.k8s.io": (
        (
            _column("Role", description="Role is the name of the role the subjects are bound to."),
            _AGE,
            _column("Users", priority=1, description="Users in the roleBinding."),
            _column("Groups", priority=1, description="Groups in the roleBinding."),
            _column("ServiceAccounts", priority=1, description="ServiceAccounts in the roleBinding."),
        ),
        _rolebinding_cells,
    ),
    "ingresses.networking.k8s.io": (
        (
            _column("Class", description="The name of the IngressClass resource."),
            _column("Hosts", description="Hosts that incoming requests are matched against."),
            _column(
                "Address", description="Address is a list containing ingress points for the load-balancer."
            ),
            _column("Ports", description="Ports of TLS configurations that open."),
            _AGE,
        ),
        _ingress_cells,
    ),
}
_DEFAULT: tuple[tuple[dict[str, Any], ...], _Cells] = (
    (_column("Created At", "date", _AGE_DESCRIPTION),),
    _created_at,
)


def columns_for(rt: ResourceType, version: str) -> list[dict[str, Any]]:
    """The column definitions of ``rt`` at ``version``, ``Name`` first.

    Example:
        >>> from rayqueue_local.registry.registry import Registry
        >>> [c["name"] for c in columns_for(Registry().get("configmaps"), "v1")]
        ['Name', 'Data', 'Age']
    """
    if rt.printer_columns.get(version):
        return [_NAME, *(_crd_column(c) for c in rt.printer_columns[version])]
    return [_NAME, *_BUILTIN.get(rt.key, _DEFAULT)[0]]


def _crd_column(column: dict[str, Any]) -> dict[str, Any]:
    return _column(
        str(column.get("name", "")),
        str(column.get("type", "string")),
        str(column.get("description", "")),
        int(column.get("priority") or 0),
        str(column.get("format", "")),
    )


def _crd_cell(column: dict[str, Any], obj: dict[str, Any], now: float) -> Any:
    """``cellForJSONValue`` of the CRD table convertor: the first match, typed as the column says."""
    try:
        found = jsonpath.find(obj, str(column.get("jsonPath", "")))
    except jsonpath.JSONPathError:
        return None
    if not found or found[0] is None:
        return None
    value = found[0]
    kind = column.get("type", "string")
    if kind == "string":
        return jsonpath.text(value)
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        when = parse_rfc3339(value)
        return "<invalid>" if when is None else human_duration(now - when)
    return None


def _cells(rt: ResourceType, version: str, obj: dict[str, Any], now: float) -> list[Any]:
    name = _meta(obj).get("name", "")
    columns = rt.printer_columns.get(version)
    if columns:
        return [name, *(_crd_cell(c, obj, now) for c in columns)]
    return [name, *_BUILTIN.get(rt.key, _DEFAULT)[1](obj, now)]


def partial_metadata(obj: dict[str, Any], api_version: str = "meta.k8s.io/v1") -> dict[str, Any]:
    """The ``PartialObjectMetadata`` of an object (kind, apiVersion and its whole ``metadata``).

    Example:
        >>> partial_metadata({"kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}}})["metadata"]
        {'name': 'p', 'labels': {'a': 'b'}}
    """
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version, "metadata": _meta(obj)}


def table(
    rt: ResourceType,
    version: str,
    objects: Iterable[dict[str, Any]],
    *,
    api_version: str = "meta.k8s.io/v1",
    metadata: dict[str, Any] | None = None,
    include_object: str = "Metadata",
    headers: bool = True,
    now: float | None = None,
) -> dict[str, Any]:
    """A ``Table`` of ``objects`` (already in ``version``), as ``asTable`` writes it.

    ``include_object`` is the ``includeObject`` query parameter (``Metadata``, ``Object`` or ``None``);
    ``headers=False`` leaves the column definitions out (watch events after the first).

    Example:
        >>> from rayqueue_local.registry.registry import Registry
        >>> cm = {"kind": "ConfigMap", "metadata": {"name": "c", "creationTimestamp": "2000-01-01T00:00:00Z"},
        ...       "data": {"a": "1"}}
        >>> t = table(Registry().get("configmaps"), "v1", [cm], now=946684800.0 + 300)
        >>> t["rows"][0]["cells"], t["rows"][0]["object"]["kind"]
        (['c', 1, '5m'], 'PartialObjectMetadata')
    """
    now = time.time() if now is None else now
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": _cells(rt, version, obj, now)}
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "None":
            row["object"] = None
        else:
            row["object"] = partial_metadata(obj, api_version)
        rows.append(row)
    out: dict[str, Any] = {"kind": "Table", "apiVersion": api_version, "metadata": dict(metadata or {})}
    if headers:
        out["columnDefinitions"] = columns_for(rt, version)
    out["rows"] = rows
    return out


def include_object_option(value: str | None) -> str:
    """The ``includeObject`` query parameter checked as ``ValidateTableOptions`` does (400 otherwise).

    Example:
        >>> include_object_option(None), include_object_option("Object")
        ('Metadata', 'Object')
    """
    if value in (None, "", "Metadata", "Object", "None"):
        return value or "Metadata"
    raise HTTPError.bad_request(
        f"includeObject: Invalid value: \"{value}\": must be 'Metadata', 'Object', 'None', or empty"
    )
