"""Seed 000 end to end: GPU-idle scale-to-zero gives the quota to the next cluster, with no other action.

Two 2-GPU RayClusters (CodeFlare's manifests) under a 2-GPU ClusterQueue; a job runs on the first;
the seed's RBAC, TriggerAuthentication and ScaledObject (Workload ``/scale`` mode on) watch its GPU
utilisation in a real Prometheus scraping the DCGM-style exporter. The job stops, utilisation drops
to 0, after the cooldown KEDA scales the first Workload to 0, Kueue deactivates it, its pods go
away, and the second cluster is admitted and becomes ready on a real Ray head.

Two deliberate differences from the seed's text: the query reads ``exported_pod`` (the label the
DCGM series carry when scraped without honorLabels; the seed's cluster relabelled it to ``pod``)
and uses ``max_over_time(...[5s])`` instead of ``rate(...[1m])`` so that the test takes seconds, and
``pollingInterval``/``cooldownPeriod`` are 2 s / 5 s instead of 30 s / 60 s.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from keda_helpers import conditions, wait_for
from kubernetes import client

from rayqueue_local import LocalControlPlane

pytestmark = [pytest.mark.ray, pytest.mark.prometheus]

CRDS = os.environ.get("RAYQUEUE_CRDS_DIR")
MANIFEST = (
    Path(CRDS or "../shared/crds").parent / "reference" / "codeflare-manifests" / "raycluster_first.yaml"
)

SEED_ADMIN = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default-flavor
---
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
apiVersion: v1
kind: Namespace
metadata:
  name: demo
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: demo
  name: user-queue
spec:
  clusterQueue: cluster-queue
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: thanos
  namespace: demo
---
apiVersion: v1
kind: Secret
metadata:
  annotations:
    kubernetes.io/service-account.name: thanos
  name: thanos-token
  namespace: demo
type: kubernetes.io/service-account-token
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: thanos-metrics-reader
  namespace: demo
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get]
- apiGroups: [metrics.k8s.io]
  resources: [pods, nodes]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: thanos-metrics-reader
  namespace: demo
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: thanos-metrics-reader
subjects:
- kind: ServiceAccount
  name: thanos
  namespace: demo
---
apiVersion: keda.sh/v1alpha1
kind: TriggerAuthentication
metadata:
  name: keda-trigger-auth-prometheus
  namespace: demo
spec:
  secretTargetRef:
  - parameter: bearerToken
    name: thanos-token
    key: token
  - parameter: ca
    name: thanos-token
    key: ca.crt
"""


@pytest.fixture(scope="module")
def seed_cp():
    cp = LocalControlPlane(crd_dir=CRDS, workload_scale=True)  # Ray, KEDA and Prometheus: the defaults
    with cp:
        cp.apply(SEED_ADMIN)
        yield cp


def cluster_manifest(name: str) -> dict:
    rc = yaml.safe_load(MANIFEST.read_text())
    rc["metadata"]["name"] = name
    rc["metadata"]["labels"]["ray.io/cluster"] = name
    rc["spec"]["workerGroupSpecs"][0]["groupName"] = f"small-group-{name}"
    return rc


