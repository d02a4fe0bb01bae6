"""The vocabulary of the built-in OpenAPI v3 schemas: small builders and upstream's names.

The real API server publishes the schemas generated from the Go types (``k8s.io/api``; see
``api/openapi-spec/v3`` in kubernetes/kubernetes). The built-in schemas here (hand-written in
:mod:`~rayqueue_local.registry.metaschemas`, rendered from generated tables in
:mod:`~rayqueue_local.registry.coreschemas`, gathered by :mod:`~rayqueue_local.registry.builtinschemas`)
are made with these builders, in upstream's forms:
a field that refers to a definition is ``{"allOf": [{"$ref": ...}], "description": ...}``, a list
merged by key carries ``x-kubernetes-patch-merge-key``/``x-kubernetes-list-map-keys``, and every kind
carries ``x-kubernetes-group-version-kind``.

Example:
    >>> kind_schema("", "v1", "ConfigMap", "Configuration data.", {})["x-kubernetes-group-version-kind"]
    [{'group': '', 'kind': 'ConfigMap', 'version': 'v1'}]
    >>> list_of("io.k8s.api.core.v1.Container", "containers", "name")["x-kubernetes-list-map-keys"]
    ['name']
    >>> builtin_definition_name("apps", "v1", "Deployment")
    'io.k8s.api.apps.v1.Deployment'
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "API_VERSION_DESCRIPTION",
    "KIND_DESCRIPTION",
    "LIST_META_DESCRIPTION",
    "META",
    "OBJECT_META_DESCRIPTION",
    "QUANTITY",
    "TIME",
    "Schema",
    "boolean",
    "builtin_definition_name",
    "field",
    "free",
    "integer",
    "kind_schema",
    "list_of",
    "obj",
    "ref",
    "strlist",
    "strmap",
    "string",
]

#: An OpenAPI schema object, as JSON data.
Schema = dict[str, Any]

#: The prefix of the ``meta/v1`` definitions.
META = "io.k8s.apimachinery.pkg.apis.meta.v1"

_API_GROUP_PACKAGES = {
    "": "core",
    "apps": "apps",
    "batch": "batch",
    "rbac.authorization.k8s.io": "rbac",
    "networking.k8s.io": "networking",
    "autoscaling": "autoscaling",
    "apiextensions.k8s.io": "apiextensions",
}


def builtin_definition_name(group: str, version: str, kind: str) -> str | None:
    """The upstream definition name of a built-in kind, or ``None`` for a group that is not built in.

    Example:
        >>> builtin_definition_name("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
        'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition'
        >>> builtin_definition_name("ray.io", "v1", "RayCluster") is None
        True
    """
    package = _API_GROUP_PACKAGES.get(group)
    if package is None:
        return None
    if package == "apiextensions":
        return f"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}.{kind}"
    return f"io.k8s.api.{package}.{version}.{kind}"


def ref(name: str) -> Schema:
    """A ``$ref`` to ``#/components/schemas/<name>``."""
    return {"$ref": f"#/components/schemas/{name}"}


def field(name: str, description: str, **extra: Any) -> Schema:
    """A field that refers to a definition, with its own description (upstream's ``allOf`` form)."""
    return {"allOf": [ref(name)], "description": description, **extra}


def string(description: str, **extra: Any) -> Schema:
    """A string field."""
    return {"type": "string", "description": description, **extra}


def integer(description: str, fmt: str = "int32") -> Schema:
    """An integer field (``int32`` unless ``fmt`` says ``int64``)."""
    return {"type": "integer", "format": fmt, "description": description}


def boolean(description: str) -> Schema:
    """A boolean field."""
    return {"type": "boolean", "description": description}


def strmap(description: str, fmt: str | None = None) -> Schema:
    """A map of strings (``fmt="byte"``: base64 values)."""
    item: Schema = {"type": "string", "default": ""}
    if fmt:
        item["format"] = fmt
    return {"type": "object", "additionalProperties": item, "description": description}


def strlist(description: str, **extra: Any) -> Schema:
    """A list of strings."""
    return {"type": "array", "items": {"type": "string", "default": ""}, "description": description, **extra}


def list_of(name: str, description: str, merge_key: str | None = None, atomic: bool = False) -> Schema:
    """A list of a definition; ``merge_key`` makes it a map list (strategic merge by that key)."""
    out: Schema = {
        "type": "array",
        "items": {"allOf": [ref(name)], "default": {}},
        "description": description,
    }
    if merge_key is not None:
        out["x-kubernetes-patch-merge-key"] = merge_key
        out["x-kubernetes-patch-strategy"] = "merge"
        out["x-kubernetes-list-type"] = "map"
        out["x-kubernetes-list-map-keys"] = [merge_key]
    elif atomic:
        out["x-kubernetes-list-type"] = "atomic"
    return out


def obj(description: str, properties: dict[str, Schema], required: tuple[str, ...] = ()) -> Schema:
    """An object with ``properties`` (and ``required``)."""
    out: Schema = {"type": "object", "description": description, "properties": properties}
    if required:
        out["required"] = list(required)
    return out


def free(description: str) -> Schema:
    """An object whose fields this server does not describe (kept as sent)."""
    return {"type": "object", "description": description, "x-kubernetes-preserve-unknown-fields": True}


#: The definition name of ``resource.Quantity`` (``500m``, ``2Gi``).
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
#: The definition name of ``meta/v1`` ``Time`` (RFC 3339).
TIME = f"{META}.Time"
#: The description upstream gives ``apiVersion`` in every kind.
API_VERSION_DESCRIPTION = (
    "APIVersion defines the versioned schema of this representation of an object. Servers should convert "
    "recognized schemas to the latest internal value, and may reject unrecognized values. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
)
#: The description upstream gives ``kind`` in every kind.
KIND_DESCRIPTION = (
    "Kind is a string value representing the REST resource this object represents. Servers may infer this "
    "from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)
#: The description upstream gives ``metadata`` in every kind.
OBJECT_META_DESCRIPTION = (
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
#: The description upstream gives ``metadata`` in every list kind.
LIST_META_DESCRIPTION = (
    "Standard list metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)


def kind_schema(
    group: str,
    version: str,
    kind: str,
    description: str,
    properties: dict[str, Schema],
    required: tuple[str, ...] = (),
) -> Schema:
    """A top-level kind: apiVersion, kind, metadata, then ``properties``; with its GVK extension."""
    out = obj(
        description,
        {
            "apiVersion": string(API_VERSION_DESCRIPTION),
            "kind": string(KIND_DESCRIPTION),
            "metadata": field(f"{META}.ObjectMeta", OBJECT_META_DESCRIPTION, default={}),
            **properties,
        },
        required,
    )
    out["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
    return out
