"""A head that cannot start fails ``wait_ready()`` at once with the head's error, on one progress line.

The local kubelet cannot parse the head's image name (the SDK's own check, which only refuses spaces
and control characters, lets a name with two tags through; the kubelet's reference grammar does not):
the head pod waits in ``InvalidImageName`` with the kubelet's message, as on a real node, and nothing
ever starts. The wait gets a :class:`ClusterFailedError` carrying that message instead of running to its
timeout. Ray heads are simulated (``ray_enabled=False``): no head process is involved either way.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import PRIORITIES, eventually, team_queue

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import Cluster, ClusterConfiguration
from rayqueue_sdk.cli.exit_codes import exit_code
from rayqueue_sdk.errors import ClusterFailedError

pytestmark = pytest.mark.slow  # a control plane of its own (~10 s)

BAD_IMAGE = "rayproject/ray:2.40.0:py311"  # two tags: not a valid reference


@pytest.fixture(scope="module")
def plane(crd_dir: Path) -> Iterator[LocalControlPlane]:
    """Kueue and KubeRay with simulated heads (this module needs no Ray)."""
    cp = LocalControlPlane(crd_dir=crd_dir, ray_enabled=False, keda_enabled=False, prometheus_enabled=False)
    with cp:
        cp.apply(PRIORITIES)
        yield cp


def test_an_image_the_kubelet_cannot_parse_fails_the_wait_at_once(
    plane: LocalControlPlane, ns: str, user_client: Any, capsys: pytest.CaptureFixture[str], caplog: Any
) -> None:
    plane.apply(team_queue(ns, "team-q", cpu=8, memory="32Gi", gpus=0))
    cluster = Cluster(
        ClusterConfiguration(
            name="broken", namespace=ns, local_queue="team-q", num_workers=1, image=BAD_IMAGE
        ),
        client=user_client,
    )
    cluster.apply()
    caplog.set_level(logging.INFO, logger="rayqueue_sdk")
    with pytest.raises(ClusterFailedError) as info:
        # A timeout that a hang would hit (AdmissionTimeout) rather than the typed failure.
        cluster.wait_ready(timeout=120, dashboard_check=False)
    err = info.value
    assert err.name == "broken" and err.reason == "InvalidImageName"
    assert f'couldn\'t parse image name "{BAD_IMAGE}": invalid reference format' in err.message
    assert exit_code(err) == 5

    # One plain line per change on stderr (not a TTY, not a notebook), the last one the head's error,
    # and nothing logged at INFO: the line is the report.
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith(f"{ns}/broken: ")]
    assert lines and lines[-1].startswith(f"{ns}/broken: the head cannot start: ray-head: Failed to apply")
    assert len(lines) == len(set(lines))
    assert not [
        r for r in caplog.records if r.name == "rayqueue_sdk.cluster.wait" and r.levelno >= logging.INFO
    ]

    # What the plane shows, the way a kubelet and KubeRay do.
    head = eventually(
        lambda: next(
            iter(plane.store.list("pods", ns, label_selector="ray.io/cluster=broken,ray.io/node-type=head")),
            None,
        ),
        what="the head pod",
    )
    waiting = head["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["reason"] == "InvalidImageName" and head["status"]["phase"] == "Pending"
    rc = plane.store.get("rayclusters.ray.io", ns, "broken")
    head_ready = next(c for c in rc["status"]["conditions"] if c["type"] == "HeadPodReady")
    assert (head_ready["status"], head_ready["reason"]) == ("False", "ContainersNotReady")
    assert rc["status"].get("state") != "ready"
    # status() reads the head pod of a starting cluster too: the card and the CLI say "failed".
    st = cluster.status()
    assert (st.phase.value, st.reason, st.ready) == ("failed", "InvalidImageName", False)
    assert cluster.down()
