"""Ray ``runtime_env`` handling for :class:`~rayqueue_sdk.job.rayjob.RayJob`: local code, checks, limits.

Everything here is checked *before* anything is sent to a server:

- ``working_dir``: a remote URI (``https://``, ``s3://``, ``gs://``, ``gcs://``, ...) passes through
  unchanged; anything else is a local directory, resolved to an absolute path (a missing directory is
  a :class:`~rayqueue_sdk.errors.ConfigError`).
- On an existing cluster Ray's job client zips and uploads the directory; Ray refuses packages of
  :data:`RAY_PACKAGE_LIMIT` bytes or more (its gRPC message limit), so that is checked here first.
- For a job-owned cluster (a KubeRay RayJob) the directory travels inside the Kubernetes API: it is
  zipped into a Secret ``<job>-working-dir`` owned by the RayJob, mounted into KubeRay's submitter
  pod, unpacked there by an init container, and ``runtimeEnvYAML.working_dir`` names the unpacked
  directory, so the submitter's ``ray job submit`` uploads it to the new cluster. A Secret holds at
  most 1 MiB, so the zip may be at most :data:`OWNED_WORKING_DIR_LIMIT` bytes; above that the error
  says so and suggests a remote archive. No file is ever dropped silently: only what the runtime
  env's own ``excludes`` patterns name is left out.
- An entrypoint ``python X.py`` whose script is not in the local ``working_dir`` is refused.

:func:`prepare_runtime_env` does these checks for a submission and hands a backend a
:class:`PreparedRuntimeEnv`.

Example:
    >>> is_remote_uri("https://github.com/org/repo/archive/main.zip"), is_remote_uri("./src")
    (True, False)
    >>> entrypoint_script("python -u test_model.py --epochs 1")
    'test_model.py'
"""

from __future__ import annotations

import base64
import copy
import fnmatch
import io
import logging
import os
import re
import shlex
import stat
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.labels import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from rayqueue_sdk.manifests.rayjob import runtime_env_yaml, submitter_template
from rayqueue_sdk.manifests.security import make_restricted

__all__ = [
    "OWNED_WORKING_DIR_LIMIT",
    "RAY_PACKAGE_LIMIT",
    "SUBMITTER_WORKING_DIR",
    "WORKING_DIR_SECRET_KEY",
    "PreparedRuntimeEnv",
    "check_entrypoint_script",
    "check_package_size",
    "entrypoint_script",
    "is_remote_uri",
    "local_working_dir",
    "prepare_runtime_env",
    "ship_working_dir",
    "working_dir_secret_name",
    "zip_working_dir",
]

log = logging.getLogger(__name__)

#: Ray refuses a working_dir package of this many bytes or more (its gRPC message limit, 512 MiB).
RAY_PACKAGE_LIMIT = 512 * 1024 * 1024
#: The largest zipped working_dir shipped to a job-owned cluster: a Secret holds at most 1 MiB, less
#: some room for the object's metadata.
OWNED_WORKING_DIR_LIMIT = 1024 * 1024 - 16 * 1024
#: The key of the zip in the working-dir Secret.
WORKING_DIR_SECRET_KEY = "working_dir.zip"
#: Where the submitter pod sees the unpacked working_dir.
SUBMITTER_WORKING_DIR = "/home/ray/rayqueue/working_dir"
_SECRET_MOUNT = "/home/ray/rayqueue/package"
_URI = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_PYTHONS = re.compile(r"^(.*/)?python(\d(\.\d+)?)?\Z")


def is_remote_uri(value: str) -> bool:
    """True for a URI Ray downloads itself (``https://``, ``s3://``, ``gcs://``, ...).

    Example:
        >>> is_remote_uri("s3://bucket/code.zip"), is_remote_uri("/home/me/code")
        (True, False)
    """
    return bool(_URI.match(value))


def local_working_dir(
    runtime_env: Mapping[str, Any] | None, *, base_dir: str | os.PathLike[str] | None = None
) -> Path | None:
    """The absolute local ``working_dir`` of ``runtime_env``, or ``None`` (none given, or remote).

    Raises:
        ConfigError: the path is not an existing directory.

    Example:
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> local_working_dir({"working_dir": "."}, base_dir=d) == Path(d).resolve()
        True
        >>> local_working_dir({"working_dir": "https://x/y.zip"}) is None
        True
    """
    wd = (runtime_env or {}).get("working_dir")
    if wd is None or is_remote_uri(str(wd)):
        return None
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    path = (base / str(wd)).expanduser().resolve()
    if not path.is_dir():
        raise ConfigError(
            "runtime_env['working_dir']",
            wd,
            "an existing local directory, or a remote URI (https://, s3://, gs://, ...)",
            problem=f"no directory at {str(path)!r}",
        )
    return path


