"""The plane serves Kueue as a release of each API generation does (``kueue_api_versions``).

``v1beta2`` alone as Kueue 0.20 (kueue#14558: ``v1beta1`` unserved, its visibility APIService gone),
``v1beta1`` alone as a release before 0.15. The other generation's paths answer 404 and discovery does
not list it, over real HTTP with the real ``kubernetes`` client; the plane's own Kueue controllers admit
as before, and objects written at the served version read back in its field names.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kueue_factory import container, ray_cluster

from rayqueue_local import ControlPlaneOptions, LocalControlPlane
from rayqueue_local.scenarios import seed002_queues

KUEUE = "kueue.x-k8s.io"
VISIBILITY = "visibility.kueue.x-k8s.io"
OTHER = {"v1beta2": "v1beta1", "v1beta1": "v1beta2"}


def _get(api: Any, path: str) -> tuple[int, Any]:
    """``(status, body)`` of a GET through the kubernetes client's REST layer."""
    import json

    token = api.configuration.api_key["authorization"]
    response = api.call_api(
        "GET", api.configuration.host + path, header_params={"Authorization": f"Bearer {token}"}
    )
    response.read()
    return response.status, json.loads(response.data)


@pytest.fixture(scope="module", params=["v1beta2", "v1beta1"])
def plane(request: pytest.FixtureRequest, crd_dir: Path) -> Iterator[tuple[str, LocalControlPlane, Any]]:
    """A plane serving one generation, with Kueue and KubeRay (no Ray processes), its admin client."""
    version = request.param
    cp = LocalControlPlane(
        crd_dir=crd_dir,
        kueue_api_versions=version,
        ray_enabled=False,
        keda_enabled=False,
        prometheus_enabled=False,
    )
    with cp:
        cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
        api = cp.api_client()
        yield version, cp, api
        api.close()


def test_only_the_chosen_generation_is_discovered_and_served(
    plane: tuple[str, LocalControlPlane, Any],
) -> None:
    version, _cp, api = plane
    other = OTHER[version]
    status, groups = _get(api, "/apis")
    assert status == 200
    by_name = {g["name"]: g for g in groups["groups"]}
    assert [v["version"] for v in by_name[KUEUE]["versions"]] == [version]
    assert by_name[KUEUE]["preferredVersion"]["version"] == version
    assert [v["version"] for v in by_name[VISIBILITY]["versions"]] == [version]
    status, resources = _get(api, f"/apis/{KUEUE}/{version}")
    assert status == 200 and "workloads" in {r["name"] for r in resources["resources"]}
    assert _get(api, f"/apis/{KUEUE}/{other}")[0] == 404
    assert _get(api, f"/apis/{KUEUE}/{other}/clusterqueues")[0] == 404
    assert _get(api, f"/apis/{KUEUE}/{other}/namespaces/team/localqueues")[0] == 404
    assert _get(api, f"/apis/{KUEUE}/{version}/namespaces/team/localqueues")[0] == 200
    assert _get(api, f"/apis/{VISIBILITY}/{other}")[0] == 404


