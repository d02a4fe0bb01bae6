"""What a kubelet does for one pod, done on this machine: volumes as directories, containers as
processes, container environments resolved. Used by the local kubelet
(:mod:`rayqueue_local.controllers.pods.kubelet`) for every pod it runs, and by KubeRay's emulated
submitter pod (:mod:`rayqueue_local.controllers.kuberay.submitter`) when Ray heads are simulated.

There is no container runtime here, so the emulation is partial, and deliberately so:

- **Images are ignored.** A container's ``command`` + ``args`` run as a local process with the
  control plane's environment plus the container's ``env``. ``python3`` / ``python`` (bare, or
  any path ending in them) mean *this* Python (``sys.executable``): as ``argv[0]`` they are
  replaced, and a private ``bin/`` directory first on ``PATH`` makes them work inside shell
  scripts (``/bin/sh -c "python3 ..."``). A container without ``command`` would run its image's
  entrypoint, which is unknown here: that is an error.
- **Paths are mapped.** Every volume is a directory under a private per-pod ``root``; a mount path
  (with ``subPath``) maps to it. Mount paths are rewritten to their local directories in the
  command, the arguments, ``workingDir`` and ``env`` values (whole path components only).
- **Volumes:** ``secret`` (``data`` base64, ``stringData``) and ``configMap`` (``data``,
  ``binaryData``), with ``items`` (``key`` -> ``path``), ``defaultMode``/``mode`` and
  ``optional``; ``emptyDir``; the service account's token, CA and namespace at
  ``/var/run/secrets/kubernetes.io/serviceaccount`` (:func:`project_service_account`, as the
  ``kube-api-access-*`` projected volume upstream). Any other volume type is an empty directory.
  ``readOnly`` is not enforced. A missing Secret/ConfigMap (not ``optional``) raises
  :class:`PodPending`, as a kubelet would keep the pod in ``ContainerCreating`` (FailedMount) until it exists.
- **Environment:** ``env[].value`` with ``$(VAR)`` expansion (``$$`` escapes), ``valueFrom``
  ``secretKeyRef`` / ``configMapKeyRef`` / ``fieldRef`` (``metadata.name``, ``metadata.namespace``,
  ``metadata.uid``, ``metadata.labels['k']``, ``status.podIP``), and ``envFrom``.

Example:
    >>> import tempfile
    >>> spec = {"volumes": [{"name": "scratch", "emptyDir": {}}],
    ...         "initContainers": [{"name": "hello", "command": ["python3", "-c",
    ...             "open('/data/hi.txt', 'w').write('hi')"],
    ...             "volumeMounts": [{"name": "scratch", "mountPath": "/data"}]}]}
    >>> pod = materialise(None, "ns", spec, Path(tempfile.mkdtemp()))
    >>> run_init_containers(pod, spec, {"metadata": {"name": "p", "namespace": "ns"}})
    >>> (pod.volumes["scratch"] / "hi.txt").read_text()
    'hi'
"""

from __future__ import annotations

import base64
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rayqueue_local.errors import LocalControlPlaneError
from rayqueue_local.runtime.interpreter import interpreter_path
from rayqueue_local.storage.store import StoreError

__all__ = [
    "SERVICE_ACCOUNT_PATH",
    "InitContainerFailed",
    "LocalPod",
    "PodPending",
    "container_command",
    "container_env",
    "expand",
    "materialise",
    "project_service_account",
    "run_init_containers",
]

#: Where a pod's service account credentials are mounted [R pkg/kubelet ... serviceaccount admission
#: DefaultAPITokenMountPath].
SERVICE_ACCOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"

_PYTHON = re.compile(r"^(.*/)?python3?\Z")
_VAR = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
_FIELD_LABEL = re.compile(r"^metadata\.labels\['(.+)'\]\Z")
#: How much of a failed init container's stderr is kept.
_STDERR_TAIL = 1500


class PodPending(LocalControlPlaneError):
    """A volume or env source does not exist yet: the pod cannot start (the kubelet retries)."""


