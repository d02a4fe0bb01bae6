"""The seed scenarios against a real LocalControlPlane, with raw manifests through the kubernetes client.

Only the Kueue controller runs (KubeRay's is another component), so the tests play KubeRay's part
where a scenario needs it: a RayJob's ``jobDeploymentStatus`` is set to ``Complete`` by hand.
Waits poll the API with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from kubernetes import client

from rayqueue_local import LocalControlPlane
from rayqueue_local.apimachinery.time import parse_rfc3339
from rayqueue_local.controllers.kueue.controller import KueueController

KUEUE, RAY = "kueue.x-k8s.io", "ray.io"
T = TypeVar("T")


def start_plane(crd_dir: Path, **options: Any) -> LocalControlPlane:
    """A control plane running only the Kueue controller (with a short resync)."""
    plane = LocalControlPlane(crd_dir=crd_dir, controllers=[], **options)
    plane.start()
    controller = KueueController(plane)
    controller.resync_seconds = 0.5
    controller.start(plane.store)
    plane.controllers.append(controller)
    return plane


@pytest.fixture(scope="module")
def cp(crd_dir: Path) -> Iterator[LocalControlPlane]:
    plane = start_plane(crd_dir, workload_scale=True)  # seed 000's Kueue build serves workloads/scale
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="module")
def api(cp: LocalControlPlane) -> Any:
    return cp.api_client()


@pytest.fixture(scope="module")
def co(api: Any) -> Any:
    return client.CustomObjectsApi(api)


@pytest.fixture(scope="module")
def core(api: Any) -> Any:
    return client.CoreV1Api(api)


def eventually(probe: Callable[[], T], what: str, timeout: float = 15.0) -> T:
    """Poll ``probe`` until it returns something truthy; fail with the last value at the deadline."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; last value: {last!r}")


def create(co: Any, core: Any, doc: dict[str, Any]) -> dict[str, Any]:
    """Create one manifest through the typed or the custom-objects API (namespaces, flavors and
    priority classes that an earlier scenario of this module created are reused)."""
    try:
        return _create(co, core, doc)
    except client.exceptions.ApiException as exc:
        if exc.status != 409 or doc["kind"] not in ("Namespace", "ResourceFlavor", "WorkloadPriorityClass"):
            raise
        return doc


def _create(co: Any, core: Any, doc: dict[str, Any]) -> dict[str, Any]:
    group, _, version = doc["apiVersion"].rpartition("/")
    kind = doc["kind"]
    if kind == "Namespace":
        return core.create_namespace(doc).to_dict()  # type: ignore[no-any-return]
    plural = {
        "ResourceFlavor": "resourceflavors",
        "ClusterQueue": "clusterqueues",
        "LocalQueue": "localqueues",
        "WorkloadPriorityClass": "workloadpriorityclasses",
        "RayCluster": "rayclusters",
        "RayJob": "rayjobs",
    }[kind]
    namespace = doc["metadata"].get("namespace")
    if namespace:
        return co.create_namespaced_custom_object(group, version, namespace, plural, doc)  # type: ignore[no-any-return]
    return co.create_cluster_custom_object(group, version, plural, doc)  # type: ignore[no-any-return]


def workload_of(co: Any, namespace: str, uid: str) -> dict[str, Any] | None:
    items = co.list_namespaced_custom_object(
        KUEUE, "v1beta2", namespace, "workloads", label_selector=f"kueue.x-k8s.io/job-uid={uid}"
    )["items"]
    return items[0] if items else None


def condition(obj: dict[str, Any] | None, ctype: str) -> dict[str, Any]:
    for c in ((obj or {}).get("status") or {}).get("conditions") or ():
        if c["type"] == ctype:
            return dict(c)
    return {}


def admitted(co: Any, namespace: str, uid: str) -> bool:
    return condition(workload_of(co, namespace, uid), "Admitted").get("status") == "True"


def suspended(co: Any, namespace: str, name: str, plural: str = "rayclusters") -> bool:
    return bool(co.get_namespaced_custom_object(RAY, "v1", namespace, plural, name)["spec"].get("suspend"))


def get_json(api: Any, cp: LocalControlPlane, path: str, token: str | None = None) -> tuple[int, Any]:
    response = api.call_api(
        "GET", cp.server + path, header_params={"Authorization": f"Bearer {token or cp.token}"}
    )
    response.read()
    return response.status, json.loads(response.data)


def gpu_node(cpu: int = 2, memory: str = "8Gi", gpus: int = 1) -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": memory, "nvidia.com/gpu": gpus}
    return {
        "name": "ray",
        "image": "quay.io/rhoai/ray:2.35.0",
        "resources": {"limits": resources, "requests": resources},
    }


