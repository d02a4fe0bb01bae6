"""The ``v1`` Node this machine is: the one node of the local control plane.

Everything the plane runs (Ray heads, submitter pods) runs on this machine, so it publishes one Node
for it, as a kubelet registers its node [pkg/kubelet/kubelet_node_status.go]: named after the host,
labelled ``kubernetes.io/hostname``, ``kubernetes.io/os`` and ``kubernetes.io/arch``, with the
machine's CPUs, memory, disk and the kubelet's default 110 pods as ``capacity`` and
``allocatable``, a ``Ready`` condition and ``nodeInfo``. GPUs are not listed: the GPUs this plane
reports for pods are emulated, not found on the machine. The Node is not kept up to date
(no heartbeats, no pressure conditions).

Example:
    >>> node = local_node()
    >>> node["kind"], node["status"]["capacity"]["pods"], node["metadata"]["labels"]["kubernetes.io/os"]
    ('Node', '110', 'linux')
"""

from __future__ import annotations

import os
import platform
import shutil
import socket
from typing import Any

from rayqueue_local.apimachinery.time import now_rfc3339

__all__ = ["local_node", "node_name"]

_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "amd64": "amd64"}


def node_name() -> str:
    """The Node's name: the host name, lower-cased, as the kubelet names its node by default.

    Example:
        >>> node_name() == node_name().lower()
        True
    """
    return (socket.gethostname() or "localhost").split(".")[0].lower() or "localhost"


def _memory_ki() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 1024
    except (ValueError, OSError, AttributeError):  # not on this platform
        return 0


def local_node(internal_ip: str = "127.0.0.1") -> dict[str, Any]:
    """The Node object for this machine (to create, or to write as its status).

    Example:
        >>> local_node("10.0.0.5")["status"]["addresses"][0]
        {'type': 'InternalIP', 'address': '10.0.0.5'}
    """
    name = node_name()
    now = now_rfc3339()
    capacity = {
        "cpu": str(os.cpu_count() or 1),
        "memory": f"{_memory_ki()}Ki",
        "ephemeral-storage": f"{shutil.disk_usage(os.path.expanduser('~')).total // 1024}Ki",
        "pods": "110",
    }
    arch = _ARCH.get(platform.machine().lower(), platform.machine().lower())
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": platform.system().lower(),
                "kubernetes.io/arch": arch,
                "beta.kubernetes.io/os": platform.system().lower(),
                "beta.kubernetes.io/arch": arch,
            },
        },
        "spec": {},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": internal_ip},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "architecture": arch,
                "operatingSystem": platform.system().lower(),
                "kernelVersion": platform.release(),
                "osImage": platform.platform(),
                "containerRuntimeVersion": "rayqueue-local://processes",
                "kubeletVersion": "v1.34.0",
                "kubeProxyVersion": "",
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
            },
        },
    }
