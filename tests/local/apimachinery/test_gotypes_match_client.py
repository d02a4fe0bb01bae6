"""The Go-type tables (generated from k8s.io/api by a tool run by hand) against an independent source that
CI has: the models of the official ``kubernetes`` Python client, generated upstream from the same Go types'
OpenAPI. Every message both know must have the same JSON field names, so a stale or hand-edited table,
or a generator that drops an embedded struct's fields, fails here.

The generator itself needs a k8s.io/api checkout, which CI does not have (no network): this is its re-check.
The registry's known fields of Event, Node and CustomResourceDefinition, derived from these tables, are
compared with the client's models too.
"""

from __future__ import annotations

import kubernetes.client.models as models
import pytest

from rayqueue_local.apimachinery.gotypes import MESSAGES, json_fields
from rayqueue_local.registry.knownfields import BUILTIN_FIELDS

# Where the Python client names a type differently from its Go package and name.
CLIENT_NAMES = {
    "rbac/v1.Subject": "RbacV1Subject",
    "core/v1.Event": "CoreV1Event",
    "core/v1.EventSeries": "CoreV1EventSeries",
    "apiextensions/v1.ServiceReference": "ApiextensionsV1ServiceReference",
    "apiextensions/v1.WebhookClientConfig": "ApiextensionsV1WebhookClientConfig",
}
# Go structs the Python client has no model of: embedded ones (their fields are checked in the
# messages that embed them) and alpha scheduling types the client does not generate.
NO_MODEL = {
    "core/v1.EphemeralContainerCommon",
    "core/v1.ProbeHandler",
    "core/v1.VolumeSource",
    "networking/v1.IngressRuleValue",
    "core/v1.ResourceClaim",
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
