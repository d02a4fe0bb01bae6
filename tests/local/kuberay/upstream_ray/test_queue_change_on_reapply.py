"""A re-apply that moves an admitted RayCluster to another queue fails before anything is written.

Kueue v0.19.2 keeps ``kueue.x-k8s.io/queue-name`` immutable while the job is not suspended
(pkg/controller/jobframework/validation.go ``validateUpdateForQueueName``; the corpus case
kq-rc-update-queue-changed-running shows the plane's 403). The SDK says so first, as a ConfigError that
names ``local_queue``, says why and what to do; only the preflight's reads reach the server.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client as k8s

from rayqueue_local import LocalControlPlane
from rayqueue_sdk import Cluster, ClusterConfiguration
from rayqueue_sdk.errors import ConfigError

QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: rq-flavor}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {ns}-cq}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "pods"]
    flavors:
    - name: rq-flavor
      resources:
      - {{name: cpu, nominalQuota: 100}}
      - {{name: memory, nominalQuota: 1Ti}}
      - {{name: pods, nominalQuota: 100}}
---
apiVersion: v1
kind: Namespace
metadata: {{name: {ns}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: {ns}, name: team-a}}
spec: {{clusterQueue: {ns}-cq}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: {ns}, name: team-b}}
spec: {{clusterQueue: {ns}-cq}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: {ns}, name: held}}
spec: {{clusterQueue: {ns}-cq, stopPolicy: Hold}}
"""


def _wait(fetch: Callable[[], Any], done: Callable[[Any], bool], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    value = fetch()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.1)
        value = fetch()
    return value


def _config(ns: str, queue: str | None) -> ClusterConfiguration:
    return ClusterConfiguration(
        name="ws", namespace=ns, local_queue=queue, num_workers=1, head_cpu_requests=1, worker_cpu_requests=1
    )


@pytest.fixture
def ns(ray_api_cp: LocalControlPlane) -> str:
    name = f"rq-{uuid.uuid4().hex[:6]}"
    ray_api_cp.apply(QUEUES.format(ns=name))
    return name


def _stored(api: Any, ns: str) -> dict[str, Any]:
    return k8s.CustomObjectsApi(api).get_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", "ws")


@pytest.mark.parametrize("new_queue", ["team-b", None])
def test_moving_an_admitted_cluster_is_refused_before_any_write(
    ray_api_cp: LocalControlPlane, ns: str, new_queue: str | None
) -> None:
    api = ray_api_cp.api_client()
    Cluster(_config(ns, "team-a"), client=api).apply()
    admitted = _wait(lambda: _stored(api, ns), lambda o: o["spec"].get("suspend") is False)
    assert admitted["spec"]["suspend"] is False
    log = ray_api_cp.api_server.record_requests()
    since = time.monotonic()
    with pytest.raises(ConfigError) as caught:
        Cluster(_config(ns, new_queue), client=api).apply()
    writes = [p for p in log.paths(since=since) if not p.startswith(("GET ", "WATCH "))]
    assert writes == []
    assert log.count(since=since) >= 1  # the preflight read the cluster: that is how it knew
    err = caught.value
    assert err.field == "local_queue"
    text = str(err)
    assert "cannot change while the cluster is admitted" in text and "'team-a'" in text
    assert "local_queue='team-a'" in text and "down()" in text
    after = _stored(api, ns)["metadata"]
    assert after["generation"] == admitted["metadata"]["generation"]
    assert after["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"


def test_the_same_queue_and_a_suspended_cluster_are_applied(ray_api_cp: LocalControlPlane, ns: str) -> None:
    api = ray_api_cp.api_client()
    Cluster(_config(ns, "held"), client=api).apply()  # a stopped queue: the cluster stays suspended
    held = _wait(lambda: _stored(api, ns), lambda o: o["spec"].get("suspend") is True)
    assert held["spec"]["suspend"] is True
    Cluster(_config(ns, "team-a"), client=api).apply()  # suspended: Kueue lets the queue change
    moved = _wait(lambda: _stored(api, ns), lambda o: o["spec"].get("suspend") is False)
    assert moved["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    assert moved["spec"]["suspend"] is False
    Cluster(_config(ns, "team-a"), client=api).apply()  # admitted, same queue: a plain re-apply
