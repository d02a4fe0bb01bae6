"""Controllers that run inside the local control plane: Kueue, KubeRay and KEDA behaviour.

Each controller package adds itself to :func:`default_controllers`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rayqueue_local.controllers.base import Controller, QueueController

if TYPE_CHECKING:
    pass

__all__ = ["Controller", "QueueController", "default_controllers"]


def default_controllers(cp: Any) -> list[Controller]:
    """The controllers a :class:`~rayqueue_local.LocalControlPlane` starts, in start order.

    ``cp`` is the control plane; controllers read their options from it (e.g. ``cp.workload_scale``).

    Example:
        >>> isinstance(default_controllers(object()), list)
        True
    """
    from rayqueue_local.controllers.kueue.controller import KueueController

    controllers: list[Controller] = [KueueController(cp)]
    from rayqueue_local.controllers.kuberay import kuberay_controllers

    controllers += kuberay_controllers(cp)
    from rayqueue_local.controllers.keda import keda_controllers

    controllers += keda_controllers(cp)
    return controllers
