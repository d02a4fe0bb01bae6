"""What a kubelet does for KubeRay's submitter pod, for the local control plane's emulated submitter.

The local KubeRay emulation runs the K8sJobMode submitter *in-process* (Ray's ``JobSubmissionClient``
with the RayJob's ``runtimeEnvYAML``) and does not build the submitter pod from
``spec.submitterPodTemplate``. A job-owned RayJob with a local ``working_dir`` relies on that pod: its
Secret volume, the ``emptyDir`` and the init container that unpacks the zip. :func:`emulate_submitter_pod`
gives the session's RayJob controller that pod's filesystem: a private root directory where the
Secret's keys are written at their mount path, the init containers' commands run for real with the
mount paths mapped under that root, and the ``working_dir`` the submitter uploads is read from there.

Nothing of the SDK is bypassed: the RayJob, the Secret and the pod template are the ones the SDK
created through the API. This belongs in ``rayqueue_sdk.local.controllers.kuberay`` (see the report).
"""

from __future__ import annotations

import base64
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml


def _mount_map(template: dict[str, Any], root: Path) -> dict[str, Path]:
    mounts: dict[str, Path] = {}
    spec = template.get("spec") or {}
    for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        for mount in container.get("volumeMounts") or []:
            mounts[mount["mountPath"]] = root / mount["mountPath"].lstrip("/")
    return mounts


def _localise(text: str, mounts: dict[str, Path]) -> str:
    for pod_path in sorted(mounts, key=len, reverse=True):
        text = text.replace(pod_path, str(mounts[pod_path]))
    return text


def prepare_pod_filesystem(store: Any, job: dict[str, Any]) -> dict[str, Path]:
    """Materialise the submitter pod's volumes and run its init containers; returns mount -> local path."""
    template = (job.get("spec") or {}).get("submitterPodTemplate")
    if not template:
        return {}
    namespace = job["metadata"]["namespace"]
    root = Path(tempfile.mkdtemp(prefix=f"submitter-{job['metadata']['name']}-"))
    mounts = _mount_map(template, root)
    spec = template.get("spec") or {}
    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        for mount in container.get("volumeMounts") or []:
            target = mounts[mount["mountPath"]]
            target.mkdir(parents=True, exist_ok=True)
            volume = volumes[mount["name"]]
            if "secret" in volume:
                secret = store.get("secrets", namespace, volume["secret"]["secretName"])
                for key, value in (secret.get("data") or {}).items():
                    (target / key).write_bytes(base64.b64decode(value))
    for init in spec.get("initContainers") or []:
        argv = [_localise(a, mounts) for a in (init.get("command") or []) + (init.get("args") or [])]
        if argv[:2] == ["/bin/sh", "-c"]:
            words = shlex.split(argv[2])
            if words and words[0] in ("python3", "python"):
                words[0] = sys.executable  # the image's Python is this machine's
            argv = words
        subprocess.run(argv, check=True, capture_output=True, timeout=60)
    return mounts


def emulate_submitter_pod(controller: Any) -> None:
    """Make ``controller`` (the session's RayJobController) submit from the submitter pod's filesystem."""
    original = controller._submit

    def submit(job: dict[str, Any], status: dict[str, Any], dashboard: str, *, simulated: bool) -> None:
        mounts = prepare_pod_filesystem(controller.store, job)
        if mounts:
            job = dict(job)
            spec = dict(job["spec"])
            env = yaml.safe_load(spec.get("runtimeEnvYAML") or "") or {}
            if isinstance(env.get("working_dir"), str):
                env["working_dir"] = _localise(env["working_dir"], mounts)
            spec["runtimeEnvYAML"] = yaml.safe_dump(env)
            job["spec"] = spec
        original(job, status, dashboard, simulated=simulated)

    controller._submit = submit
