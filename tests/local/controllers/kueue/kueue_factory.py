"""Builders of raw Kueue/KubeRay objects for the Kueue tests, and a tiny simulated controller.

``Cluster`` plays the part of the controller for pure-engine tests: it keeps Workload dicts,
runs :func:`admission_pass` and writes the decisions back (admission, eviction, requeue) the way
the real controller does, so multi-step scenarios can be told without a control plane.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from rayqueue_local.controllers.kueue.engine import PassResult, admission_pass
from rayqueue_local.controllers.kueue.workloads import QUEUE_LABEL, build_workload

_uids = itertools.count(1)


def _resource(key: str) -> str:
    return "nvidia.com/gpu" if key == "gpu" else key


def flavor_resources(flavor: str, **quotas: Any) -> dict[str, Any]:
    """``{"name": flavor, "resources": [...]}``; values are nominal or (nominal, borrowing, lending);
    the keyword ``gpu`` stands for ``nvidia.com/gpu``."""
    resources = []
    for key, value in quotas.items():
        name = _resource(key)
        entry: dict[str, Any] = {"name": name}
        nominal, borrowing, lending = value if isinstance(value, tuple) else (value, None, None)
        entry["nominalQuota"] = nominal
        if borrowing is not None:
            entry["borrowingLimit"] = borrowing
        if lending is not None:
            entry["lendingLimit"] = lending
        resources.append(entry)
    return {"name": flavor, "resources": resources}


def cluster_queue(
    name: str, groups: list[tuple[list[str], list[dict[str, Any]]]], *, cohort: str | None = None, **spec: Any
) -> dict[str, Any]:
    """A v1beta2 ClusterQueue matching every namespace unless ``namespaceSelector`` is given."""
    body: dict[str, Any] = {"namespaceSelector": {}}
    body["resourceGroups"] = [
        {"coveredResources": covered, "flavors": flavors} for covered, flavors in groups
    ]
    if cohort:
        body["cohortName"] = cohort
    body.update(spec)
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": body,
    }


def gpu_queue(name: str, gpus: int, *, cohort: str | None = None, **spec: Any) -> dict[str, Any]:
    """A ClusterQueue with plenty of cpu/memory and ``gpus`` GPUs in flavor ``default-flavor``."""
    flavor = flavor_resources("default-flavor", cpu=1000, memory="4000Gi", gpu=gpus)
    return cluster_queue(name, [(["cpu", "memory", "nvidia.com/gpu"], [flavor])], cohort=cohort, **spec)


def local_queue(namespace: str, name: str, cq: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": cq, **spec},
    }


def resource_flavor(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": name},
        "spec": spec,
    }


def container(**requests: Any) -> dict[str, Any]:
    resources = {_resource(k): v for k, v in requests.items()}
    return {
        "name": "ray",
        "image": "rayproject/ray:2.40.0",
        "resources": {"requests": resources, "limits": resources},
    }


def ray_cluster(
    name: str,
    namespace: str,
    *,
    queue: str | None,
    head: dict[str, Any] | None = None,
    workers: list[tuple[str, int, dict[str, Any]]] = (),  # type: ignore[assignment]
    priority_class: str | None = None,
) -> dict[str, Any]:
    """A RayCluster manifest; ``workers`` are ``(groupName, replicas, container)``."""
    labels = {}
    if queue:
        labels[QUEUE_LABEL] = queue
    if priority_class:
        labels["kueue.x-k8s.io/priority-class"] = priority_class
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [head or container(cpu=1)]}},
            },
            "workerGroupSpecs": [
                {
                    "groupName": group,
                    "replicas": replicas,
                    "minReplicas": replicas,
                    "maxReplicas": replicas,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [c]}},
                }
                for group, replicas, c in workers
            ],
        },
    }


def gpu_cluster(
    name: str, namespace: str, queue: str, gpus: int, priority_class: str | None = None
) -> dict[str, Any]:
    """A RayCluster with a 1-CPU head and one worker group of ``gpus`` 1-GPU workers."""
    return ray_cluster(
        name,
        namespace,
        queue=queue,
        priority_class=priority_class,
        workers=[("workers", gpus, container(cpu=1, gpu=1))],
    )


class Cluster:
    """Workload dicts plus the admin objects; :meth:`step` runs a pass and applies it like the controller."""

    def __init__(
        self,
        *,
        cqs: list[dict[str, Any]],
        lqs: list[dict[str, Any]],
        flavors: list[str] | None = None,
        cohorts: list[dict[str, Any]] | None = None,
        priorities: dict[str, int] | None = None,
    ) -> None:
        self.cqs, self.lqs, self.cohorts = cqs, lqs, cohorts or []
        self.flavors = [resource_flavor(f) for f in (flavors or ["default-flavor"])]
        self.priorities = priorities or {}
        self.workloads: dict[str, dict[str, Any]] = {}
        self.clock = 1_800_000_000
        self.last: PassResult | None = None
        #: extra keyword arguments of every admission_pass (fair_sharing=, topologies=, nodes=)
        self.pass_options: dict[str, Any] = {}

    def submit(self, job: dict[str, Any]) -> str:
        """Create the Workload of ``job`` (uid and creation time assigned here); return its name."""
        job = copy.deepcopy(job)
        job["metadata"]["uid"] = f"00000000-0000-0000-0000-{next(_uids):012d}"
        wl = build_workload(job, self.priorities)
        wl["metadata"]["uid"] = "wl-" + job["metadata"]["uid"]
        self.clock += 1
        wl["metadata"]["creationTimestamp"] = _ts(self.clock)
        self.workloads[wl["metadata"]["name"]] = wl
        return str(wl["metadata"]["name"])

    def step(self) -> PassResult:
        """One pass; admissions and evictions applied; evicted Workloads release quota at once."""
        self.clock += 1
        result = admission_pass(
            cluster_queues=self.cqs,
            cohorts=self.cohorts,
            resource_flavors=self.flavors,
            local_queues=self.lqs,
            workloads=list(self.workloads.values()),
            now=float(self.clock),
            **self.pass_options,
        )
        for p in result.pending:
            _set(self.workloads[p.workload.name], "QuotaReserved", "False", p.reason, p.message, self.clock)
        for a in result.admitted:
            wl = self.workloads[a.workload.name]
            wl.setdefault("status", {})["admission"] = a.admission
            _set(wl, "QuotaReserved", "True", "QuotaReserved", "Quota reserved", self.clock)
            _set(wl, "Evicted", "False", "QuotaReserved", "", self.clock)
        for e in result.evicted:
            self.release(e.workload.name, e.reason, e.message)
        self.last = result
        return result

    def release(self, name: str, reason: str, message: str) -> None:
        wl = self.workloads[name]
        _set(wl, "Evicted", "True", reason, message, self.clock)
        wl["status"].pop("admission", None)
        _set(wl, "QuotaReserved", "False", "Pending", message, self.clock)

    def settle(self, limit: int = 20) -> None:
        """Step until a pass changes nothing."""
        for _ in range(limit):
            result = self.step()
            if not result.admitted and not result.evicted:
                return
        raise AssertionError("no steady state")

    def admitted(self) -> set[str]:
        return {n for n, wl in self.workloads.items() if (wl.get("status") or {}).get("admission")}

    def message(self, name: str) -> str:
        for cond in self.workloads[name].get("status", {}).get("conditions", []):
            if cond["type"] == "QuotaReserved":
                return str(cond["message"])
        return ""


def _ts(seconds: int) -> str:
    import datetime

    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _set(wl: dict[str, Any], ctype: str, status: str, reason: str, message: str, clock: int) -> None:
    conditions = wl.setdefault("status", {}).setdefault("conditions", [])
    conditions[:] = [c for c in conditions if c["type"] != ctype]
    conditions.append(
        {
            "type": ctype,
            "status": status,
            "reason": reason,
            "message": message,
            "lastTransitionTime": _ts(clock),
        }
    )


def deactivate(cluster: Cluster, name: str) -> None:
    """``spec.active=false``: the Workload is evicted (Deactivated) and releases its quota."""
    wl = cluster.workloads[name]
    wl["spec"]["active"] = False
    if (wl.get("status") or {}).get("admission"):
        cluster.release(name, "Deactivated", "The workload is deactivated")
