"""KubeRay's K8sJobMode submitter pod, emulated: the Pod object, its filesystem and its init containers.

On a cluster, KubeRay makes a batch Job ``<rayjob>`` from ``spec.submitterPodTemplate`` (or a
default template: the head container's image, 500m/200Mi requested), whose first container runs
``ray job submit --address http://<head>:8265 --submission-id <jobId> -- <entrypoint>`` with
``PYTHONUNBUFFERED=1``, ``RAY_DASHBOARD_ADDRESS`` and ``RAY_JOB_SUBMISSION_ID`` added to its env
[R ray-operator/controllers/ray/rayjob_controller.go getSubmitterTemplate, createNewK8sJob].
Here, :class:`SubmitterPods` does for the RayJob controller what the Job controller and the kubelet
would do, before the controller submits in-process with Ray's ``JobSubmissionClient``:

- creates a Pod ``<rayjob>-<rand5>`` labelled as a Job's pod (``job-name``,
  ``batch.kubernetes.io/job-name``; no batch Job object: this API server does not serve
  ``batch/v1``), owned by the RayJob, phase ``Pending`` -> ``Running`` (submitted) ->
  ``Succeeded`` / ``Failed`` (Ray job ended; init container failed);
- materialises its volumes and runs its init containers for real
  (:mod:`rayqueue_local.runtime.kubelet`: images are
  ignored, ``python3``/``python`` are this Python, pod paths live under a private per-job root);
- resolves the submitter container's env; ``RAY_JOB_HEADERS`` there is honoured as ``ray job
  submit`` honours it; a custom submitter ``command`` is not run (the submission is always
  KubeRay's default one);
- maps ``runtimeEnvYAML``'s ``working_dir`` from the submitter container's mounts to the local
  directory, so the package uploaded is what the init containers left there.

The per-job root is removed when the job's cluster goes away (or the RayJob, or the controller).
A pod that admission refuses (Pod Security) is a ``Warning`` Event ``FailedCreate`` ("Error creating:
<the refusal>") on the RayJob, as the Job controller reports it on its Job, and is tried again
(the RayJob stays ``Initializing``). An init container that fails fails the RayJob with KubeRay's
reason ``SubmissionFailed``; the
message adds the init container's name and stderr tail (upstream says only "Job has reached the
specified backoff limit"; the Job's ``backoffLimit`` retries are not emulated: one attempt).

Example:
    >>> job = {"metadata": {"name": "train", "namespace": "ns", "uid": "u1"},
    ...        "spec": {"entrypoint": "python x.py"}}
    >>> pod = submitter_pod(job, None, "train-abcde", dashboard="10.0.0.1:8265", job_id="train-x")
    >>> pod["metadata"]["labels"]["job-name"], pod["spec"]["containers"][0]["args"][0][:14]
    ('train', 'ray job submit')
"""

from __future__ import annotations

import copy
import json
import logging
import re
import shlex
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rayqueue_local.apimachinery.limits import YAMLLimitError, load_yaml
from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.controllers.base import get_or_none
from rayqueue_local.controllers.kuberay import resources as R
from rayqueue_local.controllers.pods.kubelet import EMULATED_BY
from rayqueue_local.runtime.kubelet import (
    InitContainerFailed,
    LocalPod,
    PodPending,
    container_env,
    materialise,
    run_init_containers,
)
from rayqueue_local.storage.store import StoreError

log = logging.getLogger(__name__)

__all__ = [
    "InitContainerFailed",
    "PodPending",
    "SubmitterPods",
    "SubmitterRun",
    "k8s_job_command",
    "submitter_job",
    "submitter_pod",
]

_PODS = "pods"
_RunKey = tuple[str, str, str]  # (namespace, rayjob, jobId)


def _default_template(job: dict[str, Any]) -> dict[str, Any]:
    """KubeRay's GetDefaultSubmitterTemplate: the head image, small requests, never restarted."""
    head = (((job.get("spec") or {}).get("rayClusterSpec") or {}).get("headGroupSpec") or {}).get(
        "template"
    ) or {}
    containers = (head.get("spec") or {}).get("containers") or [{}]
    return {
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "ray-job-submitter",
                    "image": containers[0].get("image", "rayproject/ray"),
                    "resources": {
                        "requests": {"cpu": "500m", "memory": "200Mi"},
                        "limits": {"cpu": "1", "memory": "1Gi"},
                    },
                }
            ],
        }
    }


