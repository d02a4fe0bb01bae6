"""The local kubelet runs pods for real: phases, container statuses, restarts, deletion, credentials,
and ``pods/{name}/log`` through the official ``kubernetes`` client."""

from __future__ import annotations

import json
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from pods_helpers import eventually

from rayqueue_local import LocalControlPlane


@pytest.fixture
def ns(pods_cp: LocalControlPlane) -> str:
    name = f"pods-{uuid.uuid4().hex[:6]}"
    pods_cp.store.create("namespaces", {"metadata": {"name": name}})
    return name


@pytest.fixture
def core(pods_cp: LocalControlPlane) -> Any:
    return client.CoreV1Api(pods_cp.api_client())


def _pod(name: str, *containers: dict[str, Any], restart: str = "Never", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"restartPolicy": restart, "containers": list(containers), **spec},
    }


def _sh(name: str, script: str) -> dict[str, Any]:
    return {"name": name, "image": "busybox", "command": ["sh", "-c", script]}


def _phase(core: Any, ns: str, name: str) -> Any:
    """The pod, with an empty status until the kubelet writes one."""
    pod = core.read_namespaced_pod(name, ns)
    if pod.status is None:
        pod.status = client.V1PodStatus()
    return pod


def test_a_pod_runs_to_completion_and_its_log_is_served(core: Any, ns: str) -> None:
    core.create_namespaced_pod(
        ns, _pod("hello", _sh("main", "echo hello; sleep 0.3; echo oops >&2; sleep 0.3; echo bye"))
    )
    pod = eventually(lambda: _phase(core, ns, "hello"), lambda p: p.status.phase in ("Succeeded", "Failed"))
    assert pod.status.phase == "Succeeded"
    state = pod.status.container_statuses[0].state.terminated
    assert (state.exit_code, state.reason) == (0, "Completed")
    assert core.read_namespaced_pod_log("hello", ns) == "hello\noops\nbye\n"
    assert core.read_namespaced_pod_log("hello", ns, tail_lines=1) == "bye\n"
    assert core.read_namespaced_pod_log("hello", ns, limit_bytes=3) == "hel"
    stamped = core.read_namespaced_pod_log("hello", ns, timestamps=True).splitlines()
    assert [line.split(" ", 1)[1] for line in stamped] == ["hello", "oops", "bye"]
    assert all(line[:30].endswith("Z") and line[19] == "." for line in stamped)  # RFC3339Nano, 9 digits
    assert core.read_namespaced_pod_log("hello", ns, since_seconds=3600) == "hello\noops\nbye\n"


def test_a_failing_container_fails_a_never_restarted_pod(core: Any, ns: str) -> None:
    core.create_namespaced_pod(ns, _pod("fails", _sh("main", "echo broken; exit 3")))
    pod = eventually(lambda: _phase(core, ns, "fails"), lambda p: p.status.phase in ("Succeeded", "Failed"))
    assert pod.status.phase == "Failed"
    state = pod.status.container_statuses[0]
    assert (state.state.terminated.exit_code, state.state.terminated.reason, state.restart_count) == (
        3,
        "Error",
        0,
    )


def test_on_failure_restarts_with_back_off_and_keeps_the_previous_log(
    core: Any, ns: str, tmp_path: Path
) -> None:
    counter = tmp_path / "runs"
    script = f'echo run >> {counter}; n=$(wc -l < {counter}); echo "attempt $n"; [ "$n" -ge 3 ]'
    core.create_namespaced_pod(ns, _pod("flaky", _sh("main", script), restart="OnFailure"))
    pod = eventually(lambda: _phase(core, ns, "flaky"), lambda p: p.status.phase == "Succeeded")
    status = pod.status.container_statuses[0]
    assert status.restart_count == 2
    assert status.last_state.terminated.exit_code == 1
    assert core.read_namespaced_pod_log("flaky", ns) == "attempt 3\n"
    assert core.read_namespaced_pod_log("flaky", ns, previous=True) == "attempt 2\n"
    reasons = [e.reason for e in core.list_namespaced_event(ns).items]
    assert "BackOff" in reasons


def test_deleting_a_pod_sends_sigterm_then_the_process_is_gone(
    pods_cp: LocalControlPlane, core: Any, ns: str, tmp_path: Path
) -> None:
    marker = tmp_path / "terminated"
    script = textwrap.dedent(
        f"""
        import pathlib, signal, sys, time
        def bye(*_):
            pathlib.Path({str(marker)!r}).write_text("SIGTERM")
            sys.exit(0)
        signal.signal(signal.SIGTERM, bye)
        print("ready", flush=True)
        time.sleep(300)
        """
    )
    core.create_namespaced_pod(
        ns,
        _pod(
            "sleeper",
            {"name": "main", "image": "python", "command": ["python", "-c", script]},
            terminationGracePeriodSeconds=20,
        ),
    )
    pod = eventually(lambda: _phase(core, ns, "sleeper"), lambda p: p.status.phase == "Running")
    assert pod.status.container_statuses[0].ready is True
    eventually(lambda: core.read_namespaced_pod_log("sleeper", ns), lambda text: text == "ready\n")
    worker = pods_cp.kubelet.worker(pod.metadata.uid)
    process = worker.container("main").process
    core.delete_namespaced_pod("sleeper", ns, _preload_content=False)  # see the report: a Status here
    eventually(lambda: marker.exists() and not process.alive(), bool)
    assert marker.read_text() == "SIGTERM"


