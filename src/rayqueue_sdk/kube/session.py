"""One typed session with a Kubernetes API server: the client, the default namespace and the discovery
cache, and every read and write the SDK makes, by :class:`~rayqueue_sdk.kube.kinds.Kind`, over one REST
path.

A :class:`KubeSession` is what the layers above the kube package hold instead of an ``ApiClient``:
``Cluster``, ``RayJob``, the read path, the admission readers, scaling and the CLI. Its verbs mirror
``kubectl``'s and take ``name``/``namespace`` by keyword only, so a swapped pair cannot pass silently:

* :meth:`~KubeSession.get`, :meth:`~KubeSession.list`, :meth:`~KubeSession.create`,
  :meth:`~KubeSession.apply` (server-side), :meth:`~KubeSession.patch` (merge),
  :meth:`~KubeSession.delete`;
* :meth:`~KubeSession.get_path` / :meth:`~KubeSession.get_text` for paths no kind covers (discovery,
  pod logs, the visibility API), :meth:`~KubeSession.stream` for a streamed answer (a watch:
  :mod:`~rayqueue_sdk.kube.watch`);
* :meth:`~KubeSession.kueue_kind`: a Kueue kind at the version the server serves (``v1beta2``, else
  ``v1beta1``; discovered once per client). Kueue objects are normalised to ``v1beta2`` field names on
  every read, so nothing above reads ``v1beta1`` names.

Every request goes through :meth:`KubeSession.request` and :func:`rayqueue_sdk.kube.retry.call`: bounded
retries, typed errors naming the verb, the resource and the object. The client and the namespace are
resolved lazily, on first use (the login, else kubeconfig, else in-cluster credentials).

Example:
    >>> from rayqueue_sdk.kube.connection import build_api_client
    >>> session = KubeSession(build_api_client("https://k8s.example:6443", namespace="ds-team"))
    >>> session.namespace, session.server
    ('ds-team', 'https://k8s.example:6443')
    >>> from rayqueue_sdk.kube.kinds import RAYCLUSTERS
    >>> session.get(RAYCLUSTERS, "ws")   # name and namespace are keyword-only
    Traceback (most recent call last):
    ...
    TypeError: KubeSession.get() takes 2 positional arguments but 3 were given
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from rayqueue_sdk.errors import (
    AlreadyExistsError,
    ConnectionFailedError,
    ForbiddenError,
    NotFoundError,
    OutcomeUnknownError,
    RayQueueError,
)
from rayqueue_sdk.kube.client import default_namespace, get_client
from rayqueue_sdk.kube.connection import ClientInfo, ClientSource, ClientState, state_of
from rayqueue_sdk.kube.kinds import KUEUE_GROUP, Kind
from rayqueue_sdk.kube.normalize import normalize_kueue
from rayqueue_sdk.kube.rest import open_stream, send
from rayqueue_sdk.kube.retry import (
    DEFAULT_POLICY,
    DEFAULT_REQUEST_TIMEOUT,
    RetryPolicy,
    answer_lost,
    call,
)
from rayqueue_sdk.manifests.meta import meta_of, stored_as_sent

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

__all__ = ["FIELD_MANAGER", "KubeSession", "ObjectList", "Objects", "SessionLike"]

log = logging.getLogger(__name__)

#: The field manager of the SDK's server-side applies.
FIELD_MANAGER = "rayqueue-sdk"
_KUEUE_VERSIONS = ("v1beta2", "v1beta1")
_MERGE_PATCH = "application/merge-patch+json"
_APPLY_PATCH = "application/apply-patch+yaml"
T = TypeVar("T")
#: Objects as the API returns them (a name of its own: inside the session ``list`` is a verb).
Objects = list[dict[str, Any]]


class ObjectList(list[dict[str, Any]]):
    """The objects a LIST returned, and the list's ``resourceVersion`` (where a watch should start).

    Example:
        >>> found = ObjectList([{"metadata": {"name": "a"}}])
        >>> found.resource_version = "42"
        >>> len(found), found.resource_version
        (1, '42')
    """

    resource_version: str | None = None


class KubeSession:
    """A connection to one API server and a default namespace; every SDK request goes through one.

    Args:
        client: an ``ApiClient``, an authentication object (``TokenAuthentication``...), or ``None``
            for the current login (else detected credentials), resolved on first use.
        namespace: the default namespace, else the one the credentials imply, else ``"default"``.

    Example:
        >>> from rayqueue_sdk.kube.connection import build_api_client
        >>> api = build_api_client("https://k8s.example:6443")
        >>> s = KubeSession(api, namespace="ds")
        >>> s.api is api, s.namespace, s.in_namespace("other").namespace, s.in_namespace("other").api is api
        (True, 'ds', 'other', True)
        >>> KubeSession.of(s) is s
        True
    """

    __slots__ = ("_client", "_api", "_namespace", "_lock")

    def __init__(
        self, client: ApiClient | ClientSource | None = None, *, namespace: str | None = None
    ) -> None:
        self._client = client
        self._api: ApiClient | None = None
        self._namespace = namespace
        self._lock = threading.Lock()

    @classmethod
    def of(cls, target: SessionLike = None, *, namespace: str | None = None) -> KubeSession:
        """``target`` if it is a session (in ``namespace`` when given), else a new session over it.

        Example:
            >>> KubeSession.of(None, namespace="ds").namespace
            'ds'
        """
        if isinstance(target, KubeSession):
            return (
                target
                if namespace is None or namespace == target._namespace
                else target.in_namespace(namespace)
            )
        return cls(target, namespace=namespace)

    def in_namespace(self, namespace: str) -> KubeSession:
        """The same connection (and caches) with another default namespace."""
        other = KubeSession(self._client, namespace=namespace)
        other._api = self._api
        return other

    def __repr__(self) -> str:
        where = self._api.configuration.host if self._api is not None else "not connected yet"
        return f"KubeSession({where}, namespace={self._namespace!r})"

    # -- the connection -----------------------------------------------------------------------------
    @property
    def api(self) -> ApiClient:
        """The ``kubernetes`` ``ApiClient`` (resolved on first use)."""
        if self._api is None:
            with self._lock:
                if self._api is None:
                    self._api = get_client(self._client)
        return self._api

    @property
    def namespace(self) -> str:
        """The default namespace: the one given, else the credentials', else ``"default"``."""
        if self._namespace is None:
            self._namespace = default_namespace(self.api)
        return self._namespace

    @property
    def server(self) -> str:
        """The API server URL."""
        return self.state.info.server

    @property
    def state(self) -> ClientState:
        """What the SDK keeps for this client (its info and cache), shared by every session over it."""
        return state_of(self.api)

    @property
    def info(self) -> ClientInfo:
        """What the SDK knows of the client (never its token)."""
        return self.state.info

    @property
    def cache(self) -> dict[str, Any]:
        """Facts cached for this client (discovery), shared by every session over it."""
        return self.state.cache

    def remembered(self, key: str, ttl: float, compute: Callable[[], T]) -> T:
        """``compute()``, remembered for ``ttl`` seconds under ``key`` for this client."""
        return self.state.remembered(key, ttl, compute)

    # -- the one REST path --------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        verb: str,
        resource: str,
        namespace: str | None = None,
        name: str | None = None,
        body: Any = None,
        query: Mapping[str, Any] | None = None,
        content_type: str = "application/json",
        accept: str = "application/json",
        idempotent: bool = True,
        policy: RetryPolicy = DEFAULT_POLICY,
        deadline: float | None = None,
        request_timeout: tuple[float, float] | float = DEFAULT_REQUEST_TIMEOUT,
        failures: list[BaseException] | None = None,
    ) -> bytes:
        """Send one request (retried within ``policy``; typed errors naming ``verb`` and ``resource``).

        ``idempotent=False`` (a create) is not repeated after an unclear failure. ``failures``, when
        given, collects every failed attempt (so a write can tell whether an answer was lost).
        """
        api = self.api
        return call(
            send,
            api,
            method,
            path,
            body=body,
            query=query,
            content_type=content_type,
            accept=accept,
            timeout=request_timeout,
            verb=verb,
            resource=resource,
            namespace=namespace,
            name=name,
            server=str(api.configuration.host),
            idempotent=idempotent,
            policy=policy,
            deadline=deadline,
            request_timeout=None,
            failures=failures,
        )

    def stream(
        self,
        path: str,
        *,
        verb: str,
        resource: str,
        namespace: str | None = None,
        name: str | None = None,
        query: Mapping[str, Any] | None = None,
        deadline: float | None = None,
        request_timeout: tuple[float, float] | float = DEFAULT_REQUEST_TIMEOUT,
    ) -> Any:
        """GET a path whose answer is a stream (a watch) over the same path as :meth:`request`: the
        opening is retried within the default policy and its failures are typed errors; the answer is
        the ``urllib3`` response, its body unread (see :func:`~rayqueue_sdk.kube.rest.open_stream`)."""
        api = self.api
        return call(
            open_stream,
            api,
            path,
            query=query,
            timeout=request_timeout,
            verb=verb,
            resource=resource,
            namespace=namespace,
            name=name,
            server=str(api.configuration.host),
            deadline=deadline,
            request_timeout=None,
        )

    def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.request(method, path, **kwargs) or b"{}")
        return doc

    def get_path(
        self,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        policy: RetryPolicy = DEFAULT_POLICY,
        deadline: float | None = None,
        request_timeout: tuple[float, float] | float = DEFAULT_REQUEST_TIMEOUT,
    ) -> dict[str, Any]:
        """GET an API path no :class:`Kind` covers (discovery, the visibility API), decoded JSON."""
        return self._json(
            "GET",
            path,
            verb="get",
            resource=path,
            query=query,
            policy=policy,
            deadline=deadline,
            request_timeout=request_timeout,
        )

    def get_text(
        self,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        policy: RetryPolicy = DEFAULT_POLICY,
        request_timeout: tuple[float, float] | float = DEFAULT_REQUEST_TIMEOUT,
    ) -> str:
        """GET an API path whose answer is text (``pods/{name}/log``), decoded as UTF-8."""
        body = self.request(
            "GET",
            path,
            verb="get",
            resource=path,
            query=query,
            accept="text/plain, */*",
            policy=policy,
            request_timeout=request_timeout,
        )
        return body.decode("utf-8", errors="replace")

    # -- by kind ------------------------------------------------------------------------------------
    def _where(self, kind: Kind, namespace: str | None) -> str | None:
        return (namespace or self.namespace) if kind.namespaced else None

    @staticmethod
    def _normalized(kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
        return normalize_kueue(obj, kind.version, kind.plural) if kind.group == KUEUE_GROUP else obj

    def get(
        self, kind: Kind, *, name: str, namespace: str | None = None, deadline: float | None = None
    ) -> dict[str, Any]:
        """GET one object (``namespace`` defaults to the session's).

        Example:
            >>> from rayqueue_sdk.kube.kinds import kind_of
            >>> cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sess-get"},
            ...       "data": {"a": "1"}}
            >>> _ = session.create(kind_of(cm), cm)
            >>> session.get(kind_of(cm), name="sess-get")["data"]
            {'a': '1'}

        Raises:
            NotFoundError, ForbiddenError, AuthenticationError, ApiError, ConnectionFailedError.
        """
        return self._object(
            "GET", kind, "get", name=name, namespace=self._where(kind, namespace), deadline=deadline
        )

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
        deadline: float | None = None,
    ) -> ObjectList:
        """LIST objects, all pages (``namespace`` defaults to the session's; ``all_namespaces=True``
        lists across every namespace the identity may list).

        Example:
            >>> from rayqueue_sdk.kube.kinds import kind_of
            >>> cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sess-list",
            ...       "labels": {"sess": "list"}}}
            >>> _ = session.create(kind_of(cm), cm)
            >>> [o["metadata"]["name"] for o in session.list(kind_of(cm), label_selector="sess=list")]
            ['sess-list']
            >>> len(session.list(kind_of(cm), all_namespaces=True, label_selector="sess=list"))
            1
        """
        ns = None if all_namespaces else self._where(kind, namespace)
        query: dict[str, Any] = {"limit": page_size}
        if label_selector:
            query["labelSelector"] = label_selector
        if field_selector:
            query["fieldSelector"] = field_selector
        found = ObjectList()
        while True:
            page = self._json(
                "GET",
                kind.path(ns),
                verb="list",
                resource=kind.key,
                namespace=ns,
                query=query,
                deadline=deadline,
            )
            meta = meta_of(page)
            found.resource_version = meta.get("resourceVersion") or found.resource_version
            found.extend(self._normalized(kind, item) for item in page.get("items") or [])
            token = meta.get("continue")
            if not token:
                return found
            query["continue"] = token

    def list_at(self, kind: Kind, **options: Any) -> tuple[ObjectList, str | None]:
        """:meth:`list` (same keywords) and the list's ``resourceVersion``, where a watch should start."""
        found = self.list(kind, **options)
        return found, found.resource_version

    def create(self, kind: Kind, obj: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``obj`` into its namespace (the session's when it names none); an existing one is
        :class:`~rayqueue_sdk.errors.AlreadyExistsError`. Not retried after an unclear failure, since
        the first attempt may have succeeded.

        Example:
            >>> from rayqueue_sdk.kube.kinds import kind_of
            >>> sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sess-sa"}}
            >>> session.create(kind_of(sa), sa)["metadata"]["namespace"]
            'default'
            >>> session.create(kind_of(sa), sa)
            Traceback (most recent call last):
            ...
            rayqueue_sdk.errors.AlreadyExistsError: ...
        """
        name, ns = self._named(kind, obj)
        failures: list[BaseException] = []
        try:
            return self._object(
                "POST",
                kind,
                "create",
                name=name,
                namespace=ns,
                body=dict(obj),
                idempotent=False,
                failures=failures,
            )
        except ConnectionFailedError as err:
            if not name or not _lost(failures) or isinstance(err, OutcomeUnknownError):
                raise
            return self._settle_create(kind, obj, name=name, namespace=ns, lost=err)

    def _settle_create(
        self,
        kind: Kind,
        obj: Mapping[str, Any],
        *,
        name: str,
        namespace: str | None,
        lost: ConnectionFailedError,
    ) -> dict[str, Any]:
        """A create whose answer was lost, settled by reading the object back: there with what was sent →
        it is the one this create made; absent → the create was not made, so it is sent again (once; if
        that one meets the first, landed late, it is read back again)."""
        found = self._read_back(kind, name, namespace, lost)
        if found is None:
            log.info(
                "create %s %s: the answer was lost and it is not there: creating it again", kind.key, name
            )
            try:
                return self._object(
                    "POST", kind, "create", name=name, namespace=namespace, body=dict(obj), idempotent=False
                )
            except ConnectionFailedError as err:
                raise OutcomeUnknownError("create", kind.key, namespace, name, str(err)) from err
            except AlreadyExistsError:
                found = self._read_back(kind, name, namespace, lost)
                if found is None:
                    raise
        if stored_as_sent(found, obj):
            log.info("create %s %s: the answer was lost; read back, it is there as sent", kind.key, name)
            return found
        raise OutcomeUnknownError(
            "create",
            kind.key,
            namespace,
            name,
            "it exists now, but not as this call sent it: another client may have made or changed it",
            "read it before writing over it",
        ) from lost

    def _read_back(
        self, kind: Kind, name: str, namespace: str | None, lost: ConnectionFailedError
    ) -> dict[str, Any] | None:
        """The object after a lost answer, ``None`` if it is not there; OutcomeUnknownError if unreadable."""
        try:
            return self.get(kind, name=name, namespace=namespace)
        except NotFoundError:
            return None
        except RayQueueError as err:
            raise OutcomeUnknownError(
                "create", kind.key, namespace, name, f"{lost}; reading it back failed too: {err}"
            ) from lost

    def apply(
        self, kind: Kind, obj: Mapping[str, Any], *, field_manager: str = FIELD_MANAGER, force: bool = True
    ) -> dict[str, Any]:
        """Server-side apply ``obj`` (create or update; idempotent, so retried like a read).

        Example:
            >>> from rayqueue_sdk.kube.kinds import RAYCLUSTERS
            >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
            ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}
            >>> manifest = {"apiVersion": "ray.io/v1", "kind": "RayCluster",
            ...             "metadata": {"name": "sess-apply"}, "spec": {"headGroupSpec": head}}
            >>> stored = session.apply(RAYCLUSTERS, manifest)
            >>> session.apply(RAYCLUSTERS, manifest)["metadata"]["uid"] == stored["metadata"]["uid"]
            True
        """
        name, ns = self._named(kind, obj)
        query = {"fieldManager": field_manager, "force": "true" if force else "false"}
        return self._object(
            "PATCH",
            kind,
            "patch",
            name=name,
            namespace=ns,
            body=dict(obj),
            query=query,
            content_type=_APPLY_PATCH,
        )

    def patch(
        self,
        kind: Kind,
        *,
        name: str,
        patch: Mapping[str, Any],
        namespace: str | None = None,
        status: bool = False,
    ) -> dict[str, Any]:
        """Merge-patch an object (or its ``status`` subresource).

        Example:
            >>> from rayqueue_sdk.kube.kinds import kind_of
            >>> cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sess-patch"}}
            >>> _ = session.create(kind_of(cm), cm)
            >>> patch = {"metadata": {"annotations": {"a": "b"}}}
            >>> session.patch(kind_of(cm), name="sess-patch", patch=patch)["metadata"]["annotations"]
            {'a': 'b'}
        """
        return self._object(
            "PATCH",
            kind,
            "patch",
            name=name,
            namespace=self._where(kind, namespace),
            subresource="/status" if status else "",
            body=dict(patch),
            content_type=_MERGE_PATCH,
        )

    def delete(
        self, kind: Kind, *, name: str, namespace: str | None = None, propagation: str = "Foreground"
    ) -> bool:
        """DELETE an object; ``False`` if it was already gone (so repeating a delete is safe).

        Example:
            >>> from rayqueue_sdk.kube.kinds import kind_of
            >>> cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sess-delete"}}
            >>> configmaps = kind_of(cm)
            >>> _ = session.create(configmaps, cm)
            >>> session.delete(configmaps, name="sess-delete"), session.delete(configmaps, name="sess-delete")
            (True, False)
        """
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
        failures: list[BaseException] = []
        try:
            self._object(
                "DELETE",
                kind,
                "delete",
                name=name,
                namespace=self._where(kind, namespace),
                body=body,
                failures=failures,
            )
        except NotFoundError:
            # After an attempt whose answer was lost, the retry's 404 is the read-back: that attempt
            # deleted it.
            return _lost(failures)
        return True

    def _object(
        self,
        method: str,
        kind: Kind,
        verb: str,
        *,
        name: str,
        namespace: str | None,
        subresource: str = "",
        **options: Any,
    ) -> dict[str, Any]:
        """One object's request: its path (the collection's for a POST), the error context, and the
        answer normalised (Kueue objects to ``v1beta2`` names)."""
        path = kind.path(namespace) if method == "POST" else kind.path(namespace, name) + subresource
        context = {"verb": verb, "resource": kind.key, "namespace": namespace, "name": name}
        if method == "GET":
            return self._normalized(kind, self._json(method, path, **context, **options))
        given: list[BaseException] | None = options.pop("failures", None)
        failures: list[BaseException] = [] if given is None else given
        try:
            return self._normalized(kind, self._json(method, path, failures=failures, **context, **options))
        except ConnectionFailedError as err:
            if method == "POST" or not _lost(failures):
                raise  # a create settles by itself (KubeSession.create); nothing was lost
            # a write retried after a lost answer, until the server was out of reach: it may be done
            raise OutcomeUnknownError(verb, kind.key, namespace, name, str(err)) from err

    def _named(self, kind: Kind, obj: Mapping[str, Any]) -> tuple[str, str | None]:
        meta = meta_of(obj)
        return str(meta.get("name") or ""), self._where(kind, meta.get("namespace"))

    # -- discovery ----------------------------------------------------------------------------------
    def served(self, group_version: str, *, policy: RetryPolicy = DEFAULT_POLICY) -> bool:
        """Whether ``/apis/<group_version>`` is served (discovery; cached for this client).

        One ``GET /apis`` (the group list, as ``kubectl`` reads it) answers for every group of the session;
        where that list cannot be read, the group's own path is asked. A forbidden discovery counts as not
        served."""
        key = f"served:{group_version}"
        cache = self.cache
        if key not in cache:
            listed = self._group_versions(policy)
            if listed is not None:
                cache[key] = group_version in listed
            else:
                try:
                    self.get_path(f"/apis/{group_version}", policy=policy)
                    cache[key] = True
                except (NotFoundError, ForbiddenError):
                    cache[key] = False
        return bool(cache[key])

    def _group_versions(self, policy: RetryPolicy) -> frozenset[str] | None:
        """Every ``group/version`` the server lists at ``/apis`` (read once per client), or None when the
        list cannot be read (forbidden, absent)."""
        cache = self.cache
        if "apis" not in cache:
            try:
                doc = self.get_path("/apis", policy=policy)
            except (NotFoundError, ForbiddenError):
                doc = None
            cache["apis"] = (
                None
                if doc is None
                else frozenset(
                    str(v.get("groupVersion"))
                    for group in doc.get("groups") or []
                    for v in group.get("versions") or []
                )
            )
        found: frozenset[str] | None = cache["apis"]
        return found

    def resources(self, group_version: str) -> frozenset[str]:
        """The resource names (``workloads``, ``workloads/scale``...) served at ``/apis/<group_version>``:
        one read per client, cached; empty where the group is not served or its discovery is forbidden.

        Example:
            >>> "rayclusters" in session.resources("ray.io/v1")
            True
        """
        key = f"resources:{group_version}"
        cache = self.cache
        if key not in cache:
            names: frozenset[str] = frozenset()
            if self.served(group_version):
                try:
                    doc = self.get_path(f"/apis/{group_version}")
                    names = frozenset(str(r.get("name")) for r in doc.get("resources") or [])
                except (NotFoundError, ForbiddenError):
                    pass
            cache[key] = names
        found: frozenset[str] = cache[key]
        return found

    def kueue_version(self) -> str:
        """The Kueue API version to use: ``v1beta2`` if served, else ``v1beta1`` (discovered once per
        client). When neither answers (Kueue absent, discovery forbidden) the answer is ``v1beta2`` and
        later calls say what is missing."""
        for version in _KUEUE_VERSIONS:
            if self.served(f"{KUEUE_GROUP}/{version}"):
                return version
        return _KUEUE_VERSIONS[0]

    def kueue_kind(self, plural: str, *, namespaced: bool = True) -> Kind:
        """The :class:`Kind` of a Kueue resource at the version the server serves.

        Example:
            >>> session.kueue_kind("workloads").version   # 'v1beta1' on a Kueue older than 0.15
            'v1beta2'
        """
        return Kind(KUEUE_GROUP, self.kueue_version(), plural, namespaced)


def _lost(failures: list[BaseException]) -> bool:
    return any(answer_lost(exc) for exc in failures)


#: What the SDK's entry points accept where a session is meant: a session, an ``ApiClient``, an
#: authentication object, or ``None`` (the current login).
SessionLike: TypeAlias = "KubeSession | ApiClient | ClientSource | None"
