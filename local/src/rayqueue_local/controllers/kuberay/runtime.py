"""The Ray runtime behind the emulated RayClusters: one real local Ray head per running cluster.

:class:`RayRuntime` starts heads in the background (at most ``max_starting`` at once: each takes
seconds of CPU on a small machine; and at most one per core of all the planes on the machine, see
:mod:`rayqueue_local.runtime.startslots`), tells the controller when one is ready or failed, stops them
exactly (by their own process group, see :mod:`rayqueue_local.runtime.processes`), and watches which
clusters have a Ray job running (for the GPU metrics). With ``enabled=False`` no process is
started: a cluster's "head" is ready at once on KubeRay's default ports, so API-level tests of
pods, services and conditions run without Ray.

Example:
    >>> rt = RayRuntime(enabled=False)
    >>> h = rt.ensure(("ns", "demo", "uid-1"), sizes={"cpus": 1, "gpus": 0, "memory": 0, "resources": {}})
    >>> h.state, h.endpoints()["dashboard"]
    ('ready', '8265')
    >>> rt.release(("ns", "demo", "uid-1")); rt.stop()
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rayqueue_local.controllers.kuberay.resources import DEFAULT_PORTS
from rayqueue_local.runtime.raylocal import RayHead, RayHeadSpec
from rayqueue_local.runtime.startslots import StartSlots

#: How often a head that fails to start is tried (with fresh ports) before the cluster is failed.
_HEAD_START_ATTEMPTS = 3
#: Seconds before the next attempt, times the attempt number.
_HEAD_RETRY_DELAY = 1.0
#: How often the container of a head that was ready is restarted before the cluster is failed. A kubelet
#: restarts it for as long as the pod exists, backing off between restarts; the plane stops after these,
#: so a head that can never come back ends in a typed failure rather than a wait without end.
#: Why more than a first start's: a restarting GCS-FT head recovers its state from Redis and its raylet
#: waits for its agents before registering, which `ray start` allows 30 s (hard-coded in Ray's node.py);
#: on this 2-core machine under a two-worker test run (load 7-9) all three quick restarts missed those
#: 30 s, while the same restart with the machine less loaded registered in 12 s.
_HEAD_RESTART_ATTEMPTS = 6
#: The kubelet's restart back-off: 10 s, doubled after each failed restart (the kubelet caps it at 300 s;
#: the plane at 80 s, so its six restarts fit in the few minutes a user's ``wait_ready`` gives them).
_RESTART_BACKOFF_S = 10.0
_RESTART_BACKOFF_CAP_S = 80.0


def _failure_summary(text: str, limit: int = 600) -> str:
    r"""The first line of a start failure plus the last non-empty lines of its log, within ``limit``.

    Example:
        >>> _failure_summary("`ray start` exited with 1:\nINFO x\n\nValueError: port 6379 is in use")
        '`ray start` exited with 1: ... INFO x | ValueError: port 6379 is in use'
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "unknown error"
    head, tail = lines[0], " | ".join(lines[1:][-3:])
    summary = f"{head} ... {tail}" if tail else head
    return summary if len(summary) <= limit else summary[: limit - 3] + "..."


log = logging.getLogger(__name__)

__all__ = ["HeadHandle", "HeadKey", "RayRuntime"]

HeadKey = tuple[str, str, str]  # (namespace, cluster name, cluster uid)


@dataclass
class HeadHandle:
    """One cluster's head as the controllers see it: ``state`` is starting | ready | restarting | failed.

    ``restarting``: the head process died after it was ready and is being started again, as the kubelet
    restarts the head container (``restarts`` counts them, ``last_exit`` is the last exit status).

    A failed head has ``error`` (what went wrong) and ``reason``: the kubelet's waiting reason its pod
    shows (``CrashLoopBackOff`` for a head that exited, ``InvalidImageName`` for an image the kubelet
    cannot parse).
    """

    key: HeadKey
    head: RayHead | None
    state: str = "starting"
    error: str = ""
    reason: str = "CrashLoopBackOff"
    ready_since: float | None = None
    busy: bool = False
    jobs: dict[str, str] = field(default_factory=dict)
    restarts: int = 0
    last_exit: int | None = None

    def endpoints(self) -> dict[str, str]:
        """``status.endpoints``: the real local ports (KubeRay's defaults without Ray)."""
        if self.head is not None and self.head.ports is not None:
            return self.head.endpoints()
        return {k: str(DEFAULT_PORTS[k]) for k in ("client", "dashboard", "gcs-server", "metrics")}

    def ports(self) -> dict[str, int]:
        """Port name -> port, as used for the head Service."""
        return {k: int(v) for k, v in self.endpoints().items()}

    @property
    def dashboard_url(self) -> str:
        """``http://127.0.0.1:<dashboard port>``."""
        return f"http://127.0.0.1:{self.endpoints()['dashboard']}"

    def memory(self) -> dict[str, int]:
        """Memory of the head's process tree (zeros without Ray)."""
        return self.head.memory() if self.head is not None else {"rss": 0, "pss": 0, "processes": 0}


