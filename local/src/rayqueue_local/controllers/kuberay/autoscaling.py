"""KubeRay's in-tree autoscaling, run for real: Ray's own autoscaler and one Ray worker node per worker Pod.

For a RayCluster with ``spec.enableInTreeAutoscaling: true`` (and Ray enabled), as KubeRay v1.x does it
[R controllers/ray/common/pod.go BuildAutoscalerContainer, raycluster_controller.go reconcilePods]:

- the head runs without Ray's own monitor (``ray start --head --no-monitor``, as KubeRay starts it when
  the autoscaler sidecar runs) and advertises only the head's resources;
- Ray's KubeRay autoscaler runs beside it (:mod:`rayqueue_local.runtime.rayautoscaler`, Ray's
  ``run_kuberay_autoscaler``), pointed at this plane's API server with a token of a user limited to the
  cluster's namespace (``kuberay-autoscaler:<namespace>:<cluster>``, forgotten with the cluster): it
  patches ``workerGroupSpecs[i].replicas`` and ``scaleStrategy.workersToDelete``, and its policy
  (``idleTimeoutSeconds``, ``upscalingMode``) is Ray's;
- every worker Pod without a scheduling gate runs a real Ray worker node
  (:class:`~rayqueue_local.runtime.rayworker.RayWorker`) on a loopback address of its own, its
  ``podIP``; a Pod with a gate (Kueue's ``kueue.x-k8s.io/elastic-job`` while its Workload slice is not
  admitted) stays ``Pending`` with ``PodScheduled=False``/``SchedulingGated``, as the scheduler leaves it;
- the Pods named in ``workersToDelete`` are deleted (their Ray nodes stopped), and a group with more
  Pods than ``replicas`` is not trimmed at random (KubeRay's ``ENABLE_RANDOM_POD_DELETE`` is off when
  autoscaling).

Pure helpers: :func:`worker_pod_status`, :func:`gated_pod_status`, :func:`workers_to_delete`.

Example:
    >>> workers_to_delete({"spec": {"workerGroupSpecs": [{"scaleStrategy": {"workersToDelete": ["a"]}}]}})
    {'a'}
    >>> worker_pod_status("127.1.0.1", "2026-01-01T00:00:00Z")["podIP"]
    '127.1.0.1'
    >>> st = worker_pod_status("127.1.0.1", "t", {"name": "w", "image": "ray:2.52.1"})["containerStatuses"][0]
    >>> st["name"], st["image"], st["imageID"], st["state"]
    ('w', 'ray:2.52.1', '', {'running': {'startedAt': 't'}})
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.controllers.kuberay import resources as R
from rayqueue_local.controllers.kuberay.runtime import HeadHandle, HeadKey
from rayqueue_local.runtime.processes import ManagedProcess, spawn
from rayqueue_local.runtime.rayworker import RayWorker, RayWorkerSpec, worker_address

log = logging.getLogger(__name__)

__all__ = ["InTreeAutoscaling", "gated_pod_status", "worker_pod_status", "workers_to_delete"]


def workers_to_delete(rc: dict[str, Any]) -> set[str]:
    """Every Pod name in the worker groups' ``scaleStrategy.workersToDelete``."""
    out: set[str] = set()
    for group in (rc.get("spec") or {}).get("workerGroupSpecs") or []:
        out.update((group.get("scaleStrategy") or {}).get("workersToDelete") or [])
    return out


def worker_pod_status(
    ip: str, started: str, container: dict[str, Any] | None = None, restarts: int = 0
) -> dict[str, Any]:
    """A worker Pod whose Ray node runs: Running and Ready at ``ip``, its first container (``container``,
    from the Pod's spec) ``running`` since ``started`` after ``restarts`` restarts (what Ray's KubeRay
    node provider reads as an up-to-date node), with the fields a ``ContainerStatus`` requires
    (``image``; ``imageID`` empty: no image was pulled)."""
    status = R.pod_status("Running", ready=True, started=started)
    status.update({"podIP": ip, "podIPs": [{"ip": ip}]})
    container = container or {}
    status["containerStatuses"] = [
        {
            "name": container.get("name") or "ray-worker",
            "image": container.get("image") or "",
            "imageID": "",
            "ready": True,
            "restartCount": restarts,
            "started": True,
            "state": {"running": {"startedAt": started}},
        }
    ]
    return status


