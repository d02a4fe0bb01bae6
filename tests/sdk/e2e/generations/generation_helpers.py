"""The plane of one Kueue API generation, as the tests of this directory use it (see ``conftest.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rayqueue_local import LocalControlPlane
from rayqueue_sdk.kube.client import build_api_client

KUEUE = "kueue.x-k8s.io"
#: Room for one small cluster (head 1 CPU + one 1-CPU worker) or one small job-owned RayJob.
TEAM_QUOTA = {"cpu": 4, "memory": "16Gi"}


@dataclass
class Generation:
    """The plane of one Kueue API generation and what a test needs of it."""

    version: str
    plane: LocalControlPlane

    @property
    def api_version(self) -> str:
        return f"{KUEUE}/{self.version}"

    def admin(self) -> Any:
        """An SDK client for the admin (a new one: discovery is cached per client)."""
        cp = self.plane
        return build_api_client(cp.server, token=cp.token, ca_cert_path=str(cp.ca_cert_path))

    def custom(self) -> Any:
        """The kubernetes client's ``CustomObjectsApi`` as the admin."""
        from kubernetes import client

        return client.CustomObjectsApi(self.admin())

    def cluster_queue(self, name: str, quota: dict[str, Any], cohort: str | None = None) -> dict[str, Any]:
        """A ClusterQueue in this generation's field names (``cohort`` became ``cohortName`` in v1beta2)."""
        spec: dict[str, Any] = {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": sorted(quota),
                    "flavors": [
                        {
                            "name": "default-flavor",
                            "resources": [{"name": r, "nominalQuota": q} for r, q in sorted(quota.items())],
                        }
                    ],
                }
            ],
        }
        if cohort:
            spec["cohort" if self.version == "v1beta1" else "cohortName"] = cohort
        return {
            "apiVersion": self.api_version,
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": spec,
        }
