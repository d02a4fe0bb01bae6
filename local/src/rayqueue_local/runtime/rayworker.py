"""A real Ray worker node for one worker Pod of an autoscaling RayCluster, on a loopback address of its own.

KubeRay's in-tree autoscaler adds and removes *Ray nodes*: each worker Pod runs
``ray start --address=<head>:<gcs> --block`` and joins the head's cluster. For a RayCluster with
``enableInTreeAutoscaling: true`` the local control plane does the same with :class:`RayWorker`: one
``ray start`` per worker Pod, with the Pod's CPUs, GPUs and custom resources, its own ports, and its own
node address in ``127.0.0.0/8`` (e.g. ``127.1.0.7``; Linux routes the whole block to ``lo``). The
address is the Pod's ``podIP``: Ray's autoscaler (v1) matches Ray nodes to Pods by IP, so every worker
needs one of its own, as on Kubernetes. As KubeRay does, the process gets ``RAY_CLOUD_INSTANCE_ID`` (the
Pod's name) and ``RAY_NODE_TYPE_NAME`` (its group).

Why a wrapper module (``python -m rayqueue_local.runtime.rayworker -- <ray start args>``): the heads run
in Ray's single-machine mode (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, see
:mod:`~rayqueue_local.runtime.raylocal`) so that everything stays on loopback. In that mode
``ray start --address`` refuses to start a worker node; outside it Ray rewrites the head's loopback
address to the machine's network address, where the head does not listen. This module runs Ray's own
``ray start`` with both rules adjusted for this one process: worker nodes allowed, a loopback address
kept as given. Its children (raylet, agents, workers) keep the single-machine mode.

Example:
    >>> worker_address(0), worker_address(300)
    ('127.1.0.1', '127.1.1.51')
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rayqueue_local.runtime.interpreter import interpreter_path
from rayqueue_local.runtime.processes import ManagedProcess, free_port_range, free_ports, spawn

log = logging.getLogger(__name__)

__all__ = ["RayWorker", "RayWorkerSpec", "main", "worker_address"]

_SINGLE_MACHINE_VAR = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
_GRPC_FORK_SUPPORT_VAR = "GRPC_ENABLE_FORK_SUPPORT"
# As for the heads (rayqueue_local.runtime.raylocal): under a test run's load the worker's raylet missed
# its dashboard agent's default registration wait and aborted (WaitForDashboardAgentPorts), leaving a
# Pod "Running" without a Ray node; Ray reads this as agent_register_timeout_ms.
_AGENT_WAIT_VAR = "RAY_agent_register_timeout_ms"
_AGENT_WAIT_MS = "120000"
_WORKER_PORTS = 32
_PORT_FLAGS = (
    "--node-manager-port",
    "--object-manager-port",
    "--metrics-export-port",
    "--dashboard-agent-listen-port",
    "--dashboard-agent-grpc-port",
    "--runtime-env-agent-port",
)


def worker_address(index: int) -> str:
    """The ``index``-th worker address: ``127.1.0.1`` upwards (never ``127.0.0.1``, the heads')."""
    return f"127.1.{index // 250}.{index % 250 + 1}"


@dataclass(frozen=True)
class RayWorkerSpec:
    """One worker node: the head's GCS address, its own address, what it advertises, who it is."""

    gcs_address: str
    node_ip: str
    pod_name: str
    group: str
    num_cpus: int = 1
    num_gpus: int = 0
    resources: dict[str, float] = field(default_factory=dict)
    object_store_bytes: int = 96 * 1024 * 1024


class RayWorker:
    """``ray start --address ... --block`` for one worker Pod: :meth:`start`, :meth:`stop`."""

    def __init__(self, spec: RayWorkerSpec) -> None:
        self.spec = spec
        self.process: ManagedProcess | None = None
        self.temp_dir: Path | None = None
        self.started_at: float | None = None

    def command(self) -> list[str]:
        """The wrapper's command line (Ray's ``ray start`` arguments after ``--``)."""
        s = self.spec
        ports = free_ports(len(_PORT_FLAGS))
        workers = free_port_range(_WORKER_PORTS)
        args = [
            sys.executable,
            "-m",
            "rayqueue_local.runtime.rayworker",
            "--",
            "start",
            "--address",
            s.gcs_address,
            "--block",
            "--disable-usage-stats",
            "--node-ip-address",
            s.node_ip,
            *(a for flag, port in zip(_PORT_FLAGS, ports, strict=True) for a in (flag, str(port))),
            "--min-worker-port",
            str(workers.start),
            "--max-worker-port",
            str(workers.stop - 1),
            "--num-cpus",
            str(s.num_cpus),
            "--num-gpus",
            str(s.num_gpus),
            "--object-store-memory",
            str(s.object_store_bytes),
        ]
        if s.resources:
            args += ["--resources", json.dumps(s.resources)]
        return args

    def start(self) -> None:
        """Start the worker node (returns at once). Idempotent while it runs."""
        if self.running:
            return
        self.temp_dir = Path(tempfile.mkdtemp(prefix="rqwrk-", dir="/tmp"))
        env = dict(os.environ)
        for var in ("RAY_ADDRESS", "RAY_JOB_CONFIG_JSON_ENV_VAR"):
            env.pop(var, None)
        env.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        env.setdefault(_AGENT_WAIT_VAR, _AGENT_WAIT_MS)
        env[_GRPC_FORK_SUPPORT_VAR] = "0"
        env[_SINGLE_MACHINE_VAR] = "0"
        env["RAY_CLOUD_INSTANCE_ID"] = self.spec.pod_name  # as KubeRay sets it in a worker Pod
        env["RAY_NODE_TYPE_NAME"] = self.spec.group
        env["PATH"] = interpreter_path(self.temp_dir / "bin", env.get("PATH", ""))
        self.started_at = time.monotonic()
        self.process = spawn(
            self.command(),
            name=f"ray worker {self.spec.pod_name}",
            log_path=self.temp_dir / "ray-start.log",
            env=env,
            cleanup_dir=self.temp_dir,
            cri_log=True,
        )
        log.info(
            "Ray worker %s joining %s as %s", self.spec.pod_name, self.spec.gcs_address, self.spec.node_ip
        )

    @property
    def running(self) -> bool:
        """Whether the worker's ``ray start`` is alive."""
        return self.process is not None and self.process.alive()

    @property
    def log_path(self) -> Path | None:
        """The worker's output (CRI format): its Pod's container log."""
        return self.process.log_path if self.process is not None else None

    def stop(self, grace: float = 3.0) -> list[int]:
        """Stop exactly this worker node; returns pids that survived (none)."""
        left: list[int] = []
        if self.process is not None:
            left = self.process.stop(grace)
            self.process = None
        if self.temp_dir is not None and not left:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None
        return left

    def __repr__(self) -> str:
        return f"RayWorker({self.spec.pod_name!r}, {self.spec.node_ip})"


def main(argv: Sequence[str] | None = None) -> None:
    """Run Ray's ``ray start`` (the arguments after ``--``) as a worker node that stays on loopback."""
    args = list(sys.argv[1:] if argv is None else argv)
    rest = args[args.index("--") + 1 :] if "--" in args else args
    from ray._private import ray_constants, services  # lazy: ray is heavy; only this process runs it
    from ray.scripts import scripts  # lazy: ray is heavy; only this process runs it

    # This process only: let `ray start --address` start a worker node, and keep the head's loopback
    # address as given (Ray would resolve it to the machine's network address). Children inherit the
    # single-machine mode from the environment.
    ray_constants.ENABLE_RAY_CLUSTER = True
    services.resolve_ip_for_localhost = lambda host: host
    sys.argv = ["ray", *rest]
    scripts.main()


if __name__ == "__main__":  # pragma: no cover - run as a process by RayWorker
    main()
