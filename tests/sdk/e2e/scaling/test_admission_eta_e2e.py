"""The admission estimate end to end: a queued cluster behind an idle one (reaper mode, a 12-second idle
period after a short Ray job, the agent running as a real process) gets an estimate whose window contains
its actual admission (the Workload's ``Admitted`` time), with a basis that names the idle cluster and its
release.

The estimate is read while the agent's clock runs: while the job runs (or before the agent has written its
state) the first cluster is busy and its release is not bounded (no ``latest``), which is honest, so the
test reads until both ends are given, then waits for the admission.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from scaling_helpers import seed_cluster, wait_for

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk.kube.lookups import find_workload
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.meta import condition_of

pytestmark = [pytest.mark.ray, pytest.mark.slow]  # 35-95 s on 2 shared cores: two Ray heads, a Ray job


def test_a_queued_cluster_behind_an_idle_one_is_admitted_inside_its_estimate(
    idle_plane: LocalControlPlane, idle_ns: str, idle_admin: Any
) -> None:
    ns = idle_ns
    first, second = seed_cluster("first", ns, idle_admin), seed_cluster("second", ns, idle_admin)
    first.apply()
    first.wait_ready(timeout=300)
    second.apply()
    queued = wait_for(lambda: second.status(), lambda s: s.phase.value == "queued")
    # no idle policy yet: nothing bounds when first gives its quota back
    assert queued.eta is not None and queued.eta.latest is None
    assert "nothing bounds when" in queued.eta.basis and f"{ns}/first" in queued.eta.basis

    # a short job keeps first busy while the agent starts; its idle clock then runs 12 s from the job's end
    first.job_client.submit_job(entrypoint='python -c "import time; time.sleep(8)"')
    first.scale_to_zero(idle_minutes=0.2, mode="reaper", idle_signal="jobs", polling_seconds=1)
    st = wait_for(lambda: second.status(), lambda s: s.eta is None or s.eta.latest is not None, timeout=120)
    assert st.eta is not None, f"admitted before an estimate with both ends was read: {st}"
    eta = st.eta
    assert eta.earliest is not None and eta.latest is not None
    assert eta.earliest.tzinfo is not None and eta.latest >= eta.earliest
    assert f"{ns}/first's idle policy releases 2 nvidia.com/gpu" in eta.basis
    assert "if it stays idle" in eta.basis and "becomes busy again" in eta.basis
    assert st.to_dict()["eta"]["latest"] == eta.latest.isoformat()

    ready = second.wait_ready(timeout=300)
    assert ready.ready and ready.eta is None  # none once admitted
    rc_uid = second.to_dict().get("metadata", {}).get("uid") or ""
    uid = rc_uid or str(idle_plane.store.get("rayclusters.ray.io", ns, "second")["metadata"]["uid"])
    wl = find_workload(KubeSession(idle_admin), owner_uid=uid, namespace=ns)
    assert wl is not None
    admitted = datetime.fromisoformat(
        str(condition_of(wl, "Admitted")["lastTransitionTime"]).replace("Z", "+00:00")
    )
    # Kueue's times have whole seconds: the window is compared at that resolution
    assert eta.earliest.replace(microsecond=0) <= admitted <= eta.latest, (eta, admitted)
    second.down()
    first.down()
