"""The local kubelet: every Pod that says what to run (``command``) runs as local processes.

There is no container runtime: a container is its ``command`` + ``args`` run as a process of this
machine (images ignored; ``python``/``python3`` are the plane's interpreter; volumes and mount paths
as :mod:`rayqueue_local.runtime.kubelet` maps them), each in its own session through
:func:`~rayqueue_local.runtime.processes.spawn`, so none outlives the plane. Per pod, as the kubelet
does it [R kubernetes/pkg/kubelet/kubelet.go SyncPod, kuberuntime/kuberuntime_manager.go]:

- volumes are made (a missing Secret/ConfigMap keeps the pod ``Pending``, event ``FailedMount``,
  retried), the service account's credentials are projected at
  ``/var/run/secrets/kubernetes.io/serviceaccount`` (``token``, ``ca.crt``, ``namespace``) unless
  ``automountServiceAccountToken: false`` (pod, else ServiceAccount), and
  ``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT`` point at the plane, so a client's in-cluster
  configuration reaches it;
- init containers run in order, each to completion; then every container starts;
- ``restartPolicy`` (``Always``, the default; ``OnFailure``; ``Never``) decides what an exited
  container does: restart with the kubelet's back-off (10 s doubling to 5 min, waiting reason
  ``CrashLoopBackOff``), or stay ``terminated``; the phase is ``Pending`` -> ``Running`` ->
  ``Succeeded`` (every container exited 0 and none restarts) or ``Failed``;
- ``status.containerStatuses`` / ``initContainerStatuses`` carry ``state`` (``waiting`` /
  ``running`` / ``terminated`` with ``exitCode``, ``reason`` ``Completed``/``Error``, times),
  ``lastState``, ``restartCount``, ``ready``, ``started``; conditions ``PodScheduled``,
  ``Initialized``, ``ContainersReady``, ``Ready`` (a running container is ready: probes are not run);
- output goes to one log file per container and restart, in the CRI format
  (:mod:`rayqueue_local.apimachinery.crilog`), served by ``pods/{name}/log``
  (:meth:`KubeletController.container_log`); the files go with the pod;
- deleting the pod sends SIGTERM to each container's process group, then SIGKILL after
  ``terminationGracePeriodSeconds`` (default 30). The API object itself is removed at once (this
  store has no graceful pod deletion), so the kubelet works from the last copy it saw.

Each pod runs in a :class:`~rayqueue_local.controllers.pods.podworker.PodWorker` (its containers, restarts,
status and logs); this module is the controller that starts and stops them and writes their status.

Pods that cannot run honestly here stay ``Pending`` with a ``Failed`` event and the waiting reason
``CreateContainerError`` saying why: a container without ``command`` (its image's entrypoint is
unknown here). Not run by this kubelet: KubeRay's head and worker pods (label ``ray.io/node-type``;
:mod:`rayqueue_local.controllers.kuberay` runs the Ray head), and pods annotated
``rayqueue-local.io/emulated-by`` (another controller reports their status). Probes, resource
limits, ``hostNetwork``, ports and sidecar (``restartPolicy: Always``) init containers are not
emulated.

Example:
    >>> KubeletController(token_source=None).watches
    ('pods',)
"""

from __future__ import annotations

import contextlib
import functools
import logging
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rayqueue_local.controllers.base import QueueController, get_or_none
from rayqueue_local.controllers.pods.podworker import (
    KUBELET_BACKOFF,
    NodeContext,
    PodWorker,
    TokenSource,
    path_safe,
)
from rayqueue_local.storage.store import StoreError

log = logging.getLogger(__name__)

__all__ = [
    "EMULATED_BY",
    "PODS",
    "KubeletController",
    "runs_here",
]

#: The resource key of Pods.
PODS = "pods"
#: An annotation on pods whose status another controller reports: this kubelet leaves them alone.
EMULATED_BY = "rayqueue-local.io/emulated-by"
_SOURCE = "kubelet"


