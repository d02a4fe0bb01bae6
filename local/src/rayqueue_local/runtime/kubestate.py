"""kube-state-metrics- and Kueue-style series for the local control plane, scraped by its real Prometheus.

Where a real cluster keeps the history of who held which GPUs: kube-state-metrics (v2) exports every pod's
container requests, owner and phase, and Kueue's controller manager exports its ClusterQueues' workloads
and quota. :class:`KubeStateExporter` serves the same series, with upstream's names and labels, from the
store's pods, Workloads and ClusterQueues:

* ``kube_pod_container_resource_requests{namespace,pod,uid,container,node,resource,unit}`` (``resource``
  sanitised as kube-state-metrics does: ``nvidia.com/gpu`` -> ``nvidia_com_gpu``, ``unit="integer"``;
  ``cpu`` in ``core``, ``memory`` in ``byte``), for pods not yet finished;
* ``kube_pod_owner{namespace,pod,uid,owner_kind,owner_name,owner_is_controller}``;
* ``kube_pod_status_phase{namespace,pod,uid,phase}`` (1 for the pod's phase, 0 for the others);
* ``kube_pod_info{namespace,pod,uid,node,created_by_kind,created_by_name}``;
* ``kueue_admitted_active_workloads{cluster_queue}``, ``kueue_pending_workloads{cluster_queue,status}``,
  ``kueue_cluster_queue_resource_usage{cohort,cluster_queue,flavor,resource}`` and
  ``kueue_cluster_queue_nominal_quota{cohort,cluster_queue,flavor,resource}`` (Kueue's pkg/metrics).

Sources: kube-state-metrics docs/metrics/workload/pod-metrics.md (v2.x); Kueue v0.19 pkg/metrics/metrics.go.
Prometheus scrapes kube-state-metrics with ``honor_labels: true`` (as kube-prometheus-stack's
ServiceMonitor does), so ``namespace``/``pod`` stay the pod's own.

Example:
    >>> pod = {"metadata": {"name": "rc-head-x", "namespace": "ds", "uid": "u1",
    ...                     "ownerReferences": [{"kind": "RayCluster", "name": "rc", "controller": True}]},
    ...        "spec": {"nodeName": "n1", "containers": [{"name": "ray-head",
    ...                 "resources": {"requests": {"nvidia.com/gpu": "1", "cpu": "500m"}}}]},
    ...        "status": {"phase": "Running"}}
    >>> exp = KubeStateExporter(objects=lambda key: [pod] if key == "pods" else [])
    >>> line = [l for l in exp.render().splitlines() if "nvidia_com_gpu" in l][0]
    >>> line.split("{")[0], 'resource="nvidia_com_gpu"' in line, 'unit="integer"' in line, line.split()[-1]
    ('kube_pod_container_resource_requests', True, True, '1.0')
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily

from rayqueue_local.apimachinery.quantities import parse_quantity
from rayqueue_local.runtime.exposition import MetricsEndpoint

log = logging.getLogger(__name__)

__all__ = ["CLUSTERQUEUES", "KubeStateExporter", "PODS", "WORKLOADS"]

#: The store's key of Pods.
PODS = "pods"
#: The store's key of Kueue Workloads.
WORKLOADS = "workloads.kueue.x-k8s.io"
#: The store's key of Kueue ClusterQueues.
CLUSTERQUEUES = "clusterqueues.kueue.x-k8s.io"

_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")


def _resource(name: str) -> tuple[str, str]:
    """kube-state-metrics' (resource, unit) for a resource name."""
    if name == "cpu":
        return "cpu", "core"
    if name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        return name.replace("-", "_"), "byte"
    return name.replace(".", "_").replace("/", "_").replace("-", "_"), "integer"


def _is_true(obj: dict[str, Any], type_: str) -> bool:
    return any(
        c.get("type") == type_ and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or []
    )


