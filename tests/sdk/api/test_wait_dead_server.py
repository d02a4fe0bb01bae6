"""A wait whose API server dies reports the connection failure (exit 7), not a timeout (exit 4).

Its own control plane, stopped in the middle of the wait; the unreachable window is shortened from the
retry budget (30 s) to 2 s so the test does not sit out the budget.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import Cluster, ClusterConfiguration
from rayqueue_sdk.cli.exit_codes import code_for
from rayqueue_sdk.errors import AdmissionTimeout, ConnectionFailedError
from rayqueue_sdk.kube import watch


def test_wait_ready_on_a_server_that_dies_raises_connection_failed(
    crd_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch, "UNREACHABLE_SECONDS", 2.0)
    plane = LocalControlPlane(crd_dir=crd_dir, controllers=[]).start()  # nothing ever makes it ready
    try:
        cluster = Cluster(ClusterConfiguration(name="orphan", namespace="default"), client=plane.api_client())
        cluster.apply()
        threading.Timer(1.0, plane.stop).start()
        with pytest.raises(ConnectionFailedError) as err:  # before the 120 s would end in AdmissionTimeout
            cluster.wait_ready(timeout=120, dashboard_check=False)
    finally:
        plane.stop()
    assert not isinstance(err.value, AdmissionTimeout)
    assert code_for(type(err.value)) == 7
