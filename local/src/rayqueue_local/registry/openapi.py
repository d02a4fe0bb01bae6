"""The OpenAPI documents of the served types: ``/openapi/v3`` (per group-version) and ``/openapi/v2``.

As the real API server does [k8s.io/kube-openapi; staging/src/k8s.io/apiextensions-apiserver/pkg/
controller/openapi/builder], every served kind gets a definition with ``x-kubernetes-group-version-kind``,
its list kind too, and every resource its REST paths, each operation with its
``x-kubernetes-action``, ``x-kubernetes-group-version-kind`` and query parameters (``fieldValidation``
among them: kubectl reads it there to decide that the server validates fields, and then skips its
own validation). Built-in kinds use the schemas of
:mod:`~rayqueue_local.registry.builtinschemas`; a custom resource's definition is its CRD's
``openAPIV3Schema`` with ``metadata`` as ``ObjectMeta``, named as upstream names it (the group's parts
reversed: ``io.ray.v1.RayCluster``). A custom type without a schema (no CRD directory) is an object
that preserves unknown fields.

``/openapi/v3`` is an index of ``{"paths": {"apis/<group>/<version>": {"serverRelativeURL": ...}}}``
whose URLs carry a ``hash`` of the document; ``/openapi/v2`` is one Swagger 2.0 document of
everything (JSON; upstream also offers protobuf, which this server does not: see
:mod:`~rayqueue_local.apiserver.rest`). Documents are built once per :attr:`Registry.revision
<rayqueue_local.registry.registry.Registry.revision>` and kept encoded.

Example:
    >>> from rayqueue_local.registry.registry import Registry
    >>> docs = OpenAPIDocuments(Registry())
    >>> docs.v3_index()["paths"]["apis/ray.io/v1"]["serverRelativeURL"][:32]
    '/openapi/v3/apis/ray.io/v1?hash='
    >>> import json
    >>> doc = json.loads(docs.v3_document("apis/apps/v1")[0])
    >>> doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"]
    [{'group': 'apps', 'kind': 'Deployment', 'version': 'v1'}]
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import threading
from dataclasses import dataclass
from typing import Any

from rayqueue_local.registry.builtinschemas import builtin_schemas
from rayqueue_local.registry.openapischema import (
    API_VERSION_DESCRIPTION,
    KIND_DESCRIPTION,
    LIST_META_DESCRIPTION,
    OBJECT_META_DESCRIPTION,
    Schema,
    builtin_definition_name,
    field,
    ref,
    string,
)
from rayqueue_local.registry.registry import Registry
from rayqueue_local.registry.resourcetypes import ResourceType

__all__ = ["OpenAPIDocuments", "crd_definition_name", "gv_path"]

#: The ``info.version`` of the documents (the Kubernetes version this server follows).
_SPEC_VERSION = "v1.34.0"
_BUILTIN_GROUPS = frozenset({"", "apps", "batch", "rbac.authorization.k8s.io", "networking.k8s.io"})
_STATUS = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
_SCALE = "io.k8s.api.autoscaling.v1.Scale"
_COMMON_ROOTS = (
    _STATUS,
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
)
_REF = re.compile(r'"#/components/schemas/([^"]+)"')

# name -> (type, description) of the query parameters, as upstream describes them (abridged).
_PARAMS: dict[str, tuple[str, str]] = {
    "allowWatchBookmarks": ("boolean", 'allowWatchBookmarks requests watch events with type "BOOKMARK".'),
    "continue": ("string", "The continue option should be set when retrieving more results from the server."),
    "dryRun": ("string", "When present, indicates that modifications should not be persisted. Valid: All"),
    "fieldManager": (
        "string",
        "fieldManager is a name associated with the actor or entity making these changes.",
    ),
    "fieldSelector": ("string", "A selector to restrict the list of returned objects by their fields."),
    "fieldValidation": (
        "string",
        "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) "
        "containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.",
    ),
    "force": ("boolean", 'Force is going to "force" Apply requests (only for apply patches).'),
    "gracePeriodSeconds": ("integer", "The duration in seconds before the object should be deleted."),
    "labelSelector": ("string", "A selector to restrict the list of returned objects by their labels."),
    "limit": ("integer", "limit is a maximum number of responses to return for a list call."),
    "pretty": ("string", "If 'true', then the output is pretty printed."),
    "propagationPolicy": ("string", "Whether and how garbage collection will be performed."),
    "resourceVersion": (
        "string",
        "resourceVersion sets a constraint on what resource versions a request may be served from.",
    ),
    "resourceVersionMatch": (
        "string",
        "resourceVersionMatch determines how resourceVersion is applied to list calls.",
    ),
    "sendInitialEvents": ("boolean", "`sendInitialEvents=true` may be set together with `watch=true`."),
    "timeoutSeconds": ("integer", "Timeout for the list/watch call."),
    "watch": ("boolean", "Watch for changes to the described resources and return them as a stream."),
}
_LIST_PARAMS = (
    "allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
    "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch",
)  # fmt: skip
_WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation")
_DELETE_PARAMS = ("dryRun", "gracePeriodSeconds", "propagationPolicy")
_MEDIA = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")


def gv_path(group: str, version: str) -> str:
    """The key of a group-version in the ``/openapi/v3`` index.

    Example:
        >>> gv_path("", "v1"), gv_path("ray.io", "v1")
        ('api/v1', 'apis/ray.io/v1')
    """
    return f"apis/{group}/{version}" if group else f"api/{version}"


def crd_definition_name(group: str, version: str, kind: str) -> str:
    """Upstream's definition name of a custom kind: the group's parts reversed, version, kind.

    Example:
        >>> crd_definition_name("kueue.x-k8s.io", "v1beta2", "Workload")
        'io.x-k8s.kueue.v1beta2.Workload'
    """
    return ".".join([*reversed(group.split(".")), version, kind])


def _definition_name(rt: ResourceType, version: str, kind: str) -> str:
    if not rt.from_crd:
        builtin = builtin_definition_name(rt.group, version, kind)
        if builtin is not None and builtin in builtin_schemas():
            return builtin
    return crd_definition_name(rt.group, version, kind)


def _gvk(group: str, version: str, kind: str) -> list[dict[str, str]]:
    return [{"group": group, "kind": kind, "version": version}]


def _custom_schema(rt: ResourceType, version: str) -> Schema:
    """A custom kind's definition: the CRD's schema with ObjectMeta, or a preserving object."""
    source = rt.schemas.get(version)
    out: Schema = copy.deepcopy(source) if source is not None else {"type": "object"}
    if source is None:
        out["x-kubernetes-preserve-unknown-fields"] = True
    props = out.setdefault("properties", {})
    props["apiVersion"] = {**props.get("apiVersion", {}), **string(API_VERSION_DESCRIPTION)}
    props["kind"] = {**props.get("kind", {}), **string(KIND_DESCRIPTION)}
    props["metadata"] = field("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", OBJECT_META_DESCRIPTION)
    out["x-kubernetes-group-version-kind"] = _gvk(rt.group, version, rt.kind)
    return out


def _list_schema(rt: ResourceType, version: str, item: str) -> Schema:
    list_kind = rt.list_kind or rt.kind + "List"
    return {
        "description": f"{list_kind} is a list of {rt.kind}",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": string(API_VERSION_DESCRIPTION),
            "items": {
                "type": "array",
                "description": f"List of {rt.plural}.",
                "items": ref(item),
            },
            "kind": string(KIND_DESCRIPTION),
            "metadata": {**field("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", LIST_META_DESCRIPTION)},
        },
        "x-kubernetes-group-version-kind": _gvk(rt.group, version, list_kind),
    }


def _camel(text: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[.\-/]", text) if p)


def _param(name: str, where: str = "query") -> Schema:
    if where == "path":
        return {"name": name, "in": "path", "required": True, "description": f"name of the {name}",
                "schema": {"type": "string", "uniqueItems": True}}  # fmt: skip
    kind, description = _PARAMS[name]
    return {
        "name": name,
        "in": "query",
        "description": description,
        "schema": {"type": kind, "uniqueItems": True},
    }


def _responses(codes: tuple[int, ...], schema: str) -> Schema:
    content = {m: {"schema": ref(schema)} for m in _MEDIA}
    reasons = {200: "OK", 201: "Created", 202: "Accepted"}
    out: Schema = {str(c): {"description": reasons[c], "content": content} for c in codes}
    out["401"] = {"description": "Unauthorized"}
    return out


@dataclass
class _Op:
    method: str
    action: str
    verb: str
    params: tuple[str, ...] = ()
    body: str | None = None
    codes: tuple[int, ...] = (200,)
    response: str = ""


def _operations(rt: ResourceType, version: str, kind_def: str, list_def: str) -> dict[str, dict[str, Schema]]:
    """``{path: {method: operation}}`` for one resource at one version."""
    prefix = "/" + gv_path(rt.group, version)
    gid = "Core" if not rt.group else _camel(rt.group.removesuffix(".k8s.io"))
    base = f"{gid}{_camel(version)}{'Namespaced' if rt.namespaced else ''}{rt.kind}"
    gvk = _gvk(rt.group, version, rt.kind)
    collection = (
        f"{prefix}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{prefix}/{rt.plural}"
    )
    item = collection + "/{name}"
    patch_body = "patch"
    table: dict[str, tuple[Schema | None, list[_Op]]] = {
        collection: (
            None,
            [
                _Op("get", "list", "list", _LIST_PARAMS, response=list_def),
                _Op("post", "post", "create", _WRITE_PARAMS, kind_def, (200, 201, 202), kind_def),
                _Op(
                    "delete",
                    "deletecollection",
                    "deletecollection",
                    _LIST_PARAMS + _DELETE_PARAMS,
                    "delete",
                    response=_STATUS,
                ),  # fmt: skip
            ],
        ),
        item: (
            None,
            [
                _Op("get", "get", "read", response=kind_def),
                _Op("put", "put", "replace", _WRITE_PARAMS, kind_def, (200, 201), kind_def),
                _Op("patch", "patch", "patch", (*_WRITE_PARAMS, "force"), patch_body, (200, 201), kind_def),
                _Op(
                    "delete",
                    "delete",
                    "delete",
                    _DELETE_PARAMS,
                    "delete",
                    (200, 202),
                    _STATUS if rt.group in _BUILTIN_GROUPS else kind_def,
                ),  # fmt: skip
            ],
        ),
    }
    if rt.namespaced:
        table[f"{prefix}/{rt.plural}"] = (None, [_Op("get", "list", "list", _LIST_PARAMS, response=list_def)])
    for sub in sorted(rt.subresources & {"status", "scale"}):
        target = kind_def if sub == "status" else _SCALE
        table[f"{item}/{sub}"] = (
            None,
            [
                _Op("get", "get", "read", response=target),
                _Op("put", "put", "replace", _WRITE_PARAMS, target, (200, 201), target),
                _Op("patch", "patch", "patch", (*_WRITE_PARAMS, "force"), patch_body, (200, 201), target),
            ],
        )
    patch_media = [
        "application/apply-patch+yaml",
        "application/json-patch+json",
        "application/merge-patch+json",
    ]
    if rt.group in _BUILTIN_GROUPS:
        patch_media.append("application/strategic-merge-patch+json")
    paths: dict[str, dict[str, Schema]] = {}
    for path, (_, ops) in table.items():
        entry: dict[str, Schema] = {}
        path_params = [_param("name", "path")] if "{name}" in path else []
        if "{namespace}" in path:
            path_params.append(_param("namespace", "path"))
        entry["parameters"] = [*path_params, _param("pretty")]  # type: ignore[assignment]
        sub = path.rsplit("/", 1)[1] if path.endswith(("/status", "/scale")) else ""
        for op in ops:
            suffix = _camel(sub)
            op_id = f"{op.verb}{base}{suffix}"
            if path == f"{prefix}/{rt.plural}" and rt.namespaced:
                op_id = f"list{gid}{_camel(version)}{rt.kind}ForAllNamespaces"
            op_gvk = _gvk("autoscaling", "v1", "Scale") if sub == "scale" else gvk
            operation: Schema = {
                "description": f"{op.verb} {sub or ''} {rt.kind}".replace("  ", " "),
                "operationId": op_id,
                "tags": [f"{gid.lower()}_{version}"],
                "responses": _responses(op.codes, op.response),
                "x-kubernetes-action": op.action,
                "x-kubernetes-group-version-kind": op_gvk[0],
            }
            if op.params:
                operation["parameters"] = [_param(p) for p in op.params]
            if op.body == "patch":
                schema = ref("io.k8s.apimachinery.pkg.apis.meta.v1.Patch")
                operation["requestBody"] = {
                    "content": {m: {"schema": schema} for m in patch_media},
                    "required": True,
                }
            elif op.body == "delete":
                schema = ref("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")
                operation["requestBody"] = {"content": {m: {"schema": schema} for m in _MEDIA}}
            elif op.body is not None:
                operation["requestBody"] = {
                    "content": {m: {"schema": ref(op.body)} for m in _MEDIA},
                    "required": True,
                }
            entry[op.method] = operation
        paths[path] = entry
    return paths


def _closure(schemas: dict[str, Schema], roots: set[str]) -> dict[str, Schema]:
    """The definitions reachable from ``roots`` through ``$ref``s."""
    out: dict[str, Schema] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in out or name not in schemas:
            continue
        out[name] = schemas[name]
        todo.extend(_REF.findall(json.dumps(schemas[name])))
    return dict(sorted(out.items()))


def _to_v2(node: Any) -> Any:
    """An OpenAPI v3 schema as Swagger 2.0 has it: ``#/definitions/`` refs; no nullable/oneOf/anyOf/not."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k in ("nullable", "oneOf", "anyOf", "not"):
                continue
            if k == "$ref" and isinstance(v, str):
                out[k] = v.replace("#/components/schemas/", "#/definitions/")
            else:
                out[k] = _to_v2(v)
        return out
    if isinstance(node, list):
        return [_to_v2(v) for v in node]
    return node