def submitter_pod(
    job: dict[str, Any], template: dict[str, Any] | None, name: str, *, dashboard: str, job_id: str
) -> dict[str, Any]:
    """The submitter Pod a Job made from ``template`` (default: KubeRay's) would create (pure)."""
    template = copy.deepcopy(template) if template else _default_template(job)
    spec = template.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Never")
    containers = spec.setdefault("containers", [{"name": "ray-job-submitter"}])
    first = containers[0]
    job_spec = job.get("spec") or {}
    if not first.get("command"):
        words = ["ray", "job", "submit", "--address", f"http://{dashboard}", "--submission-id", job_id]
        if job_spec.get("runtimeEnvYAML"):
            words += ["--runtime-env-json", json.dumps(_yaml_env(job_spec["runtimeEnvYAML"]))]
        command = shlex.join(words) + " -- " + str(job_spec.get("entrypoint", ""))
        first["command"] = ["/bin/bash", "-ce", "--"]
        first["args"] = [command]
    first["env"] = list(first.get("env") or []) + [
        {"name": "PYTHONUNBUFFERED", "value": "1"},
        {"name": "RAY_DASHBOARD_ADDRESS", "value": dashboard},
        {"name": "RAY_JOB_SUBMISSION_ID", "value": job_id},
    ]
    job_name = job["metadata"]["name"]
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    labels.update({"job-name": job_name, "batch.kubernetes.io/job-name": job_name})
    pod = R.pod_object(job, "RayJob", name, labels, template, spec)
    pod["metadata"].setdefault("annotations", {})[EMULATED_BY] = "kuberay-rayjob"  # not run by the kubelet
    return pod


def k8s_job_command(job: dict[str, Any], dashboard: str, job_id: str) -> str:
    """KubeRay's submitter script: submit unless Ray already has the job, then follow its logs, so a
    retried pod neither submits twice nor loses the logs [R utils/util.go GetK8sJobCommand].

    Example:
        >>> cmd = k8s_job_command({"spec": {"entrypoint": "python x.py"}}, "127.0.0.1:8265", "j-1")
        >>> cmd.startswith("if ! ray job status --address http://127.0.0.1:8265 j-1 >/dev/null 2>&1 ; then")
        True
        >>> cmd.endswith("; fi ; ray job logs --address http://127.0.0.1:8265 --follow j-1")
        True
    """
    spec = job.get("spec") or {}
    address = f"http://{dashboard}"
    words = ["ray", "job", "submit", "--address", address, "--no-wait", "--submission-id", job_id]
    if spec.get("runtimeEnvYAML"):
        words += ["--runtime-env-json", json.dumps(_yaml_env(spec["runtimeEnvYAML"]))]
    if spec.get("metadata"):
        words += ["--metadata-json", json.dumps(dict(spec["metadata"]))]
    if spec.get("entrypointNumCpus") is not None:
        words += ["--entrypoint-num-cpus", str(spec["entrypointNumCpus"])]
    if spec.get("entrypointNumGpus") is not None:
        words += ["--entrypoint-num-gpus", str(spec["entrypointNumGpus"])]
    if spec.get("entrypointResources"):
        resources = spec["entrypointResources"]
        text = resources if isinstance(resources, str) else json.dumps(resources)
        words += ["--entrypoint-resources", json.dumps(_yaml_env(text))]
    status = shlex.join(["ray", "job", "status", "--address", address, job_id])
    logs = shlex.join(["ray", "job", "logs", "--address", address, "--follow", job_id])
    submit = shlex.join(words) + " -- " + str(spec.get("entrypoint", ""))
    return f"if ! {status} >/dev/null 2>&1 ; then {submit} ; fi ; {logs}"


def submitter_job(
    job: dict[str, Any], template: dict[str, Any] | None, *, dashboard: str, job_id: str
) -> dict[str, Any]:
    """The ``batch/v1`` Job ``<rayjob>`` KubeRay makes in K8sJobMode, owned by the RayJob (pure):
    its pod runs :func:`k8s_job_command` unless the template's first container has a ``command``;
    ``backoffLimit`` 2, as KubeRay's default [R rayjob_controller.go createNewK8sJob].

    Example:
        >>> job = {"metadata": {"name": "train", "namespace": "ns", "uid": "u1"},
        ...        "spec": {"entrypoint": "python x.py"}}
        >>> made = submitter_job(job, None, dashboard="127.0.0.1:8265", job_id="train-x")
        >>> made["kind"], made["metadata"]["ownerReferences"][0]["kind"], made["spec"]["backoffLimit"]
        ('Job', 'RayJob', 2)
    """
    template = copy.deepcopy(template) if template else _default_template(job)
    spec = template.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Never")
    containers = spec.setdefault("containers", [{"name": "ray-job-submitter"}])
    first = containers[0]
    if not first.get("command"):
        first["command"] = ["/bin/bash", "-ce", "--"]
        first["args"] = [k8s_job_command(job, dashboard, job_id)]
    first["env"] = list(first.get("env") or []) + [
        {"name": "PYTHONUNBUFFERED", "value": "1"},
        {"name": "RAY_DASHBOARD_ADDRESS", "value": dashboard},
        {"name": "RAY_JOB_SUBMISSION_ID", "value": job_id},
    ]
    meta = job["metadata"]
    labels = {
        "ray.io/originated-from-cr-name": meta["name"],
        "ray.io/originated-from-crd": "RayJob",
        "app.kubernetes.io/created-by": "kuberay-operator",
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": meta["name"],
            "namespace": meta.get("namespace", "default"),
            "labels": labels,
            "annotations": dict((template.get("metadata") or {}).get("annotations") or {}),
            "ownerReferences": [R.owner_reference({**job, "kind": "RayJob", "apiVersion": "ray.io/v1"})],
        },
        "spec": {"backoffLimit": 2, "template": template},
    }


