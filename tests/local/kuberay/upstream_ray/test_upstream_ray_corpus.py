"""Kueue v0.19.2's and KubeRay v1.7.0's own Ray cases, re-told as data, run on the plane and the SDK.

Each entry of ``cases/*.yaml`` is one upstream test case (``upstream:`` names the repository's file, the
test and the case, and the tag read), written in our own schema (see :mod:`ray_objects` for the object;
nothing of upstream's code is copied). It is run twice:

- **on the plane** (one control plane without Ray processes for the module): the object is created
  through the API server and the answer compared with upstream's: ``refused`` (Kueue's webhook, a 403
  whose text holds the given words), ``invalid`` (KubeRay's controller: a Warning Event
  ``InvalidRayCluster*``/``InvalidRayJob*`` holding the words, no pods; a RayJob also
  ``jobDeploymentStatus: ValidationFailed``), or ``accepted`` (KubeRay writes its status and no
  validation Event appears), with optional ``suspended``/``queue`` (what Kueue's mutating webhook
  did), ``workload`` (the pod sets Kueue's Workload holds: ``[name, count, {resource: per pod}]``),
  ``admitted`` (the pod templates Kueue fills when it admits), ``onHold`` (the Workload gives its quota
  back). An ``update:`` (``queue``; ``admitted: true`` waits for Kueue to admit first) is applied to
  the created object and its answer compared the same way.
- **through the SDK** (``sdk:``), where the SDK can express the shape: ``make: cluster``
  (``ClusterConfiguration(**args)``, rendered), ``make: job`` (``RayJob(**args)`` with
  ``cluster_config=ManagedClusterConfig(**cluster)``, rendered) or ``make: manifest`` (the rules over the
  case's object). ``raises: {field, rule}``: a ``ConfigError`` naming that field and saying that rule,
  and not one request reaches the plane's API server; else it must render, and (``make: cluster``/``job``)
  the rendered object is accepted by the plane. ``sdk_choice:`` says why the SDK refuses what upstream
  accepts (a deliberate choice, counted apart).

A case the plane or the SDK does not follow yet carries ``xfail: <why>`` (strict).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException
from ray_objects import build

from rayqueue_local import LocalControlPlane
from rayqueue_sdk.config.models import ClusterConfiguration, ManagedClusterConfig, WorkerGroup
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.job.rayjob import RayJob
from rayqueue_sdk.manifests.raycluster import build_raycluster
from rayqueue_sdk.manifests.rules import check_raycluster, check_rayjob

HERE = Path(__file__).parent
CASES = [
    pytest.param(
        case,
        id=case["id"],
        marks=[pytest.mark.xfail(strict=True, reason=case["xfail"])] if case.get("xfail") else [],
    )
    for path in sorted((HERE / "cases").glob("*.yaml"))
    for case in yaml.safe_load(path.read_text())
]
SDK_CASES = [p for p in CASES if p.values[0].get("sdk")]
PLURAL = {"RayCluster": "rayclusters", "RayJob": "rayjobs"}

QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: ur-flavor}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "pods"]
    flavors:
    - name: ur-flavor
      resources:
      - {{name: cpu, nominalQuota: 1000}}
      - {{name: memory, nominalQuota: 4Ti}}
      - {{name: pods, nominalQuota: 1000}}
---
apiVersion: v1
kind: Namespace
metadata: {{name: {ns}}}
---
apiVersion: v1
kind: Namespace
metadata: {{name: {ns}-d}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: {ns}, name: user-queue}}
spec: {{clusterQueue: {cq}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: {ns}, name: other-queue}}
spec: {{clusterQueue: {cq}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: {ns}, name: held-queue}}
spec: {{clusterQueue: {cq}, stopPolicy: Hold}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: {ns}-d, name: default}}
spec: {{clusterQueue: {cq}, stopPolicy: Hold}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: {ns}-d, name: user-queue}}
spec: {{clusterQueue: {cq}, stopPolicy: Hold}}
"""