def raycluster(
    name: str,
    namespace: str,
    queue: str,
    head: dict[str, Any],
    workers: int,
    worker: dict[str, Any],
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"kueue.x-k8s.io/queue-name": queue, **(labels or {})},
        },
        "spec": {
            "rayVersion": "2.35.0",
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [head]}}},
            "workerGroupSpecs": [
                {
                    "groupName": f"small-group-{name}",
                    "replicas": workers,
                    "minReplicas": workers,
                    "maxReplicas": workers,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [worker]}},
                }
            ],
        },
    }


# -- seed 000 ---------------------------------------------------------------------------------
SEED_000_ADMIN = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: "cluster-queue"
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "pods", "nvidia.com/gpu"]
    flavors:
    - name: "default-flavor"
      resources:
      - name: "cpu"
        nominalQuota: 9
      - name: "memory"
        nominalQuota: 36Gi
      - name: "pods"
        nominalQuota: 5
      - name: "nvidia.com/gpu"
        nominalQuota: 2
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default-flavor
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: demo
  name: user-queue
spec:
  clusterQueue: cluster-queue
"""


def test_seed_000_two_gpu_queue_second_cluster_waits_then_runs(
    cp: LocalControlPlane, api: Any, co: Any, core: Any
) -> None:
    create(co, core, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}})
    for doc in yaml.safe_load_all(SEED_000_ADMIN):
        create(co, core, doc)
    node = gpu_node()
    first = create(co, core, raycluster("first-raycluster", "demo", "user-queue", node, 1, node))
    assert first["spec"]["suspend"] is True  # Kueue's webhook suspends on create
    eventually(lambda: admitted(co, "demo", first["metadata"]["uid"]), "the first cluster's admission")
    second = create(co, core, raycluster("second-raycluster", "demo", "user-queue", node, 1, node))
    eventually(lambda: not suspended(co, "demo", "first-raycluster"), "the first cluster to be unsuspended")

    def pending_message() -> str:
        wl = workload_of(co, "demo", second["metadata"]["uid"])
        return str(condition(wl, "QuotaReserved").get("message", ""))

    message = eventually(
        lambda: pending_message().startswith("couldn't") and pending_message(), "Kueue's message"
    )
    assert message.startswith(
        "couldn't assign flavors to pod set head: insufficient unused quota for nvidia.com/gpu in flavor "
        "default-flavor, 1 more needed"
    )
    assert suspended(co, "demo", "second-raycluster")
    requests = (workload_of(co, "demo", second["metadata"]["uid"]) or {})["status"]["resourceRequests"]
    assert requests[0] == {"name": "head", "resources": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"}}
    status, body = get_json(
        api,
        cp,
        "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/demo/localqueues/user-queue/pendingworkloads",
    )
    assert status == 200 and body["kind"] == "PendingWorkloadsSummary"
    [item] = body["items"]
    assert item["metadata"]["ownerReferences"][0]["name"] == "second-raycluster"
    assert (item["positionInClusterQueue"], item["positionInLocalQueue"], item["localQueueName"]) == (
        0,
        0,
        "user-queue",
    )
    cq_status = co.get_cluster_custom_object(KUEUE, "v1beta2", "clusterqueues", "cluster-queue")["status"]
    assert (cq_status["pendingWorkloads"], cq_status["admittedWorkloads"]) == (1, 1)

    groups = {g.name: g for g in client.ApisApi(api).get_api_versions().groups}
    assert groups["visibility.kueue.x-k8s.io"].preferred_version.version == "v1beta2"
    resources = (
        client.CustomObjectsApi(api).get_api_resources("visibility.kueue.x-k8s.io", "v1beta2").resources
    )
    assert {"clusterqueues/pendingworkloads", "localqueues/pendingworkloads"} <= {r.name for r in resources}

    # A data scientist may read their LocalQueue's pending workloads, not the ClusterQueue's.
    token = cp.add_user("alice", ["demo"])
    assert (
        get_json(
            api,
            cp,
            "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/demo/localqueues/user-queue/pendingworkloads",
            token,
        )[0]
        == 200
    )
    assert (
        get_json(
            api,
            cp,
            "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cluster-queue/pendingworkloads",
            token,
        )[0]
        == 403
    )

    # Deactivating the first Workload releases its quota; the second is admitted and unsuspended.
    wl = workload_of(co, "demo", first["metadata"]["uid"])
    assert wl is not None
    co.patch_namespaced_custom_object(
        KUEUE, "v1beta2", "demo", "workloads", wl["metadata"]["name"], {"spec": {"active": False}}
    )
    eventually(lambda: admitted(co, "demo", second["metadata"]["uid"]), "the second cluster's admission")
    eventually(lambda: not suspended(co, "demo", "second-raycluster"), "the second cluster to be unsuspended")
    assert suspended(co, "demo", "first-raycluster")
    evicted = condition(workload_of(co, "demo", first["metadata"]["uid"]), "Evicted")
    assert (evicted["status"], evicted["reason"], evicted["message"]) == (
        "True",
        "Deactivated",
        "The workload is deactivated",
    )

    # Reactivation requeues it (Requeued=True, Reactivated); it waits behind the running one.
    co.patch_namespaced_custom_object(
        KUEUE, "v1beta2", "demo", "workloads", wl["metadata"]["name"], {"spec": {"active": True}}
    )
    requeued = eventually(
        lambda: (
            condition(workload_of(co, "demo", first["metadata"]["uid"]), "Requeued").get("reason")
            == "Reactivated"
            and condition(workload_of(co, "demo", first["metadata"]["uid"]), "Requeued")
        ),
        "the Reactivated condition",
    )
    assert requeued["status"] == "True" and requeued["message"] == "The workload was reactivated"


# -- seed 004 ---------------------------------------------------------------------------------
SEED_004 = """
apiVersion: v1
kind: Namespace
metadata:
  labels:
    kubernetes.io-metadata.name: team-a
    opendatahub.io/dashboard: "true"
    kueue.openshift.io/managed: "true"
  name: team-a