class KubeStateExporter(MetricsEndpoint):
    """A loopback ``/metrics`` endpoint with kube-state-metrics' pod series and Kueue's queue series.

    ``objects(key)`` lists the store's objects of a resource key (``"pods"``,
    ``"workloads.kueue.x-k8s.io"``, ``"clusterqueues.kueue.x-k8s.io"``).

    Example:
        >>> exp = KubeStateExporter(objects=lambda key: [])
        >>> exp.start(); exp.target.startswith("127.0.0.1:")
        True
        >>> exp.stop()
    """

    def __init__(self, objects: Callable[[str], list[dict[str, Any]]], *, host: str = "127.0.0.1") -> None:
        self._objects = objects
        super().__init__(host=host)

    def _list(self, key: str) -> list[dict[str, Any]]:
        try:
            return list(self._objects(key))
        except Exception:  # a missing resource type must never break a scrape
            log.debug("kube-state exporter: cannot list %s", key, exc_info=True)
            return []

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """The families, one sample per pod/container/queue (``prometheus_client``'s collector API)."""
        yield from self._pod_families()
        yield from self._kueue_families()

    def _pod_families(self) -> Iterator[GaugeMetricFamily]:
        requests = GaugeMetricFamily(
            "kube_pod_container_resource_requests",
            "The number of requested request resource by a container.",
            labels=["namespace", "pod", "uid", "container", "node", "resource", "unit"],
        )
        owner = GaugeMetricFamily(
            "kube_pod_owner",
            "Information about the Pod's owner.",
            labels=["namespace", "pod", "uid", "owner_kind", "owner_name", "owner_is_controller"],
        )
        phase = GaugeMetricFamily(
            "kube_pod_status_phase", "The pods current phase.", labels=["namespace", "pod", "uid", "phase"]
        )
        info = GaugeMetricFamily(
            "kube_pod_info",
            "Information about pod.",
            labels=["namespace", "pod", "uid", "node", "created_by_kind", "created_by_name"],
        )
        for pod in self._list(PODS):
            meta = pod.get("metadata") or {}
            ns, name, uid = (
                str(meta.get("namespace") or ""),
                str(meta.get("name") or ""),
                str(meta.get("uid") or ""),
            )
            node = str((pod.get("spec") or {}).get("nodeName") or "")
            current = (pod.get("status") or {}).get("phase") or "Pending"
            refs = meta.get("ownerReferences") or []
            controller = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
            info.add_metric(
                [
                    ns,
                    name,
                    uid,
                    node,
                    str((controller or {}).get("kind") or "<none>"),
                    str((controller or {}).get("name") or "<none>"),
                ],
                1.0,
            )
            for ref in refs or [{}]:
                owner.add_metric(
                    [
                        ns,
                        name,
                        uid,
                        str(ref.get("kind") or "<none>"),
                        str(ref.get("name") or "<none>"),
                        "true" if ref.get("controller") else "false",
                    ],
                    1.0,
                )
            for p in _PHASES:
                phase.add_metric([ns, name, uid, p], 1.0 if p == current else 0.0)
            if current in ("Succeeded", "Failed"):
                continue  # kube-state-metrics drops the requests of terminated containers
            for container in (pod.get("spec") or {}).get("containers") or []:
                for res_name, value in ((container.get("resources") or {}).get("requests") or {}).items():
                    resource, unit = _resource(str(res_name))
                    try:
                        amount = float(parse_quantity(value))
                    except (TypeError, ValueError):
                        continue
                    requests.add_metric(
                        [ns, name, uid, str(container.get("name") or ""), node, resource, unit], amount
                    )
        yield from (requests, owner, phase, info)

    def _kueue_families(self) -> Iterator[GaugeMetricFamily]:
        admitted = GaugeMetricFamily(
            "kueue_admitted_active_workloads",
            "The number of admitted Workloads that are active (unsuspended and not finished), "
            "per 'cluster_queue'",
            labels=["cluster_queue"],
        )
        pending = GaugeMetricFamily(
            "kueue_pending_workloads",
            "The number of pending workloads, per 'cluster_queue' and 'status'.",
            labels=["cluster_queue", "status"],
        )
        usage = GaugeMetricFamily(
            "kueue_cluster_queue_resource_usage",
            "Reports the cluster_queue's total resource usage",
            labels=["cohort", "cluster_queue", "flavor", "resource"],
        )
        nominal = GaugeMetricFamily(
            "kueue_cluster_queue_nominal_quota",
            "Reports the cluster_queue's resource nominal quota within all the flavors",
            labels=["cohort", "cluster_queue", "flavor", "resource"],
        )
        counts: Counter[str] = Counter()
        for wl in self._list(WORKLOADS):
            queue = str(((wl.get("status") or {}).get("admission") or {}).get("clusterQueue") or "")
            if queue and _is_true(wl, "Admitted") and not _is_true(wl, "Finished"):
                counts[queue] += 1
        for cq in self._list(CLUSTERQUEUES):
            name = str((cq.get("metadata") or {}).get("name") or "")
            spec, status = cq.get("spec") or {}, cq.get("status") or {}
            cohort = str(spec.get("cohortName") or spec.get("cohort") or "")
            admitted.add_metric([name], float(counts.get(name, 0)))
            waiting = int(status.get("pendingWorkloads") or 0)
            pending.add_metric([name, "active"], float(waiting))
            pending.add_metric([name, "inadmissible"], 0.0)
            for group in spec.get("resourceGroups") or []:
                for flavor in group.get("flavors") or []:
                    for res in flavor.get("resources") or []:
                        amount = float(parse_quantity(res.get("nominalQuota") or 0))
                        nominal.add_metric(
                            [cohort, name, str(flavor.get("name")), str(res.get("name"))], amount
                        )
            for flavor in status.get("flavorsUsage") or []:
                for res in flavor.get("resources") or []:
                    amount = float(parse_quantity(res.get("total") or 0))
                    usage.add_metric([cohort, name, str(flavor.get("name")), str(res.get("name"))], amount)
        yield from (admitted, pending, usage, nominal)
