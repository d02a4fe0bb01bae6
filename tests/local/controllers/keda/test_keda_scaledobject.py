"""The ScaledObject controller: /scale check, bearer auth from a service-account token, activation,
cooldown and scaling a Kueue Workload through its /scale subresource, trigger errors."""

from __future__ import annotations

import base64
import uuid

import pytest
from keda_helpers import conditions, scaled_object, wait_for
from kubernetes import client

WORKLOAD = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "Workload",
    "metadata": {"name": "target-wl"},
    "spec": {
        "active": True,
        "podSets": [
            {"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}
        ],
    },
}
TARGET = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload", "name": "target-wl"}


@pytest.fixture
def ns(keda_cp) -> str:
    name = f"ks-{uuid.uuid4().hex[:6]}"
    keda_cp.store.create("namespaces", {"metadata": {"name": name}})
    return name


@pytest.fixture
def custom(keda_cp):
    return client.CustomObjectsApi(keda_cp.api_client())


@pytest.fixture
def workload(custom, ns):
    custom.create_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", ns, "workloads", WORKLOAD)
    return lambda: custom.get_namespaced_custom_object(
        "kueue.x-k8s.io", "v1beta2", ns, "workloads", "target-wl"
    )


def get_so(custom, ns, name="so"):
    return custom.get_namespaced_custom_object("keda.sh", "v1alpha1", ns, "scaledobjects", name)


def events(keda_cp, ns, reason):
    return [e["message"] for e in keda_cp.store.list("events", ns) if e.get("reason") == reason]


def test_a_target_without_scale_is_not_ready(custom, keda_cp, ns, prometheus):
    rc = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc"},
        "spec": {"headGroupSpec": {"template": {"spec": {"containers": [{"name": "h", "image": "x"}]}}}},
    }
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", rc)
    so = scaled_object(
        "so",
        {"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": "rc"},
        {"serverAddress": prometheus.url, "query": "sum(up)", "threshold": "1"},
    )
    custom.create_namespaced_custom_object("keda.sh", "v1alpha1", ns, "scaledobjects", so)
    got = wait_for(lambda: get_so(custom, ns), lambda o: conditions(o).get("Ready", ("",))[0] == "False")
    status, reason, message = conditions(got)["Ready"]
    assert (status, reason) == ("False", "ScaledObjectCheckFailed")
    assert message == (
        "ScaledObject doesn't have correct scaleTargetRef specification: "
        "the server could not find the requested resource"
    )
    assert "Target resource doesn't expose /scale subresource" in events(
        keda_cp, ns, "ScaledObjectCheckFailed"
    )
    assert prometheus.requests == []  # never polled


def test_bearer_token_from_a_service_account_secret_reaches_prometheus(
    custom, keda_cp, ns, prometheus, workload
):
    core = client.CoreV1Api(keda_cp.api_client())
    core.create_namespaced_service_account(ns, {"metadata": {"name": "thanos"}})
    core.create_namespaced_secret(
        ns,
        {
            "metadata": {
                "name": "thanos-token",
                "annotations": {"kubernetes.io/service-account.name": "thanos"},
            },
            "type": "kubernetes.io/service-account-token",
        },
    )
    secret = wait_for(
        lambda: core.read_namespaced_secret("thanos-token", ns), lambda s: s.data and "token" in s.data
    )
    token = base64.b64decode(secret.data["token"]).decode()
    assert base64.b64decode(secret.data["ca.crt"]).decode().startswith("-----BEGIN CERTIFICATE-----")
    assert keda_cp.auth.authenticate(f"Bearer {token}") is not None  # a real token of this control plane
    custom.create_namespaced_custom_object(
        "keda.sh",
        "v1alpha1",
        ns,
        "triggerauthentications",
        {
            "apiVersion": "keda.sh/v1alpha1",
            "kind": "TriggerAuthentication",
            "metadata": {"name": "prom-auth"},
            "spec": {
                "secretTargetRef": [
                    {"parameter": "bearerToken", "name": "thanos-token", "key": "token"},
                    {"parameter": "ca", "name": "thanos-token", "key": "ca.crt"},
                ]
            },
        },
    )
    prometheus.series = [50.0]
    so = scaled_object(
        "so",
        TARGET,
        {
            "serverAddress": prometheus.url,
            "query": "sum(x)",
            "threshold": "9999",
            "authModes": "bearer",
            "namespace": ns,
        },
        auth="prom-auth",
        minReplicaCount=0,
        maxReplicaCount=1,
        pollingInterval=1,
    )
    custom.create_namespaced_custom_object("keda.sh", "v1alpha1", ns, "scaledobjects", so)
    wait_for(lambda: prometheus.requests, lambda r: len(r) >= 1)
    request = prometheus.requests[0]
    assert request["path"] == "/api/v1/query" and request["query"]["query"] == ["sum(x)"]
    assert request["query"]["namespace"] == [ns] and "time" in request["query"]
    assert request["headers"]["Authorization"] == f"Bearer {token}"
    got = wait_for(lambda: get_so(custom, ns), lambda o: conditions(o).get("Active", ("",))[0] == "True")
    assert conditions(got)["Ready"] == (
        "True",
        "ScaledObjectReady",
        "ScaledObject is defined correctly and is ready for scaling",
    )
    assert conditions(got)["Active"][:2] == ("True", "ScalerActive")
    assert got["status"]["scaleTargetKind"] == "kueue.x-k8s.io/v1beta1.Workload"
    assert got["status"]["originalReplicaCount"] == 1 and got["status"]["lastActiveTime"]
    assert (
        got["status"]["hpaName"] == "keda-hpa-so"
        and got["metadata"]["labels"]["scaledobject.keda.sh/name"] == "so"
    )


