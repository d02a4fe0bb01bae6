"""OpenAPI v3 schemas of the k8s.io/api kinds served (Pod, Deployment, Job, Role, Scale, ...) and of the
CustomResourceDefinition, built from generated data.

``schematables.json``, beside this module, is written by ``local/tools/gen_protobuf_tables.py`` together
with the protobuf tables (:mod:`rayqueue_local.apimachinery.prototables`), from the same parse of
k8s.io/api and k8s.io/apiextensions-apiserver at the commits both files record, for the same messages (and
the ``/scale`` subresource's ``autoscaling/v1`` Scale, which no table decodes): per field its JSON name,
type, Go doc comment (upstream's description), whether it is required (as openapi-gen decides:
``+required``, or neither ``+optional`` nor ``omitempty``), its strategic-merge struct tags and its
``+listType``/``+listMapKey``/``+mapType`` markers (and a struct's ``+structType``). This module renders
them in upstream's forms (:mod:`~rayqueue_local.registry.openapischema`): a field that refers to a
definition is ``allOf`` a ``$ref`` (with ``default: {}`` unless a pointer), an ``IntOrString`` is
``x-kubernetes-int-or-string``, an embedded struct's fields are inlined, a kind carries ``apiVersion``,
``kind`` and its ``x-kubernetes-group-version-kind``. The ``meta/v1`` definitions these refer to
(ObjectMeta, Time, LabelSelector, ...) and ``Quantity`` are apimachinery's, not in these checkouts:
:mod:`~rayqueue_local.registry.metaschemas` writes them by hand. A CRD's free-form ``openAPIV3Schema``
(``JSONSchemaProps``, left out of the tables) is an object that preserves unknown fields.

Example:
    >>> spec = generated_schemas()["io.k8s.api.core.v1.PodSpec"]
    >>> spec["properties"]["containers"]["x-kubernetes-patch-merge-key"], spec["required"]
    ('name', ['containers'])
    >>> port = generated_schemas()["io.k8s.api.core.v1.ServicePort"]["properties"]["targetPort"]
    >>> port["x-kubernetes-int-or-string"]
    True
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from rayqueue_local.registry import openapischema as s

__all__ = ["definition_name", "generated_schemas"]

#: Messages of the tables' types that are apimachinery's, by the definition name upstream gives them.
_EXTERNAL = {
    "meta/v1.ObjectMeta": f"{s.META}.ObjectMeta",
    "meta/v1.LabelSelector": f"{s.META}.LabelSelector",
    "meta/v1.Condition": f"{s.META}.Condition",
    "meta/v1.Time": s.TIME,
    "meta/v1.MicroTime": f"{s.META}.MicroTime",
    "resource.Quantity": s.QUANTITY,
}
#: Definitions referred to with no ``default: {}`` (upstream's string-valued types).
_SCALAR_DEFINITIONS = {"meta/v1.Time", "meta/v1.MicroTime", "resource.Quantity"}
#: Left out of the tables: a CRD's free-form schema.
_OPAQUE = {"apiextensions/v1.JSONSchemaProps"}
_INTEGERS = {"int32", "int64"}  # the proto scalar is the OpenAPI format
_EXTENSIONS = {
    "patchStrategy": "x-kubernetes-patch-strategy",
    "patchMergeKey": "x-kubernetes-patch-merge-key",
    "listType": "x-kubernetes-list-type",
    "listMapKeys": "x-kubernetes-list-map-keys",
    "mapType": "x-kubernetes-map-type",
}


def definition_name(message: str) -> str:
    """Upstream's definition name of a message of the tables.

    Example:
        >>> definition_name("apps/v1.Deployment")
        'io.k8s.api.apps.v1.Deployment'
        >>> definition_name("apiextensions/v1.CustomResourceDefinition")
        'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition'
        >>> definition_name("meta/v1.Time")
        'io.k8s.apimachinery.pkg.apis.meta.v1.Time'
    """
    if message in _EXTERNAL:
        return _EXTERNAL[message]
    group_version, name = message.split(".", 1)
    if group_version.startswith("apiextensions/"):
        return f"io.k8s.apiextensions-apiserver.pkg.apis.{group_version.replace('/', '.')}.{name}"
    return f"io.k8s.api.{group_version.replace('/', '.')}.{name}"


def _item(typ: str) -> s.Schema:
    """The schema of a list's item or a map's value."""
    if typ == "string":
        return {"type": "string", "default": ""}
    if typ == "bytes":
        return {"type": "string", "format": "byte"}
    if typ == "bool":
        return {"type": "boolean", "default": False}
    if typ in _INTEGERS:
        return {"type": "integer", "format": typ, "default": 0}
    if typ == "resource.Quantity":
        return s.ref(s.QUANTITY)
    return {"allOf": [s.ref(definition_name(typ))], "default": {}}


def _property(typ: str, flags: str, description: str, extensions: dict[str, Any]) -> s.Schema:
    """One field's schema, in upstream's form."""
    out: s.Schema
    if typ.startswith("[]"):
        out = {"type": "array", "items": _item(typ[2:]), "description": description}
    elif typ.startswith("map"):
        out = {"type": "object", "additionalProperties": _item(typ[3:]), "description": description}
    elif typ == "string":
        out = s.string(description)
    elif typ == "bytes":
        out = s.string(description, format="byte")
    elif typ == "bool":
        out = s.boolean(description)
    elif typ in _INTEGERS:
        out = s.integer(description, typ)
    elif typ == "intstr.IntOrString":
        out = {"x-kubernetes-int-or-string": True, "description": description}
    elif typ in _OPAQUE:
        out = s.free(description)
    elif "p" in flags or typ in _SCALAR_DEFINITIONS:
        out = s.field(definition_name(typ), description)
    else:
        out = s.field(definition_name(typ), description, default={})
    for key, value in extensions.items():
        out[_EXTENSIONS[key]] = value
    return out


def _load() -> dict[str, Any]:
    text = resources.files(__package__ or __name__).joinpath("schematables.json").read_text(encoding="utf-8")
    messages: dict[str, Any] = json.loads(text)["messages"]
    return messages


def _members(messages: dict[str, Any], name: str) -> tuple[dict[str, s.Schema], list[str]]:
    """A message's properties and required fields, an embedded struct's inlined."""
    properties: dict[str, s.Schema] = {}
    required: list[str] = []
    for json_name, typ, flags, description, extensions in messages[name]["fields"]:
        if "i" in flags:
            inner, inner_required = _members(messages, typ)
            properties.update(inner)
            required.extend(inner_required)
            continue
        properties[json_name] = _property(typ, flags, description, extensions)
        if "r" in flags:
            required.append(json_name)
    return properties, required


def _schema(messages: dict[str, Any], name: str) -> s.Schema:
    message = messages[name]
    properties, required = _members(messages, name)
    if message["kind"] is not None:
        group, version, kind = message["kind"]
        out = s.kind_schema(group, version, kind, message["description"], {})
        out["properties"] = dict(sorted({**out["properties"], **properties}.items()))
        if required:
            out["required"] = required
    else:
        out = s.obj(message["description"], dict(sorted(properties.items())), tuple(required))
    if message["mapType"] is not None:
        out["x-kubernetes-map-type"] = message["mapType"]
    return out


@functools.cache
def _all() -> dict[str, s.Schema]:
    messages = _load()
    return {definition_name(name): _schema(messages, name) for name in messages}


def generated_schemas() -> dict[str, s.Schema]:
    """Every generated definition by upstream name (built once; shared: treat as read-only).

    Example:
        >>> deployment = generated_schemas()["io.k8s.api.apps.v1.Deployment"]
        >>> deployment["x-kubernetes-group-version-kind"]
        [{'group': 'apps', 'kind': 'Deployment', 'version': 'v1'}]
        >>> deployment["properties"]["spec"]["allOf"]
        [{'$ref': '#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec'}]
    """
    return _all()
