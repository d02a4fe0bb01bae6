"""Where a RayCluster's Ray dashboard and Ray client listen, and a Ray job client that can reach them.

:func:`cluster_dashboard_uri` looks, in order, at an explicit override; an OpenShift ``Route``, a
Gateway API ``HTTPRoute`` or an ``Ingress`` made for the cluster (matched by the cluster's labels or
KubeRay's/ODH's names, never "the first one in the namespace"); the in-cluster head Service name when
this process runs inside a Kubernetes pod; and finally the address the RayCluster status reports
(``status.head.serviceIP`` and ``status.endpoints``, which the local control plane fills with the
real local ports). When none is known it raises :class:`~rayqueue_sdk.errors.DashboardNotFoundError`
(defined in :mod:`rayqueue_sdk.errors`, re-exported here), never a message string.

:func:`ray_job_client` builds Ray's ``JobSubmissionClient`` with the bearer token of the current
Kubernetes credentials when the dashboard sits behind an authenticating proxy (an ``https`` address:
Route/Ingress/HTTPRoute) and TLS verification on (a CA bundle can be given). The token is put in a
header only; it is never logged.

Example:
    >>> rc = {"metadata": {"name": "ws", "namespace": "ds"},
    ...       "status": {"head": {"serviceIP": "10.0.0.7"},
    ...                  "endpoints": {"dashboard": "8265", "client": "10001"}}}
    >>> dashboard_from_status(rc), client_from_status(rc)
    ('http://10.0.0.7:8265', 'ray://10.0.0.7:10001')
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.cluster.status import CLIENT_PORT, DASHBOARD_PORT, endpoint_port, head_service_name
from rayqueue_sdk.errors import (
    ConfigError,
    ConnectionFailedError,
    DashboardNotFoundError,
    ForbiddenError,
    NotFoundError,
)
from rayqueue_sdk.kube.kinds import Kind
from rayqueue_sdk.kube.lookups import fetch_raycluster
from rayqueue_sdk.kube.session import KubeSession, SessionLike
from rayqueue_sdk.manifests.labels import (
    RAY_CLUSTER_LABEL,
    RAY_CLUSTER_NAME_LABEL,
    RAY_CLUSTER_NAMESPACE_LABEL,
)
from rayqueue_sdk.manifests.meta import meta_of

if TYPE_CHECKING:  # pragma: no cover
    from ray.job_submission import JobSubmissionClient

__all__ = [
    "DashboardNotFoundError",
    "auth_headers",
    "client_from_status",
    "cluster_dashboard_uri",
    "cluster_uri",
    "dashboard_from_exposure",
    "dashboard_from_status",
    "dashboard_ready",
    "exposed_dashboard",
    "exposures",
    "in_kubernetes_pod",
    "ray_job_client",
]

log = logging.getLogger(__name__)

_ROUTES = Kind("route.openshift.io", "v1", "routes")
_HTTPROUTES = Kind("gateway.networking.k8s.io", "v1", "httproutes")
_INGRESSES = Kind("networking.k8s.io", "v1", "ingresses")
_SA_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")


# --------------------------------------------------------------------------------------------------
# pure readings


def _head_ip(cluster: Mapping[str, Any]) -> str | None:
    head = (cluster.get("status") or {}).get("head") or {}
    ip = head.get("serviceIP") or head.get("podIP")
    return str(ip) if ip else None


def dashboard_from_status(cluster: Mapping[str, Any]) -> str | None:
    """The dashboard address the RayCluster status reports (``http://<head IP>:<dashboard port>``), or None.

    Example:
        >>> dashboard_from_status({"status": {"head": {"podIP": "10.1.2.3"}}})
        'http://10.1.2.3:8265'
        >>> dashboard_from_status({"status": {}}) is None
        True
    """
    ip = _head_ip(cluster)
    return f"http://{ip}:{endpoint_port(cluster, 'dashboard', DASHBOARD_PORT)}" if ip else None


def client_from_status(cluster: Mapping[str, Any]) -> str | None:
    """The Ray client address the RayCluster status reports (``ray://<head IP>:<client port>``), or None.

    Example:
        >>> st = {"status": {"head": {"serviceIP": "10.0.0.7"}, "endpoints": {"client": "31001"}}}
        >>> client_from_status(st)
        'ray://10.0.0.7:31001'
    """
    ip = _head_ip(cluster)
    return f"ray://{ip}:{endpoint_port(cluster, 'client', CLIENT_PORT)}" if ip else None


def _service_host(cluster: Mapping[str, Any]) -> str:
    return f"{head_service_name(cluster)}.{meta_of(cluster).get('namespace') or 'default'}.svc"


def _belongs(obj: Mapping[str, Any], name: str, namespace: str) -> bool:
    """Whether a Route/HTTPRoute/Ingress was made for RayCluster ``name`` (labels, else known names)."""
    meta = meta_of(obj)
    labels = meta.get("labels") or {}
    if labels.get(RAY_CLUSTER_LABEL) == name or labels.get(RAY_CLUSTER_NAME_LABEL) == name:
        return bool(labels.get(RAY_CLUSTER_NAMESPACE_LABEL, namespace) == namespace)
    own = str(meta.get("name") or "")
    return own in {f"ray-dashboard-{name}", f"{name}-head-route", f"{name}-head-ingress"} or own.startswith(
        f"{name}-ingress"
    )


def _join(scheme: str, host: str, path: str | None) -> str:
    path = (path or "").rstrip("/")
    if path in ("", "/"):
        path = ""
    elif not path.startswith("/"):
        path = "/" + path
    return f"{scheme}://{host}{path}"


def _route_uri(route: Mapping[str, Any]) -> str | None:
    spec = route.get("spec") or {}
    host = spec.get("host")
    if not host:
        ingress = ((route.get("status") or {}).get("ingress")) or [{}]
        host = (ingress[0] or {}).get("host")
    if not host:
        return None
    secure = spec.get("tls") is not None  # any tls block (edge, passthrough, reencrypt) means https
    return _join("https" if secure else "http", str(host), spec.get("path"))


def _httproute_uri(route: Mapping[str, Any]) -> str | None:
    spec = route.get("spec") or {}
    hosts = spec.get("hostnames") or []
    if not hosts:
        return None
    path = None
    for rule in spec.get("rules") or []:
        for match in rule.get("matches") or []:
            path = path or ((match.get("path") or {}).get("value"))
    return _join("https", str(hosts[0]), path)


def _ingress_uri(ingress: Mapping[str, Any]) -> str | None:
    spec = ingress.get("spec") or {}
    annotations = meta_of(ingress).get("annotations") or {}
    for rule in spec.get("rules") or []:
        host = rule.get("host")
        if not host:
            continue
        paths = ((rule.get("http") or {}).get("paths")) or [{}]
        tls_hosts = {h for t in spec.get("tls") or [] for h in t.get("hosts") or []}
        secure = host in tls_hosts or bool(spec.get("tls")) or "route.openshift.io/termination" in annotations
        return _join("https" if secure else "http", str(host), (paths[0] or {}).get("path"))
    for lb in ((ingress.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
        host = lb.get("hostname") or lb.get("ip")
        if host:
            return _join("https" if spec.get("tls") else "http", str(host), None)
    return None


def dashboard_from_exposure(
    name: str,
    namespace: str,
    *,
    routes: Sequence[Mapping[str, Any]] = (),
    httproutes: Sequence[Mapping[str, Any]] = (),
    ingresses: Sequence[Mapping[str, Any]] = (),
) -> str | None:
    """The dashboard URL from the Routes, HTTPRoutes and Ingresses of a namespace (pure), or None.

    Only objects made for this cluster count (labels ``ray.io/cluster``/``ray.io/cluster-name``, or
    the names KubeRay and ODH give them), in the order Route, HTTPRoute, Ingress.

    Example:
        >>> ing = {"metadata": {"name": "ws-head-ingress"},
        ...        "spec": {"tls": [{"hosts": ["ws.apps.example"]}],
        ...                 "rules": [{"host": "ws.apps.example", "http": {"paths": [{"path": "/"}]}}]}}
        >>> other = {"metadata": {"name": "other-head-ingress"}, "spec": {"rules": [{"host": "o.example"}]}}
        >>> dashboard_from_exposure("ws", "ds", ingresses=[other, ing])
        'https://ws.apps.example'
    """
    for objs, reader in ((routes, _route_uri), (httproutes, _httproute_uri), (ingresses, _ingress_uri)):
        for obj in sorted(objs, key=lambda o: str(meta_of(o).get("name") or "")):
            if _belongs(obj, name, namespace):
                uri = reader(obj)
                if uri:
                    return uri
    return None


def in_kubernetes_pod() -> bool:
    """Whether this process runs inside a Kubernetes pod (service-account env and token present).

    Example:
        >>> isinstance(in_kubernetes_pod(), bool)
        True
    """
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and _SA_TOKEN.is_file()


# --------------------------------------------------------------------------------------------------
# I/O


def _list_quietly(session: KubeSession, kind: Kind, namespace: str) -> list[dict[str, Any]]:
    if not session.served(f"{kind.group}/{kind.version}"):
        return []
    try:
        return session.list(kind, namespace=namespace)
    except (ForbiddenError, NotFoundError) as err:
        log.debug("cannot list %s in %s: %s", kind.key, namespace, err)
        return []


def exposures(session: KubeSession, *, namespace: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """The Routes, HTTPRoutes and Ingresses of ``namespace`` (the session's by default; one LIST each
    where the API is served; absent or forbidden APIs give empty lists), as keyword arguments for
    :func:`dashboard_from_exposure`.

    Example:
        >>> {kind: len(found) for kind, found in exposures(session).items()}
        {'routes': 0, 'httproutes': 0, 'ingresses': 0}
        >>> dashboard_from_exposure("ws", "default", **exposures(session, namespace="default")) is None
        True
    """
    ns = namespace or session.namespace
    return {
        "routes": _list_quietly(session, _ROUTES, ns),
        "httproutes": _list_quietly(session, _HTTPROUTES, ns),
        "ingresses": _list_quietly(session, _INGRESSES, ns),
    }


def exposed_dashboard(session: KubeSession, *, name: str, namespace: str | None = None) -> str | None:
    """The dashboard URL from a Route, HTTPRoute or Ingress for the cluster (a few LISTs), or None.

    Example:
        >>> exposed_dashboard(session, name="ws") is None
        True
    """
    ns = namespace or session.namespace
    return dashboard_from_exposure(name, ns, **exposures(session, namespace=ns))


def cluster_dashboard_uri(
    name: str,
    namespace: str,
    *,
    client: SessionLike = None,
    override: str | None = None,
) -> str:
    """The Ray dashboard URL of RayCluster ``name``.

    Order: ``override``; a Route / HTTPRoute / Ingress made for the cluster; the head Service's
    in-cluster name (``http://<name>-head-svc.<ns>.svc:8265``) when running inside a pod; the address
    the RayCluster status reports.

    Raises:
        ClusterNotFoundError: no such RayCluster (lists those that exist).
        DashboardNotFoundError: nothing exposes it and the head has no address yet (queued, starting).

    Example:
        >>> cluster_dashboard_uri("ws", "ds", override="https://ray.example/ws/")
        'https://ray.example/ws'
        >>> cluster_dashboard_uri("not-there", "default", client=api)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ClusterNotFoundError: ...
    """
    if override:
        if not override.startswith(("http://", "https://")):
            raise ConfigError("override", override, "an http(s):// URL")
        return override.rstrip("/")
    session = KubeSession.of(client, namespace=namespace)
    cluster = fetch_raycluster(session, name=name, namespace=namespace)
    exposed = exposed_dashboard(session, name=name, namespace=namespace)
    if exposed:
        return exposed
    if in_kubernetes_pod():
        return f"http://{_service_host(cluster)}:{endpoint_port(cluster, 'dashboard', DASHBOARD_PORT)}"
    found = dashboard_from_status(cluster)
    if found:
        return found
    raise DashboardNotFoundError(
        name,
        namespace,
        "no Route, HTTPRoute or Ingress exposes it and KubeRay reports no head address yet "
        "(is it queued or starting? see Cluster.status())",
    )


def cluster_uri(name: str, namespace: str, *, client: SessionLike = None) -> str:
    """The ``ray://host:port`` address for ``ray.init()`` of RayCluster ``name``.

    The head Service's in-cluster name when running inside a pod, else the address the RayCluster
    status reports (the local control plane reports the real local port).

    Raises:
        ClusterNotFoundError: no such RayCluster.
        DashboardNotFoundError: the head has no address yet (queued or starting).

    Example:
        >>> cluster_uri("not-there", "default", client=api)   # ray.init(cluster_uri(...)) once it is up
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ClusterNotFoundError: ...
    """
    cluster = fetch_raycluster(KubeSession.of(client, namespace=namespace), name=name, namespace=namespace)
    if in_kubernetes_pod():
        return f"ray://{_service_host(cluster)}:{endpoint_port(cluster, 'client', CLIENT_PORT)}"
    found = client_from_status(cluster)
    if found:
        return found
    raise DashboardNotFoundError(
        name,
        namespace,
        "KubeRay reports no head address yet (is it queued or starting? see Cluster.status())",
    )


def auth_headers(client: SessionLike = None) -> dict[str, str]:
    """``{"Authorization": "Bearer ..."}`` from the Kubernetes credentials, or ``{}`` (client certs, none).

    Keep the result out of logs and reprs: it carries the token.

    Example:
        >>> from rayqueue_sdk.kube.client import build_api_client
        >>> api = build_api_client("https://k.example", token="s3cret")
        >>> auth_headers(api) == {"Authorization": "Bearer s3cret"}
        True
    """
    cfg = KubeSession.of(client).api.configuration
    value = cfg.get_api_key_with_prefix("authorization") if cfg.api_key else None
    if not value:
        return {}
    value = str(value)
    if not value.lower().startswith("bearer "):
        value = f"Bearer {value}"
    return {"Authorization": value}


def _wants_auth(dashboard_uri: str, auth: bool | None) -> bool:
    return auth if auth is not None else dashboard_uri.startswith("https://")


def ray_job_client(
    dashboard_uri: str,
    *,
    client: SessionLike = None,
    verify: bool = True,
    ca_cert_path: str | None = None,
    auth: bool | None = None,
    headers: Mapping[str, str] | None = None,
) -> JobSubmissionClient:
    """Ray's ``JobSubmissionClient`` for ``dashboard_uri``, with the right auth header and TLS checks.

    Args:
        dashboard_uri: e.g. from :func:`cluster_dashboard_uri`.
        client: the Kubernetes credentials whose bearer token authenticates to an auth proxy.
        verify: verify the dashboard's TLS certificate (default on).
        ca_cert_path: a CA bundle for that verification (else ``$RAYQUEUE_DASHBOARD_CA_CERT_PATH``,
            else the system CAs).
        auth: send ``Authorization: Bearer <token>``. ``None`` (default): only to an ``https``
            address (a Route/Ingress/HTTPRoute behind an authenticating proxy), never in clear text.
        headers: extra headers.

    Raises:
        ConnectionFailedError: the dashboard cannot be reached.

    Example::

        jc = ray_job_client(cluster_dashboard_uri("ws", "ds"))
        jc.submit_job(entrypoint="python -c 'print(42)'")
    """
    all_headers: dict[str, str] = dict(headers or {})
    if _wants_auth(dashboard_uri, auth):
        all_headers.update(auth_headers(client))
    ca = ca_cert_path or os.environ.get("RAYQUEUE_DASHBOARD_CA_CERT_PATH")
    tls: bool | str = (ca or True) if verify else False
    from ray.job_submission import JobSubmissionClient  # lazy: ray costs seconds to import

    try:
        return JobSubmissionClient(dashboard_uri, headers=all_headers or None, verify=tls)
    except (ConnectionError, RuntimeError) as err:  # Ray raises these when the dashboard is unreachable
        text = str(err)
        for value in all_headers.values():
            text = text.replace(value, "<redacted>")
        raise ConnectionFailedError(f"cannot reach the Ray dashboard at {dashboard_uri}: {text}") from None


def dashboard_ready(
    uri: str,
    timeout: float = 5.0,
    *,
    headers: Mapping[str, str] | None = None,
    verify: bool | str = True,
) -> bool:
    """Whether the Ray dashboard at ``uri`` answers (``GET /api/version`` → 2xx), within ``timeout`` s.

    Example:
        >>> dashboard_ready("http://127.0.0.1:9", timeout=0.5)
        False
    """
    import requests  # lazy: requests (comes with kubernetes) costs ~0.1 s to import

    try:
        response = requests.get(
            uri.rstrip("/") + "/api/version", headers=dict(headers or {}), timeout=timeout, verify=verify
        )
    except requests.RequestException as err:
        log.debug("dashboard %s not answering: %s", uri, type(err).__name__)
        return False
    return 200 <= response.status_code < 300