---
apiVersion: v1
kind: Namespace
metadata:
  labels:
    kubernetes.io/metadata.name: team-b
    opendatahub.io/dashboard: "true"
    kueue.openshift.io/managed: "true"
  name: team-b
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default-flavor
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: gpu-flavor
spec:
  nodeLabels:
    nvidia.com/gpu.present: "true"
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: "shared-cq"
spec:
  preemption:
    reclaimWithinCohort: Any
    borrowWithinCohort:
      policy: LowerPriority
      maxPriorityThreshold: 100
    withinClusterQueue: Never
  namespaceSelector: {} # match all.
  cohort: "team-ab"
  resourceGroups:
  - coveredResources:
    - cpu
    - memory
    flavors:
    - name: "default-flavor"
      resources:
      - name: "cpu"
        nominalQuota: 6
      - name: "memory"
        nominalQuota: 16Gi
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a-cq
spec:
  preemption:
    reclaimWithinCohort: Any
    borrowWithinCohort:
      policy: LowerPriority
      maxPriorityThreshold: 100
    withinClusterQueue: LowerPriority
  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: team-a
  queueingStrategy: BestEffortFIFO
  cohort: team-ab
  resourceGroups:
  - coveredResources:
    - cpu
    - memory
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 0
      - name: memory
        nominalQuota: 0
  - coveredResources:
    - nvidia.com/gpu
    flavors:
    - name: gpu-flavor
      resources:
      - name: nvidia.com/gpu
        nominalQuota: "1"
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-b-cq
spec:
  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: team-b
  queueingStrategy: BestEffortFIFO
  cohort: team-ab
  resourceGroups:
  - coveredResources:
    - nvidia.com/gpu
    flavors:
    - name: gpu-flavor
      resources:
      - name: nvidia.com/gpu
        nominalQuota: "0"
        borrowingLimit: "0"
  - coveredResources:
    - cpu
    - memory
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 0
      - name: memory
        nominalQuota: 0
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: local-queue
  namespace: team-a
spec:
  clusterQueue: team-a-cq
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: local-queue
  namespace: team-b
