"""Lists (pagination, selectors) and watches (from a resourceVersion, 410, timeout, bookmarks)."""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

import pytest
from kubernetes import watch
from kubernetes.client.rest import ApiException

RAY = ("ray.io", "v1")


def _names(items: list[Any]) -> list[str]:
    return [i["metadata"]["name"] if isinstance(i, dict) else i.metadata.name for i in items]


def test_pagination_with_limit_and_continue(core: Any, namespace: str) -> None:
    for i in range(7):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": f"cm-{i}"}})
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        page = core.list_namespaced_config_map(namespace, limit=3, _continue=token)
        pages += 1
        seen += _names(page.items)
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count == 7 - len(seen)
    assert pages == 3
    assert seen == [f"cm-{i}" for i in range(7)]


def test_pages_are_a_consistent_snapshot(core: Any, namespace: str) -> None:
    for i in range(4):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": f"s-{i}"}})
    first = core.list_namespaced_config_map(namespace, limit=2)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "s-9-late"}})
    rest = core.list_namespaced_config_map(namespace, limit=10, _continue=first.metadata._continue)
    assert _names(first.items) + _names(rest.items) == ["s-0", "s-1", "s-2", "s-3"]


def test_custom_object_pagination(custom: Any, namespace: str, raycluster: Any) -> None:
    for i in range(5):
        custom.create_namespaced_custom_object(*RAY, namespace, "rayclusters", raycluster(f"rc-{i}"))
    page = custom.list_namespaced_custom_object(*RAY, namespace, "rayclusters", limit=2)
    assert _names(page["items"]) == ["rc-0", "rc-1"]
    rest = custom.list_namespaced_custom_object(
        *RAY, namespace, "rayclusters", _continue=page["metadata"]["continue"]
    )
    assert _names(rest["items"]) == ["rc-2", "rc-3", "rc-4"]


def test_bad_continue_token_is_400(core: Any, namespace: str) -> None:
    with pytest.raises(ApiException) as err:
        core.list_namespaced_config_map(namespace, limit=1, _continue="not-a-token")
    assert err.value.status == 400


def test_label_and_field_selectors(core: Any, custom: Any, namespace: str, raycluster: Any) -> None:
    for name, labels in [("a", {"team": "x", "tier": "gpu"}), ("b", {"team": "x"}), ("c", {"team": "y"})]:
        core.create_namespaced_config_map(namespace, {"metadata": {"name": name, "labels": labels}})
    assert _names(core.list_namespaced_config_map(namespace, label_selector="team=x").items) == ["a", "b"]
    assert _names(core.list_namespaced_config_map(namespace, label_selector="team in (y)").items) == ["c"]
    assert _names(core.list_namespaced_config_map(namespace, label_selector="tier").items) == ["a"]
    assert _names(core.list_namespaced_config_map(namespace, label_selector="team!=x").items) == ["c"]
    assert _names(core.list_namespaced_config_map(namespace, field_selector="metadata.name=b").items) == ["b"]
    custom.create_namespaced_custom_object(
        *RAY, namespace, "rayclusters", raycluster("q", labels={"kueue.x-k8s.io/queue-name": "lq"})
    )
    found = custom.list_cluster_custom_object(
        *RAY, "rayclusters", label_selector="kueue.x-k8s.io/queue-name=lq"
    )
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in found["items"]] == [(namespace, "q")]


def test_bad_label_selector_is_400(core: Any, namespace: str) -> None:
    with pytest.raises(ApiException) as err:
        core.list_namespaced_config_map(namespace, label_selector="team in (x")
    assert err.value.status == 400
    assert json.loads(err.value.body)["reason"] == "BadRequest"


def test_watch_from_a_resource_version(core: Any, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "before"}})
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "w1"}})
    core.patch_namespaced_config_map("w1", namespace, {"data": {"k": "v"}})
    core.delete_namespaced_config_map("w1", namespace)
    events = [
        (e["type"], e["object"].metadata.name)
        for e in watch.Watch().stream(
            core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=1
        )
    ]
    assert events == [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")]


def test_watch_without_version_starts_with_the_current_state(
    custom: Any, namespace: str, raycluster: Any
) -> None:
    custom.create_namespaced_custom_object(*RAY, namespace, "rayclusters", raycluster("now"))
    events = list(
        watch.Watch().stream(
            custom.list_namespaced_custom_object, *RAY, namespace, "rayclusters", timeout_seconds=1
        )
    )
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "now")]


def test_watch_sees_a_write_made_while_it_is_open(custom: Any, namespace: str, raycluster: Any) -> None:
    rv = custom.list_namespaced_custom_object(*RAY, namespace, "rayclusters")["metadata"]["resourceVersion"]
    got: queue.Queue[Any] = queue.Queue()
    w = watch.Watch()

    def consume() -> None:
        for event in w.stream(
            custom.list_namespaced_custom_object, *RAY, namespace, "rayclusters", resource_version=rv
        ):
            got.put(event)
            w.stop()

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    custom.create_namespaced_custom_object(*RAY, namespace, "rayclusters", raycluster("live"))
    event = got.get(timeout=30)
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "live")
    thread.join(timeout=30)