def test_the_crd_objects_say_what_is_served(plane: tuple[str, LocalControlPlane, Any]) -> None:
    version, _cp, api = plane
    status, crd = _get(api, f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workloads.{KUEUE}")
    assert status == 200
    served = {v["name"]: v["served"] for v in crd["spec"]["versions"]}
    assert served == {version: True, OTHER[version]: False}
    # A version served alone is not deprecated (a release before 0.15 did not deprecate v1beta1).
    assert not any(v.get("deprecated") for v in crd["spec"]["versions"])


def test_the_plane_admits_what_is_written_at_the_served_version(
    plane: tuple[str, LocalControlPlane, Any],
) -> None:
    """A cohort, queues and a priority class written in the served generation's own field names
    (``v1beta1``: ``spec.cohort``; ``v1beta2``: ``spec.cohortName``); the RayCluster is admitted
    and its Workload, LocalQueue and pending view read back in that generation's names."""
    from kubernetes import client

    version, cp, api = plane
    custom = client.CustomObjectsApi(api)
    av = f"{KUEUE}/{version}"
    cohort_field = "cohort" if version == "v1beta1" else "cohortName"
    quotas = {"name": "default-flavor", "resources": [{"name": "cpu", "nominalQuota": 2}]}
    custom.create_cluster_custom_object(
        KUEUE,
        version,
        "resourceflavors",
        {"apiVersion": av, "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}},
    )
    custom.create_cluster_custom_object(
        KUEUE,
        version,
        "clusterqueues",
        {
            "apiVersion": av,
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                cohort_field: "all",
                "namespaceSelector": {},
                "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [quotas]}],
            },
        },
    )
    custom.create_namespaced_custom_object(
        KUEUE,
        version,
        "team",
        "localqueues",
        {
            "apiVersion": av,
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "team"},
            "spec": {"clusterQueue": "cq"},
        },
    )
    custom.create_cluster_custom_object(
        KUEUE,
        version,
        "workloadpriorityclasses",
        {"apiVersion": av, "kind": "WorkloadPriorityClass", "metadata": {"name": "high"}, "value": 100},
    )
    cq = custom.get_cluster_custom_object(KUEUE, version, "clusterqueues", "cq")
    assert cq["apiVersion"] == av and cq["spec"][cohort_field] == "all"
    assert (
        cp.store.get(f"clusterqueues.{KUEUE}", None, "cq")["spec"]["cohortName"] == "all"
    )  # stored as v1beta2

    fits = ray_cluster("fits", "team", queue="lq", priority_class="high", head=container(cpu=1))
    waits = ray_cluster("waits", "team", queue="lq", head=container(cpu=2))
    custom.create_namespaced_custom_object("ray.io", "v1", "team", "rayclusters", fits)
    uid = cp.store.get("rayclusters.ray.io", "team", "fits")["metadata"]["uid"]

    def admitted() -> dict[str, Any] | None:
        items = custom.list_namespaced_custom_object(
            KUEUE, version, "team", "workloads", label_selector=f"{KUEUE}/job-uid={uid}"
        )["items"]
        conditions = (items[0].get("status") or {}).get("conditions") or [] if items else []
        ok = any(c["type"] == "Admitted" and c["status"] == "True" for c in conditions)
        return items[0] if ok else None

    workload = _eventually(admitted)
    assert workload["apiVersion"] == av
    if version == "v1beta1":
        assert workload["spec"]["priorityClassName"] == "high" and "priorityClassRef" not in workload["spec"]
    else:
        assert workload["spec"]["priorityClassRef"]["name"] == "high"

    custom.create_namespaced_custom_object("ray.io", "v1", "team", "rayclusters", waits)
    usage_field = "flavorUsage" if version == "v1beta1" else "flavorsUsage"

    def counted() -> dict[str, Any] | None:
        lq = custom.get_namespaced_custom_object(KUEUE, version, "team", "localqueues", "lq")
        status = lq.get("status") or {}
        return lq if status.get("pendingWorkloads") == 1 and status.get(usage_field) else None

    _eventually(counted)
    status, pending = _get(
        api, f"/apis/{VISIBILITY}/{version}/namespaces/team/localqueues/lq/pendingworkloads"
    )
    assert status == 200 and pending["apiVersion"] == f"{VISIBILITY}/{version}"
    assert [i["positionInLocalQueue"] for i in pending["items"]] == [0]


def test_scenarios_apply_and_provisioning_requests_name_the_served_workload_version(
    plane: tuple[str, LocalControlPlane, Any],
) -> None:
    """``cp.apply`` takes the scenarios' ``v1beta2`` objects on a ``v1beta1``-only plane too (the plane's
    own path to its store), and the ProvisioningRequest Kueue makes for seed 002's admission check is
    owned by the Workload at the version served (``kueue.x-k8s.io/v1beta1`` before 0.15)."""
    from kubernetes import client

    version, cp, api = plane
    cp.apply(seed002_queues("team", cluster_queue="prov-cq"))
    custom = client.CustomObjectsApi(api)
    cq = custom.get_cluster_custom_object(KUEUE, version, "clusterqueues", "prov-cq")
    assert cq["apiVersion"] == f"{KUEUE}/{version}"  # with onFlavors: admissionChecksStrategy in both
    custom.create_namespaced_custom_object(
        "ray.io", "v1", "team", "rayclusters", ray_cluster("prov", "team", queue="user-queue")
    )

    def request() -> dict[str, Any] | None:
        found = custom.list_namespaced_custom_object(
            "autoscaling.x-k8s.io", "v1", "team", "provisioningrequests"
        )
        return found["items"][0] if found["items"] else None

    owner = _eventually(request)["metadata"]["ownerReferences"][0]
    assert (owner["apiVersion"], owner["kind"]) == (f"{KUEUE}/{version}", "Workload")


def test_a_restart_serves_what_the_new_run_chooses(crd_dir: Path, tmp_path: Path) -> None:
    """State kept from a run serving both generations does not bring the other one back: the CRD files,
    narrowed to this run's choice, win over the CRD objects kept in the state directory."""
    with LocalControlPlane(crd_dir=crd_dir, state_dir=tmp_path, controllers=[]) as cp:
        assert cp.registry.lookup(KUEUE, "v1beta1", "workloads") is not None
    with LocalControlPlane(
        crd_dir=crd_dir, state_dir=tmp_path, controllers=[], kueue_api_versions="v1beta2"
    ) as cp:
        api = cp.api_client()
        assert _get(api, f"/apis/{KUEUE}/v1beta1")[0] == 404
        assert _get(api, f"/apis/{KUEUE}/v1beta2/clusterqueues")[0] == 200
        api.close()
    with LocalControlPlane(crd_dir=crd_dir, state_dir=tmp_path, controllers=[]) as cp:
        assert cp.registry.group_versions()[KUEUE] == ["v1beta2", "v1beta1"]


def test_an_unknown_choice_names_the_choices() -> None:
    with pytest.raises(ValueError, match="both, v1beta2, v1beta1"):
        ControlPlaneOptions(kueue_api_versions="v1")  # type: ignore[arg-type]


def _eventually(check: Any, timeout: float = 60.0) -> Any:
    """Poll ``check`` until truthy; the limit only ends a hang (nothing timed is asserted)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "the condition did not happen"
        time.sleep(0.1)
