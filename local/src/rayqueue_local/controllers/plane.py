"""What a controller may use of the control plane: the :class:`Plane` protocol.

The controller factories (:func:`~rayqueue_local.controllers.default_controllers` and each package's)
and the controllers that need more than the store are handed the control plane. They see it through
this protocol, not as the whole :class:`~rayqueue_local.LocalControlPlane` (which sits above the
controllers and wires them): what to emulate (``options``), the credentials (``auth``, ``server``,
``ca_cert_path``), the resource types (``registry``), what cannot run here (``unavailable``) and the
extra routes of the API server (``add_route``); and four slots where controllers publish what they
started, for tests and tools (``ray_runtime``, ``gpu_metrics``, ``prometheus``, ``kubelet``).

Example:
    >>> from pathlib import Path
    >>> from rayqueue_local.apiserver.auth import Authenticator
    >>> from rayqueue_local.options import ControlPlaneOptions
    >>> from rayqueue_local.registry.registry import Registry
    >>> class Fake:
    ...     options, auth, server, ca_cert_path = ControlPlaneOptions(), Authenticator(), "", Path()
    ...     registry, unavailable = Registry(), {}
    ...     ray_runtime = gpu_metrics = prometheus = kubelet = None
    ...     def add_route(self, method, path_regex, handler, *, resource, verb): pass
    >>> plane: Plane = Fake()
    >>> plane.options.keda_enabled, plane.unavailable.get("ray")
    (True, None)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from rayqueue_local.apiserver.auth import Authenticator
from rayqueue_local.apiserver.server import RouteHandler
from rayqueue_local.options import ControlPlaneOptions
from rayqueue_local.registry.registry import Registry

__all__ = ["Plane"]


class Plane(Protocol):
    """The part of the control plane that controllers read and publish to.

    Read-only for controllers: ``options``, ``auth``, ``server``, ``ca_cert_path``, ``registry``,
    ``unavailable`` and ``add_route``. Written by controllers (published for tests and tools, untyped
    because the plane only holds them): ``ray_runtime``, ``gpu_metrics``, ``prometheus``, ``kubelet``.
    """

    @property
    def options(self) -> ControlPlaneOptions:
        """What to emulate."""

    @property
    def auth(self) -> Authenticator:
        """Users and tokens (service account tokens are issued here)."""

    @property
    def server(self) -> str:
        """The API server's URL (``""`` before it runs)."""

    @property
    def ca_cert_path(self) -> Path:
        """The PEM file of the CA that signed the API server's certificate."""

    @property
    def registry(self) -> Registry:
        """The resource types the API server serves (a controller may add to discovery)."""

    @property
    def unavailable(self) -> dict[str, str]:
        """What the plane found it cannot run here (``"ray"``, ``"prometheus"``), and why."""

    ray_runtime: Any
    gpu_metrics: Any
    prometheus: Any
    kubelet: Any

    def add_route(
        self, method: str, path_regex: str, handler: RouteHandler, *, resource: str, verb: str
    ) -> None:
        """Serve an extra route on the API server (see ``APIServer.add_route``)."""