class RayRuntime:
    """Real local Ray heads keyed by (namespace, cluster, uid); thread-safe.

    ``unavailable`` (a reason: Ray is not installed) makes every head fail at once with it, so the
    RayCluster's ``ReplicaFailure`` condition says why instead of the cluster waiting forever.

    ``on_change(key)`` is called (from a background thread) when a head becomes ready or fails.
    ``poll_seconds`` is how often running heads are asked which jobs run (for :meth:`busy`).
    ``max_starting`` limits this runtime's starts at once; ``start_slots`` (the machine's, by default)
    those of every plane of the user on the machine.
    """

    def __init__(
        self,
        *,
        enabled: bool = True,
        unavailable: str | None = None,
        max_starting: int = 2,
        start_slots: StartSlots | None = None,
        poll_seconds: float = 1.0,
        on_change: Callable[[HeadKey], None] | None = None,
    ) -> None:
        self.enabled = enabled
        self.unavailable = unavailable
        self.poll_seconds = poll_seconds
        self._on_change = on_change
        self._lock = threading.Lock()
        self._heads: dict[HeadKey, HeadHandle] = {}
        self._starting = threading.BoundedSemaphore(max(1, max_starting))
        self._slots = start_slots or StartSlots()
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None

    def set_on_change(self, callback: Callable[[HeadKey], None] | None) -> None:
        """Who to tell when a head becomes ready or fails."""
        self._on_change = callback

    # -- heads ------------------------------------------------------------------------------------
    def get(self, key: HeadKey) -> HeadHandle | None:
        """The handle of ``key``'s head, if one was asked for."""
        with self._lock:
            return self._heads.get(key)

    def find(self, namespace: str, name: str) -> HeadHandle | None:
        """The handle of the head of cluster ``namespace/name`` (any uid)."""
        with self._lock:
            for key, handle in self._heads.items():
                if key[0] == namespace and key[1] == name:
                    return handle
        return None

    def handles(self) -> list[HeadHandle]:
        """Every head asked for (starting, ready or failed)."""
        with self._lock:
            return list(self._heads.values())

    def ensure(self, key: HeadKey, sizes: dict[str, Any]) -> HeadHandle:
        """The head of ``key``, starting one in the background if there is none."""
        with self._lock:
            handle = self._heads.get(key)
            if handle is not None:
                return handle
            if not self.enabled:
                handle = HeadHandle(key, None, state="ready", ready_since=time.monotonic())
                self._heads[key] = handle
                return handle
            if self.unavailable is not None:  # Ray cannot run here: fail at once, saying why
                handle = HeadHandle(key, None, state="failed", error=self.unavailable)
                self._heads[key] = handle
                return handle
            gcs_ft = sizes.get("gcs_ft")  # a GcsFtLaunch: the external Redis (controllers/kuberay/gcsft)
            spec = RayHeadSpec(
                num_cpus=max(1.0, float(sizes.get("cpus") or 1)),
                num_gpus=int(sizes.get("gpus") or 0),
                resources=dict(sizes.get("resources") or {}),
                label=f"{key[0]}/{key[1]}",
                monitor=bool(sizes.get("monitor", True)),
                env=dict(gcs_ft.env) if gcs_ft is not None else {},
                redis_password=gcs_ft.password if gcs_ft is not None else None,
            )
            handle = HeadHandle(key, RayHead(spec))
            self._heads[key] = handle
            thread = threading.Thread(
                target=self._start, args=(handle,), name=f"ray-head-{key[1]}", daemon=True
            )
            self._threads.append(thread)
        thread.start()
        self._ensure_poller()
        return handle

    def fail(self, key: HeadKey, reason: str, error: str) -> HeadHandle:
        """Mark ``key``'s head failed without starting anything (its pod can never run: ``reason`` is
        the kubelet's, e.g. ``InvalidImageName``); a head already asked for is released first."""
        with self._lock:
            handle = self._heads.get(key)
            if handle is not None and handle.state == "failed" and handle.reason == reason:
                return handle
        if handle is not None:
            self.release(key)
        handle = HeadHandle(key, None, state="failed", error=error, reason=reason)
        with self._lock:
            self._heads[key] = handle
        return handle

    def _start(self, handle: HeadHandle) -> None:
        assert handle.head is not None
        if handle.state == "restarting":
            error = self._restart_with_backoff(handle)  # a start slot per attempt, none while backing off
        else:
            with self._starting, self._slots.held(lambda: self._current(handle) is not handle) as go:
                if not go or self._current(handle) is not handle:
                    return  # released before it could start
                error = self._start_with_retries(handle)
        if error is None:
            handle.state, handle.ready_since = "ready", time.monotonic()
        elif error:  # "" means released while starting: nothing to report
            handle.state, handle.error = "failed", error
        if self._current(handle) is not handle:  # released while starting
            handle.head.stop(grace=0)
            return
        self._notify(handle.key)

    def _start_with_retries(self, handle: HeadHandle) -> str | None:
        """Start the head, retrying with fresh ports as KubeRay recreates a failed head pod.

        Returns ``None`` once ready, ``""`` if the cluster was released meanwhile, or the last
        failure (its first line and the log's last lines) after the last attempt.
        """
        assert handle.head is not None
        error = ""
        for attempt in range(1, _HEAD_START_ATTEMPTS + 1):
            try:
                handle.head.start()  # each start allocates new ports and a new temp dir
                handle.head.wait_ready()
                return None
            except Exception as err:  # a failed head is reported on the cluster, not raised
                handle.head.stop(grace=0)
                if self._current(handle) is not handle:
                    log.debug("Ray head %s/%s released while starting", handle.key[0], handle.key[1])
                    return ""
                error = _failure_summary(str(err))
                log.warning(
                    "Ray head %s/%s failed to start (attempt %d of %d): %s",
                    handle.key[0],
                    handle.key[1],
                    attempt,
                    _HEAD_START_ATTEMPTS,
                    error,  # the first line and the log's last lines, not a whole traceback
                )
                if attempt < _HEAD_START_ATTEMPTS and self._stop.wait(_HEAD_RETRY_DELAY * attempt):
                    return ""
        return error

    def _restart_with_backoff(self, handle: HeadHandle) -> str | None:
        """Start a head that was ready again, as the kubelet restarts its container: each failed start
        is one more restart (``restarts``, ``last_exit`` 1), the next after the kubelet's back-off, which
        holds no start slot. Returns as :meth:`_start_with_retries` does, after
        :data:`_HEAD_RESTART_ATTEMPTS` starts.
        """
        assert handle.head is not None
        error = ""
        for attempt in range(1, _HEAD_RESTART_ATTEMPTS + 1):
            with self._starting, self._slots.held(lambda: self._current(handle) is not handle) as go:
                if not go or self._current(handle) is not handle:
                    return ""  # released while backing off
                try:
                    handle.head.start()
                    handle.head.wait_ready()
                    return None
                except Exception as err:  # a failed restart is reported on the cluster, not raised
                    handle.head.stop(grace=0)
                    error = _failure_summary(str(err))
            if self._current(handle) is not handle:
                return ""
            log.warning(
                "Ray head %s/%s failed to restart (restart %d, attempt %d of %d): %s",
                handle.key[0],
                handle.key[1],
                handle.restarts,
                attempt,
                _HEAD_RESTART_ATTEMPTS,
                error,
            )
            if attempt == _HEAD_RESTART_ATTEMPTS:
                break
            handle.restarts, handle.last_exit = handle.restarts + 1, 1
            self._notify(handle.key)
            backoff = min(_RESTART_BACKOFF_S * 2 ** (attempt - 1), _RESTART_BACKOFF_CAP_S)
            if self._stop.wait(backoff):
                return ""
        return error

    def _restart(self, handle: HeadHandle) -> None:
        """The ready head's process died: start it again in the background, as the kubelet restarts the
        head container of a running pod (KubeRay leaves that to the kubelet). ``state`` is ``restarting``
        until the new process is ready; a cluster with GCS fault tolerance keeps its state (Redis)."""
        assert handle.head is not None
        process = handle.head.process
        handle.last_exit = process.popen.poll() if process is not None else None
        handle.restarts += 1
        handle.state, handle.ready_since, handle.busy, handle.jobs = "restarting", None, False, {}
        log.warning(
            "Ray head %s/%s exited (%s); restarting it (restart %d)",
            handle.key[0],
            handle.key[1],
            handle.last_exit,
            handle.restarts,
        )
        handle.head.stop(grace=0)  # what is left of its session, and its temp dir
        thread = threading.Thread(
            target=self._start, args=(handle,), name=f"ray-head-restart-{handle.key[1]}", daemon=True
        )
        with self._lock:
            self._threads.append(thread)
        self._notify(handle.key)
        thread.start()

    def _current(self, handle: HeadHandle) -> HeadHandle | None:
        with self._lock:
            return self._heads.get(handle.key)

    def release(self, key: HeadKey, *, wait: bool = False) -> None:
        """Stop ``key``'s head (if any) and forget it. Idempotent.

        The stop runs in the background unless ``wait``; a head still starting is stopped by its
        starter thread as soon as ``ray start`` has been launched.
        """
        with self._lock:
            handle = self._heads.pop(key, None)
        if handle is None or handle.head is None:
            return
        head = handle.head
        if wait:
            head.stop(grace=3.0)
            return
        thread = threading.Thread(
            target=head.stop, kwargs={"grace": 3.0}, name=f"ray-stop-{key[1]}", daemon=True
        )
        with self._lock:
            self._threads.append(thread)
        thread.start()

    def stop(self) -> None:
        """Stop every head and the job poller; waits for all of it."""
        self._stop.set()
        with self._lock:
            keys = list(self._heads)
        for key in keys:
            self.release(key, wait=True)
        with self._lock:
            threads, self._threads = list(self._threads), []
        for thread in threads:
            thread.join(timeout=30)
        # a head whose start was under way when stop() began is stopped by its starter thread;
        # anything still recorded is stopped by the process registry at exit.

    def _notify(self, key: HeadKey) -> None:
        if self._on_change is not None:
            try:
                self._on_change(key)
            except Exception:  # a subscriber's bug must not kill the head's starter or poller thread
                log.exception("Ray runtime: change callback failed")

    # -- jobs -------------------------------------------------------------------------------------
    def busy(self, namespace: str, cluster: str) -> bool:
        """Whether a Ray job is RUNNING on that cluster's head (as last polled)."""
        handle = self.find(namespace, cluster)
        return bool(handle is not None and handle.busy)

    def _ensure_poller(self) -> None:
        with self._lock:
            if self._poller is not None or self._stop.is_set():
                return
            self._poller = threading.Thread(target=self._poll_loop, name="ray-job-poller", daemon=True)
        self._poller.start()

    def _poll_loop(self) -> None:
        while not self._stop.wait(self.poll_seconds):
            for handle in self.handles():
                if handle.state != "ready" or handle.head is None:
                    continue
                if not handle.head.running:
                    self._restart(handle)
                    continue
                jobs = _list_jobs(handle.dashboard_url)
                if jobs is None:
                    continue
                handle.jobs = jobs
                handle.busy = any(status == "RUNNING" for status in jobs.values())


def _list_jobs(dashboard_url: str) -> dict[str, str] | None:
    """submission id -> status of every job on a head (``GET /api/jobs/``); None if unreachable."""
    try:
        with urllib.request.urlopen(dashboard_url + "/api/jobs/", timeout=2) as resp:
            body = json.loads(resp.read())
    except (OSError, urllib.error.URLError, ValueError):
        return None
    out: dict[str, str] = {}
    for job in body if isinstance(body, list) else []:
        job_id = job.get("submission_id") or job.get("job_id") or ""
        out[str(job_id)] = str(job.get("status", ""))
    return out
