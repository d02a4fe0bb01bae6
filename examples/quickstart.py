"""Quickstart: a data scientist's first hour with rayqueue_sdk, on this machine, no Kubernetes needed.

1. start the local control plane (Kueue and KubeRay behaviour, a real local Ray head per cluster);
2. as the platform admin: a team queue (ResourceFlavor, ClusterQueue, LocalQueue ``ds-workspace-queue``)
   and the ``rd-priority`` WorkloadPriorityClass, then a data-scientist user limited to one namespace;
3. as the data scientist: log in with the token, run seed 001's workspace cluster (2 workers with one GPU
   each: the local Ray head advertises them), wait while Kueue admits it, connect with ``ray.init`` and run
   remote tasks, submit a job through ``cluster.job_client`` and print its logs, take the cluster down.

Run: ``python examples/quickstart.py`` (``scripts/demo.sh`` does it after installing); ``--entrypoint
'python my_script.py'`` submits your own job in step 6 instead. The exit status is 0 only if every step
ran and the job SUCCEEDED: 1 when the job ended otherwise (its logs are printed; the cluster still goes
down). Against a real cluster, only steps 1-2 change: ``TokenAuthentication(token=..., server=...)``
with your own credentials.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.rule import Rule

from rayqueue_local import LocalControlPlane
from rayqueue_local.scenarios import team_queue
from rayqueue_sdk import Cluster, ClusterConfiguration, TokenAuthentication, list_clusters, list_local_queues
from rayqueue_sdk.display.console import print_clusters

console = Console()
NAMESPACE = "default"  # a token login implies no namespace: the SDK uses "default", as kubectl does


def step(text: str) -> None:
    console.print(Rule(f"[bold]{text}"))


def crd_dir() -> str | None:
    """The upstream CRDs (validation like a real API server), when this checkout has them next to it."""
    found = os.environ.get("RAYQUEUE_CRDS_DIR") or str(
        Path(__file__).resolve().parents[2] / "shared" / "crds"
    )
    return found if Path(found).is_dir() else None


#: Step 6's job: it prints the GPUs the job's Ray sees.
JOB_SCRIPT = "import ray; ray.init(); print('GPUs seen by the job:', ray.cluster_resources()['GPU'])"
DEFAULT_ENTRYPOINT = f'python -c "{JOB_SCRIPT}"'


def exit_status(job_status: object) -> int:
    """The quickstart's exit status for its job's final status: 0 for SUCCEEDED, else 1.

    Example:
        >>> from ray.job_submission import JobStatus
        >>> exit_status(JobStatus.SUCCEEDED), exit_status(JobStatus.FAILED), exit_status(JobStatus.STOPPED)
        (0, 1, 1)
    """
    return 0 if str(job_status) == "SUCCEEDED" else 1


def main(argv: list[str] | None = None) -> int:
    """Run the quickstart; returns the exit status (see :func:`exit_status`)."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entrypoint", default=DEFAULT_ENTRYPOINT, help="the job submitted in step 6")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("rayqueue_local").setLevel(logging.WARNING)

    step("1. Start the local control plane (Kueue + KubeRay with real Ray heads)")
    # Real local Ray heads for admitted RayClusters (the default); no KEDA or Prometheus needed here.
    cp = LocalControlPlane(crd_dir=crd_dir(), keda_enabled=False, prometheus_enabled=False)
    with cp:
        console.print(f"API server at {cp.server} (kubeconfig {cp.kubeconfig_path})")

        step("2. Platform admin: a team queue, a priority class and a limited user")
        cp.apply(team_queue(NAMESPACE, gpus=4))  # quota for the team and the R&D priority
        token = cp.add_user("data-scientist", [NAMESPACE])
        console.print("user 'data-scientist' may manage Ray clusters in namespace 'default' only")

        step("3. Data scientist: log in with a token")
        auth = TokenAuthentication(token=token, server=cp.server, ca_cert_path=str(cp.ca_cert_path))
        console.print(auth.login())
        console.print(f"queues: {[(q.name, q.cluster_queue) for q in list_local_queues()]}")

        step("4. Seed 001's workspace cluster: apply, then wait while Kueue admits it")
        workspace_cluster = Cluster(
            ClusterConfiguration(
                name="my-workspace-cluster",
                num_workers=2,
                worker_cpu_requests=2,
                worker_memory_requests=8,
                worker_extended_resource_requests={"nvidia.com/gpu": 1},  # 2 GPUs total
                local_queue="ds-workspace-queue",  # The team's development queue
                labels={"kueue.x-k8s.io/priority-class": "rd-priority"},  # The R&D priority
            )
        )
        workspace_cluster.apply()
        workspace_cluster.wait_ready(timeout=600, show=True)
        details = workspace_cluster.details(show=True)

        step("5. Connect with ray.init(cluster.cluster_uri()) and run remote tasks")
        import ray

        ray.init(workspace_cluster.cluster_uri())

        @ray.remote(num_gpus=1)
        def train_model(batch: list[int]) -> int:
            return sum(x * x for x in batch)  # Your ML code here

        data = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
        results = ray.get([train_model.remote(batch) for batch in data])
        console.print(f"results {results} on a cluster with {ray.cluster_resources().get('GPU', 0):g} GPUs")
        ray.shutdown()

        step("6. Submit a job through cluster.job_client and read its logs")
        client = workspace_cluster.job_client
        submission_id = client.submit_job(entrypoint=args.entrypoint)
        console.print(f"submitted {submission_id}")
        while not (status := workspace_cluster.job_status(submission_id)).is_terminal():
            time.sleep(0.5)
        console.print(f"job {submission_id}: {status}")
        console.print(workspace_cluster.job_logs(submission_id).strip())

        step("7. Every cluster of the namespace, with its queue state")
        print_clusters(list_clusters(), {workspace_cluster.name: details.gpus}, console=console)

        step("8. Done for the day: take the cluster down (the quota goes back to the queue)")
        workspace_cluster.down()
        console.print(f"clusters left: {[s.name for s in list_clusters()]}")
        auth.logout()

    code = exit_status(status)
    if code:
        console.print(f"[bold red]The job ended {status}, not SUCCEEDED: exit status {code}[/]")
    return code


if __name__ == "__main__":
    sys.exit(main())
