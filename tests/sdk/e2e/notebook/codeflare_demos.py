"""CodeFlare's own demo notebooks, read from codeflare-sdk's published wheel, and the edits that make
them run here.

The wheel (``codeflare_sdk-<version>-py3-none-any.whl``, which ships ``codeflare_sdk/demo-notebooks/``)
is fetched at test time with ``pip download --no-deps`` into the tests' cache
(``$RAYQUEUE_TEST_CACHE``, default ``~/.cache/rayqueue-tests/wheels``) and read from there: no notebook
of the peer's is copied into this repository.

A notebook moves to ``rayqueue_sdk`` by one edit, the import (:data:`RENAME`). Everything else in
:data:`FORCED_EDITS` is what this machine forces, each with its reason, in this one place:
the cluster's address and credentials (the local control plane's, instead of the peer's placeholders),
no GPUs, no network installs and CPU stand-ins for GPU training scripts, the test namespace instead of a
placeholder, and the ``!oc login`` cells (the kernel gets the kubeconfig that ``oc login`` would write).
Every edit must match the peer's text: an edit that no longer matches fails the test, so a new version
of the peer's notebooks is never run half-edited.

Probe cells (:class:`Probe`) are the test's own: inserted before a peer cell, they only read state
(a job's final status, a cluster's Kueue Workloads) so that the test can assert what the notebook is
for. They are not edits of the peer's cells.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

CODEFLARE_VERSION = "0.40.1"  # the interop test's version (tests/interop/conftest.py)
CACHE = Path(os.environ.get("RAYQUEUE_TEST_CACHE", Path.home() / ".cache" / "rayqueue-tests"))
DEMOS = "codeflare_sdk/demo-notebooks"

RENAME = ("codeflare_sdk", "rayqueue_sdk")
"""The one edit a CodeFlare user makes."""


def peer_wheel(version: str = CODEFLARE_VERSION) -> Path:
    """codeflare-sdk's published wheel, downloaded once (``pip download --no-deps``) into the cache."""
    folder = CACHE / "wheels"
    wheel = folder / f"codeflare_sdk-{version}-py3-none-any.whl"
    if wheel.is_file():
        return wheel
    folder.mkdir(parents=True, exist_ok=True)
    # Two pytest-xdist workers may both need it: one downloads, the other waits for it.
    with open(folder / f"{wheel.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not wheel.is_file():
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"codeflare-sdk=={version}"]
                + ["-d", str(folder)],
                check=True,
                timeout=600,
            )
    return wheel


def peer_notebook(path: str) -> Any:
    """The peer's notebook ``path`` (e.g. ``guided-demos/0_basic_ray.ipynb``), as published."""
    with zipfile.ZipFile(peer_wheel()) as wheel:
        return nbformat.reads(wheel.read(f"{DEMOS}/{path}").decode(), as_version=4)


@dataclass(frozen=True)
class Plane:
    """What the forced edits point the notebooks at: the local control plane's server, a
    namespace-limited user's token, the plane's CA, the namespace, and (for the notebook that is handed a
    running cluster's dashboard) that dashboard's URL."""

    server: str
    token: str
    ca_cert: str
    namespace: str
    dashboard: str = ""


@dataclass(frozen=True)
class Edit:
    """Replace ``old`` by ``new`` (where ``{server}``, ``{token}``, ... stand for the :class:`Plane`'s
    fields, each as a Python literal) in the notebooks named in ``where`` (file stems). ``new=None`` drops
    every cell whose source starts with ``old``."""

    where: tuple[str, ...]
    old: str
    new: str | None
    reason: str


_AUTHKIT = (
    "0_basic_ray",
    "1_cluster_job_client",
    "2_basic_interactive",
    "3_widget_example",
    "local_interactive",
    "6_autoscaling",
    "ray_job_client",
)
_AUTH = "The auth cell: the local control plane's server, a user's token and the plane's CA (self-signed, "
_AUTH += "so AuthConfig gets ca_cert) instead of the peer's placeholders."
_NO_GPU = "No GPU on this machine, and the admin's ClusterQueue offers none: GPU requests become 0 (CPU)."
_NO_PIP = "No network installs in a job's runtime_env (the machine's interpreter has what the stand-ins use)."
_OC_LOGIN = "`oc login` is not here: the kernel's KUBECONFIG is the kubeconfig it writes (server, token, CA, "
_OC_LOGIN += "namespace)."