class Plane:
    """The module's control plane, its namespaces and a few reads."""

    def __init__(self, cp: LocalControlPlane) -> None:
        self.cp = cp
        self.ns = f"ur-{uuid.uuid4().hex[:6]}"
        cp.apply(QUEUES.format(ns=self.ns, cq=f"{self.ns}-cq"))
        self.api = cp.api_client()
        self.custom = k8s.CustomObjectsApi(self.api)
        self.core = k8s.CoreV1Api(self.api)

    def namespace(self, case: dict[str, Any]) -> str:
        return f"{self.ns}-d" if case.get("namespace") == "with-default-queue" else self.ns

    def create(self, ns: str, obj: dict[str, Any]) -> dict[str, Any]:
        return self.custom.create_namespaced_custom_object("ray.io", "v1", ns, PLURAL[obj["kind"]], obj)

    def get(self, ns: str, kind: str, name: str) -> dict[str, Any]:
        return self.custom.get_namespaced_custom_object("ray.io", "v1", ns, PLURAL[kind], name)

    def events(self, ns: str, kind: str, name: str) -> list[Any]:
        items = self.core.list_namespaced_event(ns).items
        return [
            e
            for e in items
            if (e.involved_object.kind, e.involved_object.name) == (kind, name)
            and (e.reason or "").startswith("Invalid")
        ]

    def pods(self, ns: str, cluster: str) -> list[Any]:
        return self.core.list_namespaced_pod(ns, label_selector=f"ray.io/cluster={cluster}").items

    def workloads(self, ns: str, uid: str) -> list[dict[str, Any]]:
        items = self.custom.list_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", ns, "workloads")[
            "items"
        ]
        return [
            w for w in items if any(o.get("uid") == uid for o in w["metadata"].get("ownerReferences") or ())
        ]


def wait_for(fetch: Callable[[], Any], done: Callable[[Any], bool], timeout: float = 60.0) -> Any:
    """Poll ``fetch()`` until ``done(value)`` (the caller asserts on the value it gets back)."""
    deadline = time.monotonic() + timeout
    value = fetch()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.1)
        value = fetch()
    return value


@pytest.fixture(scope="module")
def plane(ray_api_cp: LocalControlPlane) -> Plane:
    return Plane(ray_api_cp)


def _seen(kind: str) -> Callable[[dict[str, Any]], bool]:
    if kind == "RayJob":
        return lambda o: bool((o.get("status") or {}).get("jobDeploymentStatus"))
    return lambda o: bool((o.get("status") or {}).get("state"))


def _reserved(wl: dict[str, Any]) -> bool:
    conditions = (wl.get("status") or {}).get("conditions") or []
    return any(c["type"] == "QuotaReserved" and c["status"] == "True" for c in conditions)


def _pod_sets(wl: dict[str, Any]) -> list[list[Any]]:
    out = []
    for ps in wl["spec"]["podSets"]:
        total: dict[str, str] = {}
        for c in ps["template"]["spec"].get("containers") or ():
            for r, q in ((c.get("resources") or {}).get("requests") or {}).items():
                total.setdefault(r, []).append(q)  # type: ignore[attr-defined]
        out.append([ps["name"], ps["count"], {r: "+".join(qs) for r, qs in total.items()}])
    return out


def _check_outcome(plane: Plane, ns: str, obj: dict[str, Any], stored: dict[str, Any], want: Any) -> None:
    kind, name = obj["kind"], obj["metadata"]["name"]
    want = {"accepted": True} if want == "accepted" else want
    if "invalid" in want:
        events = wait_for(lambda: plane.events(ns, kind, name), bool)
        assert events and want["invalid"] in events[0].message, [e.message for e in events]
        assert events[0].type == "Warning"
        if kind == "RayJob":
            job = wait_for(
                lambda: plane.get(ns, kind, name),
                lambda o: (o.get("status") or {}).get("jobDeploymentStatus") == "ValidationFailed",
            )
            assert job["status"]["jobDeploymentStatus"] == "ValidationFailed"
            assert (
                job["status"]["reason"] == "ValidationFailed" and want["invalid"] in job["status"]["message"]
            )
        else:
            assert plane.pods(ns, name) == [] and "state" not in (
                plane.get(ns, kind, name).get("status") or {}
            )
        if want.get("onHold"):  # IsOnHold: the job's Workload gives its quota back (or was never made)
            uid = stored["metadata"]["uid"]
            wls = wait_for(lambda: plane.workloads(ns, uid), lambda ws: not any(_reserved(w) for w in ws))
            assert not any(_reserved(w) for w in wls)
        return
    seen = wait_for(lambda: plane.get(ns, kind, name), _seen(kind))
    assert _seen(kind)(seen), seen.get("status")
    assert plane.events(ns, kind, name) == []
    labels = seen["metadata"].get("labels") or {}
    if "suspended" in want:
        assert bool(seen["spec"].get("suspend")) is want["suspended"]
    if "queue" in want:
        assert labels.get("kueue.x-k8s.io/queue-name") == want["queue"]
    if "workload" in want and want["workload"] is None:  # not managed: Kueue never makes one
        assert plane.workloads(ns, seen["metadata"]["uid"]) == []
    elif "workload" in want:
        wls = wait_for(lambda: plane.workloads(ns, seen["metadata"]["uid"]), bool)
        assert wls and _pod_sets(wls[0]) == want["workload"], wls and _pod_sets(wls[0])
    if "admitted" in want:
        ready = wait_for(lambda: plane.get(ns, kind, name), lambda o: not o["spec"].get("suspend"))
        spec = ready["spec"] if kind == "RayCluster" else ready["spec"]["rayClusterSpec"]
        meta = spec["headGroupSpec"]["template"].get("metadata") or {}
        for key, value in want["admitted"].items():
            assert {**meta.get("labels", {}), **meta.get("annotations", {})}.get(key) == value.replace(
                "<ns>", ns
            )


