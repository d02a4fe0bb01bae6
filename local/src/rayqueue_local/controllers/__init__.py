"""Controllers that run inside the local control plane: Kueue (with its ProvisioningRequest admission
check controller), a cluster autoscaler answering ProvisioningRequests (:mod:`.autoscaler`), the
kubelet and the Deployment and Job controllers (:mod:`.pods`), KubeRay and KEDA behaviour.

Each controller package adds itself to :func:`default_controllers`.
"""

from __future__ import annotations

from rayqueue_local.controllers.autoscaler import LocalClusterAutoscaler
from rayqueue_local.controllers.base import Controller, QueueController
from rayqueue_local.controllers.keda import keda_controllers
from rayqueue_local.controllers.kuberay import kuberay_controllers
from rayqueue_local.controllers.kueue.controller import KueueController
from rayqueue_local.controllers.kueue.provisioning import ProvisioningController
from rayqueue_local.controllers.plane import Plane
from rayqueue_local.controllers.pods import pod_controllers
from rayqueue_local.controllers.serviceaccounts import TokensController

__all__ = ["Controller", "Plane", "QueueController", "default_controllers"]


def default_controllers(cp: Plane) -> list[Controller]:
    """The controllers a :class:`~rayqueue_local.LocalControlPlane` starts, in start order.

    ``cp`` is the control plane; the controllers read what to emulate from ``cp.options``
    (:class:`~rayqueue_local.options.ControlPlaneOptions`).

    The service account tokens controller always runs (it is kube-controller-manager's, not an
    emulated add-on): it fills legacy token Secrets with tokens of ``cp.auth`` and ``cp.ca_cert_path``.

    Example:
        >>> from pathlib import Path
        >>> from rayqueue_local.apiserver.auth import Authenticator
        >>> from rayqueue_local.options import ControlPlaneOptions
        >>> class CP:
        ...     options = ControlPlaneOptions(kuberay_enabled=False, keda_enabled=False)
        ...     auth, ca_cert_path = Authenticator(), Path(__file__)
        >>> [c.name for c in default_controllers(CP())]  # doctest: +NORMALIZE_WHITESPACE
        ['serviceaccount-tokens', 'kueue', 'kueue-provisioning', 'cluster-autoscaler', 'kubelet',
         'deployment', 'job']
    """
    tokens = TokensController(cp.auth, ca_pem=cp.ca_cert_path.read_bytes())
    return [
        tokens,
        KueueController(cp),
        ProvisioningController(),
        LocalClusterAutoscaler(
            delay_seconds=cp.options.provisioning_delay_seconds, failures=cp.options.provisioning_failures
        ),
        *pod_controllers(cp),
        *kuberay_controllers(cp),
        *keda_controllers(cp),
    ]