class InitContainerFailed(LocalControlPlaneError):
    """An init container exited non-zero (or could not run); carries its name and stderr tail.

    Example:
        >>> str(InitContainerFailed("unpack", 1, "boom"))
        'init container "unpack" exited with code 1: boom'
    """

    def __init__(self, container: str, exit_code: int, stderr: str) -> None:
        self.container = container
        self.exit_code = exit_code
        self.stderr = stderr[-_STDERR_TAIL:].strip()
        super().__init__(f'init container "{container}" exited with code {exit_code}: {self.stderr}')


@dataclass
class LocalPod:
    """A pod's filesystem on this machine: ``volumes`` maps volume name -> local directory;
    ``extra_mounts`` (mount path -> directory) are mounted into every container (the service
    account's credentials)."""

    root: Path
    volumes: dict[str, Path] = field(default_factory=dict)
    extra_mounts: dict[str, Path] = field(default_factory=dict)

    def mounts(self, container: dict[str, Any]) -> dict[str, Path]:
        """Mount path -> local directory for one container (``subPath`` honoured)."""
        out: dict[str, Path] = dict(self.extra_mounts)
        for mount in container.get("volumeMounts") or []:
            base = self.volumes.get(mount.get("name", ""))
            if base is None:
                continue
            local = _below(base, str(mount["subPath"])) if mount.get("subPath") else base
            local.mkdir(parents=True, exist_ok=True)
            out[str(mount["mountPath"]).rstrip("/") or "/"] = local
        return out

    def localise(self, text: str, container: dict[str, Any]) -> str:
        """``text`` with the container's mount paths replaced by their local directories.

        Example:
            >>> pod = LocalPod(Path("/tmp/r"), {"v": Path("/tmp/r/volumes/v")})
            >>> c = {"volumeMounts": [{"name": "v", "mountPath": "/data"}]}
            >>> pod.localise("cp /data/x /data2/y", c)
            'cp /tmp/r/volumes/v/x /data2/y'
        """
        mounts = self.mounts(container)
        for pod_path in sorted(mounts, key=len, reverse=True):
            pattern = re.compile(r"(?<![\w.-])" + re.escape(pod_path) + r"(?![\w.-])")
            local = str(mounts[pod_path])
            text = pattern.sub(lambda _m: local, text)  # noqa: B023 - used at once
        return text


def _below(base: Path, relative: str) -> Path:
    """``base / relative``, refusing what the API server's validation refuses (absolute, ``..``)."""
    if relative.startswith("/") or ".." in relative.split("/"):
        raise ValueError(f"invalid path {relative!r}: must be relative and may not contain '..'")
    return base / relative


def _object(store: Any, key: str, namespace: str, name: str, optional: bool) -> dict[str, Any] | None:
    try:
        return dict(store.get(key, namespace, name))
    except StoreError as err:
        if err.code != 404:
            raise
    if optional:
        return None
    kind = "secret" if key == "secrets" else "configmap"
    raise PodPending(f'{kind} "{name}" not found')


def _contents(obj: dict[str, Any] | None, key: str) -> dict[str, bytes]:
    if obj is None:
        return {}
    out: dict[str, bytes] = {}
    if key == "secrets":
        for k, v in (obj.get("data") or {}).items():
            out[k] = base64.b64decode(v)
        for k, v in (obj.get("stringData") or {}).items():
            out[k] = str(v).encode()
    else:
        for k, v in (obj.get("data") or {}).items():
            out[k] = str(v).encode()
        for k, v in (obj.get("binaryData") or {}).items():
            out[k] = base64.b64decode(v)
    return out


def _project(store: Any, namespace: str, volume: dict[str, Any], target: Path) -> None:
    key, source = ("secrets", volume["secret"]) if "secret" in volume else ("configmaps", volume["configMap"])
    name = source.get("secretName") if key == "secrets" else source.get("name")
    optional = bool(source.get("optional"))
    contents = _contents(_object(store, key, namespace, str(name), optional), key)
    mode = int(source.get("defaultMode", 0o644))
    items = source.get("items")
    wanted = items if items else [{"key": k, "path": k} for k in sorted(contents)]
    for item in wanted:
        if item["key"] not in contents:
            if optional:
                continue
            raise PodPending(f"couldn't find key {item['key']} in {key[:-1]} {namespace}/{name}")
        path = _below(target, str(item["path"]))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(contents[item["key"]])
        path.chmod(int(item.get("mode", mode)) | stat.S_IRUSR)


