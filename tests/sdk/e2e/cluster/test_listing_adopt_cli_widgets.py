"""list_clusters in a constant number of API calls, get_cluster adopting every worker group, the CLI's
commands and exit codes, and the notebook widgets (built and clicked, no browser)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cluster_helpers import eventually

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import (
    Cluster,
    ClusterConfiguration,
    ClusterPhase,
    WorkerGroup,
    get_cluster,
    list_clusters,
    view_clusters,
)
from rayqueue_sdk.cli.main import main


def parked(name: str, ns: str) -> dict[str, Any]:
    return Cluster(
        ClusterConfiguration(name=name, namespace=ns, local_queue="parked", num_workers=1)
    ).to_dict()


def count_requests(plane: LocalControlPlane, action: Any) -> tuple[Any, int]:
    """Run ``action`` and count the HTTP requests the API server received meanwhile."""
    counter = plane.faults.inject(path=r"/", delay=1e-6, times=None)  # matches every request, changes nothing
    try:
        result = action()
    finally:
        plane.faults.clear()
    return result, counter.hits


def test_list_clusters_costs_the_same_number_of_calls_for_3_or_40_clusters(
    plane: LocalControlPlane, ns: str, user_client: Any
) -> None:
    def all_queued(n: int) -> bool:
        # Kueue has made every Workload, put it in the queue and tried it once (so its message says
        # why it waits): under load the position can come before that first attempt's message.
        statuses = list_clusters(ns, user_client)
        return sum(s.position is not None and "insufficient" in (s.message or "") for s in statuses) == n

    plane.apply([parked(f"c{i:02d}", ns) for i in range(3)])
    eventually(lambda: all_queued(3))  # also caches discovery (Kueue version, Route/Gateway groups)
    few, calls_few = count_requests(plane, lambda: list_clusters(ns, user_client))
    plane.apply([parked(f"c{i:02d}", ns) for i in range(3, 40)])
    eventually(lambda: all_queued(40))
    many, calls_many = count_requests(plane, lambda: list_clusters(ns, user_client))
    assert [s.name for s in few] == ["c00", "c01", "c02"]
    assert len(many) == 40 and calls_many == calls_few
    assert calls_few <= 5  # rayclusters, workloads, pending workloads of 'parked', ingresses
    queued = [s for s in many if s.phase is ClusterPhase.QUEUED]
    assert len(queued) == 40 and sorted(s.position for s in queued if s.position is not None) == list(
        range(40)
    )
    assert all(s.queue == "parked" and s.message and "insufficient" in s.message for s in queued)
    assert all(s.dashboard_url is None for s in queued)  # no head address while queued


def test_get_cluster_adopts_every_worker_group(ns: str, user_client: Any) -> None:
    config = ClusterConfiguration(
        name="hetero",
        namespace=ns,
        local_queue="parked",
        priority_class="dev-priority",
        labels={"team": "vision"},
        envs={"HF_HOME": "/data/hf"},
        worker_groups=[
            WorkerGroup(
                name="gpu",
                replicas=2,
                cpu_requests=4,
                memory_requests=16,
                extended_resource_requests={"nvidia.com/gpu": 1},
                node_selector={"gpu": "a100"},
            ),
            WorkerGroup(
                name="cpu",
                replicas=1,
                min_replicas=0,
                max_replicas=3,
                cpu_requests=8,
                envs={"OMP_NUM_THREADS": "8"},
            ),
            WorkerGroup(name="tpu", replicas=1, extended_resource_requests={"google.com/tpu": 4}),
        ],
    )
    original = Cluster(config, client=user_client)
    original.apply()
    adopted = get_cluster("hetero", ns, client=user_client)
    groups = adopted.config.resolved_worker_groups()
    assert [(g.name, g.replicas, g.min_replicas, g.max_replicas) for g in groups] == [
        ("gpu", 2, 2, 2),
        ("cpu", 1, 0, 3),
        ("tpu", 1, 1, 1),
    ]
    assert (adopted.config.local_queue, adopted.config.priority_class, adopted.config.labels) == (
        "parked",
        "dev-priority",
        {"team": "vision"},
    )
    assert adopted.to_dict() == original.to_dict()  # the same manifest: a re-apply changes nothing
    adopted.apply()
    details = adopted.details(show=False)
    assert details.gpus == 2 and [g.name for g in details.groups] == ["gpu", "cpu", "tpu"]
    from rayqueue_sdk import ClusterNotFoundError

    with pytest.raises(ClusterNotFoundError) as info:
        get_cluster("nope", ns, client=user_client)
    assert info.value.available == ["hetero"]


def test_cli_cluster_and_queue_commands_with_json_and_exit_codes(
    plane: LocalControlPlane, ns: str, user: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = f"rayqueue-local-user-{ns}"[:75]
    base = ["--kubeconfig", str(plane.kubeconfig_path), "--context", ctx, "-n", ns]
    config = tmp_path / "ws.yaml"
    config.write_text("name: ws\nlocal_queue: parked\nnum_workers: 1\nworker_cpu_requests: 1\n")
    assert main(["cluster", "apply", "-f", str(config), "--json", *base]) == 0
    applied = json.loads(capsys.readouterr().out)
    assert (applied["name"], applied["namespace"], applied["queue"]) == ("ws", ns, "parked")

    admin = plane.api_client()
    eventually(lambda: [st.position for st in list_clusters(ns, admin)] == [0])  # Kueue has queued it
    assert main(["cluster", "list", "--json", *base]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(c["name"], c["phase"], c["position"]) for c in listed] == [("ws", "queued", 0)]

    assert main(["cluster", "status", "ws", *base]) == 0
    assert "queued" in capsys.readouterr().out

    assert main(["cluster", "wait", "ws", "--queue-timeout", "0.5", "--json", *base]) == 4  # AdmissionTimeout
    assert json.loads(capsys.readouterr().out)["error"] == "AdmissionTimeout"

    assert main(["queue", "list", "--json", *base]) == 0
    assert [q["name"] for q in json.loads(capsys.readouterr().out)] == ["parked"]

    assert main(["cluster", "status", "nope", *base]) == 3
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: ws\nlocal_queue: nope\n")
    assert main(["cluster", "apply", "-f", str(bad), *base]) == 3  # QueueNotFoundError
    bad.write_text("name: Bad_Name\n")
    assert main(["cluster", "apply", "-f", str(bad), *base]) == 2  # ConfigError
    assert (
        main(
            [
                "cluster",
                "list",
                "--kubeconfig",
                str(plane.kubeconfig_path),
                "--context",
                ctx,
                "-n",
                "kube-system",
            ]
        )
        == 6
    )

    assert main(["cluster", "down", "ws", "--json", *base]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] is True
    assert main(["cluster", "down", "ws", *base]) == 0
    out = capsys.readouterr()
    assert "already gone" in out.out and user not in out.out + out.err


def test_view_clusters_widget_table_and_buttons(
    plane: LocalControlPlane, ns: str, user: str, admin: Any
) -> None:
    plane.apply([parked("alpha", ns), parked("beta", ns)])
    # both positioned and both evaluated by Kueue (reason Pending): a loaded machine can list a Workload
    # the visibility API already ranks before the scheduler has written its QuotaReserved condition
    eventually(
        lambda: sum(s.position is not None and s.reason == "Pending" for s in list_clusters(ns, admin)) == 2
    )
    browser = view_clusters(ns, client=admin)
    table = browser.table.value
    assert "alpha" in table and "beta" in table and "queued (Pending)" in table
    assert list(browser.picker.options) == ["alpha", "beta"]
    assert [s.position for s in browser.statuses] == [0, 1]

    browser.picker.value = "alpha"
    browser.deactivate_button.click()
    assert "deactivate: " in browser.message.value
    assert {s.name: s.phase for s in browser.statuses}["alpha"] is ClusterPhase.DEACTIVATED
    browser.resume_button.click()
    assert "resume: " in browser.message.value
    workloads = plane.store.list("workloads.kueue.x-k8s.io", ns)
    assert {w["metadata"]["ownerReferences"][0]["name"]: w["spec"]["active"] for w in workloads}[
        "alpha"
    ] is True
    assert {s.name: s.phase for s in browser.statuses}["alpha"] is ClusterPhase.QUEUED  # no stale eviction

    browser.picker.value = "beta"
    browser.down_button.click()  # asks first: nothing deleted yet
    assert list(browser.picker.options) == ["alpha", "beta"] and "beta" in browser.confirm_text.value
    browser.confirm_button.click()
    assert list(browser.picker.options) == ["alpha"]
    browser.refresh_button.click()
    assert [s.name for s in browser.statuses] == ["alpha"]

    everything = " ".join(
        str(getattr(w, "value", "")) for w in (browser.table, browser.message, browser.picker)
    )
    assert plane.token not in everything and user not in everything
    card = get_cluster("alpha", ns, client=admin).details(show=False)
    from rayqueue_sdk.display.widgets import cluster_widget

    html = cluster_widget(card).value
    assert "alpha" in html and "parked" in html and plane.token not in html
