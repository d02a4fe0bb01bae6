"""``LocalControlPlane``: the store, the HTTPS API server, auth, faults and controllers, wired together.

Example:
    >>> from rayqueue_local import LocalControlPlane
    >>> with LocalControlPlane() as cp:                                    # doctest: +SKIP
    ...     cp.apply('''
    ... apiVersion: v1
    ... kind: Namespace
    ... metadata: {name: team-a}
    ... ''')
    ...     token = cp.add_user("alice", ["team-a"])
    ...     from kubernetes import client
    ...     client.CoreV1Api(cp.api_client(token)).list_namespaced_secret("team-a").items
    []
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rayqueue_local.apimachinery.limits import load_yaml_all
from rayqueue_local.apiserver import podsecurity as pod_security
from rayqueue_local.apiserver.auth import Authenticator
from rayqueue_local.apiserver.faults import FaultInjector
from rayqueue_local.apiserver.kubeconfig import merge_context, remove_context
from rayqueue_local.apiserver.podlogs import PodLogs
from rayqueue_local.apiserver.rest import RestAPI
from rayqueue_local.apiserver.server import APIServer
from rayqueue_local.apiserver.tls import make_tls_bundle
from rayqueue_local.apiserver.users import USERS_RESOURCE, user_routes
from rayqueue_local.controllers import default_controllers
from rayqueue_local.options import ControlPlaneOptions, kueue_served_versions, option_names, with_overrides
from rayqueue_local.registry.registry import Registry, load_crd_dir
from rayqueue_local.registry.resourcetypes import KUEUE
from rayqueue_local.runtime.interpreter import ray_command
from rayqueue_local.runtime.node import local_node
from rayqueue_local.runtime.processes import ProcessStartError
from rayqueue_local.runtime.prometheus import PrometheusNotInstalledError, find_prometheus
from rayqueue_local.storage.apiextensions import serve_custom_resource_definitions
from rayqueue_local.storage.lock import StateDirectoryLock
from rayqueue_local.storage.persistence import private_dir
from rayqueue_local.storage.store import Store, StoreError

log = logging.getLogger(__name__)
#: Notices about what cannot run go to the package's logger, where users look first.
notice_log = logging.getLogger("rayqueue_local")

__all__ = ["ControlPlaneOptions", "LocalControlPlane", "OBJECTS_DIR"]

_OPTION_NAMES = frozenset(option_names())

_ADMIN_CONTEXT = "rayqueue-local"
#: Where the objects live inside a state directory (next to ``tls/``, ``tokens.json``, ``kubeconfig``).
OBJECTS_DIR = "objects"


def _crd_types(crd_dir: Path) -> tuple[Any, ...]:
    """The resource types of the CRDs in ``crd_dir``, parsed once per process (YAML parsing is slow)."""
    files = sorted(p for p in crd_dir.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    signature = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    return _load_crd_types(str(crd_dir.resolve()), signature)


@functools.lru_cache(maxsize=8)
def _load_crd_types(crd_dir: str, signature: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(load_crd_dir(crd_dir))


def _scale_get(workload: dict[str, Any]) -> int:
    return 1 if (workload.get("spec") or {}).get("active", True) else 0


def _scale_set(workload: dict[str, Any], replicas: int) -> dict[str, Any]:
    workload.setdefault("spec", {})["active"] = replicas > 0
    return workload


class LocalControlPlane:
    """A loopback Kubernetes API server with Kueue/KubeRay/KEDA behaviour, for laptops, CI and tests.

    ``crd_dir``: directory of upstream CRD YAML files; custom resources are validated against them
    (``None``: stored unvalidated, with a warning). ``state_dir``: objects, TLS material and tokens
    survive a restart there (``None``: a temporary directory, removed by :meth:`stop`).
    ``port=0`` picks a free port. ``controllers``: the controllers to run (default:
    :func:`rayqueue_local.controllers.default_controllers`; ``[]`` for none; or a callable
    ``cp -> [controllers]``, called after the server is up). What the default controllers emulate is
    :class:`~rayqueue_local.options.ControlPlaneOptions`, given whole (``options=``) or by name
    (``ray_enabled=False``, ``workload_scale=True``, ...); an unknown name is a ``TypeError`` that
    lists the known ones. The defaults are ``rayqueue local up``'s: Kueue, KubeRay with real Ray
    heads, KEDA and Prometheus all on. What cannot run here (Ray not installed, no ``prometheus``
    binary) is logged when the plane starts (logger ``rayqueue_local``) and kept in
    :attr:`notices`; a RayCluster that then cannot get a head says why in its ``ReplicaFailure``
    condition.

    Attributes once started: ``server`` (the https URL), ``token`` (admin), ``ca_cert_path``,
    ``kubeconfig_path`` (admin context ``rayqueue-local`` plus one per :meth:`add_user`), ``store``,
    ``registry``, ``faults``, ``auth``, ``notices``; with KubeRay ``ray_runtime`` and ``gpu_metrics``,
    with Prometheus ``prometheus``.

    Example:
        >>> cp = LocalControlPlane(controllers=[])
        >>> cp.start().server.startswith("https://127.0.0.1:")             # doctest: +SKIP
        True
        >>> cp.stop()                                                      # doctest: +SKIP
    """

    def __init__(
        self,
        crd_dir: str | os.PathLike[str] | None = None,
        state_dir: str | os.PathLike[str] | None = None,
        port: int = 0,
        host: str = "127.0.0.1",
        *,
        controllers: list[Any] | Callable[[LocalControlPlane], list[Any]] | None = None,
        options: ControlPlaneOptions | None = None,
        admin_token: str | None = None,
        bookmark_interval: float = 5.0,
        history: int = 10_000,
        **option_overrides: Any,
    ) -> None:
        self.options = with_overrides(options or ControlPlaneOptions(), option_overrides)
        self.crd_dir = Path(crd_dir) if crd_dir is not None else None
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self.port = port
        self.host = host
        self.bookmark_interval = bookmark_interval
        self.history = history
        self._controllers_arg = controllers
        self._admin_token = admin_token
        self.controllers: list[Any] = []
        self.notices: list[str] = []
        #: What cannot run here, by emulation ("ray", "prometheus"): the reason (set by :meth:`start`).
        self.unavailable: dict[str, str] = {}
        self.ray_runtime: Any = None
        self.gpu_metrics: Any = None
        self.prometheus: Any = None
        self.kubelet: Any = None  # published by the pod controllers
        self._tmp: str | None = None
        self._state_lock: StateDirectoryLock | None = None  # held while running on a state_dir
        self._api: APIServer | None = None
        self._lock = threading.Lock()
        self.store: Store
        self.registry: Registry
        self.faults: FaultInjector
        self.auth: Authenticator
        self.server = ""
        self.ca_cert_path: Path = Path()
        self.kubeconfig_path: Path = Path()

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _OPTION_NAMES:  # cp.ray_enabled = True used to work; now it would do nothing
            raise AttributeError(
                f"{name} is an option of the emulation: pass LocalControlPlane(..., {name}={value!r}) "
                f"(or options=ControlPlaneOptions(...)); it is read as cp.options.{name}"
            )
        super().__setattr__(name, value)

    def __repr__(self) -> str:
        return (
            f"LocalControlPlane(server={self.server!r}, crd_dir={self.crd_dir!s}, "
            f"state_dir={self.state_dir!s})"
        )

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> LocalControlPlane:
        """Start the store, the HTTPS server and then the controllers; returns ``self``.

        A failure part-way (port in use, bad CRD directory, a controller that cannot start) undoes
        what was started and re-raises.
        """
        if self._api is not None:
            return self
        try:
            self._start()
        except BaseException:
            self._abort()
            raise
        return self

    def _abort(self) -> None:
        if self._api is not None:
            self.stop()
            return
        if getattr(self, "store", None) is not None:
            self.store.close()
        self._release_directories()

    def _release_directories(self) -> None:
        """Unlock the state directory, or remove the temporary one."""
        if self._state_lock is not None:
            self._state_lock.release()
            self._state_lock = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _start(self) -> None:
        if self.state_dir is not None:
            base = private_dir(self.state_dir)  # tokens, the CA key and Secrets live here: 0700
            self._state_lock = StateDirectoryLock(base).acquire()
        else:
            self._tmp = tempfile.mkdtemp(prefix="rayqueue-local-")
            base = Path(self._tmp)
        if self.crd_dir is None:
            log.warning(
                "local control plane: no CRD directory given; custom resources are stored unvalidated"
            )
        elif not self.crd_dir.is_dir():
            raise FileNotFoundError(f"CRD directory not found: {self.crd_dir}")
        self.registry = Registry(extra=_crd_types(self.crd_dir) if self.crd_dir is not None else ())
        self.registry.crd_dir = self.crd_dir
        self.registry.serve_group_versions(KUEUE, kueue_served_versions(self.options.kueue_api_versions))
        if self.options.workload_scale:
            self.registry.enable_scale("workloads.kueue.x-k8s.io", _scale_get, _scale_set)
        self.store = Store(
            self.registry,
            state_dir=(base / OBJECTS_DIR) if self.state_dir is not None else None,
            history=self.history,
        )
        serve_custom_resource_definitions(self.store)  # kubectl get crd; users' own CRDs
        pod_security.install(self.store)  # namespaces labelled pod-security.kubernetes.io/enforce
        self._publish_node()
        self.faults = FaultInjector()
        self.auth = Authenticator(admin_token=self._admin_token or self._load_tokens(base).get("admin"))
        saved = self._load_tokens(base)
        for name, (token, namespaces) in saved.get("users", {}).items():
            self.auth.add_user(name, namespaces, token=token)
        for name, token in saved.get("admins", {}).items():
            self.auth.add_user(name, [], token=token, admin=True)
        self._save_tokens(base)
        tls = make_tls_bundle(base / "tls", hosts=tuple(dict.fromkeys(("127.0.0.1", "localhost", self.host))))
        self.ca_cert_path = tls.ca_cert_path
        rest = RestAPI(self.store, self.faults, bookmark_interval=self.bookmark_interval)
        self._api = APIServer(rest, self.auth, self.faults, tls.server_context(), self.host, self.port)
        for method, path, verb, handler in user_routes(self):
            self._api.add_route(method, path, handler, resource=USERS_RESOURCE, verb=verb)
        for method, path, handler, resource, verb in PodLogs(self.store, self._container_log).routes():
            self._api.add_route(method, path, handler, resource=resource, verb=verb)
        self._api.start()
        self.server = self._api.url
        self.kubeconfig_path = base / "kubeconfig"
        self._write_kubeconfig()
        log.info("local control plane serving at %s", self.server)
        self._start_controllers()
        self.notices.extend(self.store.recovery_notes)  # damaged log records set aside (already logged)

    def _container_log(self, pod: dict[str, Any], container: str, previous: bool) -> Any:
        """``(log file, still running?)`` of a container, from whichever controller runs the pod
        (the kubelet; KubeRay for the Ray heads), for ``pods/{name}/log``."""
        for controller in list(self.controllers):
            locate = getattr(controller, "container_log", None)
            found = locate(pod, container, previous) if locate is not None else None
            if found is not None:
                return found
        return None

    def _publish_node(self) -> None:
        """Register this machine as the plane's one Node (or refresh its status after a restart)."""
        node = local_node(self.host)
        name = node["metadata"]["name"]
        try:
            self.store.get("nodes", None, name)
        except StoreError:
            self.store.create("nodes", node)
        self.store.update_status("nodes", {"metadata": {"name": name}, "status": node["status"]})

    def _check_environment(self) -> None:
        """Record (and log) what the options ask for that cannot run on this machine."""
        self.notices, self.unavailable = [], {}
        if not self.options.kuberay_enabled:
            return
        if self.options.ray_enabled:
            try:
                ray_command()
            except ProcessStartError:
                self.unavailable["ray"] = (
                    f"Ray is not installed for {sys.executable} (pip install 'ray[default]'), so no "
                    "RayCluster can get a head"
                )
                self.notices.append(
                    self.unavailable["ray"] + "; each says so in its ReplicaFailure condition. "
                    "Pass ray_enabled=False (rayqueue local up --no-ray) for simulated heads."
                )
        if self.options.prometheus_enabled:
            try:
                find_prometheus()
            except PrometheusNotInstalledError:
                self.unavailable["prometheus"] = "the prometheus binary is not on PATH"
                self.notices.append(
                    "Prometheus is not installed, so the GPU metrics are not scraped and KEDA's "
                    "Prometheus triggers have nothing to query; install Debian's package `prometheus` "
                    "(apt-get install prometheus), or pass prometheus_enabled=False "
                    "(rayqueue local up --no-prometheus) to silence this."
                )
        for notice in self.notices:
            notice_log.warning("%s", notice)

    def _start_controllers(self) -> None:
        if self._controllers_arg is None:
            self._check_environment()
            self.controllers = list(default_controllers(self))
        elif callable(self._controllers_arg):
            self.controllers = list(self._controllers_arg(self))
        else:
            self.controllers = list(self._controllers_arg)
        started = self.controllers
        self.controllers = []
        for controller in started:
            controller.start(self.store)
            self.controllers.append(controller)  # stop() stops only what started

    def stop(self) -> None:
        """Stop the controllers (in reverse order), then the server and the store."""
        if self._api is None:
            return
        for controller in reversed(self.controllers):
            try:
                controller.stop()
            except Exception:  # one controller failing to stop must not leave the rest running
                log.exception("stopping controller %s failed", getattr(controller, "name", controller))
        self.controllers = []
        self._api.stop()
        self._api = None
        self.store.close()
        self._release_directories()

    def __enter__(self) -> LocalControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def api_server(self) -> APIServer:
        """The running :class:`~rayqueue_local.apiserver.server.APIServer` (e.g. for ``add_route``)."""
        if self._api is None:
            raise RuntimeError("the control plane is not running; call start()")
        return self._api

    def add_route(self, method: str, path_regex: str, handler: Any, *, resource: str, verb: str) -> None:
        """Serve an extra route (see :meth:`rayqueue_local.apiserver.server.APIServer.add_route`)."""
        self.api_server.add_route(method, path_regex, handler, resource=resource, verb=verb)

    # -- credentials -------------------------------------------------------------------------------
    @property
    def token(self) -> str:
        """The admin bearer token."""
        return self.auth.admin_token

    def add_user(self, name: str, namespaces: Iterable[str], *, admin: bool = False) -> str:
        """A user limited to ``namespaces`` (:mod:`rayqueue_local.apiserver.auth`), or an ``admin``;
        returns their token (a new one when ``name`` existed: the old one stops working).

        A kubeconfig context ``rayqueue-local-<name>`` is added to :attr:`kubeconfig_path`.
        """
        namespaces = list(namespaces)
        with self._lock:  # one writer of tokens.json and the kubeconfig at a time
            return self._add_user(name, namespaces, admin)

    def _add_user(self, name: str, namespaces: list[str], admin: bool = False) -> str:
        token = self.auth.add_user(name, namespaces, admin=admin)
        self._save_tokens(self.kubeconfig_path.parent)
        self._write_user_context(name, token, namespaces)
        return token

    def remove_user(self, name: str) -> bool:
        """Forget user ``name`` (its token stops at once, its context goes); whether it existed."""
        with self._lock:
            found = self.auth.remove_user(name)
            if found:
                self._save_tokens(self.kubeconfig_path.parent)
                remove_context(self.kubeconfig_path, f"{_ADMIN_CONTEXT}-{name}")
            return found

    def users(self) -> list[dict[str, Any]]:
        """Every user but the built-in admin: name, namespaces and whether an admin (no tokens)."""
        return [
            {"name": u.name, "namespaces": sorted(u.namespaces), "admin": u.admin}
            for u in sorted(self.auth.users.values(), key=lambda u: u.name)
            if u.name != "admin"
        ]

    def _write_user_context(self, name: str, token: str, namespaces: list[str]) -> None:
        """Context ``rayqueue-local-<name>`` (not the current one), in the user's first namespace."""
        merge_context(
            self.kubeconfig_path,
            f"{_ADMIN_CONTEXT}-{name}",
            cluster=_ADMIN_CONTEXT,
            server=self.server,
            ca_path=self.ca_cert_path,
            user=f"{_ADMIN_CONTEXT}-{name}",
            token=token,
            namespace=namespaces[0] if namespaces else "default",
            make_current=False,
        )

    def _write_kubeconfig(self) -> None:
        merge_context(
            self.kubeconfig_path,
            _ADMIN_CONTEXT,
            server=self.server,
            ca_path=self.ca_cert_path,
            user=f"{_ADMIN_CONTEXT}-admin",
            token=self.token,
        )
        for name, (token, namespaces) in self.auth.tokens().items():
            self._write_user_context(name, token, list(namespaces))
        for name, token in self.auth.admin_tokens().items():
            self._write_user_context(name, token, [])

    def _load_tokens(self, base: Path) -> dict[str, Any]:
        path = base / "tokens.json"
        if self.state_dir is None or not path.is_file():
            return {}
        data: dict[str, Any] = json.loads(path.read_text())
        return data

    def _save_tokens(self, base: Path) -> None:
        if self.state_dir is None:
            return
        data = {
            "admin": self.auth.admin_token,
            "users": self.auth.tokens(),
            "admins": self.auth.admin_tokens(),
        }
        path = base / "tokens.json"
        tmp = base / "tokens.json.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh)
        os.replace(tmp, path)

    # -- convenience -------------------------------------------------------------------------------
    def api_client(self, token: str | None = None) -> Any:
        """A ``kubernetes.client.ApiClient`` for this server (admin unless ``token`` is given), TLS verified.

        Example::

            from kubernetes import client; client.CoreV1Api(cp.api_client()).list_namespace()
        """
        from kubernetes import client  # lazy: ~400 ms to import, only for callers that want a client

        config = client.Configuration()
        config.host = self.server
        config.ssl_ca_cert = str(self.ca_cert_path)
        config.verify_ssl = True
        config.api_key = {"authorization": token or self.token}
        config.api_key_prefix = {"authorization": "Bearer"}
        return client.ApiClient(config)

    def apply(self, objects: str | dict[str, Any] | Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Create or update objects as the admin (server-side apply, forced); multi-document YAML accepted.

        A ``status`` in a document is written through the status subresource. Returns the stored
        objects in their storage versions. This is the plane's own path to its store, so Kueue objects
        may be written at either generation (``v1beta2`` or ``v1beta1``) whichever
        ``kueue_api_versions`` serves: the scenarios' ``v1beta2`` setups work on a ``v1beta1``-only plane.

        Example::

            cp.apply("apiVersion: v1\\nkind: Namespace\\nmetadata: {name: team-a}\\n")
        """
        if isinstance(objects, str):
            docs = [d for d in load_yaml_all(objects) if d]
        elif isinstance(objects, dict):
            docs = [objects]
        else:
            docs = list(objects)
        out = []
        for doc in docs:
            api_version, kind = doc.get("apiVersion", ""), doc.get("kind", "")
            key = self.registry.key_for_kind(api_version, kind, unserved=True)
            if key is None:
                raise ValueError(f"unknown apiVersion/kind: {api_version}/{kind}")
            rt = self.registry.get(key)
            obj = self.registry.to_storage(key, doc, api_version.rpartition("/")[2])
            meta = obj.setdefault("metadata", {})
            if rt.namespaced:
                meta.setdefault("namespace", "default")
            status = obj.pop("status", None) if rt.has_status else None
            stored = self.store.apply(key, obj, field_manager="rayqueue-local-apply", force=True)
            if status is not None:
                stored["status"] = status
                stored = self.store.update_status(key, stored)
            out.append(stored)
        return out
