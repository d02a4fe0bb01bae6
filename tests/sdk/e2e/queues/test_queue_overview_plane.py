"""The queue overview, will_it_fit, the queue CLI and the queue view against the local control plane (Kueue
and KubeRay, no Ray heads) with seed 004's queues.

team-b's queue has no CPU of its own: it borrows from ``shared-cq`` (6 CPUs) through cohort ``team-ab``.
team-b submits b1 (dev, 4 CPUs: admitted by borrowing), then b2 (dev), b3 (prod) and b4 (dev), 4 CPUs each,
which wait: in admission order b3 (priority), b2, b4 (same priority, earlier first). team-a asks for 2 GPUs
where its queue has 1: that one can never be admitted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import ClusterConfiguration, queue_headroom, queue_overview, view_queues, will_it_fit
from rayqueue_sdk.admission.overview import QueueOverview
from rayqueue_sdk.cli.main import main
from rayqueue_sdk.display.console import render_text
from rayqueue_sdk.display.queues import QueueView, queues_renderable, queues_text
from rayqueue_sdk.errors import QueueNotFoundError
from rayqueue_sdk.manifests.raycluster import build_raycluster
from rayqueue_sdk.queues import overview as overview_module

pytestmark = pytest.mark.slow  # a control plane with Kueue and KubeRay: about 10 s to set up


def _cluster(name: str, ns: str, priority: str, workers: int, **extra: Any) -> dict[str, Any]:
    config = ClusterConfiguration(
        name=name,
        namespace=ns,
        local_queue="local-queue",
        priority_class=priority,
        num_workers=workers,
        head_memory_requests=1,
        worker_memory_requests=1,
        **extra,
    )
    return build_raycluster(config)


def _wait_for(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def tokens(plane: LocalControlPlane) -> dict[str, str]:
    return {"a": plane.add_user("alice", ["team-a"]), "b": plane.add_user("bob", ["team-b"])}


@pytest.fixture(scope="module")
def workloads(
    plane: LocalControlPlane, tokens: dict[str, str], client_for: Callable[[str], Any]
) -> Iterator[None]:
    admin = client_for(plane.token)
    plane.apply(_cluster("b1", "team-b", "dev-priority", 3))
    _wait_for(lambda: _admitted(admin, "team-b") == 1, "b1 admitted")
    for name, priority in (("b2", "dev-priority"), ("b3", "prod-priority"), ("b4", "dev-priority")):
        plane.apply(_cluster(name, "team-b", priority, 3))
        time.sleep(1.1)  # creationTimestamps have a one-second resolution: b2 is older than b4
    gpu = _cluster(
        "gpu2", "team-a", "prod-priority", 1, worker_extended_resource_requests={"nvidia.com/gpu": 2}
    )
    plane.apply(gpu)
    _wait_for(lambda: _pending_with_reason(admin) == 4, "four pending workloads with Kueue's reason")
    yield


def _admitted(api: Any, ns: str) -> int:
    ov = queue_overview(ns, api)
    return sum(1 for q in ov.queues for w in q.holding if w.state == "admitted" and w.namespace == ns)


def _pending_with_reason(api: Any) -> int:
    ov = queue_overview("team-b", api)
    return sum(1 for q in ov.queues for w in q.pending if w.reason) + sum(
        1 for w in queue_overview("team-a", api).queue("local-queue").pending if w.reason
    )


def test_overview_as_team_b_shows_quota_borrowing_and_admission_order(
    workloads: None, tokens: dict[str, str], client_for: Callable[[str], Any]
) -> None:
    ov = queue_overview("team-b", client_for(tokens["b"]))
    assert ov.namespace == "team-b"
    q = ov.queue("local-queue")
    assert q.cluster_queue_name == "team-b-cq" and q.cluster_queue is not None
    assert q.cluster_queue.cohort == "team-ab"
    cpu = q.cluster_queue.quota("default-flavor", "cpu")
    assert cpu is not None and (cpu.nominal, cpu.used, cpu.borrowed) == (0, 4, 4)
    assert [w.owner_name for w in q.pending] == ["b3", "b2", "b4"]
    assert [w.position for w in q.pending] == [0, 1, 2]
    assert [w.priority for w in q.pending] == [1000, 100, 100]
    assert all(w.mine and w.owner_kind == "RayCluster" and w.reason for w in q.pending)
    assert "insufficient unused quota for cpu in flavor default-flavor" in (q.pending[0].message or "")
    assert [w.owner_name for w in q.holding] == ["b1"]
    b4 = q.pending[2]
    assert ov.ahead_text(b4) == (
        "2 ahead: team-b/b3 (priority 1000 > 100), team-b/b2 (earlier, same priority)"
    )
    assert ov.ahead_text(q.pending[0]) == "next in line"
    # the shared ClusterQueue is readable (a data scientist may read ClusterQueues): the cohort's pool
    shared = ov.cluster_queue("shared-cq")
    assert shared is not None and [m.name for m in ov.cohort_members(shared)] == [
        "shared-cq",
        "team-a-cq",
        "team-b-cq",
    ]
    assert "workloads of other namespaces are not visible to you" in ov.notes


def test_admin_sees_every_namespace_and_the_never_admitted_gpu_cluster(
    workloads: None, plane: LocalControlPlane, client_for: Callable[[str], Any]
) -> None:
    ov = queue_overview("team-a", client_for(plane.token))
    q = ov.queue("local-queue")
    assert [w.owner_name for w in q.pending] == ["gpu2"]
    assert q.pending[0].reason and not ov.notes
    gpu = q.cluster_queue.quota("gpu-flavor", "nvidia.com/gpu") if q.cluster_queue else None
    assert gpu is not None and gpu.nominal == 1
    assert q.cluster_queue is not None
    assert ov.cohort_text(q.cluster_queue) == (
        "cohort team-ab: team-b-cq borrows cpu 4 (flavor default-flavor); "
        "team-b-cq borrows memory 3.7Gi (flavor default-flavor)"
    )
    assert "cohort team-ab: team-b-cq borrows cpu 4" in queues_text(ov)


class _Counter:
    """Counts the HTTP requests an ApiClient sends."""

    def __init__(self, api: Any) -> None:
        self.count = 0
        original = api.rest_client.request

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return original(*args, **kwargs)

        api.rest_client.request = counted


@pytest.mark.parametrize("who", ["admin", "user"])
def test_the_overview_costs_the_same_requests_for_2_and_20_queues(
    plane: LocalControlPlane, client_for: Callable[[str], Any], who: str
) -> None:
    counts = {}
    for n in (2, 20):
        ns = f"many-{who}-{n}"
        plane.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        plane.apply(
            [
                {
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "LocalQueue",
                    "metadata": {"name": f"q{i}", "namespace": ns},
                    "spec": {"clusterQueue": "team-b-cq"},
                }
                for i in range(n)
            ]
        )
        token = plane.token if who == "admin" else plane.add_user(f"u-{who}-{n}", [ns])
        api = client_for(token)
        queue_overview(ns, api)  # discovery and the one-time 403 of the cluster-wide lists are cached
        counter = _Counter(api)
        ov = queue_overview(ns, api)
        assert len(ov.queues) == n
        counts[n] = counter.count
    assert counts[2] == counts[20] == 3, counts


def test_forbidden_cluster_queues_leave_the_quota_out_with_a_note(
    workloads: None, plane: LocalControlPlane, tokens: dict[str, str], client_for: Callable[[str], Any]
) -> None:
    plane.faults.inject(method="GET", path=r"/apis/kueue.x-k8s.io/v1beta2/clusterqueues", status=403, times=1)
    try:
        ov = queue_overview("team-b", client_for(tokens["b"]))
    finally:
        plane.faults.clear()
    q = ov.queue("local-queue")
    assert q.cluster_queue is None and len(q.pending) == 3
    assert any("ClusterQueues cannot be read" in n for n in ov.notes)
    assert "quota: ClusterQueue not readable" in queues_text(ov)


def test_will_it_fit_answers_from_quota_and_usage(
    workloads: None, tokens: dict[str, str], client_for: Callable[[str], Any]
) -> None:
    api = client_for(tokens["b"])

    def config(workers: int, **extra: Any) -> ClusterConfiguration:
        return ClusterConfiguration(
            name="probe", num_workers=workers, head_memory_requests=1, worker_memory_requests=1, **extra
        )

    small = will_it_fit(
        config(1), "local-queue", namespace="team-b", client=api
    )  # 2 CPUs: the 2 left in the cohort
    assert (
        small.fits is True and small.borrowing["cpu"] == 2 and "borrowing from cohort team-ab" in small.reason
    )
    assert "3 workload(s) already pending" in small.reason
    short = will_it_fit(config(3), "local-queue", namespace="team-b", client=api)  # 4 CPUs, 2 free
    assert short.fits is False and not short.never
    assert short.reason.startswith("does not fit now: cpu short by 2 in flavor default-flavor")
    never = will_it_fit(config(7), "local-queue", namespace="team-b", client=api)  # 8 CPUs > the cohort's 6
    assert never.fits is False and never.never and never.reason.startswith("never fits: cpu 8")
    gpu = will_it_fit(
        config(1, worker_extended_resource_requests={"nvidia.com/gpu": 2}),
        "local-queue",
        namespace="team-a",
        client=client_for(tokens["a"]),
    )
    assert gpu.never and "nvidia.com/gpu 2 is more than flavor gpu-flavor can ever give (1;" in gpu.reason
    with pytest.raises(QueueNotFoundError):
        will_it_fit(config(1), "nope", namespace="team-b", client=api)


def test_cli_queue_show_and_fits(
    workloads: None,
    plane: LocalControlPlane,
    tokens: dict[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["--kubeconfig", str(plane.kubeconfig_path), "--context", "rayqueue-local-bob", "-n", "team-b"]
    assert main(["queue", "show", "local-queue", "--json", *base]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [w["owner_name"] for w in shown["pending"]] == ["b3", "b2", "b4"]
    assert main(["queue", "show", "local-queue", *base]) == 0
    text = capsys.readouterr().out
    assert "team-b/b4: 2 ahead: team-b/b3 (priority 1000 > 100)" in text.replace("\n    ", " ")
    assert main(["queue", "show", "nope", *base]) == 3
    capsys.readouterr()
    small, big = tmp_path / "small.yaml", tmp_path / "big.yaml"
    small.write_text(
        "name: s\nlocal_queue: local-queue\nnum_workers: 1\nhead_memory_requests: 1\n"
        "worker_memory_requests: 1\n"
    )
    big.write_text("name: b\nlocal_queue: local-queue\nnum_workers: 7\n")
    assert main(["queue", "fits", "-f", str(small), "--json", *base]) == 0
    assert json.loads(capsys.readouterr().out)["fits"] is True
    assert main(["queue", "fits", "-f", str(big), *base]) == 9
    assert "never fits" in capsys.readouterr().out
    assert main(["queue", "list", *base]) == 0


def test_queue_view_bundle_and_console_width(
    workloads: None, tokens: dict[str, str], client_for: Callable[[str], Any]
) -> None:
    api = client_for(tokens["b"])
    view = QueueView(lambda: queue_overview("team-b", api))
    bundle = view.bundle()
    assert sorted(bundle) == ["application/vnd.jupyter.widget-view+json", "text/html", "text/plain"]
    assert 'class="rayqueue-mine"' in bundle["text/html"] and "team-b/b3" in bundle["text/html"]
    assert "2 ahead: team-b/b3 (priority 1000 &gt; 100)" in bundle["text/html"]
    assert all(len(line) <= 80 for line in bundle["text/plain"].splitlines())
    assert isinstance(view.refresh(), QueueOverview)
    console = render_text(queues_renderable(view.overview), width=80)
    assert "b4" in console and "borrowed" in console
    assert max(len(line) for line in console.splitlines()) <= 80


def test_fits_says_it_cannot_tell_when_cluster_queues_are_forbidden(
    workloads: None, plane: LocalControlPlane, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--kubeconfig", str(plane.kubeconfig_path), "--context", "rayqueue-local-bob", "-n", "team-b"]
    small = tmp_path / "small.yaml"
    small.write_text("name: s\nlocal_queue: local-queue\nnum_workers: 1\n")
    plane.faults.inject(method="GET", path=r"/apis/kueue.x-k8s.io/v1beta2/clusterqueues", status=403, times=1)
    try:
        assert main(["queue", "fits", "-f", str(small), "--json", *base]) == 6
    finally:
        plane.faults.clear()
    answer = json.loads(capsys.readouterr().out)
    assert answer["fits"] is None and answer["reason"].startswith("cannot tell: ClusterQueue team-b-cq")


def test_view_queues_prints_rich_in_a_terminal_and_shows_a_widget_in_a_notebook(
    workloads: None,
    tokens: dict[str, str],
    client_for: Callable[[str], Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    api = client_for(tokens["b"])
    overview = view_queues("team-b", api, show=True)
    assert isinstance(overview, QueueOverview)
    assert "team-b/b4: 2 ahead" in capsys.readouterr().out
    monkeypatch.setattr(overview_module, "is_notebook", lambda: True)
    view = view_queues("team-b", api)
    assert isinstance(view, QueueView) and view.live.shown
    capsys.readouterr()


def test_a_local_queue_whose_cluster_queue_does_not_exist(
    plane: LocalControlPlane, client_for: Callable[[str], Any]
) -> None:
    plane.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "orphans"}})
    plane.apply(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "lost", "namespace": "orphans"},
            "spec": {"clusterQueue": "no-such-cq"},
        }
    )
    api = client_for(plane.token)
    ov = queue_overview("orphans", api)
    assert "quota: ClusterQueue no-such-cq does not exist" in queues_text(ov)
    answer = will_it_fit(ClusterConfiguration(name="ws"), "lost", namespace="orphans", client=api)
    assert answer.fits is False and answer.reason == "does not fit: ClusterQueue no-such-cq does not exist"


def test_headroom_and_estimates_as_a_namespace_limited_user(
    workloads: None,
    plane: LocalControlPlane,
    tokens: dict[str, str],
    client_for: Callable[[str], Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    api = client_for(tokens["b"])
    headroom = queue_headroom("team-b", api)
    cpu = next(r for r in headroom.rows if r.local_queue == "local-queue" and r.resource == "cpu")
    # team-b-cq has no CPU of its own: b1's 4 are borrowed, 2 of the cohort's 6 are left to borrow
    assert (cpu.cluster_queue, cpu.nominal, cpu.used, cpu.queue_used) == ("team-b-cq", 0, 4, 4)
    assert (cpu.free, cpu.borrowable) == (2, 2) and headroom.hidden == ()
    # the pending rows carry their estimate: b1 holds the CPUs and nothing bounds its release
    q = queue_overview("team-b", api).queue("local-queue")
    eta = q.pending[0].eta
    assert eta is not None and eta.earliest is None and eta.latest is None
    assert "nothing bounds when team-b/b1 releases its quota" in eta.basis
    assert "you are next in team-b-cq" in eta.basis
    base = ["--kubeconfig", str(plane.kubeconfig_path), "--context", "rayqueue-local-bob", "-n", "team-b"]
    assert main(["queue", "headroom", "--json", *base]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert {"local_queue": "local-queue", "resource": "cpu", "free": "2", "queue_used": "4"}.items() <= next(
        r for r in rows if r["resource"] == "cpu"
    ).items()
    # ClusterQueues hidden: what can be known, and the permission that would show the rest
    plane.faults.inject(method="GET", path=r"/apis/kueue.x-k8s.io/v1beta2/clusterqueues", status=403, times=2)
    try:
        hidden = queue_headroom("team-b", api)
        blind = queue_overview("team-b", api).queue("local-queue").pending[0].eta
    finally:
        plane.faults.clear()
    assert any("kueue-clusterqueue-viewer-role" in h for h in hidden.hidden)
    cpu = next(r for r in hidden.rows if r.resource == "cpu")
    assert cpu.queue_used == 4 and cpu.nominal is None and cpu.free is None
    assert blind is not None and "ClusterQueue team-b-cq cannot be read" in blind.basis


def test_queue_timeline_rows_from_the_plane(
    workloads: None, tokens: dict[str, str], client_for: Callable[[str], Any]
) -> None:
    from rayqueue_sdk.display.charts import queue_timeline
    from rayqueue_sdk.queues.timeline import queue_timeline_rows

    rows = queue_timeline_rows("local-queue", "team-b", client_for(tokens["b"]))
    assert [(r.name, r.kind) for r in rows] == [
        ("team-b/b1", "admitted"),
        ("team-b/b3", "pending"),
        ("team-b/b2", "pending"),
        ("team-b/b4", "pending"),
    ]
    assert rows[0].start.tzinfo is not None and rows[0].end is None  # no idle policy or deadline bounds b1
    assert "nothing bounds" in rows[0].note
    text = queue_timeline(rows, draw=False).text.splitlines()
    assert text[1].startswith("team-b/b1  admitted") and text[1].endswith(
        "release not bounded; " + rows[0].note
    )