def _yaml_env(text: str) -> Any:
    try:
        return load_yaml(text)
    except (yaml.YAMLError, YAMLLimitError):
        return text


def _container_status(
    container: dict[str, Any], state: dict[str, Any], *, ready: bool = False
) -> dict[str, Any]:
    """A containerStatus (``imageID`` empty: no image was pulled)."""
    return {
        "name": container.get("name", ""),
        "image": container.get("image", ""),
        "imageID": "",
        "ready": ready,
        "restartCount": 0,
        "state": state,
    }


def _terminated(container: dict[str, Any], code: int, message: str = "") -> dict[str, Any]:
    state: dict[str, Any] = {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}
    if message:
        state["message"] = message
    return _container_status(container, {"terminated": state})


@dataclass
class SubmitterRun:
    """One submitter pod: its object's name, filesystem and the submitter container's env."""

    key: _RunKey
    cluster: str
    pod_name: str
    pod: LocalPod
    container: dict[str, Any]
    env: dict[str, str]

    def localise(self, path: str) -> str:
        """A path as the submitter container sees it -> the local path."""
        return self.pod.localise(path, self.container)

    def headers(self) -> dict[str, Any] | None:
        """``RAY_JOB_HEADERS`` of the submitter container (JSON), as ``ray job submit`` reads it."""
        raw = self.env.get("RAY_JOB_HEADERS")
        if not raw:
            return None
        value = json.loads(raw)
        return value if isinstance(value, dict) else None


