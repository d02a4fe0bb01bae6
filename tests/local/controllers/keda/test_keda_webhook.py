"""KEDA's ScaledObject validation (webhook and CRD schema) through the real kubernetes client."""

from __future__ import annotations

import json
import uuid

import pytest
from keda_helpers import scaled_object
from kubernetes import client
from kubernetes.client.exceptions import ApiException

TARGET = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload", "name": "w"}
META = {"serverAddress": "http://127.0.0.1:9", "query": "sum(up)", "threshold": "1"}


@pytest.fixture
def ns(keda_cp) -> str:
    name = f"kw-{uuid.uuid4().hex[:6]}"
    keda_cp.store.create("namespaces", {"metadata": {"name": name}})
    return name


@pytest.fixture
def custom(keda_cp):
    return client.CustomObjectsApi(keda_cp.api_client())


def create(custom, ns, body):
    return custom.create_namespaced_custom_object("keda.sh", "v1alpha1", ns, "scaledobjects", body)


def rejected(custom, ns, body) -> tuple[int, str]:
    """(HTTP status, the Status message) of a refused create."""
    with pytest.raises(ApiException) as info:
        create(custom, ns, body)
    return info.value.status, json.loads(info.value.body)["message"]


def test_numbers_in_trigger_metadata_are_rejected(custom, ns):
    status, message = rejected(custom, ns, scaled_object("so", TARGET, {**META, "threshold": 9999}))
    assert status == 422
    assert "spec.triggers[0].metadata.threshold" in message and "must be of type string" in message


def test_a_name_whose_hpa_name_is_too_long_is_denied_unless_the_hpa_is_named(custom, ns):
    name = "s" * 55  # keda-hpa-<55> is 64 characters
    status, message = rejected(custom, ns, scaled_object(name, TARGET, META))
    assert status == 403
    assert message.startswith(
        'admission webhook "vscaledobject.kb.io" denied the request: HPA name "keda-hpa-'
    )
    named = scaled_object(name, TARGET, META, advanced={"horizontalPodAutoscalerConfig": {"name": "short"}})
    assert create(custom, ns, named)["metadata"]["name"] == name


def test_replica_bounds(custom, ns):
    _, message = rejected(
        custom, ns, scaled_object("bounds", TARGET, META, minReplicaCount=3, maxReplicaCount=2)
    )
    assert message.endswith("MinReplicaCount=3 must be less than MaxReplicaCount=2")
    _, message = rejected(
        custom, ns, scaled_object("idle", TARGET, META, minReplicaCount=1, idleReplicaCount=1)
    )
    assert message.endswith("IdleReplicaCount=1 must be less than MinReplicaCount=1")


def test_duplicate_trigger_names(custom, ns):
    body = scaled_object("dup", TARGET, META)
    body["spec"]["triggers"] = [
        dict(body["spec"]["triggers"][0], name="t"),
        dict(body["spec"]["triggers"][0], name="t"),
    ]
    _, message = rejected(custom, ns, body)
    assert 'triggerName "t" is defined multiple times in the ScaledObject/ScaledJob' in message


def test_the_seed_scaled_object_is_accepted(custom, ns):
    seed = scaled_object(
        "scaledobject",
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "name": "raycluster-first-raycluster-e8016",
            "kind": "Workload",
        },
        {
            "serverAddress": "https://thanos-querier.openshift-monitoring.svc.cluster.local:9092",
            "namespace": "demo",
            "metricName": "s0-prometheus",
            "threshold": "9999",
            "query": 'sum(rate(DCGM_FI_DEV_GPU_UTIL{pod=~"first-raycluster.*"}[1m]))',
            "authModes": "bearer",
        },
        auth="keda-trigger-auth-prometheus",
        minReplicaCount=0,
        maxReplicaCount=1,
        pollingInterval=30,
        cooldownPeriod=60,
    )
    created = create(custom, ns, seed)
    assert created["spec"]["triggers"][0]["metadata"]["threshold"] == "9999"
