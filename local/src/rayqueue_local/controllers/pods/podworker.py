"""One pod run by the local kubelet (:mod:`rayqueue_local.controllers.pods.kubelet`): its volumes and
projected service-account credentials, init containers in order, then its containers as local processes,
restarted by ``restartPolicy`` with the kubelet's back-off, and the pod status that follows from them.

The kubelet controller starts one :class:`PodWorker` per pod it runs, in its own thread, and stops it
when the pod goes; the semantics emulated (and what is not) are in the kubelet module's docstring.

Example:
    >>> NodeContext(store=None, extra_env={}, token_source=None, ca_cert=b"").backoff_initial
    10.0
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rayqueue_local.apimachinery.time import format_rfc3339, now_rfc3339
from rayqueue_local.runtime.kubelet import (
    PodPending,
    container_command,
    materialise,
    project_service_account,
)
from rayqueue_local.runtime.processes import ManagedProcess, ProcessStartError, spawn
from rayqueue_local.storage.store import StoreError

log = logging.getLogger(__name__)

__all__ = ["KUBELET_BACKOFF", "NodeContext", "PodWorker", "TokenSource", "path_safe"]

#: ``token_source(namespace, service_account) -> bearer token``.
TokenSource = Callable[[str, str], str]
#: The first restart back-off, seconds.
KUBELET_BACKOFF = 10.0  # [R pkg/kubelet/kubelet.go backOffPeriod, MaxContainerBackOff]
_BACKOFF_MAX = 300.0
_POLL = 0.2
_HOST_IP = "127.0.0.1"


def path_safe(text: str) -> str:
    """``text`` with every character but letters, digits, ``_``, ``.`` and ``-`` as ``_`` (a file name).

    Example:
        >>> path_safe("ns_pod/1")
        'ns_pod_1'
    """
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


@dataclass
class _Container:
    """One container's life inside a :class:`PodWorker`."""

    spec: dict[str, Any]
    log_dir: Path
    restarts: int = 0
    process: ManagedProcess | None = None
    state: dict[str, Any] = field(default_factory=lambda: {"waiting": {"reason": "PodInitializing"}})
    last_state: dict[str, Any] = field(default_factory=dict)
    started_at: float = 0.0
    next_start: float = 0.0
    backoff: float = 0.0
    done: bool = False  # terminated and will not restart

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    def log_path(self, restart: int | None = None) -> Path:
        return self.log_dir / f"{self.restarts if restart is None else restart}.log"

    def status(self) -> dict[str, Any]:
        running = "running" in self.state
        out: dict[str, Any] = {
            "name": self.name,
            "image": self.spec.get("image", ""),
            "imageID": "",
            "ready": running,
            "started": running,
            "restartCount": self.restarts,
            "state": self.state,
        }
        if self.last_state:
            out["lastState"] = self.last_state
        return out


@dataclass(frozen=True)
class NodeContext:
    """What the kubelet gives every pod it runs: the ``store`` (volumes and service accounts are read
    from it), ``extra_env`` (the plane's ``KUBERNETES_SERVICE_*`` variables), ``token_source`` and
    ``ca_cert`` (the projected service-account token and its ``ca.crt``) and ``backoff_initial`` (the
    first restart back-off).

    Example:
        >>> NodeContext(store=None, extra_env={}, token_source=None, ca_cert=b"").backoff_initial
        10.0
    """

    store: Any
    extra_env: dict[str, str]
    token_source: TokenSource | None
    ca_cert: bytes
    backoff_initial: float = KUBELET_BACKOFF


