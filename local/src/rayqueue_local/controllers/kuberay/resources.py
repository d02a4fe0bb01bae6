"""Pure helpers of the KubeRay emulation: names, pods, the head Service, sizes and conditions.

Everything here is dict in / dict out with no I/O, following KubeRay v1.7.0
[R ray-operator/controllers/ray/utils/{constant,util}.go, common/pod.go, common/service.go,
raycluster_controller.go calculateStatus]; see ``../shared/reference/k8s-semantics.md`` §3.

Example:
    >>> rc = {"metadata": {"name": "demo", "namespace": "ns", "uid": "u"},
    ...       "spec": {"headGroupSpec": {"template": {"spec": {"containers": [
    ...           {"name": "ray-head", "resources": {"limits": {"cpu": "2", "nvidia.com/gpu": 1}}}]}}},
    ...                "workerGroupSpecs": [{"groupName": "gpu", "replicas": 1, "minReplicas": 0,
    ...                    "maxReplicas": 2, "template": {"spec": {"containers": [
    ...                    {"name": "w", "resources": {"limits": {"cpu": "2", "nvidia.com/gpu": 1}}}]}}}]}}
    >>> [p["metadata"]["labels"]["ray.io/node-type"] for p in desired_pods(rc)]
    ['head', 'worker']
    >>> sizes(rc)["gpus"], sizes(rc)["cpus"]
    (2, 4.0)
"""

from __future__ import annotations

import copy
import json
import math
import re
import secrets
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from rayqueue_local.apimachinery.quantities import BINARY_SUFFIXES, DECIMAL_SUFFIXES, parse_quantity
from rayqueue_local.apimachinery.time import now_rfc3339

__all__ = [
    "AUTOSCALING_CONDITION",
    "AUTOSCALING_NOT_RUN",
    "AUTOSCALING_NOT_RUN_MESSAGE",
    "DEFAULT_PORTS",
    "LOCAL_IP",
    "condition_true",
    "desired_pods",
    "desired_resources",
    "group_size",
    "desired_worker_replicas",
    "in_tree_autoscaling",
    "failed_head_status",
    "head_image_problem",
    "head_service",
    "owner_reference",
    "pod_object",
    "pod_status",
    "rand5",
    "set_condition",
    "sizes",
    "worker_group_replicas",
]

#: KubeRay's default head ports when the container declares none [R utils/constant.go].
DEFAULT_PORTS = {"client": 10001, "gcs-server": 6379, "dashboard": 8265, "metrics": 8080, "serve": 8000}
_GPU_KEYS = ("nvidia.com/gpu", "amd.com/gpu", "intel.com/gpu")
_LOCAL_NODE = "rayqueue-local-node"
LOCAL_IP = "127.0.0.1"  # every pod's (and the head service's) IP: all runs on this host

#: The RayCluster condition by which the local plane says it does not run KubeRay's in-tree autoscaler
#: (not an upstream condition: upstream runs the autoscaler as a sidecar of the head pod and reports
#: nothing). ``False`` with reason :data:`AUTOSCALING_NOT_RUN` while ``spec.enableInTreeAutoscaling`` on a
#: plane without Ray processes (``ray_enabled=False``); with Ray, the autoscaler runs (:mod:`.autoscaling`).
AUTOSCALING_CONDITION = "InTreeAutoscaling"
#: Its reason, and the reason of the ``Warning`` Event recorded when it is first set.
AUTOSCALING_NOT_RUN = "NotRunByLocalControlPlane"
AUTOSCALING_NOT_RUN_MESSAGE = (
    "enableInTreeAutoscaling is not emulated: this local control plane runs no Ray processes "
    "(ray_enabled=False), so it does not run KubeRay's autoscaler, and worker replicas stay at "
    "each group's spec replicas (within minReplicas and maxReplicas) whatever Ray's demand; "
    "change spec.workerGroupSpecs[].replicas to resize by hand"
)
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' rand.String alphabet (no vowels)


