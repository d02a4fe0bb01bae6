"""The label and annotation keys the SDK writes on, or reads from, Kubernetes objects: each defined once.

Kueue's keys (queue, priority class, the Workload's owner uid, elastic jobs, the peer's default-queue
annotation), KubeRay's (which RayCluster or RayJob an object belongs to) and the SDK's own
``app.kubernetes.io/managed-by`` mark. Pure constants: the builders, the admission machines, the kube
layer and the cluster layer all import them from here.

Example:
    >>> {QUEUE_LABEL: "team-q", MANAGED_BY_LABEL: MANAGED_BY_VALUE}
    {'kueue.x-k8s.io/queue-name': 'team-q', 'app.kubernetes.io/managed-by': 'rayqueue-sdk'}
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_QUEUE_ANNOTATION",
    "ELASTIC_JOB_ANNOTATION",
    "JOB_UID_LABEL",
    "KUEUE_PREFIX",
    "MANAGED_BY_LABEL",
    "MANAGED_BY_VALUE",
    "PRIORITY_LABEL",
    "QUEUE_LABEL",
    "RAY_CLUSTER_LABEL",
    "RAY_CLUSTER_NAME_LABEL",
    "RAY_CLUSTER_NAMESPACE_LABEL",
    "RAY_JOB_NAME_LABEL",
]

#: The prefix of every Kueue label and annotation.
KUEUE_PREFIX = "kueue.x-k8s.io/"
#: The LocalQueue a RayCluster or RayJob is submitted to.
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
#: The WorkloadPriorityClass of a RayCluster or RayJob.
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
#: On a Kueue Workload: the uid of the RayCluster or RayJob it stands for.
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
#: ``"true"`` marks an elastic job (Kueue lets its worker count change).
ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
#: The peer's (CodeFlare/ODH) convention for a default LocalQueue; Kueue's own rule is the name ``default``.
DEFAULT_QUEUE_ANNOTATION = "kueue.x-k8s.io/default-queue"

#: What the SDK made carries ``MANAGED_BY_LABEL: MANAGED_BY_VALUE``.
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "rayqueue-sdk"

#: KubeRay's labels naming the RayCluster (and its namespace) an object belongs to.
RAY_CLUSTER_LABEL = "ray.io/cluster"
RAY_CLUSTER_NAME_LABEL = "ray.io/cluster-name"
RAY_CLUSTER_NAMESPACE_LABEL = "ray.io/cluster-namespace"
#: KubeRay's label naming the RayJob an object belongs to.
RAY_JOB_NAME_LABEL = "ray.io/job-name"
