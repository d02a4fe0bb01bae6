"""A real Prometheus for the local control plane: its own process, port, config and storage.

:class:`PrometheusServer` starts the ``prometheus`` binary (Debian's package; the project's
``scripts/test.sh`` installs it) on a free loopback port with a config of its own that scrapes the
given targets every ``scrape_interval``, and a temporary TSDB directory; it is ready when
``/-/ready`` answers. A packaged Prometheus service (Debian starts one on :9090) is never used or
touched.

Targets carry the labels a ServiceMonitor would give the DCGM exporter's pod (``namespace``,
``pod``, ``container``, ...), and ``honor_labels`` is false, so the exporter's own ``pod`` /
``namespace`` / ``container`` labels come out as ``exported_pod`` / ``exported_namespace`` /
``exported_container``, exactly as in a cluster [k8s-semantics.md §5].

Example::

    prom = PrometheusServer(["127.0.0.1:9400"])
    prom.start(); prom.wait_ready()
    prom.query('up{job="dcgm-exporter"}')[0]["value"][1]   # '1'
    prom.stop()
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from rayqueue_local.runtime.processes import ManagedProcess, ProcessStartError, free_port, spawn

log = logging.getLogger(__name__)

__all__ = ["DCGM_TARGET_LABELS", "PrometheusNotInstalledError", "PrometheusServer", "find_prometheus"]

#: What the dcgm-exporter's ServiceMonitor puts on its target (GPU Operator defaults).
DCGM_TARGET_LABELS: dict[str, str] = {
    "namespace": "gpu-operator",
    "pod": "nvidia-dcgm-exporter-local",
    "container": "nvidia-dcgm-exporter",
    "service": "nvidia-dcgm-exporter",
    "endpoint": "gpu-metrics",
}


class PrometheusNotInstalledError(ProcessStartError, FileNotFoundError):
    """The ``prometheus`` binary is missing.

    Example:
        >>> "apt-get install prometheus" in str(PrometheusNotInstalledError())
        True
    """

    def __init__(self) -> None:
        super().__init__(
            "the `prometheus` binary was not found (looked for /usr/bin/prometheus and on PATH); "
            "install Debian's package: `apt-get install prometheus` (scripts/test.sh does it)"
        )


#: Where Debian's package puts the binary: tried when ``prometheus`` is not on PATH.
_DEBIAN_BINARY = Path("/usr/bin/prometheus")


def find_prometheus() -> str:
    """Path of the ``prometheus`` binary: on PATH, else Debian's ``/usr/bin/prometheus``.

    Example::

        find_prometheus()   # '/usr/bin/prometheus'
    """
    found = shutil.which("prometheus")
    if found:
        return found
    if _DEBIAN_BINARY.exists():
        return str(_DEBIAN_BINARY)
    raise PrometheusNotInstalledError()


class PrometheusServer:
    """One Prometheus process scraping ``targets`` (``host:port`` strings, path ``/metrics``).

    Example:
        >>> PrometheusServer(["127.0.0.1:1"]).config()["scrape_configs"][0]["honor_labels"]
        False
    """

    host = "127.0.0.1"

    def __init__(
        self,
        targets: Sequence[str],
        *,
        scrape_interval: float = 1.0,
        job_name: str = "dcgm-exporter",
        target_labels: Mapping[str, str] | None = None,
        port: int | None = None,
        extra_jobs: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        self.targets = list(targets)
        #: More scrape jobs: ``{"job_name", "targets", "labels"?, "honor_labels"?}`` (kube-state-metrics...).
        self.extra_jobs = [dict(job) for job in extra_jobs]
        self.scrape_interval = scrape_interval
        self.job_name = job_name
        self.target_labels = dict(DCGM_TARGET_LABELS if target_labels is None else target_labels)
        self.port = port
        self.dir: Path | None = None
        self.process: ManagedProcess | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``: what a KEDA trigger's ``serverAddress`` points at."""
        return f"http://{self.host}:{self.port}"

    def config(self) -> dict[str, Any]:
        """The Prometheus configuration this server runs with."""
        interval = f"{int(self.scrape_interval * 1000)}ms"
        return {
            "global": {"scrape_interval": interval, "evaluation_interval": interval},
            "scrape_configs": [
                {
                    "job_name": self.job_name,
                    "honor_labels": False,
                    "scrape_interval": interval,
                    "scrape_timeout": interval,
                    "metrics_path": "/metrics",
                    "static_configs": [{"targets": self.targets, "labels": self.target_labels}],
                },
                *(
                    {
                        "job_name": job["job_name"],
                        "honor_labels": bool(job.get("honor_labels", False)),
                        "scrape_interval": interval,
                        "scrape_timeout": interval,
                        "metrics_path": "/metrics",
                        "static_configs": [
                            {"targets": list(job["targets"]), "labels": dict(job.get("labels") or {})}
                        ],
                    }
                    for job in self.extra_jobs
                ),
            ],
        }

    def start(self) -> None:
        """Start the process (returns at once; see :meth:`wait_ready`). Idempotent while running."""
        if self.process is not None and self.process.alive():
            return
        binary = find_prometheus()
        self.dir = Path(tempfile.mkdtemp(prefix="rqprom-"))
        (self.dir / "data").mkdir()
        config_path = self.dir / "prometheus.yml"
        config_path.write_text(yaml.safe_dump(self.config(), sort_keys=False))
        if self.port is None:
            self.port = free_port(self.host)
        args = [
            binary,
            f"--config.file={config_path}",
            f"--storage.tsdb.path={self.dir / 'data'}",
            "--storage.tsdb.retention.time=2h",
            f"--web.listen-address={self.host}:{self.port}",
            f"--web.console.templates={self.dir}",
            f"--web.console.libraries={self.dir}",
            "--log.level=warn",
        ]
        self.process = spawn(
            args, name="prometheus", log_path=self.dir / "prometheus.log", cleanup_dir=self.dir
        )
        log.info("prometheus: starting on %s", self.url)

    def wait_ready(self, timeout: float = 60.0, *, scraped: bool = True) -> float:
        """Block until ``/-/ready`` answers 200 and (``scraped``) every target has been scraped
        successfully once (Prometheus applies new targets ~5 s after start); returns seconds waited."""
        if self.process is None:
            raise ProcessStartError("prometheus: not started")
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self._ready() and (not scraped or self._all_targets_up()):
                return time.monotonic() - start
            if self.process.popen.poll() is not None:
                raise ProcessStartError(
                    f"prometheus exited with {self.process.popen.returncode}:\n{self.process.log_tail()}"
                )
            time.sleep(0.2)
        raise ProcessStartError(f"prometheus: not ready after {timeout:.0f} s:\n{self.process.log_tail()}")

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as resp:
                return bool(resp.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    def _all_targets_up(self) -> bool:
        try:
            up = self.query("up == 1")
        except (OSError, ProcessStartError):
            return False
        return len(up) >= len(self.targets) + sum(len(job["targets"]) for job in self.extra_jobs)

    def query(self, promql: str, *, timeout: float = 5.0, at: float | None = None) -> list[dict[str, Any]]:
        """Run an instant query (``/api/v1/query``) now, or at the time ``at`` (seconds since the epoch);
        returns ``data.result``.

        Raises :class:`ProcessStartError` with Prometheus's error text if the query fails.
        """
        params = {"query": promql} if at is None else {"query": promql, "time": f"{at:.3f}"}
        url = self.url + "/api/v1/query?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp:
                body = json.loads(resp.read())
        except urllib.error.HTTPError as err:
            body = json.loads(err.read() or b"{}")
        if body.get("status") != "success":
            raise ProcessStartError(f"prometheus query {promql!r} failed: {body.get('error', body)}")
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def memory(self) -> dict[str, int]:
        """Memory of the Prometheus process (``rss``/``pss`` bytes, ``processes``)."""
        return self.process.memory() if self.process is not None else {"rss": 0, "pss": 0, "processes": 0}

    def stop(self) -> list[int]:
        """Stop this Prometheus and remove its storage; returns pids that survived (none)."""
        left: list[int] = []
        if self.process is not None:
            left = self.process.stop(grace=10.0)
            self.process = None
        if self.dir is not None and not left:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        return left