def test_a_pod_without_command_stays_pending_and_says_why(core: Any, ns: str) -> None:
    core.create_namespaced_pod(ns, _pod("entrypoint", {"name": "app", "image": "nginx"}))
    pod = eventually(
        lambda: _phase(core, ns, "entrypoint"),
        lambda p: bool(p.status.container_statuses and p.status.container_statuses[0].state.waiting),
    )
    assert pod.status.phase == "Pending"
    waiting = pod.status.container_statuses[0].state.waiting
    assert waiting.reason == "CreateContainerError"
    assert "cannot run an image's entrypoint" in waiting.message
    events = [e for e in core.list_namespaced_event(ns).items if e.involved_object.name == "entrypoint"]
    assert [e.reason for e in events] == ["Failed"] and "has no command" in events[0].message
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod_log("entrypoint", ns)
    assert err.value.status == 400
    assert json.loads(err.value.body)["message"] == (
        'container "app" in pod "entrypoint" is waiting to start: CreateContainerError'
    )


def test_log_errors_are_worded_as_upstream(core: Any, ns: str) -> None:
    core.create_namespaced_pod(
        ns,
        _pod(
            "multi",
            _sh("a", "echo a"),
            _sh("b", "echo b"),
            initContainers=[_sh("setup", "echo setting up")],
        ),
    )
    eventually(lambda: _phase(core, ns, "multi"), lambda p: p.status.phase == "Succeeded")
    assert core.read_namespaced_pod_log("multi", ns, container="setup") == "setting up\n"

    def error(**kw: Any) -> tuple[int, str]:
        with pytest.raises(ApiException) as err:
            core.read_namespaced_pod_log(kw.pop("name", "multi"), ns, **kw)
        return err.value.status, json.loads(err.value.body)["message"]

    assert error() == (
        400,
        "a container name must be specified for pod multi, choose one of: [a b] "
        "or one of the init containers: [setup]",
    )
    assert error(container="c") == (400, "container c is not valid for pod multi")
    assert error(container="a", previous=True) == (
        400,
        'previous terminated container "a" in pod "multi" not found',
    )
    assert error(container="a", tail_lines=-1) == (
        422,
        'PodLogOptions "multi" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0',
    )
    assert error(container="a", since_seconds=0) == (
        422,
        'PodLogOptions "multi" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0',
    )
    assert error(name="ghost") == (404, 'pods "ghost" not found')


def test_follow_streams_until_the_container_ends(core: Any, ns: str) -> None:
    core.create_namespaced_pod(
        ns, _pod("ticker", _sh("main", "for i in 1 2 3 4; do echo tick $i; sleep 0.3; done"))
    )
    eventually(lambda: _phase(core, ns, "ticker"), lambda p: p.status.phase in ("Running", "Succeeded"))
    response = core.read_namespaced_pod_log("ticker", ns, follow=True, _preload_content=False)
    text = b"".join(response.stream(64)).decode()
    assert response.headers["Content-Type"] == "text/plain"
    assert text == "tick 1\ntick 2\ntick 3\ntick 4\n"


AGENT = textwrap.dedent(
    """
    import os
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException
    from kubernetes.config.incluster_config import InClusterConfigLoader

    sa = os.environ["SA_DIR"]
    InClusterConfigLoader(token_filename=f"{sa}/token", cert_filename=f"{sa}/ca.crt").load_and_set()
    namespace = open(f"{sa}/namespace").read()
    print("namespace", namespace, flush=True)
    print("version", client.VersionApi().get_code().git_version, flush=True)
    try:
        client.CoreV1Api().read_namespaced_config_map("agent", namespace)
        print("configmap readable", flush=True)
    except ApiException as err:
        print("configmap", err.status, flush=True)
    """
)