def rand5() -> str:
    """Five random characters from Kubernetes' ``rand.String`` alphabet."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(5))


def owner_reference(owner: dict[str, Any]) -> dict[str, Any]:
    """A controller ownerReference to ``owner`` (so the store garbage-collects dependents)."""
    meta = owner["metadata"]
    return {
        "apiVersion": owner.get("apiVersion", "ray.io/v1"),
        "kind": owner.get("kind", "RayCluster"),
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


# -- sizes -------------------------------------------------------------------------------------


def worker_group_replicas(group: dict[str, Any]) -> int:
    """Pods of one worker group: ``clamp(replicas, min, max) × numOfHosts`` [R GetWorkerGroupDesiredReplicas];
    0 for a suspended group.

    Example:
        >>> worker_group_replicas({"replicas": 5, "minReplicas": 0, "maxReplicas": 2, "numOfHosts": 2})
        4
    """
    if group.get("suspend"):
        return 0
    replicas = group.get("replicas")
    replicas = 1 if replicas is None else int(replicas)
    low = int(group.get("minReplicas") or 0)
    high = group.get("maxReplicas")
    high = 2147483647 if high is None else int(high)
    replicas = high if low > high else max(low, min(replicas, high))
    return replicas * int(group.get("numOfHosts") or 1)


def in_tree_autoscaling(rc: dict[str, Any]) -> bool:
    """Whether the RayCluster asks for KubeRay's in-tree autoscaler (``spec.enableInTreeAutoscaling``),
    which the local plane does not run (:data:`AUTOSCALING_CONDITION` says so on the RayCluster).

    Example:
        >>> in_tree_autoscaling({"spec": {"enableInTreeAutoscaling": True}}), in_tree_autoscaling({})
        (True, False)
    """
    return bool((rc.get("spec") or {}).get("enableInTreeAutoscaling"))


def desired_worker_replicas(rc: dict[str, Any]) -> int:
    """All worker pods the cluster asks for (``status.desiredWorkerReplicas``)."""
    return sum(worker_group_replicas(g) for g in rc.get("spec", {}).get("workerGroupSpecs") or [])


def _container_amount(template: dict[str, Any], names: Iterable[str], *, first: str = "limits") -> Decimal:
    """Sum of ``names`` over the containers, from ``first`` (limits or requests), else the other."""
    other = "requests" if first == "limits" else "limits"
    total = Decimal(0)
    for container in (template.get("spec") or {}).get("containers") or []:
        res = container.get("resources") or {}
        for name in names:
            value = (res.get(first) or {}).get(name, (res.get(other) or {}).get(name))
            if value is not None:
                exact = parse_quantity(value)
                total += Decimal(exact.numerator) / Decimal(exact.denominator)
    return total


def _format_quantity(value: Decimal) -> str:
    """A quantity string: whole numbers as they are, binary/decimal suffixes when exact, else milli.

    Example:
        >>> [_format_quantity(Decimal(v)) for v in (13 * 10**9, 2**31, "1.5", 3)]
        ['13G', '2Gi', '1500m', '3']
    """
    if value == value.to_integral_value():
        number = int(value)
        for suffix, power in sorted(BINARY_SUFFIXES.items(), key=lambda item: -item[1]):
            if number and number % (2**power) == 0 and number >= 2**power:
                return f"{number // 2**power}{suffix}"
        for suffix, exp in sorted(DECIMAL_SUFFIXES.items(), key=lambda item: -item[1]):
            if number and exp > 0 and number % 10**exp == 0:
                return f"{number // 10**exp}{suffix}"
        return str(number)
    return f"{int(value * 1000)}m"


def _start_param(params: dict[str, Any] | None, key: str) -> str | None:
    value = (params or {}).get(key)
    return None if value is None else str(value).strip().strip('"').strip("'")


def _group_size(spec: dict[str, Any]) -> tuple[Decimal, Decimal, Decimal, dict[str, float]]:
    template = spec.get("template") or {}
    params = spec.get("rayStartParams") or {}
    cpus = _container_amount(template, ("cpu",))
    gpus = _container_amount(template, _GPU_KEYS)
    memory = _container_amount(template, ("memory",))
    if (value := _start_param(params, "num-cpus")) is not None:
        cpus = Decimal(value)
    if (value := _start_param(params, "num-gpus")) is not None:
        gpus = Decimal(value)
    custom: dict[str, float] = {}
    if (value := _start_param(params, "resources")) is not None:
        try:
            parsed = json.loads(value.replace('\\"', '"'))
            custom = {str(k): float(v) for k, v in parsed.items()} if isinstance(parsed, dict) else {}
        except (ValueError, TypeError):
            custom = {}
    return cpus, gpus, memory, custom


def group_size(group: dict[str, Any]) -> tuple[Decimal, Decimal, Decimal, dict[str, float]]:
    """One Pod of a head or worker group: CPUs, GPUs, memory (bytes) and custom Ray resources."""
    return _group_size(group)


def sizes(rc: dict[str, Any], *, head_only: bool = False) -> dict[str, Any]:
    """What the whole cluster asks for: ``cpus`` (float), ``gpus`` (int), ``memory`` (bytes),
    ``resources`` (custom Ray resources), summed over the head and every desired worker pod.

    The local Ray head advertises these sums (workers are Pod objects only; their CPUs and GPUs
    are added to the one real head so that work sized for the whole cluster can be scheduled).
    ``head_only``: the head's own (an autoscaling cluster's workers are Ray nodes of their own,
    :mod:`.autoscaling`), and ``monitor`` False (the autoscaler runs beside the head, not in it).
    """
    spec = rc.get("spec") or {}
    cpus, gpus, memory, custom = _group_size(spec.get("headGroupSpec") or {})
    resources = dict(custom)
    if head_only:
        return {
            "cpus": float(cpus),
            "gpus": int(math.ceil(gpus)),
            "memory": int(memory),
            "resources": resources,
            "monitor": False,
        }
    for group in spec.get("workerGroupSpecs") or []:
        count = worker_group_replicas(group)
        c, g, m, r = _group_size(group)
        cpus, gpus, memory = cpus + c * count, gpus + g * count, memory + m * count
        for key, value in r.items():
            resources[key] = resources.get(key, 0.0) + value * count
    return {"cpus": float(cpus), "gpus": int(math.ceil(gpus)), "memory": int(memory), "resources": resources}


def desired_resources(rc: dict[str, Any]) -> dict[str, str]:
    """``status.desiredCPU/Memory/GPU/TPU``: container requests (limits where a request is missing)
    of the head and every desired worker pod, as KubeRay's CalculateDesiredResources sums them."""
    spec = rc.get("spec") or {}
    groups = [((spec.get("headGroupSpec") or {}).get("template") or {}, 1)]
    groups += [
        (g.get("template") or {}, worker_group_replicas(g)) for g in spec.get("workerGroupSpecs") or []
    ]
    totals = {"cpu": Decimal(0), "memory": Decimal(0), "gpu": Decimal(0), "tpu": Decimal(0)}
    for template, count in groups:
        totals["cpu"] += _container_amount(template, ("cpu",), first="requests") * count
        totals["memory"] += _container_amount(template, ("memory",), first="requests") * count
        totals["gpu"] += _container_amount(template, _GPU_KEYS, first="requests") * count
        totals["tpu"] += _container_amount(template, ("google.com/tpu",), first="requests") * count
    return {
        "desiredCPU": _format_quantity(totals["cpu"]),
        "desiredMemory": _format_quantity(totals["memory"]),
        "desiredGPU": _format_quantity(totals["gpu"]),
        "desiredTPU": _format_quantity(totals["tpu"]),
    }