spec:
  clusterQueue: team-b-cq
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: prod-priority
value: 1000
description: "Priority class for prod jobs"
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: dev-priority
value: 100
description: "Priority class for development jobs"
"""


def seed_004_cluster(name: str, namespace: str, priority: str, worker_gpu: bool) -> dict[str, Any]:
    small = {"limits": {"cpu": "2", "memory": "3G"}, "requests": {"cpu": "2", "memory": "3G"}}
    gpu = {
        "limits": {**small["limits"], "nvidia.com/gpu": "1"},
        "requests": {**small["requests"], "nvidia.com/gpu": "1"},
    }
    image = "quay.io/project-codeflare/ray:2.20.0-py39-cu118"
    worker: dict[str, Any] = {
        "containers": [
            {"name": "machine-learning", "image": image, "resources": gpu if worker_gpu else small}
        ]
    }
    if worker_gpu:
        worker["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {
            "labels": {"kueue.x-k8s.io/queue-name": "local-queue", "kueue.x-k8s.io/priority-class": priority},
            "name": name,
            "namespace": namespace,
        },
        "spec": {
            "rayVersion": "2.7.0",
            "headGroupSpec": {
                "template": {
                    "spec": {"containers": [{"name": "ray-head", "image": image, "resources": small}]}
                },
                "rayStartParams": {},
            },
            "workerGroupSpecs": [
                {
                    "groupName": "worker-group",
                    "replicas": 1,
                    "minReplicas": 1,
                    "maxReplicas": 1,
                    "template": {"spec": worker},
                    "rayStartParams": {},
                }
            ],
        },
    }


def test_seed_004_prod_priority_cluster_preempts_the_borrowing_dev_cluster(
    cp: LocalControlPlane, co: Any, core: Any
) -> None:
    for doc in yaml.safe_load_all(SEED_004):
        create(co, core, doc)
    dev = create(co, core, seed_004_cluster("raycluster-dev", "team-b", "dev-priority", worker_gpu=False))
    eventually(
        lambda: admitted(co, "team-b", dev["metadata"]["uid"]), "team-b's admission (borrowing shared CPUs)"
    )
    cq = eventually(
        lambda: (
            (
                co.get_cluster_custom_object(KUEUE, "v1beta2", "clusterqueues", "team-b-cq").get("status")
                or {}
            ).get("admittedWorkloads")
            == 1
            and co.get_cluster_custom_object(KUEUE, "v1beta2", "clusterqueues", "team-b-cq")
        ),
        "team-b-cq status",
    )
    cpu = next(r for r in cq["status"]["flavorsUsage"][1]["resources"] if r["name"] == "cpu")
    assert cpu == {"name": "cpu", "total": "4", "borrowed": "4"}

    prod = create(co, core, seed_004_cluster("raycluster-prod", "team-a", "prod-priority", worker_gpu=True))
    eventually(lambda: admitted(co, "team-a", prod["metadata"]["uid"]), "team-a's admission")
    eventually(lambda: suspended(co, "team-b", "raycluster-dev"), "the dev cluster to be suspended")
    eventually(lambda: not suspended(co, "team-a", "raycluster-prod"), "the prod cluster to be unsuspended")

    prod_wl = workload_of(co, "team-a", prod["metadata"]["uid"])
    assert prod_wl is not None
    expected = (
        f"Preempted to accommodate a workload (UID: {prod_wl['metadata']['uid']}, "
        f"JobUID: {prod['metadata']['uid']}) due to reclamation within the cohort while borrowing"
    )
    dev_wl = workload_of(co, "team-b", dev["metadata"]["uid"])
    preempted = condition(dev_wl, "Preempted")
    assert preempted["status"] == "True" and preempted["reason"] == "InCohortReclaimWhileBorrowing"
    assert preempted["message"].startswith(expected)
    assert condition(dev_wl, "Evicted")["reason"] == "Preempted"
    assert condition(dev_wl, "Requeued")["status"] == "True"

    events = core.list_namespaced_event("team-b").items
    preempted_events = [e for e in events if e.reason == "Preempted" and e.involved_object.kind == "Workload"]
    assert (
        preempted_events
        and preempted_events[0].type == "Normal"
        and preempted_events[0].message.startswith(expected)
    )
    assert preempted_events[0].source.component == "kueue-admission"

    worker = co.get_namespaced_custom_object(RAY, "v1", "team-a", "rayclusters", "raycluster-prod")["spec"][
        "workerGroupSpecs"
    ][0]
    assert worker["template"]["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}

    def dev_message() -> str:
        return str(
            condition(workload_of(co, "team-b", dev["metadata"]["uid"]), "QuotaReserved").get("message")
        )

    wanted = (
        "couldn't assign flavors to pod set worker-group: insufficient unused quota for cpu in flavor "
        "default-flavor, 2 more needed"
    )
    eventually(lambda: dev_message() == wanted, "the dev Workload's pending message")


# -- seed 001 ---------------------------------------------------------------------------------
def gpu_queue(
    name: str, gpus: int, preemption: dict[str, Any] | None = None, cohort: str = "all-gpus"
) -> dict[str, Any]:
    resources = [
        {"name": "cpu", "nominalQuota": 200},
        {"name": "memory", "nominalQuota": "2000Gi"},
        {"name": "nvidia.com/gpu", "nominalQuota": gpus},
    ]
    spec: dict[str, Any] = {
        "namespaceSelector": {},
        "cohortName": cohort,
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                "flavors": [{"name": "a100", "resources": resources}],
            }
        ],
    }
    if preemption:
        spec["preemption"] = preemption
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": spec,
    }


def test_seed_001_production_job_reclaims_and_rd_clusters_return(co: Any, core: Any) -> None:
    admin = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "rd"}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}},
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "a100"},
        },
        gpu_queue(
            "cq-production",
            12,
            {"reclaimWithinCohort": "LowerPriority", "withinClusterQueue": "LowerPriority"},
        ),
        gpu_queue("cq-development", 8),
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "lq-prod-batch", "namespace": "prod"},
            "spec": {"clusterQueue": "cq-production"},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "lq-rd-workspace", "namespace": "rd"},
            "spec": {"clusterQueue": "cq-development"},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "prod-priority"},
            "value": 1000,
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "dev-priority"},
            "value": 100,
        },
    ]
    for doc in admin:
        create(co, core, doc)
    head = gpu_node(cpu=1, memory="4Gi", gpus=0)
    rd = {}
    for name, workers in (("ws-1", 2), ("ws-2", 4), ("ws-3", 6)):  # 2 + 4 + 6 = 12 GPUs: 8 own, 4 borrowed
        body = raycluster(
            name,
            "rd",
            "lq-rd-workspace",
            head,
            workers,
            gpu_node(),
            {"kueue.x-k8s.io/priority-class": "dev-priority"},
        )
        rd[name] = create(co, core, body)["metadata"]["uid"]
        eventually(lambda uid=rd[name]: admitted(co, "rd", uid), f"{name}'s admission")

    cluster_spec = raycluster("x", "prod", "lq-prod-batch", head, 6, gpu_node(gpus=2))["spec"]
    job = create(
        co,
        core,
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {
                "name": "final-training-run",
                "namespace": "prod",
                "labels": {
                    "kueue.x-k8s.io/queue-name": "lq-prod-batch",
                    "kueue.x-k8s.io/priority-class": "prod-priority",
                },
            },
            "spec": {
                "entrypoint": "python train_model_full.py",
                "shutdownAfterJobFinishes": True,
                "rayClusterSpec": cluster_spec,
            },
        },
    )
    assert job["spec"]["suspend"] is True
    eventually(lambda: admitted(co, "prod", job["metadata"]["uid"]), "the production job's admission")
    eventually(
        lambda: not suspended(co, "prod", "final-training-run", "rayjobs"), "the production job to start"
    )
    preempted = [
        n
        for n, uid in rd.items()
        if condition(workload_of(co, "rd", uid), "Preempted").get("status") == "True"
    ]
    assert preempted, "reclaiming 4 GPUs must preempt at least one R&D cluster"
    for name in preempted:
        wl = workload_of(co, "rd", rd[name])
        assert condition(wl, "Preempted")["reason"] == "InCohortReclamation"
        assert suspended(co, "rd", name)
    cq = co.get_cluster_custom_object(KUEUE, "v1beta2", "clusterqueues", "cq-development")["status"]
    gpu = next(r for r in cq["flavorsUsage"][0]["resources"] if r["name"] == "nvidia.com/gpu")
    assert int(gpu["total"]) <= 8 and gpu["borrowed"] == "0"

    # KubeRay's part: the job completes; Kueue finishes its Workload and the R&D clusters come back.
    co.patch_namespaced_custom_object_status(
        RAY,
        "v1",
        "prod",
        "rayjobs",
        "final-training-run",
        {"status": {"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED"}},
    )
    finished = eventually(
        lambda: (
            condition(workload_of(co, "prod", job["metadata"]["uid"]), "Finished").get("status") == "True"
            and condition(workload_of(co, "prod", job["metadata"]["uid"]), "Finished")
        ),
        "the production Workload to finish",
    )
    assert finished["reason"] == "Succeeded"
    for name in preempted:
        eventually(lambda uid=rd[name]: admitted(co, "rd", uid), f"{name} to be admitted again")
        eventually(lambda n=name: not suspended(co, "rd", n), f"{name} to be unsuspended")
        # Readmission resets the eviction as upstream does: Evicted=False, "Previously: <message>".
        wl = workload_of(co, "rd", rd[name])
        evicted, was = condition(wl, "Evicted"), condition(wl, "Preempted")
        assert (evicted["status"], evicted["reason"]) == ("False", "QuotaReserved")
        assert evicted["message"].startswith("Previously: Preempted to accommodate a workload (UID: ")
        assert (was["status"], was["reason"]) == ("False", "QuotaReserved")


def test_a_workload_is_garbage_collected_with_its_cluster(co: Any, core: Any) -> None:
    create(co, core, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gc"}})
    create(
        co,
        core,
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "gc"},
            "spec": {"clusterQueue": "cluster-queue"},
        },
    )
    node = gpu_node()
    rc = create(co, core, raycluster("short-lived", "gc", "lq", node, 0, node))
    eventually(lambda: workload_of(co, "gc", rc["metadata"]["uid"]), "the Workload")
    co.delete_namespaced_custom_object(RAY, "v1", "gc", "rayclusters", "short-lived")
    eventually(lambda: workload_of(co, "gc", rc["metadata"]["uid"]) is None, "the Workload to be deleted")


def test_workload_scale_subresource_deactivates_and_reactivates(co: Any, core: Any) -> None:
    """Seed 000's Kueue build: ``workloads/scale`` replicas 1 <=> ``spec.active`` (workload_scale)."""
    for doc in [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "scaled"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "a100"}},
        gpu_queue("cq-scaled", 4, cohort="scaled"),
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "scaled"},
            "spec": {"clusterQueue": "cq-scaled"},
        },
    ]:
        create(co, core, doc)
    node = gpu_node()
    rc = create(co, core, raycluster("scaled", "scaled", "lq", node, 1, node))
    uid = rc["metadata"]["uid"]
    eventually(lambda: admitted(co, "scaled", uid), "admission")
    name = (workload_of(co, "scaled", uid) or {})["metadata"]["name"]
    assert (
        co.get_namespaced_custom_object_scale(KUEUE, "v1beta2", "scaled", "workloads", name)["spec"][
            "replicas"
        ]
        == 1
    )
    co.patch_namespaced_custom_object_scale(
        KUEUE, "v1beta2", "scaled", "workloads", name, {"spec": {"replicas": 0}}
    )
    eventually(lambda: suspended(co, "scaled", "scaled"), "the cluster to be suspended")
    evicted = eventually(
        lambda: condition(workload_of(co, "scaled", uid), "Evicted"), "the Evicted condition"
    )
    assert evicted["reason"] == "Deactivated" and not admitted(co, "scaled", uid)
    co.patch_namespaced_custom_object_scale(
        KUEUE, "v1beta2", "scaled", "workloads", name, {"spec": {"replicas": 1}}
    )
    eventually(lambda: admitted(co, "scaled", uid), "re-admission after scaling back to 1")
    eventually(lambda: not suspended(co, "scaled", "scaled"), "the cluster to run again")


