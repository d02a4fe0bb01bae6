"""The worker-group limit follows the Kueue the cluster serves (7 groups in v0.17, 9 in v0.18, 17 in v0.19).

The preflight reads the served Workload schema's pod-set limit only for a cluster of more than 7 worker
groups (every release takes 7), and ``decide`` refuses what that release's webhook would, naming it.
"""

from __future__ import annotations

import time
import uuid

import pytest

from rayqueue_local import LocalControlPlane
from rayqueue_sdk.cluster.preflight import Facts, decide, fetch_facts
from rayqueue_sdk.config.models import ClusterConfiguration, WorkerGroup
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.raycluster import build_raycluster
from rayqueue_sdk.queues.local_queues import queue_info


def _manifest(groups: int) -> dict:
    config = ClusterConfiguration(
        name="wide", local_queue="q", worker_groups=[WorkerGroup(name=f"g{i}") for i in range(groups)]
    )
    return build_raycluster(config)


def _facts(max_pod_sets: int | None) -> Facts:
    queue = queue_info({"metadata": {"name": "q", "namespace": "ds"}})
    return Facts("ds", queues=(queue,), max_pod_sets=max_pod_sets)


@pytest.mark.parametrize(
    ("max_pod_sets", "groups", "release"),
    [(8, 8, "v0.17 or earlier"), (10, 10, "v0.18"), (18, 17, None), (10, 9, None), (None, 17, None)],
)
def test_the_served_release_decides(max_pod_sets: int | None, groups: int, release: str | None) -> None:
    manifest = _manifest(groups)
    if release is None:
        assert decide(manifest, _facts(max_pod_sets))["metadata"]["namespace"] == "ds"
        return
    with pytest.raises(ConfigError) as caught:
        decide(manifest, _facts(max_pod_sets))
    assert caught.value.field == "worker_groups" and release in str(caught.value)
    assert f"at most {max_pod_sets - 1} worker groups" in str(caught.value)


def test_the_preflight_reads_the_limit_only_when_it_matters(ray_api_cp: LocalControlPlane) -> None:
    ns = f"pl-{uuid.uuid4().hex[:6]}"
    ray_api_cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    session = KubeSession.of(ray_api_cp.api_client(), namespace=ns)
    log = ray_api_cp.api_server.record_requests()
    since = time.monotonic()
    narrow = fetch_facts(session, name="c", namespace=ns, worker_groups=7)
    assert narrow.max_pod_sets is None
    assert not any("/openapi/" in p for p in log.paths(since=since))
    wide = fetch_facts(session, name="c", namespace=ns, worker_groups=9)
    assert wide.max_pod_sets == 18  # the plane serves Kueue v0.19's Workload
    assert any(p.startswith("GET /openapi/v3/apis/kueue.x-k8s.io/") for p in log.paths(since=since))
