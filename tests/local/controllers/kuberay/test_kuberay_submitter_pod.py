"""KubeRay's submitter pod, emulated: ``submitterPodTemplate`` volumes and init containers run for real."""

from __future__ import annotations

import base64
import io
import uuid
import zipfile
from pathlib import Path
from typing import Any

import pytest
from kuberay_helpers import queues, rayjob, wait_for
from kubernetes import client

from rayqueue_local import LocalControlPlane


def _zip(files: dict[str, str]) -> str:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _template(init_script: str) -> dict[str, Any]:
    """A submitter pod with the package Secret, a ConfigMap, an emptyDir and one init container."""
    return {
        "spec": {
            "restartPolicy": "Never",
            "initContainers": [
                {
                    "name": "unpack",
                    "image": "rayproject/ray:2.60.0",
                    "command": ["/bin/sh", "-c", init_script],
                    "env": [{"name": "TARGET", "value": "/work/code"}],
                    "volumeMounts": [
                        {"name": "package", "mountPath": "/pkg", "readOnly": True},
                        {"name": "settings", "mountPath": "/etc/settings"},
                        {"name": "work", "mountPath": "/work"},
                    ],
                }
            ],
            "containers": [
                {
                    "name": "ray-job-submitter",
                    "image": "rayproject/ray:2.60.0",
                    "volumeMounts": [{"name": "work", "mountPath": "/work"}],
                }
            ],
            "volumes": [
                {"name": "package", "secret": {"secretName": "code"}},
                {
                    "name": "settings",
                    "configMap": {"name": "settings", "items": [{"key": "mode", "path": "conf/mode.txt"}]},
                },
                {"name": "work", "emptyDir": {}},
            ],
        }
    }


UNPACK = "python3 -m zipfile -e /pkg/code.zip $TARGET && cp /etc/settings/conf/mode.txt $TARGET/"


def _objects(ns: str, script: str) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "code", "namespace": ns},
            "data": {"code.zip": _zip({"hello.py": script})},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": ns},
            "data": {"mode": "from-configmap"},
        },
    ]


def _status(custom: Any, ns: str, name: str) -> dict[str, Any]:
    job = custom.get_namespaced_custom_object("ray.io", "v1", ns, "rayjobs", name)
    return dict(job.get("status") or {})


def _submitter_pods(core: Any, ns: str, job: str) -> list[Any]:
    return list(core.list_namespaced_pod(ns, label_selector=f"batch.kubernetes.io/job-name={job}").items)


@pytest.mark.ray
def test_secret_file_unpacked_by_an_init_container_reaches_the_job(
    ray_cp: LocalControlPlane, tmp_path: Path
) -> None:
    ns = f"sub-{uuid.uuid4().hex[:6]}"
    queues(ray_cp, ns)
    out = tmp_path / "seen.txt"
    script = (
        "import pathlib, sys\n"
        "mode = pathlib.Path('mode.txt').read_text()\n"
        "pathlib.Path(sys.argv[1]).write_text('hello from the secret, ' + mode)\n"
    )
    ray_cp.apply(_objects(ns, script))
    custom = client.CustomObjectsApi(ray_cp.api_client())
    core = client.CoreV1Api(ray_cp.api_client())
    job = rayjob(
        "unpacked",
        f"python hello.py {out}",
        runtimeEnvYAML="working_dir: /work/code\n",
        submitterPodTemplate=_template(UNPACK),
    )
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayjobs", job)

    done = wait_for(
        lambda: _status(custom, ns, "unpacked"),
        lambda s: s.get("jobDeploymentStatus") in ("Complete", "Failed"),
        timeout=240,
    )
    assert (done["jobDeploymentStatus"], done.get("jobStatus")) == ("Complete", "SUCCEEDED"), done.get(
        "message"
    )
    assert out.read_text() == "hello from the secret, from-configmap"

    # KubeRay's submitter: the batch Job <rayjob>, owned by the RayJob, whose pod ran `ray job submit`
    batch = client.BatchV1Api(ray_cp.api_client())
    submitter = batch.read_namespaced_job("unpacked", ns)
    assert submitter.metadata.owner_references[0].kind == "RayJob"
    # one pod, or more when an attempt failed (e.g. a head that was slow to start on a loaded
    # machine) and the Job's backoffLimit retried it, as upstream's Job controller does
    pods = wait_for(
        lambda: _submitter_pods(core, ns, "unpacked"),
        lambda p: any(x.status.phase == "Succeeded" for x in p or []),
    )
    pods = [x for x in pods if x.status.phase == "Succeeded"]
    assert len(pods) == 1 and pods[0].metadata.name.startswith("unpacked-")
    assert pods[0].metadata.owner_references[0].kind == "Job"
    assert [s.state.terminated.exit_code for s in pods[0].status.init_container_statuses] == [0]
    env = {e.name: e.value for e in pods[0].spec.containers[0].env}
    assert env["RAY_JOB_SUBMISSION_ID"] == done["jobId"]

    # the cluster goes (ttl 0), the submitter Job and its pod stay, and so do the logs it followed
    wait_for(
        lambda: custom.list_namespaced_custom_object("ray.io", "v1", ns, "rayclusters")["items"],
        lambda items: items == [],
        timeout=60,
    )
    log = core.read_namespaced_pod_log(pods[0].metadata.name, ns)
    assert f"Job '{done['jobId']}' submitted successfully" in log, log
    phases = [p.status.phase for p in _submitter_pods(core, ns, "unpacked")]
    assert phases.count("Succeeded") == 1 and set(phases) <= {"Succeeded", "Failed"}, phases


