"""KubeRay's RayCluster controller, emulated over the store with a real local Ray head.

What it does, as KubeRay v1.7.0 does [R controllers/ray/raycluster_controller.go]:

- the ``<name>-head-svc`` Service always (it stays while suspended);
- not suspended: a head Pod ``<name>-head-<rand>`` and ``clamp(replicas, min, max) × numOfHosts``
  worker Pods ``<name>-<group>-worker-<rand>`` (labels ``ray.io/cluster``, ``ray.io/node-type``,
  ``ray.io/group``), Pending until the Ray head is up, then Running and Ready;
- **one real local Ray head per cluster** (:class:`~.runtime.RayRuntime`): worker Pods are objects
  only, and their CPUs/GPUs/custom resources are added to what the head advertises, so work sized
  for the whole cluster schedules on the one head (CPUs capped to this machine's cores; GPUs
  advertised as asked even without a GPU here);
- ``spec.suspend: true`` (Kueue sets it on create and on eviction): every Pod deleted, the head
  stopped, ``RayClusterSuspending`` then ``RayClusterSuspended``, ``state: suspended``; a suspended
  cluster never starts Ray;
- deletion: dependents go with the owner (store GC) and the head is stopped;
- ``status``: conditions ``HeadPodReady``, ``RayClusterProvisioned``, ``RayClusterSuspending`` /
  ``RayClusterSuspended`` (reasons and messages as upstream), the deprecated ``state``
  (ready/suspended), worker replica counts, ``desiredCPU/Memory/GPU/TPU``, ``head`` (127.0.0.1),
  ``endpoints`` with the real local ports, ``observedGeneration``.

**In-tree autoscaling** (``spec.enableInTreeAutoscaling: true``) runs for real with Ray enabled
(:mod:`.autoscaling`): Ray's own KubeRay autoscaler beside a head that advertises only its own resources,
a real Ray worker node per ungated worker Pod, ``workersToDelete`` honoured and no random trimming.
Without Ray processes worker replicas stay at the spec's value (clamped to min/max), and the plane says
so: condition ``InTreeAutoscaling`` ``False`` with reason ``NotRunByLocalControlPlane`` (not an upstream
condition), a ``Warning`` Event with that reason when it first appears, and a warning in the plane's log.

A head that fails to start (after the runtime's retries) is reported as condition ``ReplicaFailure``
(KubeRay's ``RayClusterReplicaFailure`` constant; reason ``FailedCreateHeadPod``), and its pod shows what
a kubelet would: container waiting in ``CrashLoopBackOff`` with the failure in ``lastState.terminated``.
A head pod that admission refuses (Pod Security in a namespace labelled
``pod-security.kubernetes.io/enforce``, found by a dry-run create before the head is started) starts
nothing either: a Warning Event ``FailedToCreateHeadPod`` ("Failed to create head Pod ns/name, <the
refusal>"), ``ReplicaFailure``/``FailedCreateHeadPod`` with the refusal's words, and the head starts once
the template complies; a refused worker pod gives ``FailedToCreateWorkerPod``.
A head image the kubelet cannot parse starts nothing: the pod waits with ``InvalidImageName`` and the
kubelet's message (:func:`~.resources.head_image_problem`).

Example:
    >>> RayClusterController(RayRuntime(enabled=False)).watches
    ('rayclusters.ray.io', 'pods')
"""

from __future__ import annotations

import logging
from typing import Any

from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.controllers.base import QueueController
from rayqueue_local.controllers.kuberay import resources as R
from rayqueue_local.controllers.kuberay.autoscaling import (
    InTreeAutoscaling,
    gated_pod_status,
    worker_pod_status,
    workers_to_delete,
)
from rayqueue_local.controllers.kuberay.gcsft import CONFIG_ERROR, gcs_ft_launch, restarting_head_status
from rayqueue_local.controllers.kuberay.runtime import HeadHandle, HeadKey, RayRuntime
from rayqueue_local.controllers.kuberay.validation import raycluster_problem
from rayqueue_local.storage.store import StoreError

#: The head handle's reason when admission refused the head pod (nothing is started for it).
_FAILED_CREATE_HEAD = "FailedCreateHeadPod"

log = logging.getLogger(__name__)

__all__ = ["RAYCLUSTERS", "RayClusterController"]

RAYCLUSTERS = "rayclusters.ray.io"  # the resource key of RayClusters
_Item = tuple[str, str]  # (namespace, name)


