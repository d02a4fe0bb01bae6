"""A real local Ray head per emulated RayCluster: started on free loopback ports, stopped exactly.

:class:`RayHead` runs ``ray start --head --block`` in its own temp dir and its own session (see
:mod:`rayqueue_local.runtime.processes` for how it is stopped whatever happens), with **every** port Ray
opens pinned to a free one (GCS, dashboard, client server, node manager, object manager, metrics
export, dashboard agent HTTP/gRPC, runtime-env agent, and a private worker port range), so several
heads coexist with each other and with any other Ray on the machine. It is ready once the dashboard
answers ``/api/version`` and the job API answers (``/api/jobs/``).

Ray's client proxy (for ``ray://``) is not started by ``ray start`` but by the head, from
:mod:`rayqueue_local.runtime.rayclient`, with a private range for its per-connection servers: Ray's
fixed 23000-23999 range made two heads that took a connection in the same second collide.

The head runs Ray's CLI with the plane's own interpreter, and its ``PATH`` starts with ``python``/``python3``
exec scripts for that interpreter, then the interpreter's directory (see
:mod:`rayqueue_local.runtime.interpreter`), so a job's ``python`` is the notebook's Python *with its
venv*, activated or not.

Stopping kills that head's process group and session only (never a machine-wide ``ray stop``) and
checks that none of its processes is left.

Sizing: ``num_cpus`` is capped to this machine's cores (at least 1); ``num_gpus`` is advertised as
asked even with no GPU here, so tasks that ask for GPUs can be scheduled (they get a
``CUDA_VISIBLE_DEVICES`` but no device). The object store is kept small (``object_store_bytes``).

Start-up time, measured side by side by ``python benchmarks/bench_kuberay.py`` on the 2-core
development machine: with light load a bare ``ray start --head`` returned (dashboard up) after
8.8 s and ran a first job by 14.6 s; through the local control plane, admission -> dashboard took
11.0 s and -> first job 15.6 s (+1-2 s: the readiness probe also waits for the raylet, and the
controller's status round trip). Under heavy load (load average 12) all of these take 15-25 s.
Memory of one head: about 1.9 GiB RSS summed over its ~20 processes, ~0.8 GiB PSS.

Example:
    >>> spec = RayHeadSpec(num_cpus=1, num_gpus=2)
    >>> spec.ray_cpus() >= 1
    True

Running one (it takes a few seconds)::

    head = RayHead(spec)
    head.start(); head.wait_ready()
    JobSubmissionClient(head.dashboard_url).submit_job(entrypoint="python -c 'print(1)'")
    head.stop()
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from rayqueue_local.runtime.headstarts import record_head_start
from rayqueue_local.runtime.interpreter import interpreter_path, ray_command
from rayqueue_local.runtime.processes import (
    ManagedProcess,
    ProcessStartError,
    free_port_range,
    free_ports,
    spawn,
)
from rayqueue_local.runtime.rayenv import diagnose, ray_process_env
from rayqueue_local.runtime.sessions import member_states

log = logging.getLogger(__name__)

__all__ = ["RayHead", "RayHeadPorts", "RayHeadSpec"]

# Ray's client proxy gives each new connection's specific server CHECK_CHANNEL_TIMEOUT_S (30 s, from
# ``RAY_CLIENT_SERVER_CHECK_CHANNEL_TIMEOUT_S``) to answer; that server is a fresh Python importing Ray.
# Measured on this 2-core machine under a test run's load: the server's first log line came 29 s after
# its start, the proxy gave up at 30 s and ``ray.init("ray://...")`` failed with "Proxy failed to
# Connect to backend" (3 of 4 connections), while the server was up a second later. A real head has
# the same 30 s; a local one shares its cores with everything else on the machine, so it waits longer.
_CLIENT_CHANNEL_TIMEOUT_VAR = "RAY_CLIENT_SERVER_CHECK_CHANNEL_TIMEOUT_S"
_CLIENT_CHANNEL_TIMEOUT_S = 180

# gRPC's fork handlers off for every process of a head. Ray starts its processes (the client proxy's
# per-connection servers among them) with ``subprocess.Popen(preexec_fn=...)``, i.e. a real fork() of a
# process that already runs gRPC; grpcio's post-fork handler then restarts its EventEngine threads in
# the child, which can crash before the child reaches exec(). Seen with strace on a local head's proxy:
# the child started "event_engine" and "lifeguard" threads and died of SIGSEGV (si_addr NULL) 9 ms after
# fork, and ``ray.init("ray://...")`` failed with "Starting Ray client server failed. See
# ray_client_server_<port>.err" (an empty file), or psutil's ZombieProcess. Alone, a Python process with
# a gRPC server and four channels lost 25 of 200 such children; with GRPC_ENABLE_FORK_SUPPORT=0, none.
# Ray's processes fork only to exec, which needs no fork support (grpc/grpc#13873, #43055).
_GRPC_FORK_SUPPORT_VAR = "GRPC_ENABLE_FORK_SUPPORT"

# The raylet gives its dashboard agent a short time to report its ports and aborts when it misses it
# ("Check failed" in NodeManager::WaitForDashboardAgentPorts; `ray start` then fails with "The current node
# timed out during startup"). On this 2-core machine under a test run's load (load average 12-28) the agent
# spent ~14 s importing before its first log line; heads with an external Redis failed to start in 4 of 7
# tries, and every restart after a kill failed (1 alone, 2 in the plane with 3 attempts each). With this wait
# raised (Ray reads it as agent_register_timeout_ms), one started in 15 s and restarted in 17 s.
_AGENT_WAIT_VAR = "RAY_agent_register_timeout_ms"
_AGENT_WAIT_MS = "120000"

#: Port names as KubeRay names them in ``status.endpoints`` (plus the extra ones Ray needs).
_PORT_NAMES = (
    "gcs-server",
    "dashboard",
    "client",
    "metrics",
    "node-manager",
    "object-manager",
    "dashboard-agent-listen",
    "dashboard-agent-grpc",
    "runtime-env-agent",
    # `ray start` always starts Ray's own client proxy; it gets this port, which nothing connects
    # to, and the head's real proxy (runtime/rayclient.py) serves "client".
    "ray-start-client",
)
#: ``ray start``'s flags for the ports after the GCS's and the dashboard's, with the port each takes.
_PORT_FLAGS = (
    ("--ray-client-server-port", "ray-start-client"),
    ("--metrics-export-port", "metrics"),
    ("--node-manager-port", "node-manager"),
    ("--object-manager-port", "object-manager"),
    ("--dashboard-agent-listen-port", "dashboard-agent-listen"),
    ("--dashboard-agent-grpc-port", "dashboard-agent-grpc"),
    ("--runtime-env-agent-port", "runtime-env-agent"),
)
_WORKER_PORTS = 64
#: Concurrent ``ray://`` connections per head (each holds a port until ~30 s after it closes).
_CLIENT_SERVER_PORTS = 16
_BLOCKING_MARK = "will now block forever"
#: The GCS's process name. `ray start` does not notice at once that it died: while the GCS port answers
#: TCP (something else listens there) each connection attempt waits for gRPC, and it polls the GCS process
#: only between attempts. Measured with the GCS port held by a listening socket: the GCS aborted ("Check
#: failed: server_ Failed to start the grpc server") 7 s after the start, `ray start` exited at 50 s.
_GCS_PROCESS = "gcs_server"


@dataclass(frozen=True)
class RayHeadSpec:
    """What a head advertises: CPUs (capped to this machine), GPUs (as asked), custom resources.

    Example:
        >>> RayHeadSpec(num_cpus=512).ray_cpus() <= (os.cpu_count() or 1)
        True
    """

    num_cpus: float = 1
    num_gpus: int = 0
    resources: dict[str, float] = field(default_factory=dict)
    object_store_bytes: int = 128 * 1024 * 1024
    label: str = "ray-head"
    #: False: ``--no-monitor`` (KubeRay's autoscaler runs beside the head instead of Ray's own monitor)
    monitor: bool = True
    #: Extra environment of the head's processes (GCS fault tolerance: ``RAY_REDIS_ADDRESS``, ...).
    env: dict[str, str] = field(default_factory=dict)
    #: The external Redis's password (``--redis-password``); never in a repr.
    redis_password: str | None = field(default=None, repr=False)

    def ray_cpus(self) -> int:
        """CPUs to advertise: the spec's, rounded up, capped to this machine's cores, at least 1."""
        cores = os.cpu_count() or 1
        wanted = int(-(-self.num_cpus // 1))  # ceil
        return max(1, min(wanted, cores))


@dataclass(frozen=True)
class RayHeadPorts:
    """The ports one head listens on (all on 127.0.0.1), named as in KubeRay's ``endpoints``."""

    ports: dict[str, int]
    worker_ports: range
    client_server_ports: range

    def __getitem__(self, name: str) -> int:
        return self.ports[name]

    @classmethod
    def allocate(cls) -> RayHeadPorts:
        """Pick free ports for every listener, a private worker port range and a private range for
        the Ray client's per-connection servers (:mod:`~rayqueue_local.runtime.rayclient`)."""
        return cls(
            dict(zip(_PORT_NAMES, free_ports(len(_PORT_NAMES)), strict=True)),
            free_port_range(_WORKER_PORTS),
            free_port_range(_CLIENT_SERVER_PORTS),
        )