# -- pods and the service ------------------------------------------------------------------------


def _pod(
    rc: dict[str, Any], name: str, group: str, node_type: str, template: dict[str, Any]
) -> dict[str, Any]:
    meta = rc["metadata"]
    cluster = meta["name"]
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    labels.update(
        {
            "ray.io/cluster": cluster,
            "ray.io/node-type": node_type,
            "ray.io/group": group,
            "ray.io/is-ray-node": "yes",
            "ray.io/identifier": f"{cluster}-{node_type}",
            "app.kubernetes.io/name": "kuberay",
            "app.kubernetes.io/created-by": "kuberay-operator",
        }
    )
    spec = copy.deepcopy(template.get("spec") or {})
    spec.setdefault("containers", [])
    for container in spec["containers"] + list(spec.get("initContainers") or []):
        res = container.get("resources") or {}
        for section in ("limits", "requests"):
            if isinstance(res.get(section), dict):  # the API server serialises quantities as strings
                res[section] = {k: str(v) for k, v in res[section].items()}
    return pod_object(rc, "RayCluster", name, labels, template, spec)


def pod_object(
    owner: dict[str, Any],
    owner_kind: str,
    name: str,
    labels: dict[str, str],
    template: dict[str, Any],
    spec: dict[str, Any],
) -> dict[str, Any]:
    """A Pod of ``owner`` (a ray.io/v1 ``owner_kind``) on the local node, with the template's annotations.

    Example:
        >>> rc = {"metadata": {"name": "rc", "namespace": "ns", "uid": "u1"}}
        >>> pod = pod_object(rc, "RayCluster", "rc-head", {}, {}, {"containers": []})
        >>> pod["spec"]["nodeName"], pod["metadata"]["ownerReferences"][0]["kind"]
        ('rayqueue-local-node', 'RayCluster')
    """
    spec["nodeName"] = _LOCAL_NODE
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": owner["metadata"].get("namespace", "default"),
            "labels": labels,
            "annotations": dict((template.get("metadata") or {}).get("annotations") or {}),
            "ownerReferences": [owner_reference({**owner, "kind": owner_kind, "apiVersion": "ray.io/v1"})],
        },
        "spec": spec,
    }