def _pod_ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") != "Running":
        return False
    return all(c.get("status") == "True" for c in status.get("conditions") or [] if c.get("type") == "Ready")


def _store_error() -> type[Exception]:
    return StoreError


class RayClusterController(QueueController):
    """Reconciles RayClusters into Pods, a head Service, a local Ray head and a status."""

    name = "kuberay-raycluster"
    watches = (RAYCLUSTERS, "pods")
    resync_seconds = 2.0

    def __init__(self, runtime: RayRuntime, autoscaling: InTreeAutoscaling | None = None) -> None:
        super().__init__()
        self.runtime = runtime
        self._reported: set[tuple[str, Any]] = set()  # (uid, generation) whose validation Event was recorded
        #: Ray's autoscaler and worker nodes of autoscaling clusters (None: in-tree autoscaling not run)
        self.autoscaling = autoscaling

    # -- events -----------------------------------------------------------------------------------
    def start(self, store: Any) -> None:
        """Subscribe and start; heads report readiness back through the work queue."""
        self.runtime.set_on_change(self._head_changed)
        super().start(store)

    def stop(self) -> None:
        """Stop the worker thread, then every Ray head."""
        super().stop()
        if self.autoscaling is not None:
            self.autoscaling.release_all()
        self.runtime.stop()

    def container_log(self, pod: dict[str, Any], container: str, previous: bool) -> Any:
        """``(log file, still running?)`` of a head pod's container: the local Ray head's output
        (``ray start --head --block``); ``None`` for other pods, a previous run, or a head without
        a process (Ray disabled, not started yet)."""
        labels = pod.get("metadata", {}).get("labels") or {}
        if previous or labels.get("ray.io/node-type") != "head":
            return None
        handle = self.runtime.find(str(pod["metadata"].get("namespace")), str(labels.get("ray.io/cluster")))
        head = handle.head if handle is not None else None
        if head is None or head.log_path is None:
            return None
        return head.log_path, lambda: head.running

    def _head_changed(self, key: HeadKey) -> None:
        self.enqueue((key[0], key[1]))

    def keys_for(self, event: Any) -> list[Any]:
        obj = event.object
        meta = obj.get("metadata", {})
        if event.key == RAYCLUSTERS:
            return [(meta.get("namespace"), meta.get("name"))]
        cluster = (meta.get("labels") or {}).get("ray.io/cluster")
        return [(meta.get("namespace"), cluster)] if cluster else []

    def resync(self) -> list[Any]:
        items = {(h.key[0], h.key[1]) for h in self.runtime.handles()}
        if self.store is not None:
            for rc in self.store.list(RAYCLUSTERS):
                status = rc.get("status") or {}
                if status.get("state") != "ready" and status.get("state") != "suspended":
                    items.add((rc["metadata"].get("namespace"), rc["metadata"]["name"]))
        return sorted(items)

    # -- reconcile --------------------------------------------------------------------------------
    def reconcile(self, item: _Item) -> None:
        namespace, name = item
        store_error = _store_error()
        try:
            rc = self.store.get(RAYCLUSTERS, namespace, name)
        except store_error as err:
            if getattr(err, "code", None) != 404:
                raise
            self._forget(namespace, name, uid=None)
            return
        uid = rc["metadata"]["uid"]
        self._forget(namespace, name, uid=uid)  # a head of an older cluster of the same name
        key: HeadKey = (namespace, name, uid)
        if rc["metadata"].get("deletionTimestamp"):
            self._release(key)
            return
        if self._invalid(rc):
            return
        suspended = bool((rc.get("spec") or {}).get("suspend"))
        pods = self._pods(rc)
        if suspended:
            self._release(key)
            for pod in pods:
                self._delete_pod(pod)
            pods = []
            handle = None
        else:
            problem = R.head_image_problem(rc)
            refused = self._head_refused(rc, pods)
            if problem is not None:  # the kubelet could never run the head: fail it, start nothing
                handle = self.runtime.fail(key, "InvalidImageName", problem)
            elif refused is not None:  # admission (Pod Security) refuses the head pod: start nothing
                handle = self.runtime.fail(key, _FAILED_CREATE_HEAD, refused)
            elif (gcs_ft := gcs_ft_launch(rc, self._secret_data)) is not None and gcs_ft.problem:
                handle = self.runtime.fail(key, CONFIG_ERROR, gcs_ft.problem)  # a missing password Secret
            else:
                old = self.runtime.get(key)
                if old is not None and old.reason in (_FAILED_CREATE_HEAD, CONFIG_ERROR):
                    self.runtime.release(key)  # the template or the Secret was fixed: start the head now
                handle = self.runtime.ensure(
                    key, {**R.sizes(rc, head_only=self._autoscaled(rc)), "gcs_ft": gcs_ft}
                )
            pods = self._ensure_pods(rc, pods, handle) if refused is None else pods
        self._ensure_service(rc, handle)
        self._write_status(rc, pods, handle, suspended)

    def _invalid(self, rc: dict[str, Any]) -> bool:
        """KubeRay's validation: an invalid cluster gets a Warning Event (once per generation), no more."""
        problem = raycluster_problem(rc)
        if problem is None:
            return False
        meta = rc["metadata"]
        seen = (meta["uid"], meta.get("generation"))
        if seen not in self._reported:
            self._reported.add(seen)
            reason, error = problem
            what = "metadata" if reason == "InvalidRayClusterMetadata" else "spec"
            self._event(
                rc,
                "Warning",
                reason,
                f"The RayCluster {what} is invalid {meta.get('namespace')}/{meta['name']}: {error}",
            )
        return True

    def _secret_data(self, namespace: str, name: str) -> dict[str, str] | None:
        """A Secret's ``data`` (base64 values), or ``None`` when it does not exist."""
        try:
            return dict(self.store.get("secrets", namespace, name).get("data") or {})
        except StoreError as err:
            if err.code != 404:
                raise
            return None

    def _forget(self, namespace: str, name: str, uid: str | None) -> None:
        for handle in self.runtime.handles():
            if handle.key[0] == namespace and handle.key[1] == name and handle.key[2] != uid:
                self._release(handle.key)

    def _release(self, key: HeadKey) -> None:
        if self.autoscaling is not None:
            self.autoscaling.release(key)
        self.runtime.release(key)

    def _autoscaled(self, rc: dict[str, Any]) -> bool:
        """Whether Ray's autoscaler and real worker nodes run for ``rc`` (:mod:`.autoscaling`)."""
        return self.autoscaling is not None and R.in_tree_autoscaling(rc)

    # -- pods -------------------------------------------------------------------------------------
    def _pods(self, rc: dict[str, Any]) -> list[dict[str, Any]]:
        meta = rc["metadata"]
        pods = self.store.list("pods", meta.get("namespace"), label_selector=f"ray.io/cluster={meta['name']}")
        uid = meta["uid"]
        return [
            p
            for p in pods
            if any(o.get("uid") == uid for o in p["metadata"].get("ownerReferences") or [])
            and not p["metadata"].get("deletionTimestamp")
        ]

    def _head_refused(self, rc: dict[str, Any], pods: list[dict[str, Any]]) -> str | None:
        """Why admission refuses the head pod KubeRay would create now (a dry-run create: Pod Security
        in a labelled namespace, say), recorded as KubeRay's ``FailedToCreateHeadPod`` Warning; ``None``:
        there is a head pod already, or it would be admitted."""
        if any((p["metadata"].get("labels") or {}).get("ray.io/node-type") == "head" for p in pods):
            return None
        head = R.desired_pods(rc)[0]
        try:
            self.store.create("pods", head, dry_run=True)
        except _store_error() as err:
            if getattr(err, "code", None) != 403:
                raise
            meta = head["metadata"]
            message = f"Failed to create head Pod {meta['namespace']}/{meta['name']}, {err}"
            self._event(rc, "Warning", "FailedToCreateHeadPod", message)
            return str(err)
        return None

    def _event(self, rc: dict[str, Any], type_: str, reason: str, message: str) -> None:
        """An Event about ``rc`` from the KubeRay operator."""
        self.store.record_event(rc, type=type_, reason=reason, message=message, source="kuberay-operator")

    def _delete_pod(self, pod: dict[str, Any]) -> None:
        store_error = _store_error()
        try:
            self.store.delete("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
        except store_error as err:
            if getattr(err, "code", None) != 404:
                raise

    def _ensure_pods(
        self, rc: dict[str, Any], pods: list[dict[str, Any]], handle: HeadHandle
    ) -> list[dict[str, Any]]:
        """Create missing pods, delete surplus ones, and move them to Running once the head is."""
        wanted = R.desired_pods(rc)
        autoscaled = self._autoscaled(rc)
        doomed = workers_to_delete(rc)  # KubeRay deletes the Pods the autoscaler names first
        for pod in [p for p in pods if p["metadata"]["name"] in doomed]:
            self._delete_pod(pod)
        pods = [p for p in pods if p["metadata"]["name"] not in doomed]
        by_group: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for pod in pods:
            labels = pod["metadata"].get("labels") or {}
            by_group.setdefault(
                (labels.get("ray.io/node-type", ""), labels.get("ray.io/group", "")), []
            ).append(pod)
        keep: list[dict[str, Any]] = []
        wanted_groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for pod in wanted:
            labels = pod["metadata"]["labels"]
            wanted_groups.setdefault((labels["ray.io/node-type"], labels["ray.io/group"]), []).append(pod)
        for group, fresh in wanted_groups.items():
            have = sorted(by_group.pop(group, []), key=lambda p: p["metadata"]["name"])
            if autoscaled and group[0] == "worker":  # no random deletion: the autoscaler names them
                keep.extend(have)
                have = have[: len(fresh)] if len(have) > len(fresh) else have
            else:
                for pod in have[len(fresh) :]:
                    self._delete_pod(pod)
                keep.extend(have[: len(fresh)])
            for pod in fresh[len(have) :]:
                try:
                    created = self.store.create("pods", pod)
                except StoreError as err:  # admission refused it (Pod Security, say): KubeRay's event
                    if err.code != 403:
                        raise
                    kind = "head" if group[0] == "head" else "worker"
                    where = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
                    self._event(
                        rc,
                        "Warning",
                        "FailedToCreateHeadPod" if kind == "head" else "FailedToCreateWorkerPod",
                        f"Failed to create {kind} Pod {where}, {err.message}",
                    )
                    continue
                where = f"{created['metadata']['namespace']}/{created['metadata']['name']}"
                self._event(
                    rc,
                    "Normal",
                    "CreatedHeadPod" if group[0] == "head" else "CreatedWorkerPod",
                    f"Created {group[0]} Pod {where}",
                )
                keep.append(created)
        for leftovers in by_group.values():
            for pod in leftovers:
                self._delete_pod(pod)
        running = handle.state == "ready"
        nodes = self.autoscaling.sync(rc, keep, handle) if autoscaled and self.autoscaling else {}
        restarting = handle.state == "restarting"  # the head container restarts; the workers run on
        out = []
        for pod in keep:
            status = pod.get("status") or {}
            phase = status.get("phase")
            is_head = (pod["metadata"].get("labels") or {}).get("ray.io/node-type") == "head"
            target = "Running" if running or (restarting and not is_head) else "Pending"
            if restarting and is_head:
                container = ((pod.get("spec") or {}).get("containers") or [{}])[0].get("name") or "ray-head"
                counted = [c.get("restartCount") for c in status.get("containerStatuses") or []]
                if counted != [handle.restarts]:
                    pod = dict(pod)
                    pod["status"] = restarting_head_status(container, handle.restarts, handle.last_exit)
                    pod = self.store.update_status("pods", pod)
            elif handle.state == "failed" and is_head:
                # The kubelet's report of a container that cannot run (KubeRay itself only recreates
                # head pods that end Failed; a crash-looping or unpullable head stays as it is).
                broken = R.failed_head_status(pod, handle.reason, handle.error)
                if status.get("containerStatuses") != broken["containerStatuses"]:
                    pod = dict(pod)
                    pod["status"] = broken
                    pod = self.store.update_status("pods", pod)
            elif autoscaled and not is_head:
                pod = self._autoscaled_worker_status(pod, nodes.get(pod["metadata"]["name"]))
            elif phase != target or (is_head and status.get("containerStatuses")):
                pod = dict(pod)
                pod["status"] = R.pod_status(target, ready=running or (restarting and not is_head))
                pod = self.store.update_status("pods", pod)
            out.append(pod)
        return out

    def _autoscaled_worker_status(
        self, pod: dict[str, Any], node: tuple[str, str, int] | None
    ) -> dict[str, Any]:
        """An autoscaling cluster's worker Pod: Running at its Ray node's address once that runs,
        ``SchedulingGated`` while it has gates, Pending otherwise."""
        status = pod.get("status") or {}
        if node is not None:
            ip, started, restarts = node
            container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
            want = worker_pod_status(ip, started, container, restarts)
            counted = [c.get("restartCount") for c in status.get("containerStatuses") or []]
            if status.get("podIP") == ip and status.get("phase") == "Running" and counted == [restarts]:
                return pod
        elif (pod.get("spec") or {}).get("schedulingGates"):
            want = gated_pod_status()
            if status.get("phase") == "Pending" and any(
                c.get("reason") == "SchedulingGated" for c in status.get("conditions") or []
            ):
                return pod
        else:
            want = R.pod_status("Pending", ready=False)
            if status.get("phase") == "Pending" and not status.get("podIP"):
                return pod
        pod = dict(pod)
        pod["status"] = want
        return dict(self.store.update_status("pods", pod))

    # -- service ----------------------------------------------------------------------------------
    def _ensure_service(self, rc: dict[str, Any], handle: HeadHandle | None) -> None:
        ports = handle.ports() if handle is not None and handle.state == "ready" else None
        desired = R.head_service(rc, ports)
        meta = desired["metadata"]
        store_error = _store_error()
        try:
            current = self.store.get("services", meta["namespace"], meta["name"])
        except store_error as err:
            if getattr(err, "code", None) != 404:
                raise
            self.store.create("services", desired)
            return
        if ports is not None and current.get("spec", {}).get("ports") != desired["spec"]["ports"]:
            current["spec"]["ports"] = desired["spec"]["ports"]
            self.store.update("services", current)

    # -- status -----------------------------------------------------------------------------------
    def _write_status(
        self, rc: dict[str, Any], pods: list[dict[str, Any]], handle: HeadHandle | None, suspended: bool
    ) -> None:
        old = rc.get("status") or {}
        status: dict[str, Any] = {k: v for k, v in old.items()}
        conditions: list[dict[str, Any]] = [dict(c) for c in old.get("conditions") or []]
        generation = rc["metadata"].get("generation")
        head_pods = [p for p in pods if (p["metadata"].get("labels") or {}).get("ray.io/node-type") == "head"]
        workers = [p for p in pods if (p["metadata"].get("labels") or {}).get("ray.io/node-type") == "worker"]
        running = [p for p in pods if _pod_ready(p)]
        all_running = bool(pods) and len(running) == len(pods)
        desired_workers = R.desired_worker_replicas(rc)
        groups = (rc.get("spec") or {}).get("workerGroupSpecs") or []

        status["observedGeneration"] = generation
        ready_workers = sum(1 for p in workers if (p.get("status") or {}).get("phase") == "Running")
        status["readyWorkerReplicas"] = ready_workers
        status["availableWorkerReplicas"] = ready_workers
        status["desiredWorkerReplicas"] = desired_workers
        status["minWorkerReplicas"] = sum(
            int(g.get("minReplicas") or 0) * int(g.get("numOfHosts") or 1) for g in groups
        )
        status["maxWorkerReplicas"] = sum(
            int(g.get("maxReplicas") if g.get("maxReplicas") is not None else 2147483647)
            * int(g.get("numOfHosts") or 1)
            for g in groups
        )
        status.update(R.desired_resources(rc))
        if all_running and len(pods) == desired_workers + 1 and not suspended:
            status["state"] = "ready"
            status.pop("reason", None)

        # HeadPodReady
        if not head_pods:
            R.set_condition(conditions, "HeadPodReady", False, "HeadPodNotFound", "Head Pod not found")
        elif _pod_ready(head_pods[0]):
            R.set_condition(conditions, "HeadPodReady", True, "HeadPodRunningAndReady", "")
        else:
            # KubeRay copies the head pod's Ready condition when it is False [R utils/util.go
            # FindHeadPodReadyCondition]: ContainersNotReady for a head that cannot run.
            pod_conditions = (head_pods[0].get("status") or {}).get("conditions") or []
            pod_ready: dict[str, Any] = next((c for c in pod_conditions if c["type"] == "Ready"), {})
            R.set_condition(
                conditions,
                "HeadPodReady",
                False,
                str(pod_ready.get("reason") or "Unknown"),
                str(pod_ready.get("message") or ""),
            )

        # ReplicaFailure (KubeRay's RayClusterReplicaFailure constant): a head that could not start
        conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"]
        if handle is not None and handle.state == "failed" and handle.reason != "InvalidImageName":
            refused = handle.reason == _FAILED_CREATE_HEAD
            R.set_condition(
                conditions,
                "ReplicaFailure",
                True,
                "FailedCreateHeadPod",
                str(handle.error) if refused else f"local Ray head: {handle.error}",
            )

        # In-tree autoscaling: asked for, but not run here. Said on the RayCluster (a condition, and a
        # Warning Event when it first appears) rather than silently left at the spec's replicas.
        if R.in_tree_autoscaling(rc) and not self._autoscaled(rc):
            if not any(c.get("type") == R.AUTOSCALING_CONDITION for c in conditions):
                self.store.record_event(
                    rc,
                    type="Warning",
                    reason=R.AUTOSCALING_NOT_RUN,
                    message=R.AUTOSCALING_NOT_RUN_MESSAGE,
                    source="rayqueue-local",
                )
                log.warning(
                    "RayCluster %s/%s: %s",
                    rc["metadata"].get("namespace"),
                    rc["metadata"]["name"],
                    R.AUTOSCALING_NOT_RUN_MESSAGE,
                )
            R.set_condition(
                conditions,
                R.AUTOSCALING_CONDITION,
                False,
                R.AUTOSCALING_NOT_RUN,
                R.AUTOSCALING_NOT_RUN_MESSAGE,
            )
        else:
            conditions = [c for c in conditions if c.get("type") != R.AUTOSCALING_CONDITION]

        suspend_state = (
            "RayClusterSuspending"
            if R.condition_true(conditions, "RayClusterSuspending")
            else "RayClusterSuspended"
            if R.condition_true(conditions, "RayClusterSuspended")
            else ""
        )
        if (
            not R.condition_true(conditions, "RayClusterProvisioned")
            and suspend_state != "RayClusterSuspended"
        ):
            if all_running:
                R.set_condition(
                    conditions,
                    "RayClusterProvisioned",
                    True,
                    "AllPodRunningAndReadyFirstTime",
                    "All Ray Pods are ready for the first time",
                )
            else:
                R.set_condition(
                    conditions,
                    "RayClusterProvisioned",
                    False,
                    "RayClusterPodsProvisioning",
                    "RayCluster Pods are being provisioned for first time",
                )
        if suspend_state == "RayClusterSuspending":
            if not pods:
                _suspension_done(conditions)
        elif suspend_state == "RayClusterSuspended":
            if not suspended:
                R.set_condition(conditions, "RayClusterSuspended", False, "RayClusterSuspended")
        else:
            R.set_condition(conditions, "RayClusterSuspended", False, "RayClusterSuspended")
            R.set_condition(conditions, "RayClusterSuspending", suspended, "RayClusterSuspending")
            if suspended and not pods:  # the pods are already gone: Suspending is over at once
                _suspension_done(conditions, only_if_provisioned=True)
        if suspended and not pods:
            status["state"] = "suspended"
        status["conditions"] = conditions

        ready = handle is not None and handle.state == "ready"
        status["endpoints"] = handle.endpoints() if ready and handle is not None else {}
        if not status["endpoints"]:
            status.pop("endpoints")
        svc = R.head_service(rc)["metadata"]["name"]
        head: dict[str, Any] = {"serviceName": svc}
        if head_pods:
            head["podName"] = head_pods[0]["metadata"]["name"]
            if (head_pods[0].get("status") or {}).get("phase") == "Running":
                head.update({"podIP": R.LOCAL_IP, "serviceIP": R.LOCAL_IP})
        status["head"] = head
        if status != old:
            status["lastUpdateTime"] = now_rfc3339()
            if old.get("state") != status.get("state") and status.get("state"):
                times = dict(old.get("stateTransitionTimes") or {})
                times[status["state"]] = status["lastUpdateTime"]
                status["stateTransitionTimes"] = times
            fresh = dict(rc)
            fresh["status"] = status
            try:
                self.store.update_status(RAYCLUSTERS, fresh)
            except StoreError as err:
                if err.code != 404:
                    raise
                # Deleted while it was reconciled (a quick apply/down): its delete event forgets it.
                meta = rc["metadata"]
                log.debug("%s/%s is gone; its status is not written", meta.get("namespace"), meta["name"])


def _suspension_done(conditions: list[dict[str, Any]], *, only_if_provisioned: bool = False) -> None:
    """Suspending is over (no pods left): not provisioned any more, Suspended instead of Suspending."""
    if not only_if_provisioned or R.condition_true(conditions, "RayClusterProvisioned"):
        R.set_condition(
            conditions,
            "RayClusterProvisioned",
            False,
            "RayClusterPodsProvisioning",
            "RayCluster has been suspended",
        )
    R.set_condition(conditions, "RayClusterSuspending", False, "RayClusterSuspending")
    R.set_condition(conditions, "RayClusterSuspended", True, "RayClusterSuspended")