def test_maximum_execution_time_deactivates_the_workload(co: Any, core: Any) -> None:
    for doc in [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "timed"}},
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "default-flavor"},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "cq-timed"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                        "flavors": [
                            {
                                "name": "default-flavor",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": 8},
                                    {"name": "memory", "nominalQuota": "64Gi"},
                                    {"name": "nvidia.com/gpu", "nominalQuota": 4},
                                ],
                            }
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "timed"},
            "spec": {"clusterQueue": "cq-timed"},
        },
    ]:
        create(co, core, doc)
    node = gpu_node()
    labels = {"kueue.x-k8s.io/max-exec-time-seconds": "1"}
    rc = create(co, core, raycluster("short", "timed", "lq", node, 0, node, labels))
    uid = rc["metadata"]["uid"]
    wl = eventually(lambda: workload_of(co, "timed", uid), "the Workload")
    assert wl["spec"]["maximumExecutionTimeSeconds"] == 1
    eventually(lambda: admitted(co, "timed", uid), "admission")
    evicted = eventually(
        lambda: condition(workload_of(co, "timed", uid), "Evicted"), "the eviction", timeout=20
    )
    assert evicted["reason"] == "DeactivatedDueToMaximumExecutionTimeExceeded"
    assert evicted["message"] == "The workload is deactivated due to exceeding the maximum execution time"
    assert (workload_of(co, "timed", uid) or {})["spec"]["active"] is False
    eventually(lambda: suspended(co, "timed", "short"), "the cluster to be suspended")
    events = [
        e for e in core.list_namespaced_event("timed").items if e.reason == "MaximumExecutionTimeExceeded"
    ]
    assert (
        events
        and events[0].type == "Warning"
        and events[0].message == "The maximum execution time (1s) exceeded"
    )


