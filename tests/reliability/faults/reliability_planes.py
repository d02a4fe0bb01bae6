"""Helpers of the fault-injection suite: a control plane in a subprocess that can be killed and
restarted on the same state directory and port, the Kueue queues the tests use, and polling.

The subprocess is the real ``rayqueue local up`` (``python -m rayqueue_sdk.cli.main local up``) with
Ray, KEDA and Prometheus off: a crash of it is a crash of what a user runs, and ``kill -9`` cannot
be faked in-process.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubernetes import client as k8s
from kubernetes import dynamic

from rayqueue_sdk.kube.connection import build_api_client
from rayqueue_sdk.manifests import kueue as k

_START_TIMEOUT = 120.0  # ends a hang only; nothing timed is asserted


class PlaneProcess:
    """``rayqueue local up`` in a subprocess, on ``root/state``; :meth:`start` again reuses its port."""

    def __init__(self, root: Path, crd_dir: Path) -> None:
        self.root, self.crd_dir = root, crd_dir
        self.state_dir = root / "state"
        self.port = 0
        self.server = ""
        self.proc: subprocess.Popen[str] | None = None
        self.starts = 0

    @property
    def token(self) -> str:
        """The admin token (kept in the state directory, so the same across restarts)."""
        return str(json.loads((self.state_dir / "tokens.json").read_text())["admin"])

    @property
    def ca_cert_path(self) -> str:
        return str(self.state_dir / "tls" / "ca.crt")

    def start(self) -> PlaneProcess:
        """Start it and wait until it serves (its first line names the URL)."""
        env = {**os.environ, "RAYQUEUE_HOME": str(self.root / "home")}
        log = open(self.root / f"plane-{self.starts}.log", "w")  # noqa: SIM115 - the child keeps it
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "rayqueue_sdk.cli.main",
                "local",
                "up",
                "--crds",
                str(self.crd_dir),
                "--state-dir",
                str(self.state_dir),
                "--kubeconfig",
                str(self.root / "kubeconfig"),
                "--port",
                str(self.port),
                "--no-ray",
                "--no-keda",
                "--no-prometheus",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        log.close()
        self.starts += 1
        assert self.proc.stdout is not None
        deadline = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.5)
            if ready:
                line = self.proc.stdout.readline()
                match = re.match(r"Local control plane at (https://127\.0\.0\.1:(\d+))", line)
                if match:
                    self.server, self.port = match.group(1), int(match.group(2))
                    return self
            if self.proc.poll() is not None:
                break
        raise AssertionError(
            f"local up did not start: {(self.root / f'plane-{self.starts - 1}.log').read_text()[-3000:]}"
        )

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` and reap the process (SIGTERM: a clean stop; SIGKILL: a crash)."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(timeout=60)

    def freeze_then_crash(self, restart_after: bool = True) -> threading.Thread:
        """SIGSTOP now (requests already sent sit unanswered in its sockets), then in a thread SIGKILL
        it a moment later and, if asked, start it again; returns that thread."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

        def crash() -> None:
            time.sleep(0.3)  # let the caller's request reach the frozen server's socket
            self.kill()
            if restart_after:
                self.start()

        thread = threading.Thread(target=crash, daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.kill(signal.SIGTERM)

    def sdk_client(self) -> Any:
        """An SDK ``ApiClient`` (the SDK's retries, urllib3's off)."""
        return build_api_client(self.server, token=self.token, ca_cert_path=self.ca_cert_path)

    def kube_client(self, pool: int = 4) -> k8s.ApiClient:
        """A plain ``kubernetes`` client with a connection pool of ``pool``."""
        config = k8s.Configuration()
        config.host = self.server
        config.ssl_ca_cert = self.ca_cert_path
        config.api_key = {"authorization": self.token}
        config.api_key_prefix = {"authorization": "Bearer"}
        config.connection_pool_maxsize = pool
        return k8s.ApiClient(config)


def server_side_apply(api: k8s.ApiClient, *objects: dict[str, Any]) -> None:
    """Apply ``objects`` as the admin through the dynamic client (server-side apply, forced)."""
    dyn = dynamic.DynamicClient(api)
    for obj in objects:
        resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        namespace = obj["metadata"].get("namespace")
        resource.server_side_apply(
            body=obj, namespace=namespace, field_manager="fault-suite", force_conflicts=True
        )


def queue_objects(ns: str, queue: str, *, cpu: int) -> list[dict[str, Any]]:
    """A ClusterQueue ``cq-<ns>`` with ``cpu`` CPUs (0: everything queues) and LocalQueue ``queue``."""
    return [
        k.resource_flavor("default-flavor"),
        k.cluster_queue(
            f"cq-{ns}",
            namespace_selector={"matchLabels": {"kubernetes.io/metadata.name": ns}},
            resource_groups=[
                k.resource_group(
                    k.flavor_quotas("default-flavor", {"cpu": cpu, "memory": "64Gi", "nvidia.com/gpu": 0})
                )
            ],
        ),
        k.local_queue(queue, ns, f"cq-{ns}"),
    ]


def namespace_object(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def eventually(check: Callable[[], Any], *, timeout: float = 120.0, what: str = "condition") -> Any:
    """Poll ``check`` until it is truthy (the limit only ends a hang; nothing timed is asserted)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen")
        time.sleep(0.1)


def on_request(api: Any, method: str, url_pattern: str, action: Callable[[], None]) -> threading.Event:
    """Run ``action()`` once, in the calling thread, just before the first ``method`` request whose
    URL (with its query) matches ``url_pattern`` is sent through ``api``; returns an Event set then."""
    real = api.rest_client.request
    fired = threading.Event()
    lock = threading.Lock()

    def request(verb: str, url: str, *args: Any, **kwargs: Any) -> Any:
        query = "&".join(f"{k}={v}" for k, v in kwargs.get("query_params") or ())
        if verb == method and re.search(url_pattern, f"{url}?{query}"):
            with lock:
                first = not fired.is_set()
                fired.set()
            if first:
                action()
        return real(verb, url, *args, **kwargs)

    api.rest_client.request = request
    return fired
