"""The local control plane: a loopback Kubernetes API with Kueue, KubeRay and KEDA behaviour.

A test double and a learning tool (DESIGN §5), not a production scheduler. Importing this package
is cheap: :class:`LocalControlPlane` is loaded on first use.

Three ways in:

* Python: ``with LocalControlPlane(crd_dir=..., ray_enabled=False) as cp:`` (the options:
  :class:`ControlPlaneOptions`) — ``cp.server`` (https URL), ``cp.token``
  (admin), ``cp.ca_cert_path``, ``cp.kubeconfig_path``, ``cp.api_client(token=None)``,
  ``cp.apply(yaml_or_dicts)``, ``cp.add_user(name, namespaces) -> token``, ``cp.faults``
  (:mod:`~rayqueue_local.apiserver.faults`), ``cp.store``/``cp.registry`` (the data layer).
* Shell: ``rayqueue local up [--crds DIR] [--state-dir DIR] [--kubeconfig PATH] [--context NAME]``
  then any Kubernetes client with that context; ``rayqueue local down`` stops it.
* pytest: the ``local_control_plane``, ``api_client`` and ``namespace`` fixtures
  (:mod:`~rayqueue_local.pytest_plugin`), installed with the package.

What the API server does and how it differs from upstream: :mod:`~rayqueue_local.apiserver.server`
(HTTP, TLS, auth, faults), :mod:`~rayqueue_local.apiserver.rest` (REST semantics over the store),
:mod:`~rayqueue_local.storage.store` (object semantics), :mod:`~rayqueue_local.apiserver.auth` (users).

Example:
    >>> from rayqueue_local import LocalControlPlane
    >>> with LocalControlPlane(crd_dir="../shared/crds") as cp:        # doctest: +SKIP
    ...     from kubernetes import client
    ...     token = cp.add_user("alice", ["default"])
    ...     client.CoreV1Api(cp.api_client(token)).list_namespaced_config_map("default").items
    []
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rayqueue_local.errors import LocalControlPlaneError
from rayqueue_local.options import ControlPlaneOptions

if TYPE_CHECKING:
    from rayqueue_local.controlplane import LocalControlPlane

__all__ = ["ControlPlaneOptions", "LocalControlPlane", "LocalControlPlaneError"]


def __getattr__(name: str) -> Any:
    if name == "LocalControlPlane":
        # lazy: the control plane is ~250 ms of imports; `import rayqueue_local` (the `rayqueue` CLI's
        # registration, `python -m rayqueue_local.runtime.watchdog`) must not pay for it.
        from rayqueue_local.controlplane import LocalControlPlane

        return LocalControlPlane
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