def desired_pods(rc: dict[str, Any]) -> list[dict[str, Any]]:
    """Fresh Pod objects for the head and every desired worker, named as KubeRay names them
    (``<cluster>-head-<rand>``; ``<cluster>-<group>-worker-<rand>`` with the prefix cut to 50)."""
    spec = rc.get("spec") or {}
    cluster = rc["metadata"]["name"]
    head_template = (spec.get("headGroupSpec") or {}).get("template") or {}
    pods = [_pod(rc, f"{cluster}-head-{rand5()}", "headgroup", "head", head_template)]
    for group in spec.get("workerGroupSpecs") or []:
        prefix = f"{cluster}-{group.get('groupName', 'workers')}-worker"[:50]
        for _ in range(worker_group_replicas(group)):
            pods.append(
                _pod(
                    rc,
                    f"{prefix}-{rand5()}",
                    group.get("groupName", ""),
                    "worker",
                    group.get("template") or {},
                )
            )
    return pods


def pod_status(phase: str, *, ready: bool, started: str | None = None) -> dict[str, Any]:
    """A Pod ``status``: Pending (not scheduled yet) or Running and Ready on the local node."""
    if phase != "Running":
        return {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": now_rfc3339()}],
        }
    stamp = started or now_rfc3339()
    flag = "True" if ready else "False"
    return {
        "phase": "Running",
        "hostIP": LOCAL_IP,
        "podIP": LOCAL_IP,
        "podIPs": [{"ip": LOCAL_IP}],
        "startTime": stamp,
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp},
            {"type": "Initialized", "status": "True", "lastTransitionTime": stamp},
            {"type": "ContainersReady", "status": flag, "lastTransitionTime": stamp},
            {"type": "Ready", "status": flag, "lastTransitionTime": stamp},
        ],
    }


#: A container image reference as the kubelet parses it: ``[domain[:port]/]path[:tag][@digest]`` with
#: lower-case path components [github.com/distribution/reference regexp.go, used by the kubelet's
#: pkg/kubelet/images/image_manager.go applyDefaultImageTag].
_IMAGE_REF = re.compile(
    r"^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*"
    r"|\[[0-9a-fA-F:]+\])(?::[0-9]+)?/)?"
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*"
    r":[0-9a-fA-F]{32,})?$"
)


def head_image_problem(rc: dict[str, Any]) -> str | None:
    """The kubelet's ``InvalidImageName`` message for the head container's image, or ``None``.

    Images are never pulled here, but an image reference the kubelet cannot parse keeps the head pod
    in ``Waiting`` with reason ``InvalidImageName`` and the message below, whatever the node
    [kubernetes pkg/kubelet/images/image_manager.go EnsureImageExists; types.go ErrInvalidImageName].

    Example:
        >>> rc = {"spec": {"headGroupSpec": {"template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}}}
        >>> head_image_problem(rc) is None
        True
        >>> rc["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["image"] = "Ray Project!"
        >>> print(head_image_problem(rc))
        Failed to apply default image tag "Ray Project!": couldn't parse image name "Ray Project!": \
invalid reference format
    """
    spec = (((rc.get("spec") or {}).get("headGroupSpec") or {}).get("template") or {}).get("spec") or {}
    for container in spec.get("containers") or []:
        image = container.get("image")
        if isinstance(image, str) and image and not _IMAGE_REF.match(image):
            quoted = json.dumps(image)  # Go's %q
            return (
                f"Failed to apply default image tag {quoted}: couldn't parse image name {quoted}: "
                "invalid reference format"
            )
    return None


