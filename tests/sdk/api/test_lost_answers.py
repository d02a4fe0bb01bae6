"""A write whose answer is lost is settled by reading, not read as its opposite.

The plane's ``drop_response`` fault makes the write and closes the connection before answering (what a
client meets when a load balancer or the network drops the connection at the wrong moment); ``drop``
closes it before the request is handled. The SDK's own client (urllib3's retries off, as every SDK
client is built) so that only the SDK's retry layer sees the lost answer. Counts from the plane's request
log, no timing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import Cluster, ClusterConfiguration, RayJob
from rayqueue_sdk.config.models import ManagedClusterConfig
from rayqueue_sdk.errors import ConnectionFailedError, OutcomeUnknownError
from rayqueue_sdk.kube.connection import build_api_client
from rayqueue_sdk.kube.kinds import kind_of
from rayqueue_sdk.kube.session import KubeSession

NS = "lost-answers"


@pytest.fixture(scope="module", autouse=True)
def _namespace(plane: LocalControlPlane) -> None:
    plane.apply(
        [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "default", "namespace": NS},
                "spec": {"clusterQueue": "cq"},
            },
        ]
    )


@pytest.fixture
def sdk(plane: LocalControlPlane) -> Iterator[tuple[Any, str]]:
    """An SDK client (urllib3's retries off) with a User-Agent of its own, and that agent."""
    api = build_api_client(plane.server, token=plane.token, ca_cert_path=str(plane.ca_cert_path))
    agent = f"lost-answers/{uuid.uuid4().hex[:8]}"
    api.user_agent = agent
    plane.api_server.record_requests()
    yield api, agent
    plane.faults.clear()
    api.close()


def _path(plural: str, name: str = "") -> str:
    group = r"/apis/ray\.io/v1" if plural.startswith("ray") else "/api/v1"
    return rf"{group}/namespaces/{NS}/{plural}" + (f"/{name}$" if name else "$")


def _sent(plane: LocalControlPlane, agent: str, method: str, plural: str) -> int:
    """How many ``method`` requests the agent sent to ``plural`` (objects or collection) in ``NS``."""
    return sum(
        1
        for p in plane.api_server.record_requests().paths(agent)
        if p.startswith(f"{method} ") and f"/{plural}" in p
    )


def _stored(plane: LocalControlPlane, plural: str, group: str = "ray.io") -> list[str]:
    return sorted(
        o["metadata"]["name"] for o in plane.store.list(f"{plural}.{group}" if group else plural, NS)
    )


def _cluster(name: str, api: Any) -> Cluster:
    return Cluster(ClusterConfiguration(name=name, namespace=NS, num_workers=0), client=api)


def test_down_after_a_lost_delete_answer_says_it_deleted(
    plane: LocalControlPlane, sdk: tuple[Any, str]
) -> None:
    api, agent = sdk
    cluster = _cluster("lost-del", api)
    cluster.apply()
    lost = plane.faults.inject("DELETE", _path("rayclusters", "lost-del"), drop_response=True)
    assert cluster.down() is True  # its own DELETE removed it; the retry's 404 is the read-back
    assert lost.hits == 1 and _sent(plane, agent, "DELETE", "rayclusters") == 2
    assert "lost-del" not in _stored(plane, "rayclusters")
    assert cluster.down() is False  # now nothing is left to delete


def test_up_after_a_lost_create_answer_returns_the_cluster_it_made(
    plane: LocalControlPlane, sdk: tuple[Any, str]
) -> None:
    api, agent = sdk
    lost = plane.faults.inject("POST", _path("rayclusters"), drop_response=True)
    stored = _cluster("lost-up", api).up()
    assert lost.hits == 1
    assert _sent(plane, agent, "POST", "rayclusters") == 1  # read back, not created twice
    assert _sent(plane, agent, "GET", "rayclusters/lost-up") == 1
    assert (
        stored["metadata"]["uid"] == plane.store.get("rayclusters.ray.io", NS, "lost-up")["metadata"]["uid"]
    )
    assert _cluster("lost-up", api).down() is True


def test_up_whose_create_never_arrived_is_sent_again_after_reading(
    plane: LocalControlPlane, sdk: tuple[Any, str]
) -> None:
    api, agent = sdk
    dropped = plane.faults.inject("POST", _path("rayclusters"), drop=True)  # closed before it is handled
    stored = _cluster("lost-none", api).up()
    assert dropped.hits == 1 and _sent(plane, agent, "POST", "rayclusters") == 2
    assert _sent(plane, agent, "GET", "rayclusters/lost-none") == 1  # read back: not there, so sent again
    assert stored["metadata"]["name"] == "lost-none" and "lost-none" in _stored(plane, "rayclusters")
    assert _cluster("lost-none", api).down() is True


def test_up_whose_lost_create_lands_after_the_read_back_is_still_returned(
    plane: LocalControlPlane, sdk: tuple[Any, str]
) -> None:
    api, agent = sdk
    plane.faults.inject("POST", _path("rayclusters"), drop_response=True)
    # a slow server: the read-back does not see the first create yet (404), the second create meets it
    late = plane.faults.inject("GET", _path("rayclusters", "lost-late"), status=404)
    stored = _cluster("lost-late", api).up()
    assert late.hits == 1 and _sent(plane, agent, "POST", "rayclusters") == 2
    assert _sent(plane, agent, "GET", "rayclusters/lost-late") == 2  # read back again after the 409
    assert (
        stored["metadata"]["uid"] == plane.store.get("rayclusters.ray.io", NS, "lost-late")["metadata"]["uid"]
    )
    assert _cluster("lost-late", api).down() is True


def test_up_that_cannot_settle_says_the_cluster_may_exist_and_apply_settles_it(
    plane: LocalControlPlane, sdk: tuple[Any, str]
) -> None:
    api, _ = sdk
    plane.faults.inject("POST", _path("rayclusters"), drop_response=True)
    refused = plane.faults.inject("GET", _path("rayclusters", "lost-unsure"), status=403)  # no read-back
    with pytest.raises(OutcomeUnknownError) as caught:
        _cluster("lost-unsure", api).up()
    err = caught.value
    assert isinstance(err, ConnectionFailedError)  # caught where a lost connection was caught before
    assert (err.verb, err.resource, err.namespace, err.name) == (
        "create",
        "rayclusters.ray.io",
        NS,
        "lost-unsure",
    )
    assert "may exist" in str(err) and "cluster.apply()" in str(err) and refused.hits == 1
    first = plane.store.get("rayclusters.ray.io", NS, "lost-unsure")  # it was made
    again = _cluster("lost-unsure", api).apply()
    assert again["metadata"]["uid"] == first["metadata"]["uid"]
    assert _cluster("lost-unsure", api).down() is True


def test_apply_after_a_lost_answer_returns_the_cluster_as_stored(
    plane: LocalControlPlane, sdk: tuple[Any, str]
) -> None:
    api, agent = sdk
    lost = plane.faults.inject("PATCH", _path("rayclusters", "lost-apply"), drop_response=True)
    stored = _cluster("lost-apply", api).apply()
    assert lost.hits == 1 and _sent(plane, agent, "PATCH", "rayclusters") == 2  # server-side apply: repeated
    assert (
        stored["metadata"]["uid"]
        == plane.store.get("rayclusters.ray.io", NS, "lost-apply")["metadata"]["uid"]
    )
    assert _stored(plane, "rayclusters").count("lost-apply") == 1
    assert _cluster("lost-apply", api).down() is True


def test_a_lost_merge_patch_is_repeated_and_answers_the_object(
    plane: LocalControlPlane, sdk: tuple[Any, str]
) -> None:
    # scale_to_zero() and resume() write with merge patches of whole values: repeating one is harmless
    api, agent = sdk
    session = KubeSession(api, namespace=NS)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "lost-patch"}}
    session.create(kind_of(cm), cm)
    lost = plane.faults.inject("PATCH", _path("configmaps", "lost-patch"), drop_response=True)
    patched = session.patch(kind_of(cm), name="lost-patch", patch={"metadata": {"annotations": {"a": "b"}}})
    assert lost.hits == 1 and _sent(plane, agent, "PATCH", "configmaps") == 2
    assert patched["metadata"]["annotations"] == {"a": "b"}


