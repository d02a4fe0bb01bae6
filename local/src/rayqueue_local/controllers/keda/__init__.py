"""KEDA's behaviour for the local control plane: ScaledObjects polling Prometheus and scaling
targets through their ``/scale`` subresource, TriggerAuthentications, service-account tokens.

:func:`keda_controllers` builds the controllers and installs KEDA's validating webhook. They run
when the control plane's options say so (``cp.options.keda_enabled``, on by default; API tests
that write ScaledObject status themselves turn it off so that no controller owns it).

Example:
    >>> from rayqueue_local.options import ControlPlaneOptions
    >>> class CP: options = ControlPlaneOptions(); registry = None
    >>> [c.name for c in keda_controllers(CP())]
    ['keda-webhook', 'serviceaccount-token', 'keda-scaledobject']
    >>> CP.options = ControlPlaneOptions(keda_enabled=False); keda_controllers(CP())
    []
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.controllers.keda.scaledobject import ScaledObjectController
from rayqueue_local.controllers.keda.secrets import ServiceAccountTokenController
from rayqueue_local.controllers.keda.webhook import install, validate
from rayqueue_local.controllers.plane import Plane

__all__ = [
    "KedaWebhook",
    "ScaledObjectController",
    "ServiceAccountTokenController",
    "keda_controllers",
    "validate",
]


class KedaWebhook:
    """Installs KEDA's ScaledObject validation as a store admission hook (nothing to stop)."""

    name = "keda-webhook"

    def start(self, store: Any) -> None:
        """Register the hook."""
        install(store)

    def stop(self) -> None:
        """Nothing runs."""


def keda_controllers(cp: Plane) -> list[Any]:
    """The KEDA webhook and controllers for ``cp`` (none unless ``cp.options.keda_enabled``)."""
    if not cp.options.keda_enabled:
        return []
    return [
        KedaWebhook(),
        ServiceAccountTokenController(cp),
        ScaledObjectController(getattr(cp, "registry", None)),
    ]