@pytest.mark.slow
def test_activation_cooldown_and_scaling_through_scale(custom, keda_cp, ns, prometheus, workload):
    prometheus.series = [5.0]  # below the activation threshold: not active
    meta = {
        "serverAddress": prometheus.url,
        "query": "sum(x)",
        "threshold": "9999",
        "activationThreshold": "10",
    }
    so = scaled_object(
        "so",
        TARGET,
        meta,
        minReplicaCount=0,
        maxReplicaCount=1,
        pollingInterval=1,
        cooldownPeriod=3,
        initialCooldownPeriod=3600,
    )
    custom.create_namespaced_custom_object("keda.sh", "v1alpha1", ns, "scaledobjects", so)
    got = wait_for(lambda: get_so(custom, ns), lambda o: conditions(o).get("Active", ("",))[0] == "False")
    assert conditions(got)["Active"][:2] == ("False", "ScalerCooldown")  # initialCooldownPeriod holds it
    assert workload()["spec"]["active"] is True

    prometheus.series = [50.0]
    wait_for(lambda: get_so(custom, ns), lambda o: conditions(o)["Active"][0] == "True")
    prometheus.series = [0.0]
    cooling = wait_for(lambda: get_so(custom, ns), lambda o: conditions(o)["Active"][1] == "ScalerCooldown")
    assert conditions(cooling)["Active"][2] == "Scaler cooling down because triggers are not active"
    assert workload()["spec"]["active"] is True  # still within the cooldown
    assert wait_for(workload, lambda w: w["spec"]["active"] is False)["spec"]["active"] is False
    done = wait_for(lambda: get_so(custom, ns), lambda o: conditions(o)["Active"][1] == "ScalerNotActive")
    assert conditions(done)["Active"][:2] == ("False", "ScalerNotActive")
    assert any("from 1 to 0" in m for m in events(keda_cp, ns, "KEDAScaleTargetDeactivated"))

    prometheus.series = [20.0]  # active again: from 0 to max(minReplicaCount, 1)
    assert wait_for(workload, lambda w: w["spec"]["active"] is True)["spec"]["active"] is True
    assert any("from 0 to 1" in m for m in events(keda_cp, ns, "KEDAScaleTargetActivated"))


def test_a_query_returning_several_series_is_an_error(custom, keda_cp, ns, prometheus, workload):
    prometheus.series = [1.0, 2.0]
    query = "DCGM_FI_DEV_GPU_UTIL"
    so = scaled_object(
        "so", TARGET, {"serverAddress": prometheus.url, "query": query, "threshold": "1"}, pollingInterval=1
    )
    custom.create_namespaced_custom_object("keda.sh", "v1alpha1", ns, "scaledobjects", so)
    got = wait_for(
        lambda: get_so(custom, ns), lambda o: conditions(o).get("Ready", ("", ""))[1] == "TriggerError"
    )
    assert conditions(got)["Ready"] == (
        "False",
        "TriggerError",
        "Triggers defined in ScaledObject are not working correctly",
    )
    assert got["status"]["health"]["s0-prometheus"]["status"] == "Failure"
    assert f"prometheus query {query} returned multiple elements" in events(keda_cp, ns, "KEDAScalerFailed")
    assert workload()["spec"]["active"] is True  # an error never scales to zero
