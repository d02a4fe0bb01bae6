"""GCS fault tolerance with a real Redis: a head that dies is restarted, and the cluster keeps its state.

``ClusterConfiguration(enable_gcs_ft=True, redis_address=..., redis_password_secret=...)`` renders KubeRay's
``gcsFaultToleranceOptions``; the local KubeRay starts the head against the session's ``redis-server``
(``RAY_REDIS_ADDRESS``, the password from the Secret). The test kills the head's whole process group, as a
crashed head container: while the plane restarts it, ``status()`` says "head restarting" (not failed); once
it is back, a detached actor made before the crash answers and the job history still lists the first job.
Bad input (an address that is not host:port, a password Secret that does not exist) is refused before any
request.
"""

from __future__ import annotations

import base64
import os
import signal
from typing import Any

import pytest
from cluster_helpers import eventually, team_queue

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import Cluster, ClusterConfiguration, ClusterPhase, RayJob
from rayqueue_sdk.errors import ConfigError

pytestmark = pytest.mark.ray

MAKE_ACTOR = (
    'python -c "import ray; ray.init(); '
    "C = ray.remote(max_restarts=-1, num_cpus=0)(type('Keeper', (), {'ping': lambda self: 'pong'})); "
    "c = C.options(name='keeper', lifetime='detached', namespace='ft').remote(); "
    "print('made', ray.get(c.ping.remote()))\""
)
USE_ACTOR = (
    'python -c "import ray; ray.init(); '
    "print('after restart', ray.get(ray.get_actor('keeper', namespace='ft').ping.remote(), timeout=300))\""
)


def _password_secret(ns: str, password: str) -> dict[str, Any]:
    data = {"password": base64.b64encode(password.encode()).decode()}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "redis-pw", "namespace": ns},
        "data": data,
    }


def _config(ns: str, address: str, **extra: Any) -> ClusterConfiguration:
    return ClusterConfiguration(
        name="ft", namespace=ns, local_queue="team-q", num_workers=0, enable_gcs_ft=True,
        redis_address=address, redis_password_secret={"name": "redis-pw", "key": "password"}, **extra,
    )  # fmt: skip


def test_a_missing_password_secret_is_refused_before_the_cluster_is_sent(
    plane: LocalControlPlane, ns: str, user_client: Any, redis_server: Any
) -> None:
    plane.apply(team_queue(ns, "team-q", cpu=8, memory="32Gi", gpus=0))
    cluster = Cluster(_config(ns, redis_server.address), client=user_client)
    with pytest.raises(ConfigError) as info:
        cluster.apply()
    assert info.value.field == "redis_password_secret"
    assert f"Secret 'redis-pw' does not exist in namespace '{ns}'" in str(info.value)
    assert plane.store.list("rayclusters.ray.io", ns) == []  # nothing was sent
    with pytest.raises(ConfigError, match="redis_address: not host:port"):
        _config(ns, "localhost")


def test_a_killed_head_restarts_and_keeps_its_detached_actor_and_job_history(
    plane: LocalControlPlane, ns: str, user_client: Any, redis_server: Any
) -> None:
    plane.apply(team_queue(ns, "team-q", cpu=8, memory="32Gi", gpus=0))
    plane.apply(_password_secret(ns, redis_server.password))
    cluster = Cluster(
        _config(ns, redis_server.address, external_storage_namespace=f"{ns}-ft"), client=user_client
    )
    assert redis_server.password not in repr(cluster.config) + cluster.to_yaml()
    cluster.apply()
    cluster.wait_ready(timeout=600, dashboard_check=False)
    rc = plane.store.get("rayclusters.ray.io", ns, "ft")
    assert rc["spec"]["gcsFaultToleranceOptions"]["redisAddress"] == redis_server.address

    first = RayJob(
        job_name="make-actor", entrypoint=MAKE_ACTOR, cluster_name="ft", namespace=ns, client=user_client
    )
    first.submit()
    first.wait(timeout=600)
    assert "made pong" in first.logs()

    handle = plane.ray_runtime.find(ns, "ft")
    os.killpg(handle.head.process.popen.pid, signal.SIGKILL)  # the head container crashes
    restarting = eventually(
        lambda: (
            (st := cluster.status()).phase is ClusterPhase.STARTING
            and "head restarting" in st.explanation
            and st
        ),
        timeout=120,
        what="status() saying the head restarts",
    )
    assert "restart 1" in restarting.explanation and restarting.phase is not ClusterPhase.FAILED

    cluster.wait_ready(timeout=600, dashboard_check=False)
    second = RayJob(
        job_name="use-actor", entrypoint=USE_ACTOR, cluster_name="ft", namespace=ns, client=user_client
    )
    second.submit()
    second.wait(timeout=600)
    assert "after restart pong" in second.logs()  # the detached actor survived the head
    history = {job.submission_id: job.status for job in cluster.job_client.list_jobs()}
    assert history[first.job_id] == "SUCCEEDED"  # the job history survived too
    cluster.down()
