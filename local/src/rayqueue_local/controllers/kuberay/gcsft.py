"""GCS fault tolerance with an external Redis, as KubeRay wires ``spec.gcsFaultToleranceOptions``.

KubeRay gives the head container ``RAY_REDIS_ADDRESS`` (``redisAddress``), ``RAY_external_storage_namespace``
(``externalStorageNamespace``, else the ``ray.io/external-storage-namespace`` annotation, else the
RayCluster's UID) and ``REDIS_PASSWORD`` from ``redisPassword`` (a value or a ``secretKeyRef``), passed to
``ray start`` as ``--redis-password`` [R ray-operator/controllers/ray/common/pod.go configureRedisFT]. The
local head gets the same: :func:`gcs_ft_launch` reads the options and the Secret and returns what the head
is started with, or why the kubelet could not start its container (``CreateContainerConfigError``: a
missing Secret or key, as the kubelet words it). The password is kept out of every repr and log line.

When the head process dies, :class:`~rayqueue_local.controllers.kuberay.runtime.RayRuntime` restarts it
(the kubelet restarts the head container in place); with the GCS in Redis the new head finds the
cluster's detached actors and job history there. :func:`restarting_head_status` is the head pod's status
meanwhile: Running, not Ready, ``restartCount`` counted and the last exit in ``lastState``.

Example:
    >>> rc = {"metadata": {"name": "ft", "namespace": "ds", "uid": "u-1"}, "spec": {
    ...     "gcsFaultToleranceOptions": {"redisAddress": "127.0.0.1:6390",
    ...         "redisPassword": {"valueFrom": {"secretKeyRef": {"name": "redis", "key": "password"}}}}}}
    >>> launch = gcs_ft_launch(rc, lambda ns, name: {"password": "czNjcmV0"})
    >>> launch.env
    {'RAY_REDIS_ADDRESS': '127.0.0.1:6390', 'RAY_external_storage_namespace': 'u-1'}
    >>> "s3cret" in repr(launch)
    False
    >>> launch.password
    's3cret'
    >>> gcs_ft_launch(rc, lambda ns, name: None).problem
    'secret "redis" not found'
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rayqueue_local.apimachinery.time import now_rfc3339

__all__ = [
    "CONFIG_ERROR",
    "EXTERNAL_STORAGE_NS_ANNOTATION",
    "GcsFtLaunch",
    "SecretReader",
    "gcs_ft_launch",
    "restarting_head_status",
]

#: The kubelet's waiting reason for a container whose env refers to a missing Secret or key.
CONFIG_ERROR = "CreateContainerConfigError"
#: KubeRay's annotation naming the Redis namespace of a cluster's GCS data.
EXTERNAL_STORAGE_NS_ANNOTATION = "ray.io/external-storage-namespace"

#: Reads a Secret's ``data`` (base64 values) by namespace and name; ``None`` when there is none.
SecretReader = Callable[[str, str], Mapping[str, str] | None]


@dataclass(frozen=True)
class GcsFtLaunch:
    """What the head is started with for GCS fault tolerance: ``env``, ``password`` (never in a repr), or
    the ``problem`` that keeps the head container from starting."""

    env: dict[str, str] = field(default_factory=dict)
    password: str | None = field(default=None, repr=False)
    problem: str | None = None


def gcs_ft_launch(rc: Mapping[str, Any], read_secret: SecretReader) -> GcsFtLaunch | None:
    """The head's GCS fault tolerance launch settings of RayCluster ``rc``; ``None`` without the options.

    Example:
        >>> gcs_ft_launch({"metadata": {}, "spec": {}}, lambda ns, name: None) is None
        True
    """
    spec = rc.get("spec") or {}
    options = spec.get("gcsFaultToleranceOptions")
    if not isinstance(options, Mapping):
        return None
    meta = rc.get("metadata") or {}
    storage_ns = str(
        options.get("externalStorageNamespace")
        or (meta.get("annotations") or {}).get(EXTERNAL_STORAGE_NS_ANNOTATION)
        or meta.get("uid")
        or ""
    )
    env = {
        "RAY_REDIS_ADDRESS": str(options.get("redisAddress") or ""),
        "RAY_external_storage_namespace": storage_ns,
    }
    password, problem = _password(options.get("redisPassword"), str(meta.get("namespace") or ""), read_secret)
    return GcsFtLaunch(env=env, password=password, problem=problem)


def _password(ref: Any, namespace: str, read_secret: SecretReader) -> tuple[str | None, str | None]:
    """``(password, problem)`` from ``redisPassword`` (``value`` or ``valueFrom.secretKeyRef``)."""
    if not isinstance(ref, Mapping):
        return None, None
    if ref.get("value"):
        return str(ref["value"]), None
    key_ref = (ref.get("valueFrom") or {}).get("secretKeyRef") or {}
    name, key = str(key_ref.get("name") or ""), str(key_ref.get("key") or "")
    if not name:
        return None, None
    data = read_secret(namespace, name)
    if data is None:
        return None, None if key_ref.get("optional") else f'secret "{name}" not found'
    if key not in data:
        return None, None if key_ref.get(
            "optional"
        ) else f"couldn't find key {key} in Secret {namespace}/{name}"
    try:
        return base64.b64decode(data[key], validate=True).decode("utf-8"), None
    except (binascii.Error, UnicodeDecodeError):
        return None, f"the value of key {key} in Secret {namespace}/{name} is not base64-encoded UTF-8"


def restarting_head_status(
    container: str, restarts: int, exit_code: int | None, started: str | None = None
) -> dict[str, Any]:
    """The head pod's status while the kubelet restarts its container: Running, not Ready, the restart
    counted, and the last exit in ``lastState.terminated``.

    Example:
        >>> st = restarting_head_status("ray-head", 1, -9)
        >>> st["phase"], st["containerStatuses"][0]["restartCount"], st["conditions"][-1]["reason"]
        ('Running', 1, 'ContainersNotReady')
    """
    stamp = started or now_rfc3339()
    code = 137 if exit_code is None or exit_code < 0 else exit_code  # a signal: 128 + SIGKILL
    unready = f"containers with unready status: [{container}]"
    return {
        "phase": "Running",
        "hostIP": "127.0.0.1",
        "podIP": "127.0.0.1",
        "podIPs": [{"ip": "127.0.0.1"}],
        "startTime": stamp,
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp},
            {"type": "Initialized", "status": "True", "lastTransitionTime": stamp},
            {
                "type": "ContainersReady",
                "status": "False",
                "lastTransitionTime": stamp,
                "reason": "ContainersNotReady",
                "message": unready,
            },
            {
                "type": "Ready",
                "status": "False",
                "lastTransitionTime": stamp,
                "reason": "ContainersNotReady",
                "message": unready,
            },
        ],
        "containerStatuses": [
            {
                "name": container,
                "ready": False,
                "started": True,
                "restartCount": restarts,
                "image": "",
                "imageID": "",
                "state": {"running": {"startedAt": stamp}},
                "lastState": {
                    "terminated": {
                        "exitCode": code,
                        "reason": "Error",
                        "message": "the Ray head process exited",
                        "finishedAt": stamp,
                    }
                },
            }
        ],
    }
