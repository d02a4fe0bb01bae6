"""A TriggerAuthentication's parameters, read from the Secrets and ConfigMaps it names (written over HTTP)."""

from __future__ import annotations

import uuid

import pytest
from kubernetes import client

from rayqueue_local.controllers.keda.secrets import resolve_auth


@pytest.fixture
def ns(keda_cp) -> str:
    name = f"ka-{uuid.uuid4().hex[:6]}"
    keda_cp.store.create("namespaces", {"metadata": {"name": name}})
    return name


def _trigger_auth(keda_cp, ns: str, name: str, spec: dict) -> None:
    body = {"apiVersion": "keda.sh/v1alpha1", "kind": "TriggerAuthentication", "metadata": {"name": name}}
    client.CustomObjectsApi(keda_cp.api_client()).create_namespaced_custom_object(
        "keda.sh", "v1alpha1", ns, "triggerauthentications", {**body, "spec": spec}
    )


def test_parameters_come_from_the_secret_and_the_configmap_keys_named(keda_cp, ns) -> None:
    core = client.CoreV1Api(keda_cp.api_client())
    core.create_namespaced_secret(ns, {"metadata": {"name": "s"}, "stringData": {"token": "t0k"}})
    core.create_namespaced_config_map(ns, {"metadata": {"name": "c"}, "data": {"url": "http://x"}})
    _trigger_auth(
        keda_cp,
        ns,
        "both",
        {
            "secretTargetRef": [
                {"parameter": "bearerToken", "name": "s", "key": "token"},
                {"parameter": "absent", "name": "s", "key": "nope"},
            ],
            "configMapTargetRef": [
                {"parameter": "serverAddress", "name": "c", "key": "url"},
                {"parameter": "absent2", "name": "c", "key": "nope"},
            ],
        },
    )
    assert resolve_auth(keda_cp.store, ns, {"name": "both"}) == {
        "bearerToken": "t0k",
        "serverAddress": "http://x",
    }


@pytest.mark.parametrize(
    ("field", "noun"), [("secretTargetRef", "secret"), ("configMapTargetRef", "configmap")]
)
def test_a_missing_secret_or_configmap_is_named_in_the_error(keda_cp, ns, field: str, noun: str) -> None:
    _trigger_auth(keda_cp, ns, "lost", {field: [{"parameter": "p", "name": "gone", "key": "k"}]})
    with pytest.raises(ValueError) as err:
        resolve_auth(keda_cp.store, ns, {"name": "lost"})
    assert str(err.value) == f'error reading {noun} "gone" for TriggerAuthentication "lost": not found'