FORCED_EDITS: tuple[Edit, ...] = (
    Edit(
        _AUTHKIT,
        'k8s_api_host="https://api.example.com:6443",',
        "k8s_api_host={server}, ca_cert={ca_cert},",
        _AUTH,
    ),
    Edit(_AUTHKIT[:-1], 'token="sha256~XXXXX",  # oc whoami -t', "token={token},", _AUTH),
    Edit(("ray_job_client",), 'auth_token = "sha256~XXXXX"  # oc whoami -t', "auth_token = {token}", _AUTH),
    Edit(("4_rayjob_existing_cluster", "5_submit_rayjob_cr"), "!oc login", None, _OC_LOGIN),
    Edit(
        ("6_autoscaling",),
        'NAMESPACE = "rhods-notebooks"',
        "NAMESPACE = {namespace}",
        "The test namespace for a placeholder.",
    ),
    Edit(
        ("1_cluster_job_client", "2_basic_interactive", "4_rayjob_existing_cluster"),
        "{'nvidia.com/gpu':1}",
        "{'nvidia.com/gpu':0}",
        _NO_GPU,
    ),
    Edit(
        ("4_rayjob_existing_cluster", "5_submit_rayjob_cr"),
        'namespace="your-namespace"',
        "namespace={namespace}",
        "The test namespace for a placeholder.",
    ),
    Edit(
        ("1_cluster_job_client", "ray_job_client", "remote_ray_job_client"),
        '"working_dir": "./","pip": "requirements.txt"',
        '"working_dir": "./"',
        _NO_PIP,
    ),
    Edit(
        ("2_basic_interactive",),
        'runtime_env = {"pip": ["transformers==4.41.2", "datasets==2.17.0", "accelerate==0.31.0", '
        '"scikit-learn==1.5.0"]}',
        "runtime_env = {}",
        _NO_PIP,
    ),
    Edit(
        ("2_basic_interactive",),
        "@ray.remote\ndef train_fn():",
        "@ray.remote\ndef train_fn():\n    # CPU stand-in for the peer's Hugging Face training on GPUs\n"
        "    return sum(i * i for i in range(1000))\n\n\ndef _peer_train_fn():",
        "CPU stand-in for GPU training: the peer's train_fn (transformers on 3 GPUs) becomes a small CPU "
        "task; the peer's body is kept, renamed, and never called.",
    ),
    Edit(
        ("6_autoscaling",),
        "LOAD_SLEEP_S = 180",
        "LOAD_SLEEP_S = 30",
        "2 shared cores, and a worker here is a local Ray node that joins in seconds (no pod to schedule, no "
        "image to pull): the load's tasks sleep 30 s instead of 180 s, still several turns of Ray's "
        "autoscaler (5 s) with one task waiting for a CPU.",
    ),
    Edit(
        ("local_interactive",),
        "heavy_calculation.remote(3000)",
        "heavy_calculation.remote(300)",
        "2 shared cores: 30 tasks of 10^3 instead of 100^3 iterations each.",
    ),
    Edit(
        ("remote_ray_job_client",),
        'auth_token = "XXXX" # Replace with the actual token',
        "auth_token = {token}",
        "The token the notebook says to put there: the plane user's.",
    ),
    Edit(
        ("remote_ray_job_client",),
        'ray_dashboard = "XXXX" # Replace with the Ray dashboard URL',
        "ray_dashboard = {dashboard}",
        "The dashboard URL 'provided by the creator of the RayCluster': a cluster the test made.",
    ),
    Edit(
        ("remote_ray_job_client",),
        'entrypoint_command = "python XXXX" # Replace with the training script name',
        'entrypoint_command = "python mnist.py"',
        "The training script the notebook says to name: the CPU stand-in below.",
    ),
)

STAND_IN_SCRIPT = '''\
"""CPU stand-in for CodeFlare's GPU training scripts (written by the test as {name})."""
import ray

ray.init()


@ray.remote
def epoch(i):
    return 1.0 / (i + 1)


losses = ray.get([epoch.remote(i) for i in range(3)])
print("stand-in training done: final loss", round(losses[-1], 3))
'''
STAND_IN_SCRIPTS = ("mnist.py", "mnist_fashion.py")
"""The peer's training scripts (torch, torchvision, datasets downloaded from the internet, GPUs) are
replaced by :data:`STAND_IN_SCRIPT` under their own names, in the notebook's folder (the job's
``working_dir``)."""
STAND_IN_OUTPUT = "stand-in training done: final loss 0.333"

PEER_FILES: dict[str, tuple[str, ...]] = {
    "6_autoscaling": ("guided-demos/autoscaling_load.py",),
}
"""The peer's own files a notebook expects beside it (its job's ``working_dir``), copied unchanged from
the wheel, by notebook stem."""


@dataclass(frozen=True)
class Probe:
    """A cell of the test's own, inserted before the peer's cell whose source starts with ``before``
    (or at the end when ``before`` is empty); it only reads state and prints one ``PROBE ...`` line."""

    where: str
    before: str
    source: str
    id: str = "probe"