def test_changing_a_running_clusters_workers_replaces_its_workload(co: Any, core: Any) -> None:
    for doc in [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "resized"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "a100"}},
        gpu_queue("cq-resized", 8, cohort="resized"),
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "resized"},
            "spec": {"clusterQueue": "cq-resized"},
        },
    ]:
        create(co, core, doc)
    node = gpu_node()
    rc = create(co, core, raycluster("grows", "resized", "lq", node, 1, node))
    uid = rc["metadata"]["uid"]
    eventually(lambda: admitted(co, "resized", uid), "admission")
    eventually(lambda: not suspended(co, "resized", "grows"), "the cluster to run")
    first = (workload_of(co, "resized", uid) or {})["metadata"]["uid"]
    groups = co.get_namespaced_custom_object(RAY, "v1", "resized", "rayclusters", "grows")["spec"][
        "workerGroupSpecs"
    ]
    groups[0].update(replicas=3, maxReplicas=3)
    co.patch_namespaced_custom_object(
        RAY, "v1", "resized", "rayclusters", "grows", {"spec": {"workerGroupSpecs": groups}}
    )

    def replaced() -> dict[str, Any] | None:
        wl = workload_of(co, "resized", uid)
        return wl if wl is not None and wl["metadata"]["uid"] != first else None

    new = eventually(replaced, "a new Workload for the resized cluster")
    assert [p["count"] for p in new["spec"]["podSets"]] == [1, 3]
    eventually(lambda: admitted(co, "resized", uid), "the new Workload's admission")
    reasons = {
        e.reason for e in core.list_namespaced_event("resized").items if e.involved_object.name == "grows"
    }
    assert {"CreatedWorkload", "Started", "Stopped", "DeletedWorkload"} <= reasons