def failed_head_status(pod: dict[str, Any], reason: str, message: str) -> dict[str, Any]:
    """The ``status`` a kubelet gives a head pod whose container cannot run: ``reason`` is
    ``InvalidImageName`` (Pending, never started) or ``CrashLoopBackOff`` (Running, not ready, the last
    exit in ``lastState.terminated`` with ``message``), as in the kubelet's container statuses
    [kubernetes pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses; kuberuntime CrashLoopBackOff].

    Example:
        >>> pod = {"metadata": {"name": "ws-head-x"},
        ...        "spec": {"containers": [{"name": "ray-head", "image": "ray"}]}}
        >>> st = failed_head_status(pod, "CrashLoopBackOff", "ray start exited with 1")
        >>> st["phase"], st["containerStatuses"][0]["state"]["waiting"]["reason"]
        ('Running', 'CrashLoopBackOff')
        >>> st["containerStatuses"][0]["lastState"]["terminated"]["message"]
        'ray start exited with 1'
    """
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    name = str(containers[0].get("name") or "ray-head")
    image = str(containers[0].get("image") or "")
    status = pod_status("Running", ready=False)
    for cond in status["conditions"]:
        if cond["type"] in ("ContainersReady", "Ready"):
            cond.update(reason="ContainersNotReady", message=f"containers with unready status: [{name}]")
    container: dict[str, Any] = {"name": name, "image": image, "imageID": "", "ready": False}
    container["started"] = False
    if reason == "CrashLoopBackOff":
        pod_name = (pod.get("metadata") or {}).get("name", "")
        container["restartCount"] = 2
        container["state"] = {
            "waiting": {
                "reason": reason,
                "message": f"back-off 40s restarting failed container={name} pod={pod_name}",
            }
        }
        container["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "message": message}}
    else:
        status["phase"] = "Pending"
        status.pop("startTime", None)
        container["restartCount"] = 0
        container["state"] = {"waiting": {"reason": reason, "message": message}}
    status["containerStatuses"] = [container]
    return status


def head_service(rc: dict[str, Any], ports: dict[str, int] | None = None) -> dict[str, Any]:
    """The ``<cluster>-head-svc`` Service (headless, as KubeRay ≥ 1.2 makes it); its ports are the
    local head's real ports when it runs, KubeRay's defaults otherwise."""
    meta = rc["metadata"]
    cluster = meta["name"]
    used = {**DEFAULT_PORTS, **(ports or {})}
    name = ((rc.get("spec") or {}).get("headGroupSpec") or {}).get("headService", {}).get("metadata", {}).get(
        "name"
    ) or f"{cluster}-head-svc"
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": meta.get("namespace", "default"),
            "labels": {
                "ray.io/cluster": cluster,
                "ray.io/node-type": "head",
                "ray.io/identifier": f"{cluster}-head",
                "app.kubernetes.io/name": "kuberay",
                "app.kubernetes.io/created-by": "kuberay-operator",
            },
            "ownerReferences": [owner_reference({**rc, "kind": "RayCluster", "apiVersion": "ray.io/v1"})],
        },
        "spec": {
            "clusterIP": "None",
            "type": "ClusterIP",
            "publishNotReadyAddresses": True,
            "selector": {"ray.io/cluster": cluster, "ray.io/node-type": "head"},
            "ports": [
                {"name": key, "port": used[key], "targetPort": used[key], "protocol": "TCP"}
                for key in ("client", "dashboard", "gcs-server", "metrics", "serve")
            ],
        },
    }


# -- conditions --------------------------------------------------------------------------------


def set_condition(
    conditions: list[dict[str, Any]],
    ctype: str,
    status: bool,
    reason: str,
    message: str = "",
    generation: int | None = None,
) -> None:
    """Set a metav1.Condition in place (``lastTransitionTime`` changes only with the status).

    Example:
        >>> conds = []
        >>> set_condition(conds, "HeadPodReady", True, "HeadPodRunningAndReady")
        >>> conds[0]["status"], conds[0]["reason"]
        ('True', 'HeadPodRunningAndReady')
    """
    value = "True" if status else "False"
    for cond in conditions:
        if cond.get("type") == ctype:
            if cond.get("status") != value:
                cond["lastTransitionTime"] = now_rfc3339()
            cond.update({"status": value, "reason": reason, "message": message})
            if generation is not None:
                cond["observedGeneration"] = generation
            return
    new: dict[str, Any] = {
        "type": ctype,
        "status": value,
        "reason": reason,
        "message": message,
        "lastTransitionTime": now_rfc3339(),
    }
    if generation is not None:
        new["observedGeneration"] = generation
    conditions.append(new)


def condition_true(conditions: list[dict[str, Any]] | None, ctype: str) -> bool:
    """Whether condition ``ctype`` is True."""
    return any(c.get("type") == ctype and c.get("status") == "True" for c in conditions or [])
