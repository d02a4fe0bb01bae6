"""Pod Security "restricted" for the pods the SDK writes (pure).

A namespace labelled ``pod-security.kubernetes.io/enforce: restricted`` (common on shared GPU clusters)
refuses any pod that may run as root, escalate privileges, keep Linux capabilities or run without a
seccomp profile (the Kubernetes "Pod Security Standards"). :func:`make_restricted` writes what that
profile asks into a pod spec: at the pod, ``runAsNonRoot``, a numeric ``runAsUser`` (1000, the Ray
images' ``ray`` user; numeric so that the kubelet can check it is not root even for an image whose
``USER`` is a name) and the ``RuntimeDefault`` seccomp profile; in every container,
``allowPrivilegeEscalation: false`` and ``capabilities.drop: ["ALL"]``. What the user set is kept where
it already complies.

The idle reaper's pod always has it (:mod:`rayqueue_sdk.manifests.scaling`); a RayCluster's head and
worker pods have it with ``ClusterConfiguration(pod_security="restricted")``.

Example:
    >>> spec = make_restricted({"containers": [{"name": "ray-head"}]})
    >>> spec["securityContext"]["runAsNonRoot"], spec["containers"][0]["securityContext"]["capabilities"]
    (True, {'drop': ['ALL']})
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = [
    "POD_SECURITY_LEVELS",
    "RESTRICTED_CONTAINER_SECURITY",
    "RESTRICTED_POD_SECURITY",
    "RESTRICTED_USER",
    "make_restricted",
]

#: What ``pod_security`` may be: ``None`` (the pods as written) or ``"restricted"``.
POD_SECURITY_LEVELS: tuple[str | None, ...] = (None, "restricted")
#: The uid the pods run as: the Ray images' ``ray`` user (its group is 100, ``users``).
RESTRICTED_USER = 1000
#: The pod-level ``securityContext`` that Pod Security "restricted" asks for.
RESTRICTED_POD_SECURITY: dict[str, Any] = {
    "runAsNonRoot": True,
    "runAsUser": RESTRICTED_USER,
    "runAsGroup": 100,
    "fsGroup": 100,
    "seccompProfile": {"type": "RuntimeDefault"},
}
#: The container-level ``securityContext`` that Pod Security "restricted" asks for.
RESTRICTED_CONTAINER_SECURITY: dict[str, Any] = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
}


def make_restricted(spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of the pod ``spec`` whose pod and every container pass Pod Security "restricted".

    Settings already there are kept unless they would fail the profile (a ``runAsUser: 0``, say).

    Example:
        >>> out = make_restricted({"securityContext": {"runAsUser": 2000},
        ...                        "containers": [{"name": "c", "securityContext": {"runAsUser": 0}}]})
        >>> out["securityContext"]["runAsUser"], out["containers"][0]["securityContext"]["runAsUser"]
        (2000, 1000)
    """
    out = copy.deepcopy(spec)
    pod_sc = {**copy.deepcopy(RESTRICTED_POD_SECURITY), **(out.get("securityContext") or {})}
    pod_sc["runAsNonRoot"] = True
    if pod_sc.get("runAsUser") == 0:
        pod_sc["runAsUser"] = RESTRICTED_USER
    if (pod_sc.get("seccompProfile") or {}).get("type") not in ("RuntimeDefault", "Localhost"):
        pod_sc["seccompProfile"] = {"type": "RuntimeDefault"}
    out["securityContext"] = pod_sc
    for field in ("initContainers", "containers"):
        for container in out.get(field) or []:
            sc = {**copy.deepcopy(RESTRICTED_CONTAINER_SECURITY), **(container.get("securityContext") or {})}
            sc["allowPrivilegeEscalation"] = False
            sc["privileged"] = False
            sc["runAsNonRoot"] = True
            if sc.get("runAsUser") == 0:
                sc["runAsUser"] = RESTRICTED_USER
            caps = dict(sc.get("capabilities") or {})
            caps["drop"] = ["ALL"]
            added = [a for a in caps.get("add") or [] if a == "NET_BIND_SERVICE"]
            if added:
                caps["add"] = added
            else:
                caps.pop("add", None)
            sc["capabilities"] = caps
            if (sc.get("seccompProfile") or {}).get("type") not in ("RuntimeDefault", "Localhost"):
                sc["seccompProfile"] = {"type": "RuntimeDefault"}
            container["securityContext"] = sc
    return out
