"""Bad input and faults through ``Cluster``: typed errors that say what to do, faults ridden out, and
``apply()``/``down()`` that can be repeated after a failure (exactly one cluster, or none)."""

from __future__ import annotations

from typing import Any

import pytest
from cluster_helpers import eventually, later, team_queue

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import (
    ApiError,
    AuthenticationError,
    Cluster,
    ClusterConfiguration,
    ClusterDeletedError,
    ClusterPhase,
    ConfigError,
    ConflictError,
    ForbiddenError,
    PriorityClassNotFoundError,
    QueueNotFoundError,
    list_clusters,
)


def names(ns: str, client: Any) -> list[str]:
    return [s.name for s in list_clusters(ns, client)]


def parked(name: str, ns: str, **extra: Any) -> ClusterConfiguration:
    return ClusterConfiguration(name=name, namespace=ns, local_queue="parked", **extra)


def test_unknown_queue_lists_the_queues_there_are(ns: str, user_client: Any) -> None:
    with pytest.raises(QueueNotFoundError) as info:
        Cluster(
            ClusterConfiguration(name="ws", namespace=ns, local_queue="gpu-queue"), client=user_client
        ).apply()
    assert info.value.available == ["parked"]
    assert "LocalQueue 'gpu-queue' does not exist" in str(info.value) and "available: parked" in str(
        info.value
    )
    assert names(ns, user_client) == []


def test_unknown_priority_class_lists_the_classes(ns: str, user_client: Any) -> None:
    with pytest.raises(PriorityClassNotFoundError) as info:
        Cluster(parked("ws", ns, priority_class="urgent"), client=user_client).apply()
    assert {"dev-priority (100)", "prod-priority (1000)", "rd-priority (100)"} <= set(info.value.available)
    assert names(ns, user_client) == []


def test_a_namespace_the_user_may_not_write_names_verb_and_resource(ns: str, user_client: Any) -> None:
    cluster = Cluster(
        ClusterConfiguration(name="ws", namespace="kube-system", local_queue="q"), client=user_client
    )
    with pytest.raises(ForbiddenError) as info:
        cluster.apply()
    assert (info.value.verb, info.value.resource) == ("patch", "rayclusters.ray.io")
    assert "kube-system" in str(info.value)


