"""A worker node of an autoscaling RayCluster whose ``ray start`` ended is started again at its address,
with the Pod's ``restartCount`` counting it (as the kubelet restarts a container); fast, no Ray."""

from __future__ import annotations

from pathlib import Path

from rayqueue_local.controllers.kuberay.autoscaling import InTreeAutoscaling, _Cluster, worker_pod_status


class FakeWorker:
    """What the restart reads and calls of a RayWorker: ``running``, ``stop()``, ``start()``."""

    def __init__(self, running: bool) -> None:
        self.running = running
        self.calls: list[str] = []

    def stop(self, grace: float = 3.0) -> list[int]:
        self.calls.append("stop")
        return []

    def start(self) -> None:
        self.calls.append("start")
        self.running = True


def test_a_worker_whose_ray_start_ended_is_started_again_and_counted(tmp_path: Path) -> None:
    cluster = _Cluster(user="u", token_dir=tmp_path)
    alive, ended = FakeWorker(running=True), FakeWorker(running=False)
    cluster.workers = {"alive": alive, "ended": ended}  # type: ignore[dict-item]
    cluster.ips = {"alive": "127.1.0.1", "ended": "127.1.0.2"}
    cluster.started = {"alive": "t0", "ended": "t0"}
    for name in ("alive", "ended"):
        InTreeAutoscaling._restart_if_ended(cluster, name)
    assert alive.calls == [] and ended.calls == ["stop", "start"]
    assert cluster.restarts == {"ended": 1} and cluster.ips["ended"] == "127.1.0.2"
    assert cluster.started["ended"] != "t0"
    status = worker_pod_status(cluster.ips["ended"], cluster.started["ended"], {"name": "w"}, 1)
    assert status["containerStatuses"][0]["restartCount"] == 1
    assert status["containerStatuses"][0]["image"] == ""  # a field the Kubernetes client requires
