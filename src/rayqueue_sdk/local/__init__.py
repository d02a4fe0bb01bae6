"""The local control plane: a loopback Kubernetes API with Kueue, KubeRay and KEDA behaviour.

A test double and a learning tool (DESIGN §5), not a production scheduler. Importing this package
is cheap: :class:`LocalControlPlane` is loaded on first use.

Example:
    >>> from rayqueue_sdk.local import LocalControlPlane
    >>> with LocalControlPlane(crd_dir="../shared/crds") as cp:        # doctest: +SKIP
    ...     print(cp.server, cp.kubeconfig_path)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rayqueue_sdk.local.controlplane import LocalControlPlane

__all__ = ["LocalControlPlane"]


def __getattr__(name: str) -> Any:
    if name == "LocalControlPlane":
        from rayqueue_sdk.local.controlplane import LocalControlPlane

        return LocalControlPlane
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