def test_seed_000_idle_gpu_cluster_gives_its_quota_to_the_next(seed_cp):
    from ray.job_submission import JobSubmissionClient

    custom = client.CustomObjectsApi(seed_cp.api_client())
    core = client.CoreV1Api(seed_cp.api_client())

    def rc(name: str) -> dict:
        return custom.get_namespaced_custom_object("ray.io", "v1", "demo", "rayclusters", name)

    def state(name: str) -> str | None:
        return (rc(name).get("status") or {}).get("state")

    custom.create_namespaced_custom_object(
        "ray.io", "v1", "demo", "rayclusters", cluster_manifest("first-raycluster")
    )
    assert wait_for(lambda: state("first-raycluster"), lambda s: s == "ready") == "ready"
    custom.create_namespaced_custom_object(
        "ray.io", "v1", "demo", "rayclusters", cluster_manifest("second-raycluster")
    )
    second_workload = wait_for(
        lambda: custom.list_namespaced_custom_object(
            "kueue.x-k8s.io",
            "v1beta2",
            "demo",
            "workloads",
            label_selector=f"kueue.x-k8s.io/job-uid={rc('second-raycluster')['metadata']['uid']}",
        )["items"],
        lambda items: (
            items
            and any(c["type"] == "QuotaReserved" for c in items[0].get("status", {}).get("conditions", []))
        ),
    )[0]
    assert rc("second-raycluster")["spec"]["suspend"] is True
    assert (
        "insufficient unused quota for nvidia.com/gpu"
        in {c["type"]: c for c in second_workload["status"]["conditions"]}["QuotaReserved"]["message"]
    )

    # a job given both of the first cluster's GPUs computes on them (a busy loop: the stand-in for
    # kernels; the emulated dcgm-exporter reads a GPU busy only then, a sleep would read idle)
    first = rc("first-raycluster")
    jobs = JobSubmissionClient(f"http://127.0.0.1:{first['status']['endpoints']['dashboard']}")
    job_id = jobs.submit_job(
        entrypoint='python -c "import time; e = time.time() + 600; '
        'any(time.time() > e for _ in iter(int, 1))"',
        entrypoint_num_gpus=2,
    )
    prom = seed_cp.prometheus
    selector = 'exported_namespace="demo",exported_pod=~"first-raycluster.*"'
    busy_query = f"sum(max_over_time(DCGM_FI_DEV_GPU_UTIL{{{selector}}}[5s]))"
    busy = wait_for(lambda: prom.query(busy_query), lambda r: r and float(r[0]["value"][1]) >= 160)
    assert float(busy[0]["value"][1]) >= 160  # two GPUs at 80-100 %
    # KEDA queries at "now" truncated to the second, and with no lastActiveTime yet an idle first
    # answer scales to zero at once (initialCooldownPeriod 0, as upstream): let the busy samples age.
    steady = busy_query.replace("max_over_time", "min_over_time")
    assert (
        float(
            wait_for(lambda: prom.query(steady), lambda r: r and float(r[0]["value"][1]) >= 160)[0]["value"][
                1
            ]
        )
        >= 160
    )

    # the seed's ScaledObject, aimed at the first cluster's Workload
    first_workload = custom.list_namespaced_custom_object(
        "kueue.x-k8s.io",
        "v1beta1",
        "demo",
        "workloads",
        label_selector=f"kueue.x-k8s.io/job-uid={first['metadata']['uid']}",
    )["items"][0]
    scaled = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "scaledobject", "namespace": "demo"},
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "name": first_workload["metadata"]["name"],
                "kind": "Workload",
            },
            "minReplicaCount": 0,
            "maxReplicaCount": 1,
            "pollingInterval": 2,
            "cooldownPeriod": 5,
            "triggers": [
                {
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": prom.url,
                        "namespace": "demo",
                        "metricName": "s0-prometheus",
                        "threshold": "9999",
                        "query": busy_query,
                        "authModes": "bearer",
                    },
                    "authenticationRef": {
                        "name": "keda-trigger-auth-prometheus",
                        "kind": "TriggerAuthentication",
                    },
                }
            ],
        },
    }
    custom.create_namespaced_custom_object("keda.sh", "v1alpha1", "demo", "scaledobjects", scaled)

    def so() -> dict:
        return custom.get_namespaced_custom_object(
            "keda.sh", "v1alpha1", "demo", "scaledobjects", "scaledobject"
        )

    active = wait_for(so, lambda o: conditions(o).get("Active", ("",))[0] == "True")
    assert conditions(active)["Ready"] == (
        "True",
        "ScaledObjectReady",
        "ScaledObject is defined correctly and is ready for scaling",
    )
    assert conditions(active)["Active"][:2] == ("True", "ScalerActive")

    # the job stops: utilisation 0, cooldown, scale to zero, quota released, the second cluster runs
    jobs.stop_job(job_id)
    idle = wait_for(lambda: prom.query(busy_query), lambda r: not r or float(r[0]["value"][1]) == 0)
    assert not idle or float(idle[0]["value"][1]) == 0  # 0, or already gone with the pods
    assert wait_for(lambda: state("first-raycluster"), lambda s: s == "suspended", timeout=180) == "suspended"
    assert core.list_namespaced_pod("demo", label_selector="ray.io/cluster=first-raycluster").items == []
    deactivated = custom.get_namespaced_custom_object(
        "kueue.x-k8s.io", "v1beta1", "demo", "workloads", first_workload["metadata"]["name"]
    )
    assert deactivated["spec"]["active"] is False
    assert wait_for(lambda: state("second-raycluster"), lambda s: s == "ready", timeout=180) == "ready"
    second = rc("second-raycluster")
    assert second["spec"]["suspend"] is False
    assert {c["type"]: c["status"] for c in second["status"]["conditions"]}["HeadPodReady"] == "True"
    pods = core.list_namespaced_pod("demo", label_selector="ray.io/cluster=second-raycluster").items
    assert len(pods) == 2 and all(p.status.phase == "Running" for p in pods)
    assert conditions(so())["Active"][:2] == ("False", "ScalerNotActive")
    messages = [
        e["message"]
        for e in seed_cp.store.list("events", "demo")
        if e["reason"] == "KEDAScaleTargetDeactivated"
    ]
    assert any("from 1 to 0" in m for m in messages)