class SubmitterPods:
    """The submitter pods of one RayJob controller: made once per (RayJob, jobId), cleaned up after.

    Example:
        >>> pods = SubmitterPods()
        >>> pods.runs()
        []
        >>> pods.stop()
    """

    def __init__(self, *, init_timeout: float = 300.0) -> None:
        self.init_timeout = init_timeout
        self._base: Path | None = None  # made on first use
        self._runs: dict[_RunKey, SubmitterRun] = {}
        self._lock = threading.Lock()

    def runs(self) -> list[SubmitterRun]:
        """The submitter pods whose filesystem is kept."""
        with self._lock:
            return list(self._runs.values())

    def ensure(self, store: Any, job: dict[str, Any], status: dict[str, Any], dashboard: str) -> SubmitterRun:
        """The job's submitter pod, made (Pod object, volumes, init containers) on the first call.

        Raises:
            PodPending: a Secret/ConfigMap it needs does not exist yet (call again later).
            InitContainerFailed: an init container failed (the Pod is marked Failed).
            ValueError: the template names a path outside its volume.
        """
        meta = job["metadata"]
        key: _RunKey = (meta.get("namespace", "default"), meta["name"], status["jobId"])
        with self._lock:
            if key in self._runs:
                return self._runs[key]
        template = (job.get("spec") or {}).get("submitterPodTemplate")
        name = f"{meta['name']}-{R.rand5()}"
        pod = submitter_pod(job, template, name, dashboard=dashboard, job_id=status["jobId"])
        with self._lock:
            if self._base is None:
                self._base = Path(tempfile.mkdtemp(prefix="rayqueue-submitters-"))
            base = self._base
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{key[0]}.{meta['name']}")  # user input: no path tricks
        root = Path(tempfile.mkdtemp(prefix=f"{safe}-", dir=base))
        try:
            local = materialise(store, key[0], pod["spec"], root)
            container = pod["spec"]["containers"][0]
            env = container_env(store, pod, container)
        except (PodPending, ValueError):
            shutil.rmtree(root, ignore_errors=True)
            raise
        try:
            created = store.create(_PODS, pod)
        except StoreError as err:
            shutil.rmtree(root, ignore_errors=True)
            if err.code != 403:
                raise
            # admission refused it (Pod Security): the Job controller's FailedCreate (no Job object
            # here, so the event is on the RayJob), and the pod is tried again later
            store.record_event(
                job,
                type="Warning",
                reason="FailedCreate",
                message=f"Error creating: {err.message}",
                source="job-controller",
            )
            raise PodPending(err.message) from None
        self._status(store, created, "Pending")
        try:
            run_init_containers(local, pod["spec"], created, store=store, timeout=self.init_timeout)
        except (InitContainerFailed, PodPending, ValueError) as err:
            shutil.rmtree(root, ignore_errors=True)
            if isinstance(err, PodPending):
                store.delete(_PODS, key[0], name)
            else:
                failure = (
                    err if isinstance(err, InitContainerFailed) else InitContainerFailed("?", 1, str(err))
                )
                self._status(store, created, "Failed", init_failure=failure)
            raise
        run = SubmitterRun(key, str(status.get("rayClusterName", "")), name, local, container, env)
        with self._lock:
            self._runs[key] = run
        self._status(store, created, "Running")
        return run

    def finish(self, store: Any, job: dict[str, Any], status: dict[str, Any], *, succeeded: bool) -> None:
        """Mark the job's submitter pod Succeeded or Failed (the Ray job ended)."""
        run = self._run_for(job, status)
        if run is not None:
            self._set_phase(store, run, "Succeeded" if succeeded else "Failed")

    def delete(self, store: Any, job: dict[str, Any], status: dict[str, Any]) -> None:
        """Delete the submitter pod and its filesystem (KubeRay deletes the Job on suspension)."""
        run = self._run_for(job, status)
        if run is None:
            return
        try:
            store.delete(_PODS, run.key[0], run.pod_name)
        except StoreError as err:
            if err.code != 404:
                raise
        self.release(run.key)

    def release(self, key: _RunKey) -> None:
        """Forget a run and remove its filesystem."""
        with self._lock:
            run = self._runs.pop(key, None)
        if run is not None:
            shutil.rmtree(run.pod.root, ignore_errors=True)

    def sweep(self, live_clusters: set[tuple[str, str]], live_jobs: set[tuple[str, str]]) -> None:
        """Remove the filesystems of runs whose cluster or RayJob is gone."""
        for run in self.runs():
            ns, job = run.key[0], run.key[1]
            if (ns, run.cluster) not in live_clusters or (ns, job) not in live_jobs:
                self.release(run.key)

    def stop(self) -> None:
        """Remove every submitter filesystem."""
        with self._lock:
            self._runs.clear()
            base, self._base = self._base, None
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)

    # -- helpers ----------------------------------------------------------------------------------
    def _run_for(self, job: dict[str, Any], status: dict[str, Any]) -> SubmitterRun | None:
        meta = job["metadata"]
        with self._lock:
            return self._runs.get((meta.get("namespace", "default"), meta["name"], str(status.get("jobId"))))

    def _set_phase(self, store: Any, run: SubmitterRun, phase: str) -> None:
        pod = get_or_none(store, _PODS, run.key[0], run.pod_name)
        if pod is not None and (pod.get("status") or {}).get("phase") != phase:
            self._status(store, pod, phase)

    def _status(
        self, store: Any, pod: dict[str, Any], phase: str, *, init_failure: InitContainerFailed | None = None
    ) -> None:
        spec = pod.get("spec") or {}
        inits = list(spec.get("initContainers") or [])
        mains = list(spec.get("containers") or [])
        status: dict[str, Any] = {
            "phase": phase,
            "hostIP": R.LOCAL_IP,
            "podIP": R.LOCAL_IP,
            "startTime": now_rfc3339(),
        }
        if phase == "Pending":
            status["conditions"] = [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": now_rfc3339()}
            ]
        elif init_failure is not None:
            statuses = []
            for init in inits:
                if init.get("name") == init_failure.container:
                    statuses.append(_terminated(init, init_failure.exit_code, init_failure.stderr))
                    break
                statuses.append(_terminated(init, 0))
            failed = any(i.get("name") == init_failure.container for i in inits)
            status["initContainerStatuses"] = statuses if failed else []
            status["reason"] = "Error"
            status["message"] = str(init_failure)
        else:
            status["initContainerStatuses"] = [_terminated(c, 0) for c in inits]
            if phase == "Running":
                running = {"running": {"startedAt": now_rfc3339()}}
                status["containerStatuses"] = [_container_status(c, running, ready=True) for c in mains]
            else:
                code = 0 if phase == "Succeeded" else 1
                status["containerStatuses"] = [_terminated(c, code) for c in mains]
        meta = {k: v for k, v in pod["metadata"].items() if k != "resourceVersion"}
        store.update_status(_PODS, {**pod, "metadata": meta, "status": status})