class RayHead:
    """One local Ray head: ``start()``, ``wait_ready()``, ``stop()``; ports and memory for status.

    Example:
        >>> head = RayHead(RayHeadSpec(num_cpus=1))
        >>> head.running
        False
    """

    host = "127.0.0.1"

    def __init__(self, spec: RayHeadSpec, *, base_dir: Path | None = None) -> None:
        self.spec = spec
        self.base_dir = base_dir
        self.ports: RayHeadPorts | None = None
        self.temp_dir: Path | None = None
        self.process: ManagedProcess | None = None
        self.client_proxy: ManagedProcess | None = None
        self.started_at: float | None = None
        self.ready_at: float | None = None
        self._gcs_seen = False

    # -- addresses ------------------------------------------------------------------------------
    def _port(self, name: str) -> int:
        if self.ports is None:
            raise ProcessStartError(f"{self.spec.label}: not started")
        return self.ports[name]

    @property
    def dashboard_url(self) -> str:
        """``http://127.0.0.1:<dashboard>``: for Ray's ``JobSubmissionClient``."""
        return f"http://{self.host}:{self._port('dashboard')}"

    @property
    def client_address(self) -> str:
        """``ray://127.0.0.1:<client>``: for ``ray.init``."""
        return f"ray://{self.host}:{self._port('client')}"

    @property
    def gcs_address(self) -> str:
        """``127.0.0.1:<gcs>``: for ``ray.init(address=...)`` on this machine."""
        return f"{self.host}:{self._port('gcs-server')}"

    @property
    def log_path(self) -> Path | None:
        """The head process's output (CRI format), while it runs: its pod's container log."""
        return self.process.log_path if self.process is not None else None

    @property
    def running(self) -> bool:
        """Whether the head's processes are alive."""
        return self.process is not None and self.process.alive()

    def endpoints(self) -> dict[str, str]:
        """KubeRay's ``status.endpoints``: port name -> port (as a string)."""
        return {name: str(self._port(name)) for name in ("client", "dashboard", "gcs-server", "metrics")}

    # -- lifecycle ------------------------------------------------------------------------------
    def command(self) -> list[str]:
        """The ``ray start`` command line for this head."""
        if self.ports is None or self.temp_dir is None:
            raise ProcessStartError(f"{self.spec.label}: not started")
        p = self.ports
        args = [
            *ray_command(),
            "start",
            "--head",
            "--block",
            "--disable-usage-stats",
            # Everything on loopback: without this Ray advertises (and its client server binds) the
            # machine's network address, and the local control plane must stay on 127.0.0.1.
            "--node-ip-address",
            self.host,
            "--port",
            str(p["gcs-server"]),
            "--include-dashboard=true",
            "--dashboard-host",
            self.host,
            "--dashboard-port",
            str(p["dashboard"]),
            # `ray start` cannot be told not to start its client proxy (0 is refused): it gets an
            # unused port, and client_proxy_command() serves p["client"] with a private range for
            # its per-connection servers (see runtime/rayclient.py).
            *(arg for flag, name in _PORT_FLAGS for arg in (flag, str(p[name]))),
            "--min-worker-port",
            str(p.worker_ports.start),
            "--max-worker-port",
            str(p.worker_ports.stop - 1),
            "--num-cpus",
            str(self.spec.ray_cpus()),
            "--num-gpus",
            str(int(self.spec.num_gpus)),
            "--object-store-memory",
            str(self.spec.object_store_bytes),
            "--temp-dir",
            str(self.temp_dir),
        ]
        if self.spec.resources:
            args += ["--resources", json.dumps(self.spec.resources)]
        if not self.spec.monitor:
            args.append("--no-monitor")
        if self.spec.redis_password:
            args += ["--redis-password", self.spec.redis_password]
        return args

    def client_proxy_command(self) -> list[str]:
        """Ray's client proxy for this head, on its ``client`` port, with private per-client ports."""
        if self.ports is None:
            raise ProcessStartError(f"{self.spec.label}: not started")
        p = self.ports
        return [
            sys.executable,
            "-m",
            "rayqueue_local.runtime.rayclient",
            "--specific-ports",
            f"{p.client_server_ports.start}-{p.client_server_ports.stop}",
            "--",
            f"--address={self.host}:{p['gcs-server']}",
            f"--host={self.host}",
            f"--port={p['client']}",
            "--mode=proxy",
            f"--runtime-env-agent-address=http://{self.host}:{p['runtime-env-agent']}",
        ]

    def start(self) -> None:
        """Start the head (returns at once; see :meth:`wait_ready`). Idempotent while running."""
        if self.process is not None and self.process.alive():
            return
        # Unix socket paths must stay short (< 108 bytes), so the temp dir sits directly in /tmp.
        self.temp_dir = Path(tempfile.mkdtemp(prefix="rqray-", dir=self.base_dir or "/tmp"))
        self.ports = RayHeadPorts.allocate()
        # Its own auth settings and temp dir: nothing in the user's ~/.ray reaches it (runtime/rayenv.py).
        env = ray_process_env(os.environ, self.temp_dir)
        env.setdefault(_AGENT_WAIT_VAR, _AGENT_WAIT_MS)
        env.update(self.spec.env)
        env[_GRPC_FORK_SUPPORT_VAR] = "0"
        # Ray rewrites a loopback --node-ip-address to the machine's network address unless it runs
        # in its single-machine mode (ray_constants.ENABLE_RAY_CLUSTER; it only otherwise refuses
        # extra worker nodes, which a local head never has). Keep every Ray server on loopback.
        env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
        env["PATH"] = interpreter_path(self.temp_dir / "bin", env.get("PATH", ""))
        self.started_at, self._gcs_seen = time.monotonic(), False
        self.process = spawn(
            self.command(),
            name=f"ray head {self.spec.label}",
            log_path=self.temp_dir / "ray-start.log",
            env=env,
            cleanup_dir=self.temp_dir,
            cri_log=True,  # the head pod's log (pods/{name}/log), timestamped as a kubelet keeps it
        )
        self.client_proxy = spawn(
            self.client_proxy_command(),
            name=f"ray client proxy {self.spec.label}",
            log_path=self.temp_dir / "ray-client-proxy.log",
            env={**env, _CLIENT_CHANNEL_TIMEOUT_VAR: str(_CLIENT_CHANNEL_TIMEOUT_S), **self._proxy_env()},
        )
        record_head_start(self.spec.label)  # counted where asked (runtime/headstarts)
        log.info("%s: starting Ray head, dashboard %s", self.spec.label, self.dashboard_url)

    def _proxy_env(self) -> dict[str, str]:
        """The external Redis's password for the client proxy, as Ray's ``ray start`` hands it over."""
        return {"RAY_REDIS_PASSWORD": self.spec.redis_password} if self.spec.redis_password else {}

    def probe(self) -> bool:
        """One readiness check, as KubeRay's head readiness probe does it: the dashboard agent
        answers ``/api/local_raylet_healthz`` and the dashboard ``/api/gcs_healthz``; plus the
        dashboard's ``/api/version`` (what the SDK and Ray's job client call first), and the Ray
        client proxy accepts connections on the ``client`` port (what ``ray.init("ray://...")`` needs)."""
        if self.ports is None:
            return False
        try:
            socket.create_connection((self.host, self.ports["client"]), timeout=2).close()
        except OSError:
            return False
        agent = f"http://{self.host}:{self.ports['dashboard-agent-listen']}"
        for url in (
            agent + "/api/local_raylet_healthz",
            self.dashboard_url + "/api/gcs_healthz",
            self.dashboard_url + "/api/version",
        ):
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status != 200:
                        return False
            except (OSError, urllib.error.URLError):
                return False
        return True

    def wait_ready(self, timeout: float = 120.0) -> float:
        """Block until :meth:`probe` succeeds; returns seconds since :meth:`start`.

        Raises :class:`ProcessStartError` (with the log tail) if the head dies or the timeout passes.
        """
        if self.process is None or self.started_at is None:
            raise ProcessStartError(f"{self.spec.label}: not started")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.probe():
                self.ready_at = time.monotonic()
                return self.ready_at - self.started_at
            for what, proc in (("the Ray client proxy", self.client_proxy), ("`ray start`", self.process)):
                if proc is not None and proc.popen.poll() is not None:
                    raise self._start_error(f"{what} exited with {proc.popen.returncode}", proc)
            # A GCS that crashed (its own fatal line) fails the start now; one that `ray start` stopped
            # because the start failed otherwise is left to `ray start`'s exit and its own message.
            fatal = self._gcs_fatal_line() if self._gcs_exited() else ""
            if fatal:
                raise self._start_error(f"the GCS server exited: {fatal}", self.process)
            time.sleep(0.2)
        raise ProcessStartError(
            f"{self.spec.label}: not ready after {timeout:.0f} s:\n{self.process.log_tail()}"
        )

    def _gcs_exited(self) -> bool:
        """Whether the head's GCS server has exited (a zombie of `ray start`, or gone once it was seen)."""
        if self.process is None:
            return False
        states = member_states(self.process.sid, _GCS_PROCESS)
        if any(state != "Z" for state in states):
            self._gcs_seen = True
            return False
        return bool(states) or self._gcs_seen

    def _gcs_fatal_line(self, limit: int = 300) -> str:
        """The GCS's last fatal line (glog ``C``) from its session log, from "Check failed" on; "" if none."""
        if self.temp_dir is None:
            return ""
        logs = self.temp_dir / "session_latest" / "logs"
        for name in ("gcs_server.err", "gcs_server.out"):
            try:
                lines = (logs / name).read_text(errors="replace").splitlines()
            except OSError:
                continue
            fatal = [line for line in lines if " C " in line]
            if fatal:
                start = max(fatal[-1].find("Check failed"), 0)
                return fatal[-1][start : start + limit]
        return ""

    def _start_error(self, what: str, proc: ManagedProcess) -> ProcessStartError:
        """The error for a head process that exited: the cause and its file first, when the output
        shows a known one (:func:`~rayqueue_local.runtime.rayenv.diagnose`), then the log's tail."""
        proc.flush_log()
        tail = proc.log_tail()
        cause = diagnose(tail, os.environ, self.temp_dir)
        first = f"{self.spec.label}: {what}" + (f": {cause}" if cause else "")
        return ProcessStartError(f"{first}:\n{tail}")

    def memory(self) -> dict[str, int]:
        """Memory of the head's whole process tree: ``rss``/``pss`` in bytes and ``processes``."""
        if self.process is None:
            return {"rss": 0, "pss": 0, "processes": 0}
        return self.process.memory()

    def stop(self, grace: float = 10.0) -> list[int]:
        """Stop exactly this head and remove its temp dir; returns pids that survived (none)."""
        left: list[int] = []
        if self.client_proxy is not None:
            left += self.client_proxy.stop(0.0)
            self.client_proxy = None
        if self.process is not None:
            # Until `ray start --block` has reached its wait loop it may not act on SIGTERM for
            # many seconds; then there is nothing to shut down gracefully: kill the session.
            blocking = _BLOCKING_MARK in self.process.log_tail(400)
            left += self.process.stop(grace if blocking else 0.0)
            self.process = None
        if self.temp_dir is not None and not left:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None
        self.ready_at = None
        return left

    def __repr__(self) -> str:
        where = self.dashboard_url if self.ports else "not started"
        return f"RayHead({self.spec.label!r}, {where})"
