"""codeflare-sdk's public names, written down (the package is not installed for this).

``CODEFLARE_ROOT_ALL``: the names ``codeflare_sdk/__init__.py`` of 0.40.1 binds (its root imports:
kube-authkit's ``AuthConfig`` and ``get_k8s_client`` are re-exported there). ``CODEFLARE_OLDER_ROOT``: root
names of 0.39 that the peer's other notebook generation still imports (``ManagedClusterConfig``).
``CODEFLARE_RAYJOBS_ALL``: the three names ``codeflare_sdk.ray.rayjobs`` adds.
``CODEFLARE_NOTEBOOK_SUBMODULE``: the submodule names the peer's demo notebooks import (both
generations). All are written with their path under ``codeflare_sdk``.

``NOTEBOOK_IMPORTS``: every ``from codeflare_sdk... import ...`` line of the peer's demo notebooks (0.40.1's
shipped ``demo-notebooks/`` and the repository's other generation), read with
``grep -rhoE "from codeflare_sdk[a-zA-Z_.]* import [^\\"]*" --include=*.ipynb``.
"""

from __future__ import annotations

CODEFLARE_ROOT_ALL: tuple[str, ...] = (
    # clusters
    "Cluster",
    "ClusterConfiguration",
    "WorkerGroup",
    "RayClusterStatus",
    "CodeFlareClusterStatus",
    "RayCluster",
    "WorkerGroupStatus",
    "get_cluster",
    "list_all_queued",
    "list_all_clusters",
    # jobs
    "RayJobClient",
    "RayJob",
    # widgets
    "view_clusters",
    # the 0.40 entry point
    "Codeflare",
    "SDKConfig",
    "JobOptions",
    # auth
    "AuthConfig",
    "get_k8s_client",
    "set_api_client",
    "Authentication",
    "KubeConfiguration",
    "TokenAuthentication",
    "KubeConfigFileAuthentication",
    # utilities
    "list_local_queues",
    "generate_cert",
    "copy_demo_nbs",
    "__version__",
)

CODEFLARE_OLDER_ROOT: tuple[str, ...] = ("ManagedClusterConfig",)

CODEFLARE_RAYJOBS_ALL: tuple[str, ...] = (
    "ray.rayjobs.RayJobDeploymentStatus",
    "ray.rayjobs.CodeflareRayJobStatus",
    "ray.rayjobs.RayJobInfo",
)

CODEFLARE_NOTEBOOK_SUBMODULE: tuple[str, ...] = (
    "common.kubernetes_cluster.get_api_client",
    "common.utils.constants.CUDA_PY312_RUNTIME_IMAGE",
    "common.utils.utils.get_ray_image_for_python_version",
)

CODEFLARE_NAMES: tuple[str, ...] = (
    CODEFLARE_ROOT_ALL + CODEFLARE_OLDER_ROOT + CODEFLARE_RAYJOBS_ALL + CODEFLARE_NOTEBOOK_SUBMODULE
)

NOTEBOOK_IMPORTS: tuple[str, ...] = (
    "from codeflare_sdk import Cluster, ClusterConfiguration, RayJob",
    "from codeflare_sdk import Cluster, ClusterConfiguration, RayJobClient, set_api_client",
    "from codeflare_sdk import Cluster, ClusterConfiguration, set_api_client",
    "from codeflare_sdk import Cluster, ClusterConfiguration, view_clusters, set_api_client",
    "from codeflare_sdk import ClusterConfiguration, Codeflare, SDKConfig",
    "from codeflare_sdk import Codeflare, SDKConfig, Cluster, ClusterConfiguration, RayJobClient",
    "from codeflare_sdk import Codeflare, SDKConfig, Cluster, ClusterConfiguration, view_clusters",
    "from codeflare_sdk import Codeflare, SDKConfig, Cluster, ClusterConfiguration",
    "from codeflare_sdk import RayJob, ClusterConfiguration",
    "from codeflare_sdk import RayJob, ManagedClusterConfig",
    "from codeflare_sdk import RayJob, ManagedClusterConfig, set_api_client, get_cluster",
    "from codeflare_sdk import RayJobClient",
    "from codeflare_sdk import Codeflare, SDKConfig, RayJob, ClusterConfiguration, get_cluster",
    "from codeflare_sdk.common.kubernetes_cluster import get_api_client",
    "from codeflare_sdk.common.utils.constants import CUDA_PY312_RUNTIME_IMAGE",
    "from codeflare_sdk.common.utils.utils import get_ray_image_for_python_version",
)