def materialise(store: Any, namespace: str, spec: dict[str, Any], root: Path) -> LocalPod:
    """Make every volume of pod ``spec`` a directory under ``root`` (Secrets and ConfigMaps read
    from ``store``). Raises :class:`PodPending` when a source is missing."""
    pod = LocalPod(root)
    for volume in spec.get("volumes") or []:
        target = root / "volumes" / volume["name"]
        target.mkdir(parents=True, exist_ok=True)
        if "secret" in volume or "configMap" in volume:
            _project(store, namespace, volume, target)
        pod.volumes[volume["name"]] = target
    return pod


def project_service_account(pod: LocalPod, namespace: str, token: str, ca_cert: bytes) -> Path:
    """Write the service account's ``token``, ``ca.crt`` and ``namespace`` files into the pod and
    mount them at :data:`SERVICE_ACCOUNT_PATH` in every container; returns the local directory.

    The files are readable by this user only (the token is a credential).

    Example:
        >>> import tempfile
        >>> pod = LocalPod(Path(tempfile.mkdtemp()))
        >>> d = project_service_account(pod, "team-a", "t0ken", b"CA")
        >>> local = pod.localise(SERVICE_ACCOUNT_PATH + "/token", {})
        >>> (d / "namespace").read_text(), local == str(d / "token")
        ('team-a', True)
    """
    target = pod.root / "volumes" / "kube-api-access"
    target.mkdir(parents=True, exist_ok=True)
    target.chmod(0o700)
    for name, data in (("token", token.encode()), ("ca.crt", ca_cert), ("namespace", namespace.encode())):
        path = target / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    pod.extra_mounts[SERVICE_ACCOUNT_PATH] = target
    return target


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion: known variables are replaced, unknown ones kept, ``$$`` -> ``$``.

    Example:
        >>> expand("$(A)/x $(B) $$(A)", {"A": "/a"})
        '/a/x $(B) $(A)'
    """

    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))

    return _VAR.sub(sub, text)


def _field(pod: dict[str, Any], path: str) -> str:
    meta = pod.get("metadata") or {}
    label = _FIELD_LABEL.match(path)
    if label:
        return str((meta.get("labels") or {}).get(label.group(1), ""))
    simple = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"),
        "status.podIP": "127.0.0.1",
        "status.hostIP": "127.0.0.1",
    }
    return str(simple.get(path) or "")


def _ref(store: Any, namespace: str, ref: dict[str, Any], key: str) -> str | None:
    obj = _object(store, key, namespace, str(ref.get("name")), bool(ref.get("optional")))
    value = _contents(obj, key).get(str(ref.get("key")))
    if value is None and not ref.get("optional"):
        raise PodPending(f"couldn't find key {ref.get('key')} in {key[:-1]} {namespace}/{ref.get('name')}")
    return None if value is None else value.decode(errors="replace")


def container_env(store: Any, pod: dict[str, Any], container: dict[str, Any]) -> dict[str, str]:
    """The variables a container gets from its spec (``envFrom`` first, then ``env`` in order).

    Example:
        >>> pod_name = {"fieldRef": {"fieldPath": "metadata.name"}}
        >>> container_env(None, {"metadata": {"name": "p"}},
        ...               {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "$(A)2"},
        ...                        {"name": "POD", "valueFrom": pod_name}]})
        {'A': '1', 'B': '12', 'POD': 'p'}
    """
    namespace = str((pod.get("metadata") or {}).get("namespace") or "default")
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        key, ref = (
            ("secrets", source.get("secretRef"))
            if source.get("secretRef")
            else (
                "configmaps",
                source.get("configMapRef"),
            )
        )
        if not ref:
            continue
        obj = _object(store, key, namespace, str(ref.get("name")), bool(ref.get("optional")))
        prefix = str(source.get("prefix") or "")
        env.update({prefix + k: v.decode(errors="replace") for k, v in _contents(obj, key).items()})
    for var in container.get("env") or []:
        value: str | None
        source = var.get("valueFrom")
        if source is None:
            value = expand(str(var.get("value") or ""), env)
        elif "fieldRef" in source:
            value = _field(pod, str(source["fieldRef"].get("fieldPath")))
        elif "secretKeyRef" in source:
            value = _ref(store, namespace, source["secretKeyRef"], "secrets")
        elif "configMapKeyRef" in source:
            value = _ref(store, namespace, source["configMapKeyRef"], "configmaps")
        else:  # resourceFieldRef: not emulated
            value = ""
        if value is not None:
            env[str(var["name"])] = value
    return env


def container_command(
    pod: LocalPod,
    container: dict[str, Any],
    pod_object: dict[str, Any],
    *,
    store: Any = None,
    extra_env: dict[str, str] | None = None,
) -> tuple[list[str], dict[str, str], Path]:
    """``(argv, env, cwd)`` to run ``container`` of ``pod_object`` as a local process.

    ``argv`` is ``command`` + ``args`` with ``$(VAR)`` expanded and mount paths localised (a bare
    ``python``/``python3`` is this interpreter); ``env`` is this process's environment, then
    ``extra_env`` (what the kubelet adds: ``KUBERNETES_SERVICE_HOST``, ...), then the container's own,
    with the python shims and this interpreter's directory first on ``PATH``.

    Raises:
        ValueError: the container has no ``command`` (its image's entrypoint cannot run here).
        PodPending: its env names a Secret/ConfigMap that does not exist.

    Example:
        >>> import tempfile
        >>> pod = LocalPod(Path(tempfile.mkdtemp()))
        >>> argv, env, cwd = container_command(pod, {"command": ["python", "-V"]}, {"metadata": {}})
        >>> argv == [sys.executable, "-V"], cwd == pod.root
        (True, True)
    """
    if not container.get("command"):
        raise ValueError("no command: the image's entrypoint cannot run locally")
    own = {k: pod.localise(v, container) for k, v in container_env(store, pod_object, container).items()}
    argv = [
        pod.localise(expand(str(a), own), container)
        for a in (container.get("command") or []) + (container.get("args") or [])
    ]
    if _PYTHON.match(argv[0]):
        argv[0] = sys.executable
    path = interpreter_path(pod.root / "bin", os.environ.get("PATH", ""))
    env = {**os.environ, **(extra_env or {}), **own}
    env["PATH"] = f"{path}{os.pathsep}{own['PATH']}" if "PATH" in own else path
    cwd = (
        Path(pod.localise(str(container["workingDir"]), container))
        if container.get("workingDir")
        else pod.root
    )
    return argv, env, cwd


def run_init_containers(
    pod: LocalPod,
    spec: dict[str, Any],
    pod_object: dict[str, Any],
    *,
    store: Any = None,
    timeout: float = 300.0,
) -> None:
    """Run ``spec.initContainers`` in order, each to completion, as local processes.

    Raises:
        InitContainerFailed: one exited non-zero, timed out, had no command or could not start.
        PodPending: its env names a Secret/ConfigMap that does not exist.
    """
    for container in spec.get("initContainers") or []:
        name = str(container.get("name", "init"))
        try:
            argv, env, cwd = container_command(pod, container, pod_object, store=store)
        except ValueError as err:
            raise InitContainerFailed(name, 127, str(err)) from None
        try:
            done = subprocess.run(
                argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            raise InitContainerFailed(name, 137, f"did not finish within {timeout:g} s") from None
        except OSError as err:
            raise InitContainerFailed(name, 128, str(err)) from None
        if done.returncode != 0:
            raise InitContainerFailed(name, done.returncode, done.stderr or done.stdout)