def gated_pod_status() -> dict[str, Any]:
    """A Pod the scheduler leaves alone while it has scheduling gates."""
    return {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
                "lastTransitionTime": now_rfc3339(),
            }
        ],
    }


def _group_resources(rc: dict[str, Any], group_name: str) -> tuple[int, int, dict[str, float]]:
    for group in (rc.get("spec") or {}).get("workerGroupSpecs") or []:
        if group.get("groupName") == group_name:
            cpus, gpus, _memory, custom = R.group_size(group)
            return int(-(-cpus // 1)), int(-(-gpus // 1)), dict(custom)
    return 1, 0, {}


@dataclass
class _Cluster:
    """One autoscaling cluster's processes: Ray's autoscaler and the worker nodes by Pod name."""

    user: str
    token_dir: Path
    autoscaler: ManagedProcess | None = None
    workers: dict[str, RayWorker] = field(default_factory=dict)
    ips: dict[str, str] = field(default_factory=dict)
    started: dict[str, str] = field(default_factory=dict)
    restarts: dict[str, int] = field(default_factory=dict)


class InTreeAutoscaling:
    """The autoscaler and worker nodes of every autoscaling RayCluster; thread-safe.

    ``plane()`` returns ``(server URL, CA path, authenticator)`` once the API server runs.
    """

    def __init__(self, plane: Callable[[], tuple[str, Path, Any]]) -> None:
        self._plane = plane
        self._lock = threading.Lock()
        self._clusters: dict[HeadKey, _Cluster] = {}
        self._next_ip = 0

    def sync(
        self, rc: dict[str, Any], pods: list[dict[str, Any]], handle: HeadHandle
    ) -> dict[str, tuple[str, str, int]]:
        """Run the autoscaler and a worker node per ungated worker Pod; stop those of Pods gone; start
        again, at the same address, a worker node whose ``ray start`` ended (the kubelet restarts a
        container that exits: KubeRay's worker Pods restart ``Always``).

        Returns Pod name -> (its IP, start time, restarts) for every worker node started.
        """
        if handle.state != "ready" or handle.head is None:
            return {}
        key = handle.key
        with self._lock:
            cluster = self._clusters.get(key)
            if cluster is None:
                cluster = self._new_cluster(key)
            self._ensure_autoscaler(key, cluster, handle)
            wanted: dict[str, str] = {}
            for pod in pods:
                meta = pod["metadata"]
                labels = meta.get("labels") or {}
                if labels.get("ray.io/node-type") != "worker" or (pod.get("spec") or {}).get(
                    "schedulingGates"
                ):
                    continue
                wanted[meta["name"]] = labels.get("ray.io/group", "")
            for name in [n for n in cluster.workers if n not in wanted]:
                cluster.workers.pop(name).stop()
                cluster.ips.pop(name, None)
                cluster.started.pop(name, None)
                cluster.restarts.pop(name, None)
            for name, group in wanted.items():
                if name in cluster.workers:
                    self._restart_if_ended(cluster, name)
                    continue
                ip = worker_address(self._next_ip)
                self._next_ip = (self._next_ip + 1) % 60000
                cpus, gpus, custom = _group_resources(rc, group)
                worker = RayWorker(
                    RayWorkerSpec(handle.head.gcs_address, ip, name, group, cpus, gpus, custom)
                )
                worker.start()
                cluster.workers[name], cluster.ips[name], cluster.started[name] = worker, ip, now_rfc3339()
            return {
                n: (cluster.ips[n], cluster.started[n], cluster.restarts.get(n, 0)) for n in cluster.workers
            }

    @staticmethod
    def _restart_if_ended(cluster: _Cluster, name: str) -> None:
        worker = cluster.workers[name]
        if worker.running:
            return
        log.warning("Ray worker %s ended; starting it again", name)
        worker.stop(grace=0.0)
        worker.start()
        cluster.started[name] = now_rfc3339()
        cluster.restarts[name] = cluster.restarts.get(name, 0) + 1

    def worker(self, namespace: str, pod_name: str) -> RayWorker | None:
        """The worker node of Pod ``namespace/pod_name``, if one runs (for its container log)."""
        with self._lock:
            for key, cluster in self._clusters.items():
                if key[0] == namespace and pod_name in cluster.workers:
                    return cluster.workers[pod_name]
        return None

    def release(self, key: HeadKey) -> None:
        """Stop the cluster's autoscaler and worker nodes, and forget its token. Idempotent."""
        with self._lock:
            cluster = self._clusters.pop(key, None)
        if cluster is None:
            return
        if cluster.autoscaler is not None:
            cluster.autoscaler.stop(0.0)
        for worker in cluster.workers.values():
            worker.stop(grace=1.0)
        try:
            _server, _ca, auth = self._plane()
            auth.remove_user(cluster.user)
        except Exception:  # the plane is stopping: its users go with it
            log.debug("autoscaler user %s not removed", cluster.user)
        for path in cluster.token_dir.glob("*"):
            path.unlink(missing_ok=True)
        cluster.token_dir.rmdir()

    def release_all(self) -> None:
        """Stop everything (the plane stops)."""
        with self._lock:
            keys = list(self._clusters)
        for key in keys:
            self.release(key)

    def clusters(self) -> list[HeadKey]:
        """The clusters whose autoscaling runs."""
        with self._lock:
            return list(self._clusters)

    # -- internals --------------------------------------------------------------------------------
    def _new_cluster(self, key: HeadKey) -> _Cluster:
        token_dir = Path(tempfile.mkdtemp(prefix="rqauto-", dir="/tmp"))
        cluster = _Cluster(user=f"kuberay-autoscaler:{key[0]}:{key[1]}", token_dir=token_dir)
        self._clusters[key] = cluster
        return cluster

    def _ensure_autoscaler(self, key: HeadKey, cluster: _Cluster, handle: HeadHandle) -> None:
        if cluster.autoscaler is not None and cluster.autoscaler.alive():
            return
        assert handle.head is not None
        server, ca_path, auth = self._plane()
        if not server:
            return
        host, _, port = server.removeprefix("https://").rpartition(":")
        token_file = cluster.token_dir / "token"
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:  # the token is never on a command line or in a log
            out.write(auth.add_user(cluster.user, [key[0]]))
        env = dict(os.environ)
        env.update(
            {
                "KUBERNETES_SERVICE_HOST": host,
                "KUBERNETES_SERVICE_PORT_HTTPS": port,
                "RAY_KUBERAY_CA_CERT_PATH": str(ca_path),
                "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
                "GRPC_ENABLE_FORK_SUPPORT": "0",
                "RAY_USAGE_STATS_ENABLED": "0",
            }
        )
        env.pop("RAY_HEAD_POD_NAME", None)
        cluster.autoscaler = spawn(
            [
                sys.executable,
                "-m",
                "rayqueue_local.runtime.rayautoscaler",
                "--token-file",
                str(token_file),
                "--cluster",
                key[1],
                "--namespace",
                key[0],
                "--gcs-address",
                handle.head.gcs_address,
            ],
            name=f"ray autoscaler {key[0]}/{key[1]}",
            log_path=cluster.token_dir / "autoscaler.log",
            env=env,
            cri_log=True,
        )
        log.info("RayCluster %s/%s: Ray's autoscaler started", key[0], key[1])