def entrypoint_script(entrypoint: str) -> str | None:
    """The script a ``python [options] X.py ...`` entrypoint runs, or ``None`` for anything else.

    Example:
        >>> entrypoint_script("python3 train.py --lr 0.1"), entrypoint_script("python -m pkg.main")
        ('train.py', None)
    """
    try:
        words = shlex.split(entrypoint)
    except ValueError:
        return None
    if not words or not _PYTHONS.match(words[0]):
        return None
    for word in words[1:]:
        if word in ("-m", "-c"):
            return None
        if word.startswith("-"):
            continue
        return word if word.endswith(".py") else None
    return None


def check_entrypoint_script(entrypoint: str, working_dir: Path | None) -> None:
    """Refuse ``python X.py`` when ``X.py`` is not in the local ``working_dir``.

    Without a local working_dir nothing is checked (the script may already be on the cluster, or come
    from a remote archive).

    Raises:
        ConfigError: the script does not exist in ``working_dir``.

    Example:
        >>> import tempfile
        >>> check_entrypoint_script("python missing.py", Path(tempfile.mkdtemp()))
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: entrypoint: ...
    """
    script = entrypoint_script(entrypoint)
    if script is None or working_dir is None or os.path.isabs(script):
        return
    if not (working_dir / script).is_file():
        raise ConfigError(
            "entrypoint",
            entrypoint,
            f"a script that exists in the working_dir {str(working_dir)!r}",
            problem=f"{script!r} is not in runtime_env['working_dir']",
        )


@dataclass
class PreparedRuntimeEnv:
    """A submission's runtime_env, checked: what a backend needs to send it.

    Attributes:
        runtime_env: the resolved runtime_env (``pip`` files read, an empty ``pip`` dropped), or ``None``.
        working_dir: the absolute local ``working_dir``, or ``None`` (none, or a remote URI).
        excludes: the runtime_env's ``excludes`` patterns.

    Example:
        >>> PreparedRuntimeEnv({"env_vars": {"A": "1"}}).working_dir is None
        True
    """

    runtime_env: dict[str, Any] | None
    working_dir: Path | None = None
    excludes: list[str] = field(default_factory=list)


def prepare_runtime_env(
    runtime_env: dict[str, Any] | None,
    entrypoint: str,
    *,
    base_dir: str | os.PathLike[str] | None = None,
) -> PreparedRuntimeEnv:
    """Check a resolved runtime_env for submission: the local ``working_dir`` exists and holds the
    entrypoint's script; an empty ``pip`` list is dropped (no pip environment is made).

    Raises:
        ConfigError: no such ``working_dir``, or ``python X.py`` without ``X.py`` in it.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp()); _ = (d / "train.py").write_text("print(1)\\n")
        >>> env = prepare_runtime_env({"working_dir": ".", "pip": [], "excludes": ["*.ckpt"]},
        ...                           "python train.py", base_dir=d)
        >>> env.runtime_env, env.working_dir == d.resolve(), env.excludes
        ({'working_dir': '.', 'excludes': ['*.ckpt']}, True, ['*.ckpt'])
    """
    if runtime_env is not None and runtime_env.get("pip") == []:
        log.debug("the pip requirements are empty; no pip environment is made")
        runtime_env.pop("pip")
    working_dir = local_working_dir(runtime_env, base_dir=base_dir)
    check_entrypoint_script(entrypoint, working_dir)
    excludes = list((runtime_env or {}).get("excludes") or [])
    return PreparedRuntimeEnv(runtime_env, working_dir, excludes)


def _excluded(rel: str, patterns: Sequence[str]) -> bool:
    parts = rel.split("/")
    for pattern in patterns:
        pat = pattern.rstrip("/").lstrip("/")
        if fnmatch.fnmatch(rel, pat) or any(fnmatch.fnmatch(p, pat) for p in parts):
            return True
    return False