def _v2_operation(op: Schema) -> Schema:
    """One v3 operation in Swagger 2.0 form: body parameters, ``consumes``/``produces``, flat params."""
    out = {k: v for k, v in op.items() if k not in ("requestBody", "responses", "parameters")}
    params = [_v2_param(p) for p in op.get("parameters", [])]
    body = op.get("requestBody")
    if body is not None:
        media = list(body["content"])
        schema = next(iter(body["content"].values()))["schema"]
        params.insert(
            0,
            {"name": "body", "in": "body", "required": bool(body.get("required")), "schema": _to_v2(schema)},
        )
        out["consumes"] = media
    if params:
        out["parameters"] = params
    out["produces"] = list(_MEDIA)
    out["schemes"] = ["https"]
    out["responses"] = {code: _v2_response(r) for code, r in op["responses"].items()}
    return out


def _v2_response(response: Schema) -> Schema:
    if "content" not in response:
        return response
    schema = next(iter(response["content"].values()))["schema"]
    return {"description": response["description"], "schema": _to_v2(schema)}


def _v2_param(param: Schema) -> Schema:
    out = {k: v for k, v in param.items() if k != "schema"}
    out.update(param.get("schema", {}))
    return out


class OpenAPIDocuments:
    """The OpenAPI v2 and v3 documents of a registry's types, built once per registry revision.

    Example:
        >>> docs = OpenAPIDocuments(Registry())
        >>> body, digest = docs.v3_document("api/v1")
        >>> len(digest), docs.v3_document("apis/nope/v1")
        (128, None)
        >>> json.loads(docs.v2_document())["swagger"]
        '2.0'
    """

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._lock = threading.Lock()
        self._revision = -1
        self._v3: dict[str, tuple[bytes, str]] = {}
        self._v2: bytes | None = None
        self._parts: dict[str, tuple[dict[str, Schema], dict[str, Schema]]] = {}

    def _refresh(self) -> None:
        """Rebuild the v3 documents when the registry changed (lock held)."""
        revision = self.registry.revision
        if revision == self._revision:
            return
        schemas: dict[str, Schema] = dict(builtin_schemas())
        parts: dict[str, tuple[dict[str, Schema], dict[str, Schema], set[str]]] = {}
        for rt in self.registry.types():
            for version in rt.versions:
                key = gv_path(rt.group, version)
                paths, roots = parts.setdefault(key, ({}, {}, set()))[0], parts[key][2]
                kind_def = _definition_name(rt, version, rt.kind)
                if kind_def not in schemas or rt.from_crd or kind_def not in builtin_schemas():
                    schemas[kind_def] = _custom_schema(rt, version)
                list_def = _definition_name(rt, version, rt.list_kind or rt.kind + "List")
                schemas[list_def] = _list_schema(rt, version, kind_def)
                paths.update(_operations(rt, version, kind_def, list_def))
                roots.update({kind_def, list_def, *_COMMON_ROOTS})
                if "scale" in rt.subresources:
                    roots.add(_SCALE)
        self._v3, self._parts = {}, {}
        for key, (paths, _, roots) in sorted(parts.items()):
            components = _closure(schemas, roots)
            sorted_paths = dict(sorted(paths.items()))
            doc = {
                "openapi": "3.0.0",
                "info": {"title": "Kubernetes", "version": _SPEC_VERSION},
                "paths": sorted_paths,
                "components": {"schemas": components},
            }
            body = json.dumps(doc, separators=(",", ":")).encode()
            self._v3[key] = (body, hashlib.sha512(body).hexdigest().upper())
            self._parts[key] = (sorted_paths, components)
        self._v2 = None
        self._revision = revision

    def v3_index(self) -> dict[str, Any]:
        """The ``/openapi/v3`` answer: each group-version's document URL, with its hash.

        Example:
            >>> sorted(OpenAPIDocuments(Registry()).v3_index()["paths"])[:2]
            ['api/v1', 'apis/apiextensions.k8s.io/v1']
        """
        with self._lock:
            self._refresh()
            return {
                "paths": {
                    key: {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
                    for key, (_, digest) in self._v3.items()
                }
            }

    def v3_document(self, key: str) -> tuple[bytes, str] | None:
        """``(JSON bytes, hash)`` of ``/openapi/v3/<key>`` (``api/v1``, ``apis/<group>/<version>``)."""
        with self._lock:
            self._refresh()
            return self._v3.get(key)

    def v2_document(self) -> bytes:
        """The ``/openapi/v2`` answer: one Swagger 2.0 document of every path and definition (JSON)."""
        with self._lock:
            self._refresh()
            if self._v2 is None:
                paths: dict[str, Any] = {}
                definitions: dict[str, Any] = {}
                for v3_paths, components in self._parts.values():
                    for path, entry in v3_paths.items():
                        paths[path] = {
                            k: ([_v2_param(p) for p in v] if k == "parameters" else _v2_operation(v))
                            for k, v in entry.items()
                        }
                    definitions.update(components)
                doc = {
                    "swagger": "2.0",
                    "info": {"title": "Kubernetes", "version": _SPEC_VERSION},
                    "paths": dict(sorted(paths.items())),
                    "definitions": _to_v2(dict(sorted(definitions.items()))),
                    "securityDefinitions": {
                        "BearerToken": {
                            "description": "Bearer Token authentication",
                            "type": "apiKey",
                            "name": "authorization",
                            "in": "header",
                        }  # fmt: skip
                    },
                    "security": [{"BearerToken": []}],
                }
                self._v2 = json.dumps(doc, separators=(",", ":")).encode()
            return self._v2
