"""codeflare-sdk 0.40.1, from a venv of its own, against a live local control plane (issue 15's test list):
``TokenAuthentication`` login (a valid token succeeds; a bad one fails as against a real cluster), then, as
a user limited to one namespace, ``Cluster.apply``, ``wait_ready``, ``status``, ``details``,
``list_all_clusters``, a ``RayJob`` on the running cluster, and ``down``. Real Ray heads.

What codeflare-sdk does that the test has to follow (its behaviour, not the plane's):

* ``login()`` reads ``GET /apis/authentication.k8s.io/`` with the token; a bad token is a 401, which
  codeflare reports by printing "Access to the API is unauthorized." and re-raising the
  ``UnauthorizedException`` (what it does against a real cluster);
* ``RayJob`` builds its vendored KubeRay client with ``kubernetes.config.load_kube_config()``, not with the
  ``ApiClient`` that ``login()`` set, so it needs a kubeconfig: the test writes one for the user and
  points ``KUBECONFIG`` at it;
* ``apply()`` waits for a CA Secret that only the OpenShift AI fork of KubeRay creates, and says "TLS setup
  incomplete" when it does not come (300 s by default); the test gives it 5 s;
* ``wait_ready`` runs with ``dashboard_check=False``: the dashboard check is not exercised here.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from rayqueue_local.apiserver.kubeconfig import merge_context

pytestmark = pytest.mark.ray

SESSION = textwrap.dedent(
    """
    import contextlib, io, json, sys, time, warnings
    warnings.simplefilter("ignore")
    server, token, ca, ns, queue = sys.argv[1:6]
    T0 = time.monotonic()

    def step(name, value):
        print("STEP " + json.dumps([name, round(time.monotonic() - T0, 1), value], default=str), flush=True)

    def quiet(call, *args, **kwargs):
        with contextlib.redirect_stdout(io.StringIO()):
            return call(*args, **kwargs)

    from codeflare_sdk import Cluster, ClusterConfiguration, RayJob, TokenAuthentication, list_all_clusters

    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            TokenAuthentication("not-a-valid-token", server, ca_cert_path=ca).login()
        step("bad_login", "succeeded")
    except Exception as err:
        step("bad_login", {"type": type(err).__name__, "status": getattr(err, "status", None),
                           "printed": printed.getvalue()})
    step("login", TokenAuthentication(token, server, ca_cert_path=ca).login())
    config = ClusterConfiguration(
        name="cf-cluster", namespace=ns, num_workers=1, local_queue=queue, write_to_file=False,
        head_cpu_requests=1, head_cpu_limits=1, head_memory_requests=2, head_memory_limits=2,
        worker_cpu_requests=1, worker_cpu_limits=1, worker_memory_requests=1, worker_memory_limits=1)
    cluster = quiet(Cluster, config)
    # 0.40.1's apply() then waits `timeout` s for the "<name>-ca-secret-*" Secret that only the OpenShift
    # AI fork of KubeRay creates (upstream KubeRay, which the plane follows, never does): 300 s by default.
    applied = io.StringIO()
    with contextlib.redirect_stdout(applied):
        cluster.apply(timeout=5)
    step("applied", "TLS setup incomplete" in applied.getvalue())
    quiet(cluster.wait_ready, timeout=480, dashboard_check=False)
    status, ready = cluster.status(print_to_console=False)
    step("status", [status.name, ready])
    details = cluster.details(print_to_console=False)
    step("details", {"name": details.name, "namespace": details.namespace, "status": details.status.name,
                     "num_workers": details.num_workers})
    step("list", [c.name for c in quiet(list_all_clusters, ns, print_to_console=False)])
    job = RayJob(job_name="cf-job", entrypoint="python -c \\"print('answer', 6 * 7)\\"",
                 cluster_name="cf-cluster", namespace=ns)
    step("submit", quiet(job.submit))
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        job_status, _ = quiet(job.status, print_to_console=False)
        if job_status.name in ("COMPLETE", "FAILED"):
            break
        time.sleep(1)
    step("job", job_status.name)
    quiet(cluster.down)
    step("down", True)
    """
)


def test_codeflare_sdk_session(codeflare_python: Path, codeflare_plane: Any, tmp_path: Path) -> None:
    cp, namespace = codeflare_plane, "cf-team"
    token = cp.add_user("cf-user", [namespace])
    kubeconfig = tmp_path / "kubeconfig"
    merge_context(
        kubeconfig,
        "cf",
        server=cp.server,
        ca_path=cp.ca_cert_path,
        user="cf-user",
        token=token,
        namespace=namespace,
    )
    script = tmp_path / "codeflare_session.py"
    script.write_text(SESSION)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("KUBE")}
    env.update({"HOME": str(tmp_path), "KUBECONFIG": str(kubeconfig)})
    proc = subprocess.run(
        [
            str(codeflare_python),
            str(script),
            cp.server,
            token,
            str(cp.ca_cert_path),
            namespace,
            "ds-workspace-queue",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
        check=False,
    )
    steps = {
        name: value
        for name, _, value in (
            json.loads(line[5:]) for line in proc.stdout.splitlines() if line.startswith("STEP ")
        )
    }
    context = f"steps: {json.dumps(steps)[:3000]}\nstderr: {proc.stderr[-3000:]}"
    assert steps.get("bad_login") == {
        "type": "UnauthorizedException",
        "status": 401,
        "printed": "Access to the API is unauthorized.\nCheck your credentials or permissions.\n"
        "Details: Unauthorized\n",
    }, context
    assert steps.get("login") == f"Logged into {cp.server}", context
    assert steps.get("applied") is True, context
    assert steps.get("status") == ["READY", True], context
    assert steps.get("details") == {
        "name": "cf-cluster",
        "namespace": namespace,
        "status": "READY",
        "num_workers": 1,
    }, context
    assert steps.get("list") == ["cf-cluster"], context
    assert steps.get("submit") == "cf-job", context
    assert steps.get("job") == "COMPLETE", context
    assert steps.get("down") is True and proc.returncode == 0, context
    assert cp.store.list("rayclusters.ray.io", namespace) == []
    jobs = cp.store.list("rayjobs.ray.io", namespace)
    assert [j["metadata"]["name"] for j in jobs] == ["cf-job"]
    assert jobs[0]["status"]["jobStatus"] == "SUCCEEDED"