def _files(root: Path, excludes: Sequence[str]) -> Iterator[tuple[Path, str]]:
    """The regular files under ``root`` (symlinks to regular files included), sorted, minus ``excludes``.

    A FIFO would block the zip forever and a socket or device cannot be read: they are skipped with a
    warning naming them, as is a symlink that loops or points nowhere. Symlinked directories are not
    followed (``os.walk``'s default), so a directory loop cannot recurse.
    """
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if _excluded(rel, excludes):
                continue
            try:
                mode = path.stat().st_mode  # follows a symlink; ELOOP/ENOENT for a bad one
            except OSError as err:
                log.warning("working_dir: skipping %s: %s", rel, err.strerror or type(err).__name__)
                continue
            if not stat.S_ISREG(mode):
                log.warning("working_dir: skipping %s: not a regular file (a FIFO, socket or device)", rel)
                continue
            yield path, rel


class _LimitedBuffer(io.BytesIO):
    """An in-memory sink that refuses to grow past ``limit`` bytes (``OverflowError``)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def write(self, data: Any) -> int:
        if self.tell() + len(data) > self.limit:
            raise OverflowError
        return super().write(data)


class _Counter(io.RawIOBase):
    """A write-only sink that counts bytes and stops once a limit is passed."""

    def __init__(self, limit: int) -> None:
        self.size = 0
        self.limit = limit

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        n = len(data)
        self.size += n
        if self.size > self.limit:
            raise OverflowError
        return n


def _zip_into(sink: Any, root: Path, excludes: Sequence[str]) -> tuple[int, list[tuple[int, str]]]:
    count = 0
    sizes: list[tuple[int, str]] = []
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path, rel in _files(root, excludes):
            try:
                zf.write(path, rel)
            except OSError as err:  # unreadable (permissions), or gone since it was listed
                raise ConfigError(
                    "runtime_env['working_dir']",
                    str(root),
                    "a directory whose files can all be read",
                    problem=f"cannot read {rel}: {err.strerror or type(err).__name__}",
                ) from None
            count += 1
            sizes.append((path.stat().st_size, rel))
    return count, sizes


def _too_big(field: str, root: Path, limit: int, excludes: Sequence[str], where: str) -> ConfigError:
    largest = sorted(((p.stat().st_size, rel) for p, rel in _files(root, excludes)), reverse=True)[:3]
    listing = ", ".join(f"{rel} ({size / 2**20:.1f} MiB)" for size, rel in largest)
    return ConfigError(
        field,
        str(root),
        f"a directory whose zip is at most {limit / 2**20:.2f} MiB ({where}); leave files out with "
        "runtime_env['excludes'], or use a remote archive (https://.../main.zip)",
        problem=f"the zipped working_dir is larger than {limit / 2**20:.2f} MiB (largest files: {listing})",
    )


def check_package_size(root: Path, excludes: Sequence[str] = (), *, limit: int = RAY_PACKAGE_LIMIT) -> int:
    """The zipped size of ``root`` (streamed, nothing kept in memory); refuse it at ``limit`` or above.

    Raises:
        ConfigError: the zip would be too large for Ray (names the largest files).

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp()); _ = (d / "a.py").write_text("print(1)\\n")
        >>> 0 < check_package_size(d) < 1000
        True
    """
    counter = _Counter(limit - 1)
    try:
        _zip_into(counter, root, excludes)
    except OverflowError:
        raise _too_big("runtime_env['working_dir']", root, limit, excludes, "Ray's package limit") from None
    return counter.size


def zip_working_dir(
    root: Path, excludes: Sequence[str] = (), *, limit: int = OWNED_WORKING_DIR_LIMIT
) -> bytes:
    """Zip ``root`` in memory (every file except those ``excludes`` names); refuse it above ``limit``.

    Raises:
        ConfigError: the zip is larger than ``limit`` (names the largest files and the way out).

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp()); _ = (d / "a.py").write_text("print(1)\\n")
        >>> zipfile.ZipFile(io.BytesIO(zip_working_dir(d))).namelist()
        ['a.py']
    """
    buffer = _LimitedBuffer(limit)  # checked as it streams: never more than ``limit`` bytes in memory
    try:
        count, sizes = _zip_into(buffer, root, excludes)
    except OverflowError:
        raise _too_big(
            "runtime_env['working_dir']", root, limit, excludes, "it travels in a Kubernetes Secret"
        ) from None
    data = buffer.getvalue()
    log.info(
        "working_dir %s: %d files, %.1f KiB zipped (limit %.0f KiB)",
        root,
        count,
        len(data) / 1024,
        limit / 1024,
    )
    return data


def working_dir_secret_name(job_name: str) -> str:
    """The Secret that carries a job's zipped working_dir.

    Example:
        >>> working_dir_secret_name("final-training-run")
        'final-training-run-working-dir'
    """
    return f"{job_name}-working-dir"


def ship_working_dir(
    rayjob: Mapping[str, Any], runtime_env: Mapping[str, Any], package: bytes
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Give a rendered RayJob a working_dir: returns ``(rayjob, secret)`` (pure; nothing is sent).

    The Secret ``<job>-working-dir`` carries the zip; the RayJob's ``submitterPodTemplate`` (the one it
    has, e.g. Pod Security "restricted", else KubeRay's default) mounts it, an init container (the
    submitter image's Python, as restricted as the submitter) unpacks it into an ``emptyDir`` at
    :data:`SUBMITTER_WORKING_DIR`, and ``runtimeEnvYAML.working_dir`` points there, so KubeRay's
    submitter (``ray job submit``) uploads it to the job's cluster. The caller creates the Secret
    after the RayJob, owned by it (deleted with it).

    Example:
        >>> from rayqueue_sdk.manifests.rayjob import build_rayjob
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.60.0"}]}}}
        >>> job = build_rayjob(name="j", namespace="ds", entrypoint="python x.py",
        ...                    cluster_spec={"headGroupSpec": head})
        >>> job, secret = ship_working_dir(job, {"working_dir": "/tmp/code"}, b"PK...")
        >>> secret["metadata"]["name"], job["spec"]["runtimeEnvYAML"]
        ('j-working-dir', 'working_dir: /home/ray/rayqueue/working_dir\\n')
    """
    job = copy.deepcopy(dict(rayjob))
    meta = job["metadata"]
    name = working_dir_secret_name(meta["name"])
    spec = job["spec"]
    env = {**dict(runtime_env), "working_dir": SUBMITTER_WORKING_DIR}
    spec["runtimeEnvYAML"] = runtime_env_yaml(env)
    # on the submitter template already there (pod_security="restricted" writes one), else KubeRay's default
    template = copy.deepcopy(spec.get("submitterPodTemplate") or submitter_template(spec["rayClusterSpec"]))
    pod = template.setdefault("spec", {})
    pod.setdefault("restartPolicy", "Never")
    submitter = pod["containers"][0]
    image = submitter.get("image") or "rayproject/ray"
    mounts = [{"name": "working-dir", "mountPath": SUBMITTER_WORKING_DIR}]
    unpack = f"python3 -m zipfile -e {_SECRET_MOUNT}/{WORKING_DIR_SECRET_KEY} {SUBMITTER_WORKING_DIR}"
    small = {"cpu": "100m", "memory": "128Mi"}
    pod["initContainers"] = [
        *(pod.get("initContainers") or []),
        {
            "name": "unpack-working-dir",
            "image": image,
            "command": ["/bin/sh", "-c", unpack],
            "volumeMounts": [{"name": "package", "mountPath": _SECRET_MOUNT, "readOnly": True}, *mounts],
            "resources": {"requests": dict(small), "limits": dict(small)},
        },
    ]
    submitter["volumeMounts"] = [*(submitter.get("volumeMounts") or []), *mounts]
    pod["volumes"] = [
        *(pod.get("volumes") or []),
        {"name": "package", "secret": {"secretName": name}},
        {"name": "working-dir", "emptyDir": {}},
    ]
    if (pod.get("securityContext") or {}).get("runAsNonRoot"):  # a restricted template: the unpacking too
        template["spec"] = make_restricted(pod)
    spec["submitterPodTemplate"] = template
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {
            "name": name,
            "labels": {"ray.io/job-name": meta["name"], MANAGED_BY_LABEL: MANAGED_BY_VALUE},
            **({"namespace": meta["namespace"]} if meta.get("namespace") else {}),
        },
        "data": {WORKING_DIR_SECRET_KEY: base64.b64encode(package).decode("ascii")},
    }
    return job, secret