def test_too_old_resource_version_is_410(core: Any, namespace: str, cp: Any) -> None:
    from rayqueue_local import LocalControlPlane

    with LocalControlPlane(controllers=[], history=3) as small:
        from kubernetes import client

        api = client.CoreV1Api(small.api_client())
        old = api.list_namespaced_config_map("default").metadata.resource_version
        for i in range(6):
            api.create_namespaced_config_map("default", {"metadata": {"name": f"c{i}"}})
        with pytest.raises(ApiException) as err:
            list(
                watch.Watch().stream(
                    api.list_namespaced_config_map, "default", resource_version=old, timeout_seconds=1
                )
            )
        assert err.value.status == 410
        assert "too old resource version" in err.value.reason
        # the raw stream: HTTP 200 and one ERROR event carrying a 410 Status
        resp = api.list_namespaced_config_map(
            "default", watch=True, resource_version=old, _preload_content=False
        )
        lines = [json.loads(line) for line in resp.data.decode().splitlines() if line]
        assert resp.status == 200
        assert [e["type"] for e in lines] == ["ERROR"]
        assert lines[0]["object"]["code"] == 410 and lines[0]["object"]["reason"] == "Expired"
        # ... and the server keeps serving
        assert len(api.list_namespaced_config_map("default").items) == 6


def test_watch_bookmarks(core: Any, namespace: str) -> None:
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    resp = core.list_namespaced_config_map(
        namespace,
        watch=True,
        resource_version=rv,
        allow_watch_bookmarks=True,
        timeout_seconds=1,
        _preload_content=False,
    )
    events = [json.loads(line) for line in resp.data.decode().splitlines() if line]
    assert events and events[-1]["type"] == "BOOKMARK"
    assert int(events[-1]["object"]["metadata"]["resourceVersion"]) >= int(rv)


def test_watch_of_one_object_by_field_selector(core: Any, namespace: str) -> None:
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "one"}})
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "two"}})
    events = watch.Watch().stream(
        core.list_namespaced_config_map,
        namespace,
        resource_version=rv,
        field_selector="metadata.name=two",
        timeout_seconds=1,
    )
    assert [e["object"].metadata.name for e in events] == ["two"]


def test_watch_through_the_dynamic_client(dyn: Any, namespace: str, raycluster: Any) -> None:
    api = dyn.resources.get(api_version="ray.io/v1", kind="RayCluster")
    rv = api.get(namespace=namespace).metadata.resourceVersion
    api.create(body=raycluster("dw"), namespace=namespace)
    events = list(api.watch(namespace=namespace, resource_version=rv, timeout=1))
    assert [(e["type"], e["object"].metadata.name) for e in events] == [("ADDED", "dw")]


def test_a_watch_whose_client_went_away_is_released(cp: Any, raw: Any, namespace: str) -> None:
    import time

    before = cp.faults.open_watches
    raw.conn.request(
        "GET",
        f"/api/v1/namespaces/{namespace}/configmaps?watch=true",
        headers={"Authorization": f"Bearer {cp.token}"},
    )
    resp = raw.conn.getresponse()
    assert resp.status == 200
    deadline = time.monotonic() + 30
    while cp.faults.open_watches == before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert cp.faults.open_watches == before + 1
    raw.conn.sock.close()  # the client goes away without a word
    raw.conn.close()
    while cp.faults.open_watches > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cp.faults.open_watches == before  # the server noticed and freed the stream


def test_lists_never_serve_a_stale_or_wrong_version_object(custom: Any) -> None:
    group = "kueue.x-k8s.io"
    cq = {
        "apiVersion": f"{group}/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cache-cq"},
        "spec": {"cohortName": "one", "namespaceSelector": {}, "resourceGroups": []},
    }
    custom.create_cluster_custom_object(group, "v1beta2", "clusterqueues", cq)

    def spec(version: str) -> dict[str, Any]:
        items = custom.list_cluster_custom_object(group, version, "clusterqueues")["items"]
        return next(i["spec"] for i in items if i["metadata"]["name"] == "cache-cq")

    for _ in range(2):  # the second round is served from the serialisation cache
        assert spec("v1beta2")["cohortName"] == "one" and spec("v1beta1")["cohort"] == "one"
    custom.patch_cluster_custom_object(
        group, "v1beta2", "clusterqueues", "cache-cq", {"spec": {"cohortName": "two"}}
    )
    assert spec("v1beta2")["cohortName"] == "two" and spec("v1beta1")["cohort"] == "two"
    custom.delete_cluster_custom_object(group, "v1beta2", "clusterqueues", "cache-cq")
