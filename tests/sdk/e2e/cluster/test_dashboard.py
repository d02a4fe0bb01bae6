"""Dashboard and Ray client addresses: Route/HTTPRoute/Ingress made for the cluster (never another
cluster's), the in-cluster Service name inside a pod, the status address, typed errors; the job
client's bearer header only over https; no token in any log line or error."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import (
    Cluster,
    ClusterConfiguration,
    ClusterNotFoundError,
    ConnectionFailedError,
    DashboardNotFoundError,
    list_clusters,
)
from rayqueue_sdk.cluster import dashboard as dash


def test_exposure_is_matched_to_the_cluster_route_then_httproute_then_ingress() -> None:
    other = {"metadata": {"name": "other-head-ingress"}, "spec": {"rules": [{"host": "other.example"}]}}
    ingress = {
        "metadata": {"name": "anything", "labels": {"ray.io/cluster": "ws"}},
        "spec": {"rules": [{"host": "ws.example", "http": {"paths": [{"path": "/ray/"}]}}]},
    }
    assert dash.dashboard_from_exposure("ws", "ds", ingresses=[other]) is None  # not the first one around
    assert dash.dashboard_from_exposure("ws", "ds", ingresses=[other, ingress]) == "http://ws.example/ray"
    httproute = {
        "metadata": {"name": "r", "labels": {"ray.io/cluster-name": "ws", "ray.io/cluster-namespace": "ds"}},
        "spec": {"hostnames": ["gw.example"], "rules": [{"matches": [{"path": {"value": "/ray/ds/ws"}}]}]},
    }
    elsewhere = {
        **httproute,
        "metadata": {
            "name": "r2",
            "labels": {"ray.io/cluster-name": "ws", "ray.io/cluster-namespace": "prod"},
        },
    }
    assert dash.dashboard_from_exposure("ws", "ds", httproutes=[elsewhere]) is None
    assert dash.dashboard_from_exposure("ws", "ds", httproutes=[httproute], ingresses=[ingress]) == (
        "https://gw.example/ray/ds/ws"
    )
    route = {"metadata": {"name": "ray-dashboard-ws"}, "spec": {"host": "ws.apps.example", "tls": {}}}
    assert dash.dashboard_from_exposure("ws", "ds", routes=[route], httproutes=[httproute]) == (
        "https://ws.apps.example"
    )


def test_addresses_from_an_ingress_the_status_and_inside_a_pod(
    plane: LocalControlPlane, ns: str, user_client: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cluster = Cluster(ClusterConfiguration(name="ws", namespace=ns, local_queue="parked"), client=user_client)
    cluster.apply()
    with pytest.raises(DashboardNotFoundError, match="queued or starting"):
        cluster.cluster_uri()
    with pytest.raises(DashboardNotFoundError):
        cluster.cluster_dashboard_uri()
    with pytest.raises(ClusterNotFoundError):
        dash.cluster_dashboard_uri("nope", ns, client=user_client)
    assert cluster.cluster_dashboard_uri(override="https://proxy.example/ws/") == "https://proxy.example/ws"

    plane.apply(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {"name": "ws-head-ingress", "namespace": ns},
            "spec": {
                "tls": [{"hosts": ["ws.apps.example"]}],
                "rules": [
                    {
                        "host": "ws.apps.example",
                        "http": {
                            "paths": [
                                {
                                    "path": "/",
                                    "pathType": "Prefix",
                                    "backend": {"service": {"name": "ws-head-svc", "port": {"number": 8265}}},
                                }
                            ]
                        },
                    }
                ],
            },
        }
    )
    assert cluster.cluster_dashboard_uri() == "https://ws.apps.example"
    assert cluster.status().dashboard_url == "https://ws.apps.example"
    assert [s.dashboard_url for s in list_clusters(ns, user_client)] == ["https://ws.apps.example"]

    token = tmp_path / "token"
    token.write_text("sa-token")
    monkeypatch.setattr(dash, "_SA_TOKEN", token)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    assert cluster.cluster_uri() == f"ray://ws-head-svc.{ns}.svc:10001"
    plane.store.delete("ingresses.networking.k8s.io", ns, "ws-head-ingress")
    assert cluster.cluster_dashboard_uri() == f"http://ws-head-svc.{ns}.svc:8265"


def test_job_client_sends_the_bearer_token_only_over_https(
    plane: LocalControlPlane, user: str, user_client: Any
) -> None:
    assert dash.auth_headers(user_client) == {"Authorization": f"Bearer {user}"}
    assert dash._wants_auth("https://ray.example", None) and not dash._wants_auth(
        "http://10.0.0.7:8265", None
    )
    with pytest.raises(ConnectionFailedError) as info:
        dash.ray_job_client("https://127.0.0.1:9", client=user_client)  # nothing listens there
    assert user not in str(info.value) and "127.0.0.1:9" in str(info.value)
    assert dash.dashboard_ready("http://127.0.0.1:9", timeout=1.0) is False


def test_no_token_in_logs_reprs_or_errors(
    plane: LocalControlPlane, ns: str, user: str, user_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    cluster = Cluster(ClusterConfiguration(name="ws", namespace=ns, local_queue="parked"), client=user_client)
    cluster.apply()
    st = cluster.status()
    errors: list[str] = []
    for bad in (
        ClusterConfiguration(name="ws2", namespace=ns, local_queue="nope"),
        ClusterConfiguration(name="ws3", namespace="kube-system"),
    ):
        try:
            Cluster(bad, client=user_client).apply()
        except Exception as err:  # noqa: BLE001 - collecting the messages
            errors.append(f"{err!r} {err}")
    cluster.down()
    assert len(errors) == 2
    seen = caplog.text + repr(cluster) + str(st.to_dict()) + " ".join(errors)
    assert user not in seen and plane.token not in seen