def test_a_missing_local_queue_is_reported_and_relabelling_the_suspended_cluster_fixes_it(
    co: Any, core: Any
) -> None:
    for doc in [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "moved"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "a100"}},
        gpu_queue("cq-moved", 8, cohort="moved"),
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "moved"},
            "spec": {"clusterQueue": "cq-moved"},
        },
    ]:
        create(co, core, doc)
    node = gpu_node()
    rc = create(co, core, raycluster("lost", "moved", "typo-queue", node, 1, node))
    uid = rc["metadata"]["uid"]
    reserved = eventually(
        lambda: (
            condition(workload_of(co, "moved", uid), "QuotaReserved").get("reason") == "Inadmissible"
            and condition(workload_of(co, "moved", uid), "QuotaReserved")
        ),
        "the Inadmissible condition",
    )
    assert reserved["message"] == "LocalQueue typo-queue doesn't exist"
    co.patch_namespaced_custom_object(
        RAY,
        "v1",
        "moved",
        "rayclusters",
        "lost",
        {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "lq"}}},
    )
    eventually(lambda: admitted(co, "moved", uid), "admission through the corrected queue")
    assert (workload_of(co, "moved", uid) or {})["spec"]["queueName"] == "lq"


def test_pods_ready_follows_the_cluster_state(co: Any, core: Any) -> None:
    for doc in [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ready"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "a100"}},
        gpu_queue("cq-ready", 8, cohort="ready"),
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "ready"},
            "spec": {"clusterQueue": "cq-ready"},
        },
    ]:
        create(co, core, doc)
    node = gpu_node()
    uid = create(co, core, raycluster("warm", "ready", "lq", node, 1, node))["metadata"]["uid"]
    eventually(lambda: admitted(co, "ready", uid), "admission")
    waiting = eventually(lambda: condition(workload_of(co, "ready", uid), "PodsReady"), "PodsReady")
    assert (waiting["status"], waiting["reason"]) == ("False", "WaitForStart")
    # KubeRay's part: the head and workers are up.
    co.patch_namespaced_custom_object_status(
        RAY, "v1", "ready", "rayclusters", "warm", {"status": {"state": "ready"}}
    )
    started = eventually(
        lambda: (
            condition(workload_of(co, "ready", uid), "PodsReady").get("status") == "True"
            and condition(workload_of(co, "ready", uid), "PodsReady")
        ),
        "PodsReady=True",
    )
    assert (started["reason"], started["message"]) == (
        "Started",
        "All pods reached readiness and the workload is running",
    )


# -- deactivation and reactivation, admitted or not ------------------------------------------------
def _one_gpu_queue(co: Any, core: Any, namespace: str) -> None:
    """``namespace`` with LocalQueue ``lq`` on a ClusterQueue of its own with one GPU."""
    for doc in [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "a100"}},
        gpu_queue(f"cq-{namespace}", 1, cohort=namespace),
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": namespace},
            "spec": {"clusterQueue": f"cq-{namespace}"},
        },
    ]:
        create(co, core, doc)


def _set_active(co: Any, namespace: str, uid: str, active: bool) -> None:
    name = (workload_of(co, namespace, uid) or {})["metadata"]["name"]
    co.patch_namespaced_custom_object(
        KUEUE, "v1beta2", namespace, "workloads", name, {"spec": {"active": active}}
    )


def _words(obj: dict[str, Any] | None, ctype: str) -> tuple[str, str, str]:
    found = condition(obj, ctype)
    return found.get("status", ""), found.get("reason", ""), found.get("message", "")


DEACTIVATED = ("Deactivated", "The workload is deactivated")
REACTIVATED = ("True", "Reactivated", "The workload was reactivated")


