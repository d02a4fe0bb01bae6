"""codeflare-sdk's public names, written down (the package is not installed for this).

From the ``__all__`` of ``codeflare_sdk/__init__.py`` as summarised in ``shared/reference/codeflare-sdk.md``
section 1 ("Root exports"; kube-authkit's ``AuthConfig`` and ``get_k8s_client`` are re-exported when
installed), plus the three names ``codeflare_sdk.ray.rayjobs`` adds (written with their module).
"""

from __future__ import annotations

CODEFLARE_ROOT_ALL: tuple[str, ...] = (
    # clusters
    "Cluster",
    "ClusterConfiguration",
    "RayClusterStatus",
    "CodeFlareClusterStatus",
    "RayCluster",
    "get_cluster",
    "list_all_queued",
    "list_all_clusters",
    # jobs
    "RayJobClient",
    "RayJob",
    "ManagedClusterConfig",
    # widgets
    "view_clusters",
    # auth
    "Authentication",
    "KubeConfiguration",
    "TokenAuthentication",
    "KubeConfigFileAuthentication",
    "set_api_client",
    "AuthConfig",
    "get_k8s_client",
    # utilities
    "list_local_queues",
    "generate_cert",
    "copy_demo_nbs",
    "__version__",
)

CODEFLARE_RAYJOBS_ALL: tuple[str, ...] = (
    "ray.rayjobs.RayJobDeploymentStatus",
    "ray.rayjobs.CodeflareRayJobStatus",
    "ray.rayjobs.RayJobInfo",
)

CODEFLARE_NAMES: tuple[str, ...] = CODEFLARE_ROOT_ALL + CODEFLARE_RAYJOBS_ALL
