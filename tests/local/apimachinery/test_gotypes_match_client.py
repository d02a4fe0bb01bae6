"""The Go-type tables (generated from k8s.io/api by a tool run by hand) against an independent source that
CI has: the models of the official ``kubernetes`` Python client, generated upstream from the same Go types'
OpenAPI. Every message both know must have the same JSON field names, so a stale or hand-edited table,
or a generator that drops an embedded struct's fields, fails here.

The generator itself needs a k8s.io/api checkout, which CI does not have (no network): this is its re-check.
The registry's known fields of Event, Node and CustomResourceDefinition, derived from these tables, are
compared with the client's models too, and so are the OpenAPI schemas served for the built-in kinds
(:mod:`rayqueue_local.registry.coreschemas`, from the generator's second output): per message the
property names, each property's type, which are required, and the descriptions (upstream's whole Go
comment; the client keeps them with its paragraphs' blank lines flattened).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import kubernetes.client.models as models
import pytest

from rayqueue_local.apimachinery.gotypes import MESSAGES, json_fields
from rayqueue_local.registry import openapischema as s
from rayqueue_local.registry.coreschemas import definition_name, generated_schemas
from rayqueue_local.registry.knownfields import BUILTIN_FIELDS

# Where the Python client names a type differently from its Go package and name.
CLIENT_NAMES = {
    "rbac/v1.Subject": "RbacV1Subject",
    "core/v1.Event": "CoreV1Event",
    "core/v1.EventSeries": "CoreV1EventSeries",
    "apiextensions/v1.ServiceReference": "ApiextensionsV1ServiceReference",
    "apiextensions/v1.WebhookClientConfig": "ApiextensionsV1WebhookClientConfig",
    "core/v1.ResourceClaim": "CoreV1ResourceClaim",
}
# Go structs the Python client has no model of: embedded ones (their fields are checked in the
# messages that embed them) and alpha scheduling types the client does not generate.
NO_MODEL = {
    "core/v1.EphemeralContainerCommon",
    "core/v1.ProbeHandler",
    "core/v1.VolumeSource",
    "networking/v1.IngressRuleValue",
    "apiextensions/v1.CustomResourceSubresourceStatus",  # an empty struct: the client has no model of it
}
# Fields the client (kubernetes 37.0.2) models that the Go types at the pinned k8s.io/api commit (see
# prototables) do not have.
CLIENT_ONLY = {"core/v1.NodeSystemInfo": {"runningInUserNamespace"}}


def _client_model(message: str) -> type | None:
    if message in CLIENT_NAMES:
        return getattr(models, CLIENT_NAMES[message], None)
    group_version, name = message.split(".", 1)
    version = group_version.split("/")[-1]
    return getattr(models, version[:1].upper() + version[1:] + name, None)


def _compared() -> list[str]:
    return sorted(m for m in MESSAGES if _client_model(m) is not None)


def test_most_messages_are_compared() -> None:
    compared, total = len(_compared()), len(MESSAGES)
    assert compared >= 0.9 * total, f"only {compared} of {total} messages have a client model"
    unmatched = {m for m in MESSAGES if _client_model(m) is None} - NO_MODEL
    assert all(m.startswith("scheduling/") for m in unmatched), unmatched


@pytest.mark.parametrize("message", _compared())
def test_fields_match_the_kubernetes_client(message: str) -> None:
    model = _client_model(message)
    assert model is not None
    theirs = set(model.attribute_map.values()) - CLIENT_ONLY.get(message, set())
    ours = set(json_fields(message))
    # A kind's TypeMeta (apiVersion, kind) is inlined in Go but not a protobuf field.
    if "metadata" in ours and {"apiVersion", "kind"} <= theirs:
        ours |= {"apiVersion", "kind"}
    assert ours == theirs, f"only ours: {sorted(ours - theirs)}; only the client's: {sorted(theirs - ours)}"


def test_an_embedded_struct_is_expanded() -> None:
    assert {"exec", "httpGet", "tcpSocket", "grpc"} <= set(json_fields("core/v1.Probe"))
    assert "" not in json_fields("core/v1.Volume")


# The built-in kinds whose known fields were once listed by hand, and the levels they list exactly.
DERIVED_KNOWN_FIELDS = [
    ("events", (), "core/v1.Event"),
    ("nodes", (), "core/v1.Node"),
    ("nodes", ("spec",), "core/v1.NodeSpec"),
    ("customresourcedefinitions.apiextensions.k8s.io", (), "apiextensions/v1.CustomResourceDefinition"),
    (
        "customresourcedefinitions.apiextensions.k8s.io",
        ("spec",),
        "apiextensions/v1.CustomResourceDefinitionSpec",
    ),
]


@pytest.mark.parametrize(("key", "path", "message"), DERIVED_KNOWN_FIELDS)
def test_known_fields_of_event_node_and_crd_match_the_kubernetes_client(
    key: str, path: tuple[str, ...], message: str
) -> None:
    schema = BUILTIN_FIELDS[key]
    for step in path:
        schema = schema["properties"][step]
    model = _client_model(message)
    assert model is not None
    theirs = set(model.attribute_map.values()) - {"apiVersion", "kind"}  # a kind's TypeMeta: always known
    assert set(schema["properties"]) == theirs


# The client's type names of the apimachinery definitions the generated schemas refer to.
CLIENT_TYPES = {
    s.TIME: "datetime",
    f"{s.META}.MicroTime": "datetime",
    s.QUANTITY: "str",
    f"{s.META}.ObjectMeta": "V1ObjectMeta",
    f"{s.META}.LabelSelector": "V1LabelSelector",
    f"{s.META}.Condition": "V1Condition",
}
# A CRD's openAPIV3Schema: the client models JSONSchemaProps; the schemas here leave it free-form.
FREE_FORM = {("apiextensions/v1.CustomResourceValidation", "openAPIV3Schema"): "V1JSONSchemaProps"}
SCHEMA_MESSAGES = sorted(
    json.loads(resources.files("rayqueue_local.registry").joinpath("schematables.json").read_text("utf-8"))[
        "messages"
    ]
)
_MESSAGES_BY_DEFINITION = {definition_name(m): m for m in SCHEMA_MESSAGES}


def _client_type(schema: dict[str, Any]) -> str:
    """The client's ``openapi_types`` entry for one of our property schemas."""
    if schema.get("x-kubernetes-int-or-string") or schema.get("x-kubernetes-preserve-unknown-fields"):
        return "object"
    kind = schema.get("type")
    if kind == "array":
        return f"List[{_client_type(schema['items'])}]"
    if kind == "object" and "additionalProperties" in schema:
        return f"Dict[str, {_client_type(schema['additionalProperties'])}]"
    scalars = {"string": "bytes" if schema.get("format") == "byte" else "str", "integer": "int"}
    if kind in scalars or kind == "boolean":
        return scalars.get(kind, "bool")
    name = (schema.get("$ref") or schema["allOf"][0]["$ref"]).rsplit("/", 1)[1]
    if name in CLIENT_TYPES:
        return CLIENT_TYPES[name]
    model = _client_model(_MESSAGES_BY_DEFINITION[name])
    return model.__name__ if model is not None else "object"  # a type the client does not generate