def test_a_reaper_shaped_deployment_reaches_the_plane_with_its_projected_token(
    pods_cp: LocalControlPlane, core: Any, ns: str
) -> None:
    """The shape of the SDK's scale-to-zero reaper: a Deployment of one replica whose container runs
    ``python <configmap mount>/agent.py`` as a named ServiceAccount, with the in-cluster config."""
    core.create_namespaced_service_account(ns, {"metadata": {"name": "reaper"}})
    core.create_namespaced_config_map(ns, {"metadata": {"name": "agent"}, "data": {"agent.py": AGENT}})
    apps = client.AppsV1Api(pods_cp.api_client())
    sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount"
    apps.create_namespaced_deployment(
        ns,
        {
            "metadata": {"name": "reaper"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "reaper"}},
                "template": {
                    "metadata": {"labels": {"app": "reaper"}},
                    "spec": {
                        "serviceAccountName": "reaper",
                        "containers": [
                            {
                                "name": "agent",
                                "image": "rayproject/ray:2.60.0",
                                "command": ["python", "/opt/agent/agent.py"],
                                "env": [{"name": "SA_DIR", "value": sa_dir}],
                                "volumeMounts": [{"name": "code", "mountPath": "/opt/agent"}],
                            }
                        ],
                        "volumes": [{"name": "code", "configMap": {"name": "agent"}}],
                    },
                },
            },
        },
    )
    pods = eventually(
        lambda: core.list_namespaced_pod(ns, label_selector="app=reaper").items,
        lambda items: len(items) == 1 and items[0].status.container_statuses,
    )
    name = pods[0].metadata.name
    assert pods[0].metadata.owner_references[0].kind == "Deployment"

    def read_log() -> str:
        try:
            return str(core.read_namespaced_pod_log(name, ns))
        except ApiException as err:  # 400 "waiting to start" until the kubelet has started it
            assert err.status == 400, err.body
            return ""

    log = eventually(read_log, lambda text: "configmap" in text, timeout=90)
    assert f"namespace {ns}\n" in log
    assert "version v1." in log
    assert "configmap 403\n" in log  # its identity is system:serviceaccount:<ns>:reaper, granted nothing yet
    # the container exits and is restarted (restartPolicy Always): the Deployment keeps one replica
    deploy = eventually(
        lambda: apps.read_namespaced_deployment("reaper", ns), lambda d: d.status.replicas == 1
    )
    assert deploy.status.observed_generation == 1


def test_a_deployment_scales_and_its_pods_go_with_it(pods_cp: LocalControlPlane, core: Any, ns: str) -> None:
    apps = client.AppsV1Api(pods_cp.api_client())
    apps.create_namespaced_deployment(
        ns,
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "x", "command": ["sleep", "300"]}]},
                },
            },
        },
    )
    deploy = eventually(
        lambda: apps.read_namespaced_deployment("web", ns),
        lambda d: d.status is not None and d.status.ready_replicas == 2,
    )
    assert (deploy.status.replicas, deploy.status.available_replicas) == (2, 2)
    assert {c.type: c.status for c in deploy.status.conditions}["Available"] == "True"
    apps.patch_namespaced_deployment_scale("web", ns, {"spec": {"replicas": 1}})
    eventually(lambda: core.list_namespaced_pod(ns, label_selector="app=web").items, lambda p: len(p) == 1)
    deploy = eventually(
        lambda: apps.read_namespaced_deployment("web", ns),
        lambda d: d.status is not None and d.status.replicas == 1,
    )
    assert apps.read_namespaced_deployment_scale("web", ns).status.replicas == 1
    uid = core.list_namespaced_pod(ns, label_selector="app=web").items[0].metadata.uid
    process = pods_cp.kubelet.worker(uid).container("c").process
    apps.delete_namespaced_deployment("web", ns)
    eventually(lambda: core.list_namespaced_pod(ns, label_selector="app=web").items, lambda p: p == [])
    eventually(lambda: process.alive(), lambda alive: not alive)


def test_a_job_retries_up_to_its_backoff_limit_then_fails(
    pods_cp: LocalControlPlane, core: Any, ns: str
) -> None:
    batch = client.BatchV1Api(pods_cp.api_client())
    template = {"spec": {"restartPolicy": "Never", "containers": [_sh("c", "echo nope; exit 1")]}}
    batch.create_namespaced_job(
        ns, {"metadata": {"name": "bad"}, "spec": {"backoffLimit": 1, "template": template}}
    )
    job = eventually(
        lambda: batch.read_namespaced_job("bad", ns),
        lambda j: any(c.type == "Failed" for c in (j.status and j.status.conditions) or []),
    )
    failed = next(c for c in job.status.conditions if c.type == "Failed")
    assert (failed.reason, failed.message) == (
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )
    assert job.status.failed == 2 and not job.status.succeeded
    pods = core.list_namespaced_pod(ns, label_selector="batch.kubernetes.io/job-name=bad").items
    assert sorted(p.status.phase for p in pods) == ["Failed", "Failed"]
    assert all(p.metadata.owner_references[0].kind == "Job" for p in pods)


def test_a_job_completes(pods_cp: LocalControlPlane, core: Any, ns: str) -> None:
    batch = client.BatchV1Api(pods_cp.api_client())
    template = {"spec": {"restartPolicy": "Never", "containers": [_sh("c", "echo done")]}}
    batch.create_namespaced_job(ns, {"metadata": {"name": "ok"}, "spec": {"template": template}})
    job = eventually(
        lambda: batch.read_namespaced_job("ok", ns),
        lambda j: any(c.type == "Complete" for c in (j.status and j.status.conditions) or []),
    )
    assert job.status.succeeded == 1 and job.status.completion_time is not None
    assert [c.type for c in job.status.conditions] == ["SuccessCriteriaMet", "Complete"]
    pod = core.list_namespaced_pod(ns, label_selector="job-name=ok").items[0]
    assert core.read_namespaced_pod_log(pod.metadata.name, ns) == "done\n"
