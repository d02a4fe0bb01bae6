"""Submit to an existing cluster: ``RayJob.submit()`` against Ray's ``JobSubmissionClient.submit_job``.

One local control plane with a real Ray head (one RayCluster, admitted through a LocalQueue). The two
are measured side by side in one run, alternating, on the same head, and the medians compared (target:
``RayJob.submit()`` within 50 ms of Ray's call). Three variants of the SDK side:

- ``new RayJob``: a fresh ``RayJob(...)`` each time, as a script would do: the cluster is looked up
  (``ClusterNotFoundError`` otherwise), the dashboard discovered, Ray's client made, the job submitted;
- ``same RayJob``: ``submit()`` again on one object (dashboard and client reused);
- both sides with a small local ``working_dir`` (Ray zips and uploads it; the SDK also checks the
  entrypoint script is there and the package size first).

Ray's side always uses one ``JobSubmissionClient`` made beforehand (its best case).

Each Ray job starts a supervisor and a driver on the head, so Ray's own call varies by tens of ms on a
small machine; the paired difference (median over pairs) and the SDK's own time around Ray's call are
printed as well.

Usage: ``python benchmarks/bench_submit.py [--runs 31] [--settle 1.0] [--crd-dir ../shared/crds]``
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rayqueue_local import LocalControlPlane
from rayqueue_sdk import Cluster, ClusterConfiguration, RayJob
from rayqueue_sdk.cluster.wait import wait_for_cluster
from rayqueue_sdk.kube.client import set_current_client
from rayqueue_sdk.manifests import kueue as k

ROOT = Path(__file__).resolve().parents[1]
NS = "bench"
TARGET = 0.050
ENTRYPOINT = "true"


def admin() -> list[dict]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        k.resource_flavor("default-flavor"),
        k.cluster_queue(
            "cq",
            resource_groups=[
                k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 32, "memory": "64Gi", "pods": 10}))
            ],
        ),
        k.local_queue("q", NS, "cq"),
    ]


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--settle", type=float, default=1.0, help="seconds between submissions")
    parser.add_argument("--crd-dir", default=str(ROOT.parent / "shared" / "crds"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    cp = LocalControlPlane(
        crd_dir=args.crd_dir if Path(args.crd_dir).is_dir() else None,
        keda_enabled=False,
        prometheus_enabled=False,
    )
    with cp:
        cp.apply(admin())
        api = cp.api_client()
        set_current_client(api)
        cluster = Cluster(ClusterConfiguration(name="ws", namespace=NS, num_workers=1, local_queue="q"))
        cp.apply(cluster.to_dict())
        wait_for_cluster("ws", NS, timeout=300, client=api)

        from ray.job_submission import JobSubmissionClient

        from rayqueue_sdk.cluster.dashboard import cluster_dashboard_uri

        ray_client = JobSubmissionClient(cluster_dashboard_uri("ws", NS, client=api))
        code = Path(tempfile.mkdtemp(prefix="bench-submit-"))
        (code / "job.py").write_text("print('hi')\n", encoding="utf-8")
        (code / "data.txt").write_text("x" * 10_000, encoding="utf-8")
        wd_env = {"working_dir": str(code)}

        same = RayJob("bench-same", ENTRYPOINT, cluster_name="ws", namespace=NS)
        variants: dict[str, tuple[Callable[[int], object], Callable[[int], object]]] = {
            "new RayJob, no runtime_env": (
                lambda i: RayJob(f"bench-new-{i}", ENTRYPOINT, cluster_name="ws", namespace=NS).submit(),
                lambda i: ray_client.submit_job(entrypoint=ENTRYPOINT, submission_id=f"ray-new-{i}"),
            ),
            "same RayJob, no runtime_env": (
                lambda i: same.submit(),
                lambda i: ray_client.submit_job(entrypoint=ENTRYPOINT, submission_id=f"ray-same-{i}"),
            ),
            "new RayJob, working_dir": (
                lambda i: RayJob(
                    f"bench-wd-{i}", "python job.py", cluster_name="ws", namespace=NS, runtime_env=wd_env
                ).submit(),
                lambda i: ray_client.submit_job(
                    entrypoint="python job.py", submission_id=f"ray-wd-{i}", runtime_env=wd_env
                ),
            ),
        }
        print(f"submit to an existing cluster, {args.runs} alternating runs each, medians")
        print(f"{'variant':32} {'RayJob.submit':>14} {'Ray submit_job':>15} {'paired diff':>12}")
        worst = 0.0
        for label, (sdk, ray) in variants.items():
            sdk(-1), ray(-1)  # warm-up (connections, package upload)
            ours: list[float] = []
            theirs: list[float] = []
            for i in range(args.runs):
                order = [(theirs, ray), (ours, sdk)] if i % 2 else [(ours, sdk), (theirs, ray)]
                for samples, fn in order:
                    samples.append(timed(lambda fn=fn, i=i: fn(i)))  # type: ignore[misc]
                    time.sleep(args.settle)  # each job runs a driver on the head: let it settle
            a, b = statistics.median(ours), statistics.median(theirs)
            paired = statistics.median(x - y for x, y in zip(ours, theirs, strict=True))
            worst = max(worst, paired)
            print(f"{label:32} {a * 1000:11.1f} ms {b * 1000:12.1f} ms {paired * 1000:+9.1f} ms")
        # What the SDK adds around Ray's call, measured inside one submit(): the whole call minus the
        # time spent in JobSubmissionClient.submit_job (lookup, discovery, checks, client reuse).
        inner: list[float] = []
        original = JobSubmissionClient.submit_job

        def timed_submit(self: JobSubmissionClient, **kwargs: object) -> str:
            start = time.perf_counter()
            try:
                return original(self, **kwargs)  # type: ignore[arg-type]
            finally:
                inner.append(time.perf_counter() - start)

        JobSubmissionClient.submit_job = timed_submit  # type: ignore[method-assign]
        overhead: list[float] = []
        for i in range(args.runs):
            whole = timed(
                lambda i=i: RayJob(f"bench-ovh-{i}", ENTRYPOINT, cluster_name="ws", namespace=NS).submit()
            )
            overhead.append(whole - inner[-1])
            time.sleep(args.settle)
        JobSubmissionClient.submit_job = original  # type: ignore[method-assign]
        median_overhead = statistics.median(overhead) * 1000
        print(f"SDK overhead around Ray's call (new RayJob each time): median {median_overhead:.1f} ms")
        verdict = "within" if worst <= TARGET else "OVER"
        print(f"largest paired difference {worst * 1000:.1f} ms: {verdict} the {TARGET * 1000:.0f} ms target")
        set_current_client(None)


if __name__ == "__main__":
    main()
