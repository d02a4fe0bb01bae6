"""Controllers that run inside the local control plane: Kueue, the kubelet and the Deployment and Job
controllers (:mod:`.pods`), KubeRay and KEDA behaviour.

Each controller package adds itself to :func:`default_controllers`.
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.controllers.base import Controller, QueueController
from rayqueue_local.controllers.keda import keda_controllers
from rayqueue_local.controllers.kuberay import kuberay_controllers
from rayqueue_local.controllers.kueue.controller import KueueController
from rayqueue_local.controllers.pods import pod_controllers

__all__ = ["Controller", "QueueController", "default_controllers"]


def default_controllers(cp: Any) -> list[Controller]:
    """The controllers a :class:`~rayqueue_local.LocalControlPlane` starts, in start order.

    ``cp`` is the control plane; the controllers read what to emulate from ``cp.options``
    (:class:`~rayqueue_local.options.ControlPlaneOptions`).

    Example:
        >>> from rayqueue_local.options import ControlPlaneOptions
        >>> class CP: options = ControlPlaneOptions(kuberay_enabled=False, keda_enabled=False)
        >>> [c.name for c in default_controllers(CP())]
        ['kueue', 'kubelet', 'deployment', 'job']
    """
    return [KueueController(cp), *pod_controllers(cp), *kuberay_controllers(cp), *keda_controllers(cp)]
