"""A RayJob submitted to an existing cluster that is still queued waits for it as ``submit()`` was told
(``cluster_timeout``, ``show``, ``wait_for_cluster``), against the local control plane without controllers:
the RayCluster stays suspended, with no Workload, so nothing ever admits it."""

from __future__ import annotations

import pytest
from kubernetes import client as k8s
from sdk_helpers import NS, raycluster

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import AdmissionTimeout, JobPhase, RayJob


def test_submit_to_a_queued_cluster_waits_as_it_was_told(plane: LocalControlPlane) -> None:
    api = plane.api_client()
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(
        "ray.io", "v1", NS, "rayclusters", raycluster("jobwait")
    )
    job = RayJob("j", "python -c 'print(1)'", cluster_name="jobwait", namespace=NS, client=api)

    # wait_for_cluster=True: the call itself waits, at most cluster_timeout, and raises; nothing is submitted
    with pytest.raises(AdmissionTimeout) as info:
        job.submit(cluster_timeout=0.5, show=False, wait_for_cluster=True)
    assert info.value.phase == "queued" and job.job_id is None

    # by default the call returns at once with the id the job will have; the job says that it waits
    submission_id = job.submit(cluster_timeout=None, show=False)
    assert submission_id.startswith("j-") and job.job_id == submission_id
    st = job.status()
    assert st.phase is JobPhase.QUEUED and "no time limit" in st.explanation, st
    assert job.stop() and job.status().phase is JobPhase.STOPPED
