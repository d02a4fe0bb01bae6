"""A head whose container restarts: the words of a cluster that is not failed but coming back.

When a Ray head process dies, the kubelet restarts the head container in place (KubeRay leaves it to the
kubelet): the pod stays ``Running``, not Ready, its container's ``restartCount`` goes up and ``lastState``
holds the exit. With GCS fault tolerance (an external Redis) the cluster keeps its detached actors and job
history through it. :func:`head_restart` reads that from the head Pod; the cluster's phase stays
``starting``, explained as "head restarting", never ``failed`` (a container that keeps exiting ends in the
kubelet's ``CrashLoopBackOff``, which :func:`~rayqueue_sdk.admission.conditions.head_failure` reports).

Example:
    >>> pod = {"status": {"phase": "Running", "containerStatuses": [{"name": "ray-head", "ready": False,
    ...     "restartCount": 1, "state": {"running": {}},
    ...     "lastState": {"terminated": {"exitCode": 137, "reason": "Error"}}}]}}
    >>> head_restart(pod)
    'head restarting (restart 1; last exit 137: Error)'
    >>> head_restart({"status": {"phase": "Running"}}) is None
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["head_restart"]


def head_restart(head_pod: Mapping[str, Any] | None) -> str | None:
    """ "head restarting (restart N; last exit C: reason)" for a head pod whose container was restarted
    and is not ready yet; ``None`` otherwise (never restarted, ready again, or waiting in a back-off)."""
    status = (head_pod or {}).get("status") or {}
    if status.get("phase") != "Running":
        return None
    for container in status.get("containerStatuses") or []:
        restarts = int(container.get("restartCount") or 0)
        state = container.get("state") or {}
        if restarts < 1 or container.get("ready") or "running" not in state:
            continue
        last = (container.get("lastState") or {}).get("terminated") or {}
        exit_words = ""
        if last:
            exit_words = (
                f"; last exit {last.get('exitCode')}: {last.get('reason') or last.get('message') or ''}"
            )
        return f"head restarting (restart {restarts}{exit_words.rstrip(': ')})"
    return None