def test_default_queue_kueues_rule_and_the_peers_annotation(
    plane: LocalControlPlane, ns: str, user_client: Any
) -> None:
    # The peer's annotation names a default queue ...
    plane.apply(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {
                "name": "team",
                "namespace": ns,
                "annotations": {"kueue.x-k8s.io/default-queue": "true"},
            },
            "spec": {"clusterQueue": f"parked-{ns}"},
        }
    )
    annotated = Cluster(ClusterConfiguration(name="annotated", namespace=ns), client=user_client)
    stored = annotated.apply()
    assert stored["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team"
    # ... autoscaling under a default queue with elastic=False is refused before anything is sent ...
    scaling = Cluster(
        ClusterConfiguration(name="scaling", namespace=ns, enable_autoscaling=True, elastic=False),
        client=user_client,
    )
    with pytest.raises(ConfigError, match="elastic"):
        scaling.apply()
    assert names(ns, user_client) == ["annotated"]
    # ... and left unset, the default queue makes it an elastic job (Kueue's annotation).
    elastic = Cluster(
        ClusterConfiguration(name="elastic", namespace=ns, enable_autoscaling=True), client=user_client
    ).apply()
    assert elastic["metadata"]["annotations"]["kueue.x-k8s.io/elastic-job"] == "true"
    assert elastic["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team"
    # Kueue's own rule (a LocalQueue named 'default') comes first.
    plane.apply(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "default", "namespace": ns},
            "spec": {"clusterQueue": f"parked-{ns}"},
        }
    )
    stored = Cluster(ClusterConfiguration(name="kueue-default", namespace=ns), client=user_client).apply()
    assert stored["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "default"
    assert Cluster(
        ClusterConfiguration(name="scaling", namespace=ns, enable_autoscaling=True, elastic=True),
        client=user_client,
    ).apply()


def test_apply_and_down_repeated_after_failures_leave_one_cluster_or_none(
    plane: LocalControlPlane, ns: str, user_client: Any, admin: Any
) -> None:
    cluster = Cluster(parked("ws", ns), client=user_client)
    path = rf"/apis/ray\.io/v1/namespaces/{ns}/rayclusters"
    plane.faults.inject("PATCH", path, status=500, times=20)  # more than the retries
    with pytest.raises(ApiError) as info:
        cluster.apply()
    assert info.value.status == 500
    plane.faults.clear()
    assert names(ns, user_client) == []
    plane.faults.inject("PATCH", path, drop=True, times=1)  # connection dropped: retried
    plane.faults.inject("PATCH", path, status=503, retry_after=1, times=1)
    first = cluster.apply()
    again = cluster.apply()  # idempotent: the same object, spec unchanged
    assert (again["metadata"]["uid"], again["metadata"]["generation"]) == (
        first["metadata"]["uid"],
        first["metadata"]["generation"],
    )
    assert names(ns, user_client) == ["ws"]

    plane.faults.inject("DELETE", path, status=500, times=20)
    with pytest.raises(ApiError):
        cluster.down()
    plane.faults.clear()
    assert names(ns, user_client) == ["ws"]
    assert cluster.down() is True
    assert cluster.down() is False
    assert names(ns, user_client) == []

    plane.faults.inject("POST", path, status=500, times=20)
    with pytest.raises(ApiError):
        cluster.up()
    plane.faults.clear()
    assert names(ns, user_client) == []
    cluster.up()
    assert names(ns, user_client) == ["ws"]

    # down() deletes only what the SDK made.
    foreign = Cluster(parked("foreign", ns), client=admin).to_dict()
    del foreign["metadata"]["labels"]["app.kubernetes.io/managed-by"]
    plane.apply(foreign)
    with pytest.raises(ConflictError, match="not made by rayqueue_sdk"):
        Cluster(parked("foreign", ns), client=user_client).down()
    with pytest.raises(ConflictError, match="apply.force=True. would take it over"):
        Cluster(parked("foreign", ns), client=user_client).apply()
    assert names(ns, user_client) == ["foreign", "ws"]
    adopted = Cluster(parked("foreign", ns), client=user_client)
    adopted.apply(force=True)  # taken over on purpose: now the SDK's, so down() deletes it
    assert adopted.down() is True and names(ns, user_client) == ["ws"]


def test_expired_token_mid_wait_is_an_authentication_error(
    plane: LocalControlPlane, ns: str, user: str
) -> None:
    from rayqueue_sdk import TokenAuthentication

    name = f"user-{ns}"[:60]
    client = TokenAuthentication(
        token=user, server=plane.server, ca_cert_path=str(plane.ca_cert_path)
    ).api_client()
    cluster = Cluster(parked("ws", ns), client=client)
    cluster.apply()

    def expire() -> None:
        plane.auth.add_user(name, [ns])  # a new token: the old one is no longer accepted
        plane.faults.end_watches()

    later(expire, after=lambda: plane.faults.open_watches >= 2)
    with pytest.raises(AuthenticationError) as info:
        cluster.wait_ready(timeout=120)
    assert user not in str(info.value) and user not in repr(info.value)


def test_cluster_deleted_by_someone_else_while_waiting(
    plane: LocalControlPlane, ns: str, user_client: Any, admin: Any
) -> None:
    cluster = Cluster(parked("ws", ns), client=user_client)
    cluster.apply()
    later(
        lambda: Cluster(parked("ws", ns), client=admin).down(), after=lambda: plane.faults.open_watches >= 2
    )
    with pytest.raises(ClusterDeletedError):
        cluster.wait_ready(timeout=120)


@pytest.mark.ray
def test_503_429_and_dropped_watches_during_wait_ready_are_ridden_out(
    plane: LocalControlPlane, ns: str, user_client: Any
) -> None:
    cluster = Cluster(
        ClusterConfiguration(name="ws", namespace=ns, local_queue="team-q", num_workers=1), client=user_client
    )
    plane.apply(team_queue(ns, "team-q", cpu=0, memory="0", gpus=0))  # no quota yet: it queues
    cluster.apply()
    assert eventually(lambda: cluster.status().phase is ClusterPhase.QUEUED)

    faults = [
        plane.faults.inject("GET", rf"/apis/ray\.io/v1/namespaces/{ns}/rayclusters", status=503, times=2),
        plane.faults.inject(
            "GET",
            rf"/apis/kueue\.x-k8s\.io/v1beta2/namespaces/{ns}/workloads",
            status=429,
            retry_after=1,
            times=2,
        ),
        plane.faults.inject("GET", r"/apis/visibility\.kueue\.x-k8s\.io/", status=503, times=1),
    ]

    def admit() -> None:
        plane.faults.end_watches()  # drop every watch: the wait must resume from where it was
        plane.faults.inject("GET", rf"/apis/ray\.io/v1/namespaces/{ns}/rayclusters", drop=True, times=1)
        plane.apply(team_queue(ns, "team-q", cpu=8, memory="32Gi", gpus=0))  # quota arrives

    later(
        admit,
        after=lambda: (
            plane.faults.open_watches >= 2
            and all(f.times is not None and f.times <= 0 or f.hits for f in faults)
        ),
    )
    status = cluster.wait_ready(timeout=300)
    assert status.ready and status.dashboard_url
    assert all(f.hits >= 1 for f in faults)
    cluster.down()