def test_a_pending_workload_deactivated_then_reactivated_is_requeued_and_admitted_later(
    co: Any, core: Any
) -> None:
    """Deactivated before it was ever admitted: Evicted=True and Requeued=False (Deactivated); on
    reactivation Requeued=True (Reactivated), and once quota frees it is admitted with
    Evicted=False/QuotaReserved "Previously: The workload is deactivated"."""
    _one_gpu_queue(co, core, "deact-pending")
    node = gpu_node()
    holder = create(co, core, raycluster("holder", "deact-pending", "lq", node, 0, node))
    eventually(lambda: admitted(co, "deact-pending", holder["metadata"]["uid"]), "the holder's admission")
    waiter = create(co, core, raycluster("waiter", "deact-pending", "lq", node, 0, node))
    uid = waiter["metadata"]["uid"]
    eventually(
        lambda: _words(workload_of(co, "deact-pending", uid), "QuotaReserved")[1] == "Pending",
        "the waiter to be pending for quota",
    )

    _set_active(co, "deact-pending", uid, False)
    wl = eventually(
        lambda: (
            _words(workload_of(co, "deact-pending", uid), "Requeued")[0] == "False"
            and workload_of(co, "deact-pending", uid)
        ),
        "Requeued=False on the never-admitted Workload",
    )
    assert _words(wl, "Evicted") == ("True", *DEACTIVATED)
    assert _words(wl, "Requeued") == ("False", *DEACTIVATED)
    assert not (wl.get("status") or {}).get("admission") and not admitted(co, "deact-pending", uid)
    assert suspended(co, "deact-pending", "waiter")

    _set_active(co, "deact-pending", uid, True)
    wl = eventually(
        lambda: (
            _words(workload_of(co, "deact-pending", uid), "Requeued") == REACTIVATED
            and workload_of(co, "deact-pending", uid)
        ),
        "Requeued=True (Reactivated)",
    )
    # Back in the queue behind the holder: still evicted (history) and not admitted.
    assert _words(wl, "Evicted") == ("True", *DEACTIVATED)
    eventually(
        lambda: _words(workload_of(co, "deact-pending", uid), "QuotaReserved")[1] == "Pending",
        "the reactivated Workload to wait for quota again",
    )
    assert not admitted(co, "deact-pending", uid)

    # The holder goes away: the waiter is admitted and the eviction is reset.
    co.delete_namespaced_custom_object(RAY, "v1", "deact-pending", "rayclusters", "holder")
    eventually(lambda: admitted(co, "deact-pending", uid), "the waiter's admission")
    eventually(lambda: not suspended(co, "deact-pending", "waiter"), "the waiter to be unsuspended")
    wl = workload_of(co, "deact-pending", uid)
    assert _words(wl, "Evicted") == ("False", "QuotaReserved", "Previously: The workload is deactivated")
    assert _words(wl, "QuotaReserved")[:2] == ("True", "QuotaReserved")
    assert _words(wl, "Admitted")[:2] == ("True", "Admitted")
    assert _words(wl, "Requeued") == REACTIVATED


def test_an_admitted_workload_deactivated_then_reactivated_is_requeued_and_admitted_again(
    co: Any, core: Any
) -> None:
    """Deactivated while admitted: evicted, its job suspended and its quota released (QuotaReserved
    and Admitted False, Requeued=False/Deactivated); reactivated: Requeued=True (Reactivated), admitted
    again with Evicted=False/QuotaReserved "Previously: The workload is deactivated"."""
    _one_gpu_queue(co, core, "deact-admitted")
    node = gpu_node()
    rc = create(co, core, raycluster("running", "deact-admitted", "lq", node, 0, node))
    uid = rc["metadata"]["uid"]
    eventually(lambda: admitted(co, "deact-admitted", uid), "admission")
    eventually(lambda: not suspended(co, "deact-admitted", "running"), "the cluster to run")
    admitted_at = condition(workload_of(co, "deact-admitted", uid), "Admitted")["lastTransitionTime"]

    _set_active(co, "deact-admitted", uid, False)
    eventually(lambda: suspended(co, "deact-admitted", "running"), "the cluster to be suspended")
    wl = eventually(
        lambda: (
            _words(workload_of(co, "deact-admitted", uid), "QuotaReserved")[0] == "False"
            and workload_of(co, "deact-admitted", uid)
        ),
        "the reservation to be released",
    )
    assert _words(wl, "Evicted") == ("True", *DEACTIVATED)
    assert _words(wl, "Requeued") == ("False", *DEACTIVATED)
    assert _words(wl, "Admitted")[:2] == ("False", "NoReservation")
    assert not (wl.get("status") or {}).get("admission")
    # what Kueue keeps of the admission that ended: its whole seconds, and one Deactivated eviction
    released_at = condition(wl, "Admitted")["lastTransitionTime"]
    held = int((parse_rfc3339(released_at) or 0) - (parse_rfc3339(admitted_at) or 0))
    assert wl["status"]["accumulatedPastExecutionTimeSeconds"] == held
    assert wl["status"]["schedulingStats"]["evictions"] == [
        {"reason": "Deactivated", "underlyingCause": "", "count": 1}
    ]
    events = [e.reason for e in core.list_namespaced_event("deact-admitted").items]
    assert "EvictedDueToDeactivated" in events

    _set_active(co, "deact-admitted", uid, True)
    eventually(lambda: admitted(co, "deact-admitted", uid), "re-admission")
    eventually(lambda: not suspended(co, "deact-admitted", "running"), "the cluster to run again")
    wl = workload_of(co, "deact-admitted", uid)
    assert wl["status"]["accumulatedPastExecutionTimeSeconds"] == held  # kept across the resume
    assert _words(wl, "Evicted") == ("False", "QuotaReserved", "Previously: The workload is deactivated")
    assert _words(wl, "Requeued") == REACTIVATED
    assert _words(wl, "QuotaReserved")[:2] == ("True", "QuotaReserved")