def _client_fields(model: Any) -> dict[str, Any]:
    """JSON name -> the model's pydantic field (its description, whether it is required)."""
    fields: dict[str, Any] = model.model_fields
    return {(f.serialization_alias or name): f for name, f in fields.items()}


def _words(text: str) -> str:
    return " ".join(text.split())


def _generated_compared() -> list[str]:
    """The messages of the generated schemas the client has a model of (meta/v1's are written by hand)."""
    return [m for m in SCHEMA_MESSAGES if _client_model(m) is not None]


@pytest.mark.parametrize("message", _generated_compared())
def test_generated_schemas_match_the_kubernetes_client(message: str) -> None:
    model = _client_model(message)
    assert model is not None
    schema = generated_schemas()[definition_name(message)]
    python_names = {json_name: name for name, json_name in model.attribute_map.items()}
    theirs = set(python_names) - CLIENT_ONLY.get(message, set())
    assert set(schema["properties"]) == theirs
    fields = _client_fields(model)
    for name, prop in schema["properties"].items():
        theirs_type = model.openapi_types[python_names[name]]
        if (message, name) in FREE_FORM:
            assert prop["x-kubernetes-preserve-unknown-fields"] and theirs_type == FREE_FORM[message, name]
        else:
            assert _client_type(prop) == theirs_type, name
        description = fields[name].description
        if description:  # the client drops a description beside a reference
            assert _words(prop["description"]) == _words(description), name
    required = {name for name in schema["properties"] if fields[name].is_required()}
    assert set(schema.get("required", [])) == required
    own = _words((model.__doc__ or "").split("Attributes:")[0])
    assert _words(schema["description"]) == own


def test_most_generated_fields_carry_the_clients_description() -> None:
    compared = described = 0
    for message in _generated_compared():
        model = _client_model(message)
        assert model is not None
        for field in _client_fields(model).values():
            compared += 1
            described += bool(field.description)
    assert described >= 0.75 * compared, (described, compared)
