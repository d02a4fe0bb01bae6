"""rayqueue_sdk: run Ray on shared Kubernetes GPU clusters through Kueue, without writing YAML.

Importing the package is cheap: public names are resolved on first use, so ``ray``,
``kubernetes`` and ``ipywidgets`` are imported only when a feature needs them.

Example:
    >>> import rayqueue_sdk
    >>> "RayQueueError" in rayqueue_sdk.__all__
    True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public name -> module that defines it. Add a name here, to __all__ and to the TYPE_CHECKING block below
# together; tests/sdk/unit/test_public_api.py keeps the three (and the modules) in agreement.
#
# Lazy loading (PEP 562): the module-level __getattr__ below imports a name's module with
# importlib.import_module on first access. This is for start-up time only - `import rayqueue_sdk` stays
# ~40x cheaper than codeflare_sdk's - and hides no cycle: the package's own modules never import this
# facade (they import each other by full module path), and each of them imports on its own in a fresh
# interpreter (tested), so the order in which names are touched cannot matter.
#
# Below the facade, a module may import one of our own modules inside a function when that module is
# first used on a path most sessions never take, so that `from rayqueue_sdk import Cluster,
# ClusterConfiguration, RayJob` loads only what the constructors need (issue 29): the dashboard, the read
# path, the wait, the kube client, scale-to-zero and asyncio load on first use. Each such import carries
# `# lazy: <reason>` on its line (tests/project/test_import_graph.py rejects one without a reason), and
# each is still an edge of the import graph, so the layer contracts and the cycle check see it.
_EXPORTS: dict[str, str] = {
    # errors
    "AdmissionCheckRejected": "rayqueue_sdk.errors",
    "AdmissionTimeout": "rayqueue_sdk.errors",
    "AlreadyExistsError": "rayqueue_sdk.errors",
    "ApiError": "rayqueue_sdk.errors",
    "AuthenticationError": "rayqueue_sdk.errors",
    "ClusterDeletedError": "rayqueue_sdk.errors",
    "ClusterFailedError": "rayqueue_sdk.errors",
    "ClusterNotFoundError": "rayqueue_sdk.errors",
    "ConfigError": "rayqueue_sdk.errors",
    "ConflictError": "rayqueue_sdk.errors",
    "ConnectionFailedError": "rayqueue_sdk.errors",
    "ForbiddenError": "rayqueue_sdk.errors",
    "JobFailedError": "rayqueue_sdk.errors",
    "NotFoundError": "rayqueue_sdk.errors",
    "PreemptedError": "rayqueue_sdk.errors",
    "PriorityClassNotFoundError": "rayqueue_sdk.errors",
    "QueueNotFoundError": "rayqueue_sdk.errors",
    "RayQueueError": "rayqueue_sdk.errors",
    "TLSVerificationError": "rayqueue_sdk.errors",
    "UnsupportedError": "rayqueue_sdk.errors",
    "ScaledToZeroError": "rayqueue_sdk.errors",
    # configuration, clusters, jobs
    "Cluster": "rayqueue_sdk.cluster.cluster",
    "ClusterConfiguration": "rayqueue_sdk.config.models",
    "ManagedClusterConfig": "rayqueue_sdk.config.models",
    "RayJob": "rayqueue_sdk.job.rayjob",
    "RayJobStatus": "rayqueue_sdk.job.status",
    "WorkerGroup": "rayqueue_sdk.config.models",
    "IdlePolicy": "rayqueue_sdk.config.idle",
    "PrometheusSource": "rayqueue_sdk.config.idle",
    "PreStopHook": "rayqueue_sdk.config.idle",
    "IdleMode": "rayqueue_sdk.manifests.idle",
    "IdleState": "rayqueue_sdk.admission.idle",
    "IdleStatus": "rayqueue_sdk.admission.idle",
    # authentication, queues, status
    "TokenAuthentication": "rayqueue_sdk.kube.auth",
    "KubeConfigFileAuthentication": "rayqueue_sdk.kube.auth",
    "list_local_queues": "rayqueue_sdk.queues.local_queues",
    "queue_headroom": "rayqueue_sdk.queues.overview",
    "queue_overview": "rayqueue_sdk.queues.overview",
    "will_it_fit": "rayqueue_sdk.queues.overview",
    "view_queues": "rayqueue_sdk.queues.overview",
    "get_cluster": "rayqueue_sdk.cluster.cluster",
    "list_clusters": "rayqueue_sdk.cluster.observe",
    "view_clusters": "rayqueue_sdk.cluster.view",
    "ClusterDetails": "rayqueue_sdk.cluster.observe",
    "DashboardNotFoundError": "rayqueue_sdk.cluster.dashboard",
    "ClusterPhase": "rayqueue_sdk.admission.cluster",
    "ClusterStatus": "rayqueue_sdk.cluster.status",
    "JobPhase": "rayqueue_sdk.admission.cluster",
    # codeflare-sdk's names (docs/migration.md)
    "set_api_client": "rayqueue_sdk.kube.client",
    "RayJobClient": "rayqueue_sdk.cluster.jobclient",
    "Codeflare": "rayqueue_sdk.common.codeflare",
    "SDKConfig": "rayqueue_sdk.common.codeflare",
    "JobOptions": "rayqueue_sdk.common.codeflare",
    "CodeFlareClusterStatus": "rayqueue_sdk.admission.phases",
    "RayClusterStatus": "rayqueue_sdk.admission.phases",
    "list_all_clusters": "rayqueue_sdk.cluster.compat",
    "list_all_queued": "rayqueue_sdk.cluster.compat",
    # usage (GPU-hours)
    "usage_report": "rayqueue_sdk.queues.usage",
    "UsageReport": "rayqueue_sdk.admission.usage",
}

__all__ = [
    "AdmissionCheckRejected",
    "AdmissionTimeout",
    "AlreadyExistsError",
    "ApiError",
    "AuthenticationError",
    "ClusterDeletedError",
    "ClusterFailedError",
    "ClusterNotFoundError",
    "ConfigError",
    "ConflictError",
    "ConnectionFailedError",
    "ForbiddenError",
    "JobFailedError",
    "NotFoundError",
    "PreemptedError",
    "PriorityClassNotFoundError",
    "QueueNotFoundError",
    "RayQueueError",
    "TLSVerificationError",
    "UnsupportedError",
    "ScaledToZeroError",
    "Cluster",
    "ClusterConfiguration",
    "ManagedClusterConfig",
    "RayJob",
    "RayJobStatus",
    "WorkerGroup",
    "IdleMode",
    "IdlePolicy",
    "IdleState",
    "IdleStatus",
    "PreStopHook",
    "PrometheusSource",
    "TokenAuthentication",
    "KubeConfigFileAuthentication",
    "list_local_queues",
    "queue_headroom",
    "queue_overview",
    "will_it_fit",
    "view_queues",
    "get_cluster",
    "list_clusters",
    "view_clusters",
    "ClusterDetails",
    "DashboardNotFoundError",
    "ClusterPhase",
    "ClusterStatus",
    "JobPhase",
    "set_api_client",
    "RayJobClient",
    "Codeflare",
    "SDKConfig",
    "JobOptions",
    "CodeFlareClusterStatus",
    "RayClusterStatus",
    "list_all_clusters",
    "list_all_queued",
    "usage_report",
    "UsageReport",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from rayqueue_sdk.admission.cluster import ClusterPhase, JobPhase  # noqa: F401
    from rayqueue_sdk.admission.idle import IdleState, IdleStatus  # noqa: F401
    from rayqueue_sdk.admission.phases import CodeFlareClusterStatus, RayClusterStatus  # noqa: F401
    from rayqueue_sdk.admission.usage import UsageReport  # noqa: F401
    from rayqueue_sdk.cluster.cluster import Cluster, get_cluster  # noqa: F401
    from rayqueue_sdk.cluster.compat import list_all_clusters, list_all_queued  # noqa: F401
    from rayqueue_sdk.cluster.dashboard import DashboardNotFoundError  # noqa: F401
    from rayqueue_sdk.cluster.jobclient import RayJobClient  # noqa: F401
    from rayqueue_sdk.cluster.observe import ClusterDetails, list_clusters  # noqa: F401
    from rayqueue_sdk.cluster.status import ClusterStatus  # noqa: F401
    from rayqueue_sdk.cluster.view import view_clusters  # noqa: F401
    from rayqueue_sdk.common.codeflare import Codeflare, JobOptions, SDKConfig  # noqa: F401
    from rayqueue_sdk.config.idle import IdlePolicy, PreStopHook, PrometheusSource  # noqa: F401
    from rayqueue_sdk.config.models import ClusterConfiguration, ManagedClusterConfig, WorkerGroup  # noqa: F401
    from rayqueue_sdk.errors import (  # noqa: F401
        AdmissionCheckRejected,
        AdmissionTimeout,
        AlreadyExistsError,
        ApiError,
        AuthenticationError,
        ClusterDeletedError,
        ClusterFailedError,
        ClusterNotFoundError,
        ConfigError,
        ConflictError,
        ConnectionFailedError,
        ForbiddenError,
        JobFailedError,
        NotFoundError,
        PreemptedError,
        PriorityClassNotFoundError,
        QueueNotFoundError,
        RayQueueError,
        ScaledToZeroError,
        TLSVerificationError,
        UnsupportedError,
    )
    from rayqueue_sdk.job.rayjob import RayJob  # noqa: F401
    from rayqueue_sdk.job.status import RayJobStatus  # noqa: F401
    from rayqueue_sdk.kube.auth import KubeConfigFileAuthentication, TokenAuthentication  # noqa: F401
    from rayqueue_sdk.kube.client import set_api_client  # noqa: F401
    from rayqueue_sdk.manifests.idle import IdleMode  # noqa: F401
    from rayqueue_sdk.queues.local_queues import list_local_queues  # noqa: F401
    from rayqueue_sdk.queues.overview import (  # noqa: F401
        queue_headroom,
        queue_overview,
        view_queues,
        will_it_fit,
    )
    from rayqueue_sdk.queues.usage import usage_report  # noqa: F401


def __getattr__(name: str) -> Any:
    """Resolve a public name on first access (PEP 562) by importing the module :data:`_EXPORTS` names.

    Example:
        >>> import rayqueue_sdk
        >>> rayqueue_sdk.ConfigError.__module__
        'rayqueue_sdk.errors'
    """
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'rayqueue_sdk' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value  # resolve once
    return value


def __dir__() -> list[str]:
    """The module's names plus every public name, resolved or not (so completion lists them).

    Example:
        >>> "RayJob" in dir(__import__("rayqueue_sdk"))
        True
    """
    return sorted(set(globals()) | set(__all__))
