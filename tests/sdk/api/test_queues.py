"""Queue and priority-class checks, listing and the queue position, against the local control plane."""

from __future__ import annotations

from typing import Any

import pytest
from sdk_helpers import NS, OTHER_NS

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import list_local_queues
from rayqueue_sdk.errors import ForbiddenError, NotFoundError, PriorityClassNotFoundError, QueueNotFoundError
from rayqueue_sdk.kube.lookups import list_or_none
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.queues.local_queues import (
    check_priority_class,
    check_queue,
    queue_position,
    resolve_default_queue,
)


def lq(
    name: str,
    namespace: str,
    cq: str,
    *,
    annotations: dict[str, str] | None = None,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations or {}},
        "spec": {"clusterQueue": cq},
    }
    if status:
        obj["status"] = status
    return obj


def wpc(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": name},
        "value": value,
        "description": name,
    }


@pytest.fixture(scope="module", autouse=True)
def queues(plane: LocalControlPlane) -> None:
    plane.apply(
        [
            lq(
                "team-q",
                NS,
                "cq-dev",
                status={
                    "pendingWorkloads": 2,
                    "reservingWorkloads": 1,
                    "admittedWorkloads": 1,
                    "flavorsUsage": [
                        {"name": "default-flavor", "resources": [{"name": "cpu", "total": "4"}]}
                    ],
                    "conditions": [
                        {
                            "type": "Active",
                            "status": "True",
                            "reason": "Ready",
                            "message": "ok",
                            "lastTransitionTime": "2026-01-01T00:00:00Z",
                        }
                    ],
                },
            ),
            lq("default", NS, "cq-dev"),
            lq("peer-default", OTHER_NS, "cq-prod", annotations={"kueue.x-k8s.io/default-queue": "true"}),
            lq("batch", OTHER_NS, "cq-prod"),
            wpc("rd-priority", 100),
            wpc("prod-priority", 1000),
        ]
    )


def test_list_local_queues(plane: LocalControlPlane) -> None:
    queues = list_local_queues(NS, client=plane.api_client())
    assert [q.name for q in queues] == ["default", "team-q"]  # the default first
    team = queues[1]
    assert (team.cluster_queue, team.pending, team.reserving, team.admitted) == ("cq-dev", 2, 1, 1)
    assert team.flavors == ("default-flavor",) and team.active is True and not team.default
    assert queues[0].default  # Kueue's rule: named "default"


def test_peer_default_annotation_is_honoured(plane: LocalControlPlane) -> None:
    queues = {q.name: q for q in list_local_queues(OTHER_NS, client=plane.api_client())}
    assert queues["peer-default"].default and not queues["batch"].default
    session = KubeSession(plane.api_client())
    assert resolve_default_queue(session, namespace=OTHER_NS) == "peer-default"
    assert resolve_default_queue(session, namespace=NS) == "default"


def test_list_as_user_in_own_namespace(plane: LocalControlPlane, user_token: str) -> None:
    assert [q.name for q in list_local_queues(NS, client=plane.api_client(user_token))] == [
        "default",
        "team-q",
    ]


def test_check_queue(plane: LocalControlPlane, user_token: str) -> None:
    session = KubeSession(plane.api_client(user_token))
    assert check_queue(session, name="team-q", namespace=NS).cluster_queue == "cq-dev"  # type: ignore[union-attr]
    with pytest.raises(QueueNotFoundError) as info:
        check_queue(session, name="gpu-queue", namespace=NS)
    err = info.value
    assert err.available == ["default", "team-q"] and err.namespace == NS
    assert "gpu-queue" in str(err) and "default, team-q" in str(err) and "'default'" in str(err)


def test_check_queue_in_a_namespace_the_user_cannot_read(plane: LocalControlPlane, user_token: str) -> None:
    # 403 on the LocalQueue: the check is left to Kueue (warned), never a silently dropped label
    assert check_queue(KubeSession(plane.api_client(user_token)), name="batch", namespace=OTHER_NS) is None


def test_check_priority_class(plane: LocalControlPlane, user_token: str) -> None:
    session = KubeSession(plane.api_client(user_token))
    assert check_priority_class(session, name="rd-priority")["value"] == 100  # type: ignore[index]
    with pytest.raises(PriorityClassNotFoundError) as info:
        check_priority_class(session, name="urgent")
    assert "prod-priority (1000)" in str(info.value) and "rd-priority (100)" in str(info.value)


def test_queue_position_without_the_visibility_api(plane: LocalControlPlane) -> None:
    api = plane.api_client()
    session = KubeSession(api, namespace=NS)
    position, why = queue_position(session, local_queue="team-q", workload_name="raycluster-ws-12345")
    assert position is None and why is not None and "visibility" in why
    sent: list[str] = []
    real = api.call_api

    def counting(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(url)
        return real(method, url, *args, **kwargs)

    api.call_api = counting
    assert queue_position(session, local_queue="team-q", workload_name="raycluster-ws-12345") == (None, why)
    assert sent == []  # "not served" is remembered for this client: said once, not asked again


def test_no_kueue_is_said_plainly(plane: LocalControlPlane) -> None:
    path = rf"/apis/kueue\.x-k8s\.io/v1beta2/namespaces/{NS}/localqueues"
    plane.faults.inject(
        method="GET",
        path=path,
        status=404,
        times=None,
        message="the server could not find the requested resource",
    )
    try:
        with pytest.raises(NotFoundError) as info:
            list_local_queues(NS, client=plane.api_client())
        assert "is Kueue installed?" in str(info.value)
        assert (
            resolve_default_queue(KubeSession(plane.api_client()), namespace=NS) is None
        )  # no Kueue: no default queue, no error
    finally:
        plane.faults.clear()


def test_list_or_none_says_why_a_list_was_refused(plane: LocalControlPlane, user_token: str) -> None:
    session = KubeSession(plane.api_client(user_token))
    kind = session.kueue_kind("localqueues")
    refused: list[ForbiddenError | NotFoundError] = []
    listed = list_or_none(session, kind, namespace=NS, refused=refused.append)
    assert sorted(o["metadata"]["name"] for o in listed or []) == ["default", "team-q"] and refused == []
    # 403 in a namespace the user may not read: no list, and the caller hears why (preflight words it)
    assert list_or_none(session, kind, namespace=OTHER_NS, refused=refused.append) is None
    assert [type(err) for err in refused] == [ForbiddenError]