def runs_here(pod: dict[str, Any]) -> bool:
    """Whether this kubelet runs ``pod`` (not a Ray node, not emulated elsewhere, not finished).

    Example:
        >>> runs_here({"metadata": {"labels": {"ray.io/node-type": "head"}}, "spec": {}})
        False
        >>> runs_here({"metadata": {}, "spec": {"containers": [{"name": "c"}]}})
        True
    """
    meta = pod.get("metadata") or {}
    if "ray.io/node-type" in (meta.get("labels") or {}) or EMULATED_BY in (meta.get("annotations") or {}):
        return False
    if meta.get("deletionTimestamp"):
        return False
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def _pending_on_create(operation: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    if operation == "CREATE" and not (new.get("status") or {}).get("phase"):
        new["status"] = {**(new.get("status") or {}), "phase": "Pending", "qosClass": "BestEffort"}
    return new


class KubeletController(QueueController):
    """Runs the pods of the local node (see the module docstring).

    ``token_source(namespace, service_account)`` issues the projected tokens (``None``: no
    credentials are projected); ``server`` (``https://127.0.0.1:<port>``) and ``ca_cert_path`` are
    the plane's, for ``KUBERNETES_SERVICE_HOST``/``_PORT`` and ``ca.crt``. ``backoff_initial``: the
    first restart back-off (upstream: 10 s).
    """

    name = "kubelet"
    watches = (PODS,)
    resync_seconds = 2.0

    def __init__(
        self,
        *,
        token_source: TokenSource | None,
        server: str = "",
        ca_cert_path: Path | None = None,
        backoff_initial: float = KUBELET_BACKOFF,
    ) -> None:
        super().__init__()
        self.token_source = token_source
        self.server = server
        self.ca_cert_path = ca_cert_path
        self.backoff_initial = backoff_initial
        self._workers: dict[str, PodWorker] = {}  # pod uid -> worker
        self._names: dict[tuple[str, str], str] = {}  # (namespace, name) -> uid
        self._wlock = threading.Lock()
        self._base: Path | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, store: Any) -> None:
        """Start; a pod created without a status gets ``phase: Pending`` at once, as the API
        server's pod strategy gives it [R pkg/registry/core/pod/strategy.go PrepareForCreate]."""
        store.add_admission_hook(PODS, _pending_on_create)
        super().start(store)

    def stop(self) -> None:
        """Stop the controller, then every pod's processes (grace at most 5 s) and remove their files."""
        super().stop()
        with self._wlock:
            workers = list(self._workers.values())
            self._workers.clear()
            self._names.clear()
        for worker in workers:
            worker.stop(min(worker.grace, 5.0))
        if self._base is not None:
            shutil.rmtree(self._base, ignore_errors=True)
            self._base = None

    def keys_for(self, event: Any) -> list[Any]:
        meta = event.object.get("metadata", {})
        return [(meta.get("namespace"), meta.get("name"))]

    def resync(self) -> list[Any]:
        if self.store is None:
            return []
        items = {
            (p["metadata"].get("namespace"), p["metadata"]["name"])
            for p in self.store.list(PODS)
            if runs_here(p)
        }
        with self._wlock:
            items.update(self._names)
        return sorted(items, key=lambda i: (str(i[0]), str(i[1])))

    # -- logs -----------------------------------------------------------------------------------
    def container_log(
        self, pod: dict[str, Any], container: str, previous: bool
    ) -> tuple[Path, Callable[[], bool]] | None:
        """``(CRI log file, still running?)`` of one container of a pod this kubelet runs."""
        with self._wlock:
            worker = self._workers.get(str(pod.get("metadata", {}).get("uid")))
        return worker.log_of(container, previous) if worker is not None else None

    def worker(self, uid: str) -> PodWorker | None:
        """The worker of the pod with ``uid``, while it runs here."""
        with self._wlock:
            return self._workers.get(uid)

    # -- reconcile ------------------------------------------------------------------------------
    def reconcile(self, item: tuple[str, str]) -> None:
        namespace, name = item
        pod = get_or_none(self.store, PODS, namespace, name)
        uid = str(pod["metadata"].get("uid")) if pod is not None else None
        with self._wlock:
            known = self._names.get((namespace, name))
        if known is not None and known != uid:  # deleted (or replaced by a new pod of the same name)
            self._forget(namespace, name, known)
        if pod is None or uid is None or not runs_here(pod):
            return
        with self._wlock:
            if uid in self._workers:
                return
            if self._base is None:
                self._base = Path(tempfile.mkdtemp(prefix="rayqueue-kubelet-"))
            root = self._base / path_safe(f"{namespace}_{name}_{uid}")
            node = NodeContext(
                store=self.store,
                extra_env=self._service_env(),
                token_source=self.token_source,
                ca_cert=self.ca_cert_path.read_bytes()
                if self.ca_cert_path and self.ca_cert_path.is_file()
                else b"",
                backoff_initial=self.backoff_initial,
            )
            worker = PodWorker(
                dict(pod),
                root=root,
                node=node,
                on_status=functools.partial(self._write_status, namespace, name, uid),
                event=functools.partial(self._event, dict(pod)),
            )
            self._workers[uid] = worker
            self._names[(namespace, name)] = uid
        root.mkdir(parents=True, exist_ok=True)
        worker.start()

    def _forget(self, namespace: str, name: str, uid: str) -> None:
        with self._wlock:
            worker = self._workers.pop(uid, None)
            if self._names.get((namespace, name)) == uid:
                del self._names[(namespace, name)]
        if worker is None:
            return

        def stop() -> None:
            worker.stop()
            shutil.rmtree(worker.root, ignore_errors=True)

        threading.Thread(target=stop, name=f"kubelet-kill-{name}", daemon=True).start()

    def _service_env(self) -> dict[str, str]:
        """``KUBERNETES_SERVICE_HOST``/``_PORT`` (and the ``KUBERNETES_PORT*`` family) for the plane."""
        if not self.server:
            return {}
        host, _, port = self.server.removeprefix("https://").rpartition(":")
        return {
            "KUBERNETES_SERVICE_HOST": host,
            "KUBERNETES_SERVICE_PORT": port,
            "KUBERNETES_SERVICE_PORT_HTTPS": port,
            "KUBERNETES_PORT": f"tcp://{host}:{port}",
            "KUBERNETES_PORT_443_TCP": f"tcp://{host}:{port}",
            "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
            "KUBERNETES_PORT_443_TCP_ADDR": host,
            "KUBERNETES_PORT_443_TCP_PORT": port,
        }

    def _write_status(self, namespace: str, name: str, uid: str, status: dict[str, Any]) -> None:
        for _ in range(5):
            pod = get_or_none(self.store, PODS, namespace, name)
            if pod is None or str(pod["metadata"].get("uid")) != uid:
                return
            meta = {k: v for k, v in pod["metadata"].items() if k != "resourceVersion"}
            try:
                self.store.update_status(PODS, {**pod, "metadata": meta, "status": status})
                return
            except StoreError as err:
                if err.code not in (404, 409):
                    raise
                if err.code == 404:
                    return

    def _event(self, pod: dict[str, Any], type_: str, reason: str, message: str) -> None:
        with contextlib.suppress(Exception):  # an event is best effort, as upstream's recorder
            self.store.record_event(pod, type=type_, reason=reason, message=message, source=_SOURCE)