class PodWorker:
    """One pod run on this machine, in its own thread (see the module docstring).

    ``node`` is what the kubelet gives every pod (:class:`NodeContext`); ``on_status(pod_status)`` is
    called after every change; ``event(type, reason, message)``
    records an Event about the pod.
    """

    def __init__(
        self,
        pod: dict[str, Any],
        *,
        root: Path,
        node: NodeContext,
        on_status: Callable[[dict[str, Any]], None],
        event: Callable[[str, str, str], None],
    ) -> None:
        self.pod = pod
        self.root = root
        self.node = node
        self.on_status = on_status
        self.event = event
        spec = pod.get("spec") or {}
        self.restart_policy = str(spec.get("restartPolicy") or "Always")
        self.grace = float(spec.get("terminationGracePeriodSeconds", 30))
        logs = root / "logs"
        self.inits = [
            _Container(c, logs / path_safe(str(c.get("name")))) for c in spec.get("initContainers") or []
        ]
        self.mains = [
            _Container(c, logs / path_safe(str(c.get("name")))) for c in spec.get("containers") or []
        ]
        self.phase = "Pending"
        self.reason = ""
        self.message = ""
        self.initialized = not self.inits
        self.start_time = now_rfc3339()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    # -- public ---------------------------------------------------------------------------------
    def start(self) -> None:
        """Run the pod in a background thread."""
        self._thread = threading.Thread(
            target=self._run, name=f"kubelet-{self.pod['metadata'].get('name')}", daemon=True
        )
        self._thread.start()

    def stop(self, grace: float | None = None) -> None:
        """Stop every container (SIGTERM, SIGKILL after ``grace``, default the pod's
        ``terminationGracePeriodSeconds``) and wait for the worker thread."""
        self._stop.set()
        grace = self.grace if grace is None else grace
        for c in self.inits + self.mains:
            if c.process is not None and c.process.alive():
                self.event("Normal", "Killing", f"Stopping container {c.name}")
                c.process.stop(grace)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=grace + 10)

    def container(self, name: str) -> _Container | None:
        """The container (or init container) called ``name``."""
        return next((c for c in self.inits + self.mains if c.name == name), None)

    def log_of(self, name: str, previous: bool) -> tuple[Path, Callable[[], bool]] | None:
        """``(log file, still running?)`` of container ``name`` (its previous run with
        ``previous``), or ``None`` when that container has not run (yet)."""
        c = self.container(name)
        if c is None:
            return None
        if previous:
            if c.restarts == 0 or not c.log_path(c.restarts - 1).exists():
                return None
            return c.log_path(c.restarts - 1), lambda: False
        if c.process is None and not c.log_path().exists():
            return None
        current = c.restarts
        return (
            c.log_path(current),
            lambda: (
                not self._stop.is_set()
                and c.restarts == current
                and c.process is not None
                and c.process.popen.poll() is None
            ),
        )

    def status(self) -> dict[str, Any]:
        """The pod's ``status`` as the kubelet reports it."""
        with self._lock:
            ready = self.phase == "Running" and all("running" in c.state for c in self.mains)
            stamp = now_rfc3339()

            def cond(kind: str, ok: bool, reason: str = "") -> dict[str, Any]:
                out = {"type": kind, "status": "True" if ok else "False", "lastTransitionTime": stamp}
                if reason and not ok:
                    out["reason"] = reason
                return out

            not_ready = "PodCompleted" if self.phase in ("Succeeded", "Failed") else "ContainersNotReady"
            status: dict[str, Any] = {
                "phase": self.phase,
                "hostIP": _HOST_IP,
                "hostIPs": [{"ip": _HOST_IP}],
                "podIP": _HOST_IP,
                "podIPs": [{"ip": _HOST_IP}],
                "startTime": self.start_time,
                "qosClass": "BestEffort",
                "conditions": [
                    cond("PodScheduled", True),
                    cond("Initialized", self.initialized, "ContainersNotInitialized"),
                    cond("ContainersReady", ready, not_ready),
                    cond("Ready", ready, not_ready),
                ],
                "containerStatuses": [c.status() for c in self.mains],
            }
            if self.inits:
                status["initContainerStatuses"] = [c.status() for c in self.inits]
            if self.reason:
                status["reason"] = self.reason
            if self.message:
                status["message"] = self.message
            return status

    # -- the pod's life -------------------------------------------------------------------------
    def _where(self) -> str:
        meta = self.pod["metadata"]
        return f"{meta.get('namespace')}/{meta.get('name')}"

    def _report(self) -> None:
        try:
            self.on_status(self.status())
        except Exception:  # the store may be closing; the next change reports again
            log.debug("kubelet: status of %s not written", self.pod["metadata"].get("name"), exc_info=True)

    def _run(self) -> None:
        try:
            if self._prepare():
                self._supervise()
        except Exception:  # the pod's own thread: log any failure rather than let the thread die silently
            log.exception(
                "kubelet: pod %s/%s failed",
                self.pod["metadata"].get("namespace"),
                self.pod["metadata"].get("name"),
            )

    def _prepare(self) -> bool:
        """Volumes, credentials and init containers; False when the pod ended (or was stopped)."""
        missing = [c for c in self.inits + self.mains if not c.spec.get("command")]
        if missing:
            why = (
                f'container "{missing[0].name}" has no command: the local control plane runs containers as '
                "local processes and cannot run an image's entrypoint; give the container a command"
            )
            for c in missing:
                c.state = {"waiting": {"reason": "CreateContainerError", "message": why}}
            self.event("Warning", "Failed", f"Error: {why}")
            self._report()
            return False
        meta = self.pod["metadata"]
        namespace = str(meta.get("namespace") or "default")
        last_error = ""
        while not self._stop.is_set():
            try:
                self.local = materialise(self.node.store, namespace, self.pod.get("spec") or {}, self.root)
                break
            except PodPending as err:
                for c in self.inits + self.mains:
                    c.state = {"waiting": {"reason": "ContainerCreating"}}
                if str(err) != last_error:
                    last_error = str(err)
                    self.event("Warning", "FailedMount", f"MountVolume.SetUp failed: {err}")
                    self._report()
                self._stop.wait(1.0)
            except ValueError as err:
                self._fail("Failed", str(err))
                return False
        if self._stop.is_set():
            return False
        self._project_token(namespace)
        for c in self.mains:
            c.state = {"waiting": {"reason": "PodInitializing" if self.inits else "ContainerCreating"}}
        self._report()
        for c in self.inits:
            if not self._run_init(c):
                return False
        with self._lock:
            self.initialized = True
        return True

    def _project_token(self, namespace: str) -> None:
        spec = self.pod.get("spec") or {}
        if self.node.token_source is None or spec.get("automountServiceAccountToken") is False:
            return
        account = str(spec.get("serviceAccountName") or spec.get("serviceAccount") or "default")
        if spec.get("automountServiceAccountToken") is None:
            try:
                sa = self.node.store.get("serviceaccounts", namespace, account)
                if sa.get("automountServiceAccountToken") is False:
                    return
            except StoreError:
                pass  # no ServiceAccount object: its token is still issued (no admission here)
        project_service_account(
            self.local, namespace, self.node.token_source(namespace, account), self.node.ca_cert
        )

    def _launch(self, c: _Container) -> bool:
        """Start one container; False (container left waiting with the reason) if it cannot start."""
        try:
            argv, env, cwd = container_command(
                self.local, c.spec, self.pod, store=self.node.store, extra_env=self.node.extra_env
            )
        except (PodPending, ValueError) as err:
            c.state = {"waiting": {"reason": "CreateContainerConfigError", "message": str(err)}}
            self.event("Warning", "Failed", f"Error: {err}")
            return False
        c.log_dir.mkdir(parents=True, exist_ok=True)
        path = c.log_path()
        path.unlink(missing_ok=True)
        try:
            c.process = spawn(
                argv,
                name=f"pod {self._where()} {c.name}",
                log_path=path,
                env=env,
                cwd=cwd,
                cri_log=True,
            )
        except ProcessStartError as err:
            c.process = None
            c.state = {
                "terminated": {
                    "exitCode": 128,
                    "reason": "StartError",
                    "message": str(err),
                    "startedAt": format_rfc3339(0),
                    "finishedAt": now_rfc3339(),
                }
            }
            self.event("Warning", "Failed", f"Error: {err}")
            return True
        c.started_at = time.time()
        with self._lock:
            c.state = {"running": {"startedAt": format_rfc3339(c.started_at)}}
        self.event("Normal", "Started", f"Started container {c.name}")
        return True

    def _exited(self, c: _Container) -> int | None:
        """The exit code if ``c`` finished (its state then ``terminated``), else ``None``."""
        if c.process is None:
            term = c.state.get("terminated")
            return int(term["exitCode"]) if term else None
        if c.process.popen.poll() is None:
            return None
        code = c.process.wait()
        if code < 0:  # killed by a signal: a runtime reports 128 + signal
            code = 128 - code
        c.process.stop(0)  # whatever of its session is left
        c.process = None
        with self._lock:
            c.state = {
                "terminated": {
                    "exitCode": code,
                    "reason": "Completed" if code == 0 else "Error",
                    "startedAt": format_rfc3339(c.started_at),
                    "finishedAt": now_rfc3339(),
                }
            }
        return code

    def _schedule_restart(self, c: _Container) -> None:
        """Back-off before the next start, as the kubelet's CrashLoopBackOff."""
        c.backoff = self.node.backoff_initial if c.backoff == 0 else min(c.backoff * 2, _BACKOFF_MAX)
        c.next_start = time.monotonic() + c.backoff
        meta = self.pod["metadata"]
        message = (
            f"back-off {c.backoff:g}s restarting failed container={c.name} "
            f"pod={meta.get('name')}_{meta.get('namespace')}({meta.get('uid')})"
        )
        with self._lock:
            c.last_state, c.state = c.state, {"waiting": {"reason": "CrashLoopBackOff", "message": message}}
        self.event(
            "Warning",
            "BackOff",
            f"Back-off restarting failed container {c.name} in pod {meta.get('name')}_{meta.get('namespace')}"
            f"({meta.get('uid')})",
        )

    def _restart(self, c: _Container) -> None:
        c.restarts += 1
        self._launch(c)

    def _run_init(self, c: _Container) -> bool:
        self._launch(c)
        self._report()
        while not self._stop.is_set():
            code = self._exited(c)
            if code is None:
                self._stop.wait(_POLL)
                continue
            if code == 0:
                self._report()
                return True
            if self.restart_policy == "Never":
                self._fail("", "")
                return False
            self._schedule_restart(c)
            self._report()
            while not self._stop.is_set() and time.monotonic() < c.next_start:
                self._stop.wait(_POLL)
            if not self._stop.is_set():
                self._restart(c)
                self._report()
        return False

    def _fail(self, reason: str, message: str) -> None:
        with self._lock:
            self.phase, self.reason, self.message = "Failed", reason, message
            for c in self.mains:
                if "waiting" in c.state:
                    c.state = {"waiting": {"reason": "PodInitializing"}} if reason == "" else c.state
        self._report()

    def _supervise(self) -> None:
        for c in self.mains:
            self._launch(c)
        with self._lock:
            self.phase = "Running"
        self._report()
        while not self._stop.is_set():
            changed = False
            for c in self.mains:
                if c.done:
                    continue
                if c.process is None and "waiting" in c.state:
                    if c.next_start and time.monotonic() >= c.next_start:
                        c.next_start = 0.0
                        self._restart(c)
                        changed = True
                    continue
                code = self._exited(c)
                if code is None:
                    if c.backoff and time.time() - c.started_at > 600:  # ran 10 min: back-off resets
                        c.backoff = 0.0
                    continue
                changed = True
                restart = self.restart_policy == "Always" or (
                    self.restart_policy == "OnFailure" and code != 0
                )
                if restart:
                    self._schedule_restart(c)
                else:
                    c.done = True
            if all(c.done for c in self.mains):
                failed = any(int(c.state["terminated"]["exitCode"]) != 0 for c in self.mains)
                with self._lock:
                    self.phase = "Failed" if failed else "Succeeded"
                self._report()
                return
            if changed:
                self._report()
            self._stop.wait(_POLL)