def _relabel(plane: Plane, ns: str, kind: str, name: str, update: dict[str, Any]) -> str | None:
    """Change the queue label (a fresh read and retry while the controllers write the object: 409)."""
    for _ in range(20):
        current = plane.get(ns, kind, name)
        assert bool(current["spec"].get("suspend")) is not update.get("admitted", False)
        labels = current["metadata"].setdefault("labels", {})
        if update["queue"] is None:
            labels.pop("kueue.x-k8s.io/queue-name", None)
        else:
            labels["kueue.x-k8s.io/queue-name"] = update["queue"]
        try:
            plane.custom.replace_namespaced_custom_object("ray.io", "v1", ns, PLURAL[kind], name, current)
            return None
        except ApiException as err:
            if err.status != 409:
                assert err.status in (403, 422), err.body
                return str(err.body)
    raise AssertionError("the object kept changing under the update")


def _refusal(plane: Plane, call: Callable[[], Any]) -> str | None:
    try:
        call()
    except ApiException as err:
        assert err.status in (403, 422), err.body
        return str(err.body)
    return None


@pytest.mark.parametrize("case", CASES)
def test_plane_answers_as_upstream(plane: Plane, case: dict[str, Any]) -> None:
    ns = plane.namespace(case)
    obj = build(case)
    if "name" not in case:  # a fresh name per case: they share the namespace
        obj["metadata"]["name"] = f"{obj['metadata']['name']}-{uuid.uuid4().hex[:8]}"
    want = case["plane"]
    stored: dict[str, Any] = {}

    def create() -> None:
        stored.update(plane.create(ns, obj))

    refused = _refusal(plane, create)
    if "update" not in case and isinstance(want, dict) and "refused" in want:
        assert refused is not None and want["refused"] in refused, refused
        return
    assert refused is None, refused
    if "update" not in case:
        _check_outcome(plane, ns, obj, stored, want)
        return
    update = case["update"]
    kind, name = obj["kind"], obj["metadata"]["name"]
    if update.get("admitted"):
        wait_for(lambda: plane.get(ns, kind, name), lambda o: not o["spec"].get("suspend"))
    answer = _relabel(plane, ns, kind, name, update)
    if want == "accepted":
        assert answer is None, answer
    else:
        assert answer is not None and want["refused"] in answer, answer


def _sdk_object(case: dict[str, Any]) -> dict[str, Any]:
    sdk = case["sdk"]
    args = dict(sdk.get("args") or {})
    if sdk["make"] == "manifest":
        obj = build(case)
        (check_raycluster if obj["kind"] == "RayCluster" else check_rayjob)(obj)
        return obj
    if "worker_groups" in args:
        args["worker_groups"] = [WorkerGroup(**g) for g in args["worker_groups"]]
    if sdk["make"] == "cluster":
        return build_raycluster(ClusterConfiguration(**args))
    cluster = dict(sdk.get("cluster") or {})
    if "worker_groups" in cluster:
        cluster["worker_groups"] = [WorkerGroup(**g) for g in cluster["worker_groups"]]
    job = RayJob(entrypoint="python -c 'print(1)'", cluster_config=ManagedClusterConfig(**cluster), **args)
    return job.to_dict()


@pytest.mark.parametrize("case", SDK_CASES)
def test_sdk_refuses_first_or_renders_what_the_plane_accepts(plane: Plane, case: dict[str, Any]) -> None:
    sdk = case["sdk"]
    log = plane.cp.api_server.record_requests()
    since = time.monotonic()
    if "raises" in sdk:
        with pytest.raises(ConfigError) as caught:
            _sdk_object(case)
        assert log.count(since=since) == 0
        assert sdk["raises"]["field"] in caught.value.field, caught.value
        assert sdk["raises"]["rule"] in str(caught.value), caught.value
        return
    obj = _sdk_object(case)
    assert log.count(since=since) == 0
    if sdk["make"] == "manifest":
        return
    ns = plane.ns
    obj["metadata"]["namespace"] = ns
    obj["metadata"]["name"] = f"sdk-{uuid.uuid4().hex[:6]}"
    stored = plane.create(ns, obj)
    _check_outcome(plane, ns, obj, stored, "accepted")
