"""Scale-to-zero overhead: from the moment a cluster goes idle to the moment the next queued cluster is
ready, above the configured idle period, in both modes (target: at most pollingInterval + cooldown + 10 s
in all, i.e. an overhead of at most pollingInterval + 10 s).

Seed 000 in the SDK's words, against the local control plane (Kueue with Workload ``/scale``, KubeRay
with real Ray heads, KEDA, a real Prometheus scraping the DCGM-style exporter): the quota fits one
2-GPU cluster; the second waits. A short Ray job given a GPU computes on it (a busy loop: the emulated
dcgm-exporter reads a GPU busy only while the job given it computes, as a real one would), then the
policy is set with ``Cluster.scale_to_zero`` and the cluster goes idle when the job ends (Ray's
``end_time``). Measured,
for each mode, from that moment (a poller records the first time it sees each step):

- **deactivated**: the first cluster's Workload has ``spec.active=false`` (KEDA scaled it to 0, or the
  reaper patched it);
- **admitted**: the second cluster's Workload is Admitted (Kueue gave it the released quota);
- **ready**: the second RayCluster's ``status.state`` is ``ready`` (its Ray head answers).

Both modes read the same signal by default: the SDK's default GPU query (GR_ENGINE_ACTIVE cross-checked
with GPU_UTIL) through the local Prometheus, window ``--window`` (which the policy counts in the idle
period: KEDA's ``cooldownPeriod`` is the period less the window, the reaper backdates its clock by it);
``keda``: KEDA's ScaledObject; ``reaper``: the agent process (the ConfigMap's code, run as the
Deployment's pod); ``--reaper-signal jobs`` makes the reaper read Ray's job list instead.
The seed's raw YAML path measured 79 s with a 15 s cooldown.

Usage: ``python benchmarks/scale_to_zero_overhead.py [--idle-seconds 15] [--polling 5] [--window 5s]
[--modes keda,reaper] [--crd-dir ../shared/crds]``
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from rayqueue_local import LocalControlPlane
from rayqueue_local.scenarios import seed000_queues
from rayqueue_sdk.config.idle import PrometheusSource
from rayqueue_sdk.kube.client import build_api_client
from rayqueue_sdk.kube.lookups import find_workload
from rayqueue_sdk.kube.session import KubeSession

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "sdk" / "e2e" / "scaling"))
from scaling_helpers import seed_cluster, wait_for  # noqa: E402


def _admitted(workload: dict[str, Any] | None) -> bool:
    return any(
        c.get("type") == "Admitted" and c.get("status") == "True"
        for c in ((workload or {}).get("status") or {}).get("conditions") or []
    )


class Poller(threading.Thread):
    """Records the first moment (``time.time()``) each step is seen, every 0.2 s."""

    def __init__(self, cp: LocalControlPlane, api: Any, ns: str, first_uid: str, second_uid: str) -> None:
        super().__init__(daemon=True)
        self.cp, self.api, self.ns = cp, api, ns
        self.uids = (first_uid, second_uid)
        self.seen: dict[str, float] = {}
        self.stop = threading.Event()

    def _mark(self, step: str, ok: bool) -> None:
        if ok and step not in self.seen:
            self.seen[step] = time.time()

    def run(self) -> None:
        while not self.stop.is_set() and len(self.seen) < 3:
            first = find_workload(KubeSession(self.api), owner_uid=self.uids[0], namespace=self.ns)
            second = find_workload(KubeSession(self.api), owner_uid=self.uids[1], namespace=self.ns)
            self._mark("deactivated", ((first or {}).get("spec") or {}).get("active") is False)
            self._mark("admitted", _admitted(second))
            rc = self.cp.store.get("rayclusters.ray.io", self.ns, "second-raycluster")
            self._mark("ready", (rc.get("status") or {}).get("state") == "ready")
            time.sleep(0.2)


def one_mode(cp: LocalControlPlane, api: Any, mode: str, args: argparse.Namespace) -> dict[str, float]:
    ns = f"bench-{mode}-{uuid.uuid4().hex[:5]}"
    cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    cp.apply(seed000_queues(ns, cluster_queue=f"cq-{ns}"))
    first, second = seed_cluster("first-raycluster", ns, api), seed_cluster("second-raycluster", ns, api)
    try:
        first.apply()
        first.wait_ready(timeout=300)
        second.apply()
        wait_for(lambda: second.status().phase.value, lambda p: p == "queued")
        loop = (
            f"import time; e = time.time() + {args.job_seconds}; any(time.time() > e for _ in iter(int, 1))"
        )
        job = first.job_client.submit_job(entrypoint=f'python -c "{loop}"', entrypoint_num_gpus=1)
        idle = args.idle_seconds / 60
        busy = f'max(DCGM_FI_DEV_GPU_UTIL{{exported_namespace="{ns}",exported_pod=~"first-raycluster-.*"}})'
        wait_for(lambda: cp.prometheus.query(busy), lambda r: bool(r) and float(r[0]["value"][1]) > 0, 60)
        if mode == "keda":
            first.scale_to_zero(
                idle,
                mode="keda",
                prometheus=PrometheusSource(url=cp.prometheus.url, window=args.window, auth="bearer"),
                polling_seconds=args.polling,
            )
        elif args.reaper_signal == "jobs":
            first.scale_to_zero(idle, mode="reaper", idle_signal="jobs", polling_seconds=args.polling)
        else:
            first.scale_to_zero(
                idle,
                mode="reaper",
                prometheus=PrometheusSource(url=cp.prometheus.url, window=args.window),
                polling_seconds=args.polling,
            )
        uids = [str(c.to_dict()["metadata"].get("uid") or "") for c in (first, second)]
        if not all(uids):
            uids = [
                cp.store.get("rayclusters.ray.io", ns, n)["metadata"]["uid"]
                for n in ("first-raycluster", "second-raycluster")
            ]
        poller = Poller(cp, api, ns, uids[0], uids[1])
        poller.start()
        # the job's end, read while the head still runs (it goes with the scale-down)
        info = wait_for(lambda: first.job_client.get_job_info(job), lambda i: i.end_time is not None, 120)
        end = info.end_time
        poller.join(args.timeout)
        poller.stop.set()
        if end is None or len(poller.seen) < 3:
            raise RuntimeError(
                f"{mode}: incomplete within {args.timeout}s: job end {end}, seen {poller.seen}"
            )
        idle_at = end / 1000
        return {step: at - idle_at for step, at in poller.seen.items()}
    finally:
        for c in (second, first):
            try:
                c.down()
            except Exception as err:  # noqa: BLE001 - a benchmark's cleanup reports and goes on
                print(f"cleanup of {c.name}: {err}", file=sys.stderr)
        cp.store.delete("namespaces", None, ns)
        cp.store.delete("clusterqueues.kueue.x-k8s.io", None, f"cq-{ns}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle-seconds", type=float, default=15.0, help="the idle period (cooldown)")
    parser.add_argument("--polling", type=int, default=5, help="pollingInterval / the reaper's period")
    parser.add_argument("--window", default="5s", help="the GPU query's window (max_over_time)")
    parser.add_argument("--reaper-signal", choices=("gpu", "jobs"), default="gpu")
    parser.add_argument("--job-seconds", type=float, default=8.0)
    parser.add_argument("--modes", default="keda,reaper")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument(
        "--crd-dir", default=os.environ.get("RAYQUEUE_CRDS_DIR") or str(ROOT.parent / "shared" / "crds")
    )
    args = parser.parse_args()
    target = args.polling + args.idle_seconds + 10
    with LocalControlPlane(crd_dir=args.crd_dir, workload_scale=True) as cp:
        api = build_api_client(cp.server, token=cp.token, ca_cert_path=str(cp.ca_cert_path))
        for mode in args.modes.split(","):
            t = one_mode(cp, api, mode, args)
            total = t["ready"]
            print(
                f"{mode:6s} idle -> deactivated {t['deactivated']:5.1f} s -> next admitted "
                f"{t['admitted']:5.1f} s -> next ready {total:5.1f} s | overhead above the "
                f"{args.idle_seconds:g} s idle period {total - args.idle_seconds:5.1f} s: policy "
                f"{t['deactivated'] - args.idle_seconds:4.1f} s, "
                f"Kueue {t['admitted'] - t['deactivated']:4.1f} s, "
                f"Ray head start {total - t['admitted']:4.1f} s "
                f"(target: total <= pollingInterval {args.polling} + cooldown {args.idle_seconds:g} + 10 = "
                f"{target:g} s: {'met' if total <= target else 'MISSED'})"
            )


if __name__ == "__main__":
    main()