def test_failing_init_container_fails_the_rayjob_with_submission_failed(api_cp: LocalControlPlane) -> None:
    ns = f"sub-{uuid.uuid4().hex[:6]}"
    queues(api_cp, ns)
    api_cp.apply(_objects(ns, "print('never runs')\n"))
    custom = client.CustomObjectsApi(api_cp.api_client())
    core = client.CoreV1Api(api_cp.api_client())
    failing = "echo 'unpacking' && python3 -c \"import sys; sys.exit('corrupt package: bad CRC')\""
    job = rayjob("broken", "python hello.py", submitterPodTemplate=_template(failing))
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayjobs", job)

    done = wait_for(
        lambda: _status(custom, ns, "broken"),
        lambda s: s.get("jobDeploymentStatus") in ("Running", "Complete", "Failed"),
    )
    assert done["jobDeploymentStatus"] == "Failed"
    assert done["reason"] == "SubmissionFailed"
    assert 'init container "unpack" exited with code 1' in done["message"]
    assert "corrupt package: bad CRC" in done["message"]
    pods = _submitter_pods(core, ns, "broken")
    assert [p.status.phase for p in pods] == ["Failed"]
    assert pods[0].status.init_container_statuses[0].state.terminated.exit_code == 1


def test_missing_secret_keeps_the_job_initializing_until_it_exists(api_cp: LocalControlPlane) -> None:
    ns = f"sub-{uuid.uuid4().hex[:6]}"
    queues(api_cp, ns)
    secret, config_map = _objects(ns, "print('hi')\n")
    api_cp.apply([config_map])
    custom = client.CustomObjectsApi(api_cp.api_client())
    core = client.CoreV1Api(api_cp.api_client())
    job = rayjob("waits", "python hello.py", submitterPodTemplate=_template(UNPACK))
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayjobs", job)

    initializing = wait_for(
        lambda: _status(custom, ns, "waits"), lambda s: bool(s.get("dashboardURL")), timeout=60
    )
    assert initializing["jobDeploymentStatus"] == "Initializing"  # its cluster is ready; the pod cannot start
    assert _submitter_pods(core, ns, "waits") == []

    api_cp.apply([secret])
    done = wait_for(
        lambda: _status(custom, ns, "waits"),
        lambda s: s.get("jobDeploymentStatus") in ("Complete", "Failed"),
    )
    assert (done["jobDeploymentStatus"], done["jobStatus"]) == ("Complete", "SUCCEEDED"), done.get("message")
    assert [p.status.phase for p in _submitter_pods(core, ns, "waits")] == ["Succeeded"]