def test_a_delete_lost_then_unreachable_is_an_unknown_outcome(
    plane: LocalControlPlane, sdk: tuple[Any, str]
) -> None:
    api, _ = sdk
    session = KubeSession(api, namespace=NS)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "lost-gone"}}
    session.create(kind_of(cm), cm)
    plane.faults.inject("DELETE", _path("configmaps", "lost-gone"), drop_response=True)
    down = plane.faults.inject("DELETE", _path("configmaps", "lost-gone"), drop=True, times=None)
    with pytest.raises(OutcomeUnknownError) as caught:
        session.delete(kind_of(cm), name="lost-gone")
    assert caught.value.verb == "delete" and down.hits >= 1
    assert "lost-gone" not in _stored(plane, "configmaps", group="")  # the first DELETE was made


def test_rayjob_submit_and_delete_after_lost_answers(plane: LocalControlPlane, sdk: tuple[Any, str]) -> None:
    api, agent = sdk
    plane.faults.inject("POST", _path("rayjobs"), drop_response=True)
    job = RayJob(
        job_name="lost-job",
        entrypoint="python x.py",
        cluster_config=ManagedClusterConfig(),
        namespace=NS,
        client=api,
    )
    assert job.submit() == "lost-job"
    assert _sent(plane, agent, "POST", "rayjobs") == 1 and _stored(plane, "rayjobs") == ["lost-job"]
    plane.faults.inject("DELETE", _path("rayjobs", "lost-job"), drop_response=True)
    assert job.delete() is True
    assert _sent(plane, agent, "DELETE", "rayjobs") == 2 and _stored(plane, "rayjobs") == []