def _wait_ray_job(client: str, sid: str) -> str:
    return (
        "import time as _t\n"
        f"while {client}.get_job_status({sid}) not in ('SUCCEEDED', 'FAILED', 'STOPPED'):\n"
        "    _t.sleep(1)\n"
        f"print('PROBE', {client}.get_job_status({sid}))"
    )


_AUTOSCALING_SLICES = """\
_wls = k8s_client.CustomObjectsApi(CF_CLIENT or get_api_client()).list_namespaced_custom_object(
    "kueue.x-k8s.io", "v1beta2", NAMESPACE, "workloads"
)["items"]
_mine = [w for w in _wls if any(o["name"] == CLUSTER_NAME for o in w["metadata"].get("ownerReferences", []))]
_seen = []
for _w in sorted(_mine, key=lambda w: w["metadata"]["creationTimestamp"]):
    _conds = {c["type"]: c for c in _w.get("status", {}).get("conditions", [])}
    _fin = _conds.get("Finished", {})
    _state = "admitted" if "admission" in _w.get("status", {}) else "pending"
    _state = _fin["reason"] if _fin.get("status") == "True" else _state
    _seen.append(",".join(str(p["count"]) for p in _w["spec"]["podSets"]) + ":" + _state)
print("PROBE", " ".join(_seen))"""
"""Reads the cluster's Kueue Workloads (oldest first): each one's pod-set counts and state."""

PROBES: tuple[Probe, ...] = (
    Probe("1_cluster_job_client", "# Delete a job", _wait_ray_job("client", "submission_id")),
    Probe("ray_job_client", "# Delete a job", _wait_ray_job("client", "submission_id")),
    Probe("ray_job_client", "# Stop the job", _wait_ray_job("client", "submission_id"), "probe-2"),
    Probe("remote_ray_job_client", "", _wait_ray_job("client", "submission_id")),
    Probe(
        "4_rayjob_existing_cluster",
        "cluster.down()",
        "print('PROBE', rayjob.wait(timeout=600, show=False).phase.name)",
    ),
    Probe("5_submit_rayjob_cr", "", "print('PROBE', job.wait(timeout=600, show=False).phase.name)"),
    Probe("6_autoscaling", "cleanup_autoscaling_load(load_handle)", _AUTOSCALING_SLICES),
)


def forced_edits_for(path: str) -> list[Edit]:
    return [e for e in FORCED_EDITS if Path(path).stem in e.where]


def rewrite(path: str, plane: Plane) -> Any:
    """The peer's notebook ``path`` with :data:`RENAME`, the :data:`FORCED_EDITS` that apply to it, and
    the test's :data:`PROBES`; outputs cleared. Raises ``AssertionError`` when an edit or a probe finds
    nothing to apply to (the peer's notebook changed)."""
    nb = peer_notebook(path)
    values = {k: repr(v) for k, v in vars(plane).items()}
    for cell in nb.cells:
        cell.source = cell.source.replace(*RENAME)
    for edit in forced_edits_for(path):
        matched = [c for c in nb.cells if edit.old in c.source]
        assert matched, f"{path}: the forced edit {edit.old!r} matches no cell ({edit.reason})"
        if edit.new is None:
            nb.cells = [c for c in nb.cells if not c.source.startswith(edit.old)]
            continue
        for cell in matched:
            new = edit.new
            for key, value in values.items():
                new = new.replace("{" + key + "}", value)
            cell.source = cell.source.replace(edit.old, new)
    for probe in (p for p in PROBES if p.where == Path(path).stem):
        cell = nbformat.v4.new_code_cell(probe.source)
        cell.id = probe.id
        if not probe.before:
            nb.cells.append(cell)
            continue
        code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
        at = [i for i in code if nb.cells[i].source.startswith(probe.before)]
        assert at, f"{path}: no cell starts with {probe.before!r} for the probe"
        nb.cells.insert(at[0], cell)
    nb.nbformat_minor = max(nb.nbformat_minor, 5)  # cell ids
    for i, cell in enumerate(nb.cells):
        if not cell.get("id"):
            cell.id = f"cell-{i}"
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def prepare(path: str, plane: Plane, folder: Path) -> Path:
    """Write the rewritten notebook and the CPU stand-in scripts into ``folder``; the notebook's path."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in STAND_IN_SCRIPTS:
        (folder / name).write_text(STAND_IN_SCRIPT.format(name=name))
    with zipfile.ZipFile(peer_wheel()) as wheel:
        for file in PEER_FILES.get(Path(path).stem, ()):
            (folder / Path(file).name).write_bytes(wheel.read(f"{DEMOS}/{file}"))
    out = folder / Path(path).name
    nbformat.write(rewrite(path, plane), out)
    return out
