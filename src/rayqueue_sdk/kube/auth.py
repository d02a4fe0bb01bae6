"""Logging in to a Kubernetes API server: a token, a kubeconfig, or the in-cluster service account.

``login()`` builds a client, checks the credentials once (bounded: an unreachable server fails in
seconds, not minutes), and makes the client current for the SDK calls that follow. Tokens are kept
in a wrapper whose ``repr`` is ``<redacted>``; they never reach a repr, a log line or an error.

Example:
    >>> auth = TokenAuthentication(token="sha256~abc", server="https://api.example:6443")
    >>> print(repr(auth).replace(", ca", ",\\n    ca"))
    TokenAuthentication(server='https://api.example:6443', token=<redacted>, skip_tls=False,
        ca_cert_path=None)
"""

from __future__ import annotations

import logging
import os
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from rayqueue_sdk.errors import (
    ApiError,
    AuthenticationError,
    ConfigError,
    ConnectionFailedError,
)
from rayqueue_sdk.kube.connection import (
    ClientInfo,
    build_api_client,
    clear_current_client,
    current_client,
    register,
    set_current_client,
)
from rayqueue_sdk.kube.rest import get_json
from rayqueue_sdk.kube.retry import RetryPolicy

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

__all__ = [
    "Authentication",
    "InClusterAuthentication",
    "InsecureTLSWarning",
    "KubeConfigFileAuthentication",
    "TokenAuthentication",
    "ambient_namespace",
    "check_credentials",
    "check_scheme",
    "check_token",
    "detect",
    "parse_flag",
]

log = logging.getLogger(__name__)

#: (connect, read) seconds for the one credential check at login.
_LOGIN_TIMEOUT: tuple[float, float] = (3.0, 5.0)
_SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
_CA_ENV = ("RAYQUEUE_CA_CERT_PATH", "CF_SDK_CA_CERT_PATH")
_TRUE = frozenset({"true", "yes", "y", "1", "on"})
_FALSE = frozenset({"false", "no", "n", "0", "off", ""})


def parse_flag(field: str, value: object) -> bool:
    """A yes/no setting: a real ``bool``, or one of the usual strings (``"true"``/``"false"``,
    ``"yes"``/``"no"``, ``"1"``/``"0"``, ``"on"``/``"off"``, any case), e.g. from an environment
    variable. Anything else raises :class:`ConfigError` naming ``field``: ``bool("no")`` is ``True``,
    which must not switch TLS verification off.

    Example:
        >>> parse_flag("skip_tls", "No"), parse_flag("skip_tls", True)
        (False, True)
        >>> try:
        ...     parse_flag("skip_tls", "maybe")
        ... except ConfigError as err:
        ...     print(err.field, "|", err.allowed)
        skip_tls | True or False (or 'true'/'false', 'yes'/'no', '1'/'0', 'on'/'off')
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ConfigError(field, value, "True or False (or 'true'/'false', 'yes'/'no', '1'/'0', 'on'/'off')")


def check_token(field: str, token: object) -> str:
    """The bearer ``token`` without surrounding whitespace, if it can travel in an HTTP header.

    A token is visible ASCII only (RFC 6750's token characters are a subset): a newline, a space or
    a control character inside it would be refused by the HTTP library with the header, token
    included, in its error text. The :class:`ConfigError` raised here never shows the value.

    Example:
        >>> check_token("token", "  sha256~abc ")
        'sha256~abc'
        >>> try:
        ...     check_token("token", "abc" + chr(10) + "Host: evil")
        ... except ConfigError as err:
        ...     print(err.problem, "|", "evil" in str(err))
        contains a character that cannot be sent in an HTTP header | False
    """
    allowed = "a non-empty bearer token of visible ASCII characters (no spaces, newlines or controls)"
    if not isinstance(token, str) or not token.strip():
        raise ConfigError(field, "<redacted>" if token else token, allowed)
    stripped = token.strip()
    if not all("!" <= ch <= "~" for ch in stripped):
        raise ConfigError(
            field, "<redacted>", allowed, problem="contains a character that cannot be sent in an HTTP header"
        )
    return stripped


def check_scheme(server: str, *, sends_token: bool, allow_http: bool) -> None:
    """Refuse to send a bearer token over plain ``http://`` unless ``allow_http=True`` was given.

    Example:
        >>> check_scheme("http://127.0.0.1:8001", sends_token=False, allow_http=False)  # kubectl proxy
        >>> try:
        ...     check_scheme("http://api.example:6443", sends_token=True, allow_http=False)
        ... except ConfigError as err:
        ...     print(err.field, "|", err.problem)
        server | plain HTTP would send the token in clear
    """
    if sends_token and server.lower().startswith("http://") and not allow_http:
        raise ConfigError(
            "server",
            server,
            "an https:// URL, or allow_http=True for a trusted local server",
            problem="plain HTTP would send the token in clear",
        )


class InsecureTLSWarning(UserWarning):
    """Emitted when TLS verification is switched off with ``skip_tls=True``."""


class _Secret:
    """Holds a credential; its repr and str never show it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "<redacted>"

    __str__ = __repr__

    def __reduce__(self) -> tuple[object, ...]:  # never pickled with the value
        raise TypeError("credentials cannot be pickled")


def check_credentials(api: ApiClient, *, timeout: tuple[float, float] = _LOGIN_TIMEOUT) -> None:
    """Check once, with a bounded timeout, that the server is reachable and accepts the credentials.

    Any answer other than 401 proves the credentials were accepted (a 403 or 404 on the discovery
    path only says what the identity may see).

    Raises:
        AuthenticationError: 401, the credentials were rejected.
        TLSVerificationError: the server's certificate is not trusted.
        ConnectionFailedError: the server cannot be reached in time.

    Example:
        >>> from rayqueue_sdk.kube.connection import build_api_client
        >>> api = build_api_client("https://127.0.0.1:1", token="t")  # nothing listens on port 1
        >>> try:
        ...     check_credentials(api, timeout=(1.0, 1.0))
        ... except ConnectionFailedError as err:
        ...     print("unreachable" in str(err))
        True
    """
    policy = RetryPolicy(attempts=2, base_delay=0.2, budget=sum(timeout) + 1.0)
    try:
        get_json(api, "/apis", request_timeout=timeout, policy=policy)
    except (AuthenticationError, ConnectionFailedError):
        raise
    except ApiError as err:
        if err.status >= 500 or err.status == 0:
            raise
        log.debug(
            "credential check: %s answered %s on /apis; credentials accepted",
            api.configuration.host,
            err.status,
        )


class Authentication:
    """Base class of the login methods: ``login()``, ``logout()`` and ``api_client()``.

    Example:
        >>> issubclass(TokenAuthentication, Authentication)
        True
    """

    _api: ApiClient | None = None

    def _build(self) -> ApiClient:  # pragma: no cover - abstract
        raise NotImplementedError

    def _describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def login(self) -> str:
        """Build the client, check the credentials once, make it the SDK's current client.

        Returns a one-line message (``"Logged into <server>"``), also logged at INFO.
        """
        api = self._connect()
        set_current_client(api)
        message = f"Logged into {api.configuration.host} ({self._describe()})"
        log.info("%s", message)
        return message

    def _connect(self) -> ApiClient:
        """Build and check a client for this login (without making it current)."""
        api = self._build()
        try:
            check_credentials(api)
        except Exception:
            api.close()
            raise
        old = self._api
        self._api = api
        if old is not None and old is not api:
            clear_current_client(old)
            old.close()
        return api

    def logout(self) -> str:
        """Forget this login: the SDK no longer uses its client by default.

        Example:
            >>> TokenAuthentication(token="t", server="https://k.example").logout()
            'Not logged in to https://k.example'
        """
        api, self._api = self._api, None
        server = getattr(self, "server", None)
        if api is None:
            return f"Not logged in to {server or 'a server'}"
        server = api.configuration.host
        clear_current_client(api)
        api.close()
        log.info("logged out of %s", server)
        return f"Logged out of {server}"

    def api_client(self) -> ApiClient:
        """This login's client, for passing as ``client=`` to one object or call.

        Connects (and checks the credentials) on first use without making the client current:
        only :meth:`login` changes what the rest of the process uses.
        """
        if self._api is None:
            return self._connect()
        return self._api


class TokenAuthentication(Authentication):
    """Log in with a bearer token (e.g. ``oc whoami -t`` or a service-account token).

    Args:
        token: the bearer token. Never shown in a repr, a log line or an error.
        server: the API server URL, e.g. ``https://api.example:6443``.
        skip_tls: do not verify the server's certificate (insecure; warns). A ``bool``, or
            ``"true"``/``"false"``-style strings parsed as such (``"no"`` is ``False``).
        ca_cert_path: a CA bundle that signed the server's certificate. Defaults to
            ``$RAYQUEUE_CA_CERT_PATH`` (or the peer's ``$CF_SDK_CA_CERT_PATH``), else the system CAs.
        allow_http: permit an ``http://`` server, which would see the token in clear (refused
            otherwise, before anything is sent).

    Example:
        >>> auth = TokenAuthentication(token="sha256~abc", server="https://api.example:6443")
        >>> "sha256~abc" in repr(auth) or "sha256~abc" in str(vars(auth))
        False

        Against a real API server (not run here)::

            auth.login()   # checks the token once, then later SDK calls use it
    """

    def __init__(
        self,
        token: str,
        server: str,
        skip_tls: bool | str = False,
        ca_cert_path: str | None = None,
        *,
        allow_http: bool = False,
    ) -> None:
        self._token = _Secret(check_token("token", token))
        if not isinstance(server, str) or not server.lower().startswith(("https://", "http://")):
            raise ConfigError("server", server, "an URL such as 'https://api.example:6443'")
        self.allow_http = parse_flag("allow_http", allow_http)
        check_scheme(server, sends_token=True, allow_http=self.allow_http)
        self.server = server.rstrip("/")
        self.skip_tls = parse_flag("skip_tls", skip_tls)
        self.ca_cert_path = ca_cert_path
        self._api = None

    def __repr__(self) -> str:
        return (
            f"TokenAuthentication(server={self.server!r}, token=<redacted>, skip_tls={self.skip_tls}, "
            f"ca_cert_path={self.ca_cert_path!r})"
        )

    def _ca(self) -> str | None:
        if self.ca_cert_path:
            if not Path(self.ca_cert_path).is_file():
                raise ConfigError(
                    "ca_cert_path", self.ca_cert_path, "the path of a PEM CA bundle that exists"
                )
            return self.ca_cert_path
        for var in _CA_ENV:
            value = os.environ.get(var)
            if value and Path(value).is_file():
                return value
        return None

    def _build(self) -> ApiClient:
        if self.skip_tls:
            text = (
                f"skip_tls=True: the certificate of {self.server} is not verified; anyone on the "
                "network path could impersonate the server and read your token. Prefer ca_cert_path."
            )
            warnings.warn(text, InsecureTLSWarning, stacklevel=3)
            log.warning("%s", text)
        return build_api_client(
            self.server,
            token=self._token.reveal(),
            ca_cert_path=None if self.skip_tls else self._ca(),
            verify=not self.skip_tls,
            source="token",
        )

    def _describe(self) -> str:
        return "token" + (", TLS verification off" if self.skip_tls else "")


class KubeConfigFileAuthentication(Authentication):
    """Log in with a kubeconfig file and context (``$KUBECONFIG`` or ``~/.kube/config`` by default).

    Args:
        kube_config_path: the kubeconfig file; default ``$KUBECONFIG`` (first entry), else ``~/.kube/config``.
        context: the context to use; default the file's ``current-context``.
        allow_http: permit a context whose ``http://`` server would get its token in clear.

    Example:
        >>> auth = KubeConfigFileAuthentication("/tmp/kubeconfig", context="local")
        >>> auth
        KubeConfigFileAuthentication(kube_config_path='/tmp/kubeconfig', context='local')
        >>> KubeConfigFileAuthentication("/nonexistent/kubeconfig").login()
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: kube_config_path: file not found (got '/nonexistent/kubeconfig'); ...

        With a kubeconfig that exists (not run here)::

            auth.login()
    """

    def __init__(
        self,
        kube_config_path: str | os.PathLike[str] | None = None,
        context: str | None = None,
        *,
        allow_http: bool = False,
    ) -> None:
        self.kube_config_path = str(kube_config_path) if kube_config_path else None
        self.context = context
        self.allow_http = parse_flag("allow_http", allow_http)
        self._api = None

    def __repr__(self) -> str:
        return (
            f"KubeConfigFileAuthentication(kube_config_path={self.kube_config_path!r}, "
            f"context={self.context!r})"
        )

    def _path(self) -> str:
        path = self.kube_config_path or _default_kubeconfig()
        if not path or not Path(path).is_file():
            raise ConfigError(
                "kube_config_path",
                path,
                "an existing kubeconfig file (or set $KUBECONFIG)",
                problem="file not found",
            )
        return path

    def _build(self) -> ApiClient:
        from kubernetes import client as k8s  # lazy: kubernetes is slow to import
        from kubernetes import config as k8s_config  # lazy: as above

        path = self._path()
        try:
            contexts, active = k8s_config.list_kube_config_contexts(config_file=path)
        except k8s_config.ConfigException as exc:
            raise ConfigError(
                "kube_config_path", path, "a valid kubeconfig file", problem=_safe(exc)
            ) from None
        names = [c.get("name") for c in contexts or []]
        chosen = self.context or (active or {}).get("name")
        if chosen not in names:
            raise ConfigError("context", chosen, f"one of {names}")
        namespace = next(
            (((c.get("context") or {}).get("namespace")) for c in contexts if c.get("name") == chosen), None
        )
        cfg = k8s.Configuration()
        try:
            k8s_config.load_kube_config(
                config_file=path, context=chosen, client_configuration=cfg, persist_config=False
            )
        except k8s_config.ConfigException as exc:
            raise ConfigError(
                "context", chosen, "a context with a usable cluster and user", problem=_safe(exc)
            ) from None
        keys = cfg.api_key or {}
        bearer = keys.get("BearerToken") or keys.get("authorization")  # the loader's key, or ours
        if bearer:
            check_token(f"the token of context {chosen!r}", bearer.removeprefix("Bearer "))
        check_scheme(str(cfg.host), sends_token=bool(bearer), allow_http=self.allow_http)
        cfg.retries = False  # before the ApiClient: its urllib3 pool reads it once, when it is made
        api = k8s.ApiClient(configuration=cfg)
        return register(
            api,
            ClientInfo(
                server=str(cfg.host), source="kubeconfig", namespace=namespace, verify_tls=cfg.verify_ssl
            ),
        )

    def _describe(self) -> str:
        return f"kubeconfig {self.kube_config_path or _default_kubeconfig()}" + (
            f", context {self.context}" if self.context else ""
        )


class InClusterAuthentication(Authentication):
    """Log in as the pod's service account (inside a Kubernetes pod, e.g. a notebook workbench).

    Reads ``$KUBERNETES_SERVICE_HOST``/``$KUBERNETES_SERVICE_PORT`` and the mounted ``token``,
    ``ca.crt`` and ``namespace`` files; the token file is re-read every minute (projected tokens
    rotate).

    Args:
        sa_dir: where the service account is mounted (default
            ``/var/run/secrets/kubernetes.io/serviceaccount``).

    Example:
        >>> InClusterAuthentication.available() in (True, False)
        True
    """

    def __init__(self, sa_dir: str | os.PathLike[str] | None = None) -> None:
        self.sa_dir = Path(sa_dir) if sa_dir is not None else _SA_DIR
        self._api = None

    def __repr__(self) -> str:
        return f"InClusterAuthentication(sa_dir={str(self.sa_dir)!r})"

    @staticmethod
    def available(sa_dir: str | os.PathLike[str] | None = None) -> bool:
        """True inside a pod with a mounted service-account token."""
        directory = Path(sa_dir) if sa_dir is not None else _SA_DIR
        return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and (directory / "token").is_file()

    def _build(self) -> ApiClient:
        host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
        port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
        token_file, ca_file = self.sa_dir / "token", self.sa_dir / "ca.crt"
        if not host or not token_file.is_file():
            raise AuthenticationError(
                0,
                "NoCredentials",
                f"not inside a pod: no $KUBERNETES_SERVICE_HOST or no token in {self.sa_dir}",
            )
        server = f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"
        ns_file = self.sa_dir / "namespace"
        namespace = ns_file.read_text().strip() or None if ns_file.is_file() else None
        api = build_api_client(
            server,
            token=check_token(f"the service-account token in {token_file}", token_file.read_text()),
            ca_cert_path=str(ca_file) if ca_file.is_file() else None,
            source="in-cluster",
            namespace=namespace,
        )
        _refresh_token_from(api, token_file)
        return api

    def _describe(self) -> str:
        return "in-cluster service account"


def _refresh_token_from(api: ApiClient, token_file: Path, period: float = 60.0) -> None:
    """Re-read a rotating token file at most every ``period`` seconds, before a request needs it."""
    state = {"read_at": time.monotonic()}

    def refresh(cfg: object) -> None:
        now = time.monotonic()
        if now - state["read_at"] < period:
            return
        state["read_at"] = now
        try:
            token = token_file.read_text().strip()
        except OSError:
            return
        if token:
            cfg.api_key = {"authorization": token}  # type: ignore[attr-defined]

    api.configuration.refresh_api_key_hook = refresh


def _default_kubeconfig() -> str | None:
    env = os.environ.get("KUBECONFIG")
    if env:
        for part in env.split(os.pathsep):
            if part and Path(part).expanduser().is_file():
                return str(Path(part).expanduser())
        return env.split(os.pathsep)[0]
    default = Path("~/.kube/config").expanduser()
    return str(default) if default.is_file() else None


def ambient_namespace(
    sa_dir: str | os.PathLike[str] | None = None, kubeconfig: str | None = None
) -> str | None:
    """The namespace the environment implies, for a client that carries none (one the SDK did not build).

    As codeflare-sdk decides it for the ``ApiClient`` a user hands to ``set_api_client``: inside a pod, the
    service account's ``namespace`` file; else the namespace of the kubeconfig's current context
    (``$KUBECONFIG`` or ``~/.kube/config``); else ``None``. Nothing here raises: an unreadable file or
    kubeconfig means ``None``.

    Example:
        >>> import pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "namespace").write_text("ds-team\\n")
        >>> ambient_namespace(sa_dir=d, kubeconfig="/nonexistent")
        'ds-team'
        >>> ctx = "{name: c, context: {cluster: k, user: u, namespace: team-a}}"
        >>> _ = (d / "config").write_text(f"current-context: c\\ncontexts: [{ctx}]\\n")
        >>> ambient_namespace(sa_dir=d / "none", kubeconfig=str(d / "config"))
        'team-a'
    """
    ns_file = (Path(sa_dir) if sa_dir is not None else _SA_DIR) / "namespace"
    try:
        if ns_file.is_file() and ns_file.read_text().strip():
            return ns_file.read_text().strip()
    except OSError:
        pass
    path = kubeconfig if kubeconfig is not None else _default_kubeconfig()
    if not path or not Path(path).is_file():
        return None
    import yaml  # lazy: only for a client that carries no namespace; keeps PyYAML off the import path

    try:
        loaded = yaml.safe_load(Path(path).read_text()) or {}
        current = loaded.get("current-context")
        for entry in loaded.get("contexts") or []:
            if entry.get("name") == current:
                namespace = (entry.get("context") or {}).get("namespace")
                return str(namespace) if namespace else None
    except (OSError, yaml.YAMLError, AttributeError):
        return None
    return None


def _safe(exc: BaseException) -> str:
    """An exception text trimmed for messages (kubeconfig loader errors carry no secrets, but cap them)."""
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def detect(*, check: bool = False) -> ApiClient:
    """Find credentials when none were given: the current login, a kubeconfig, the in-cluster account.

    Order: the client set by the last ``login()``; ``$KUBECONFIG`` or ``~/.kube/config``; the pod's
    service account. ``check=True`` verifies the credentials once (bounded) before returning.

    Raises:
        AuthenticationError: no credentials were found.

    Example:
        >>> import os
        >>> from rayqueue_sdk.kube.connection import set_current_client
        >>> set_current_client(None)
        >>> saved = os.environ.pop("KUBECONFIG", None); os.environ["KUBECONFIG"] = "/nonexistent"
        >>> try:
        ...     detect()
        ... except AuthenticationError as err:
        ...     print("no Kubernetes credentials" in str(err))
        ... finally:
        ...     _ = os.environ.pop("KUBECONFIG"); saved and os.environ.setdefault("KUBECONFIG", saved)
        True
    """
    api = current_client()
    if api is not None:
        return api
    auth: Authentication | None = None
    path = _default_kubeconfig()
    if path and Path(path).is_file():
        auth = KubeConfigFileAuthentication(path)
    elif InClusterAuthentication.available():
        auth = InClusterAuthentication()
    if auth is None:
        raise AuthenticationError(
            0,
            "NoCredentials",
            "no Kubernetes credentials: call TokenAuthentication(token=..., server=...).login(), "
            "KubeConfigFileAuthentication(path).login(), set $KUBECONFIG, or run inside a pod",
        )
    built = auth._build()
    if check:
        check_credentials(built)
    log.info("using %s credentials for %s", auth._describe(), built.configuration.host)
    return built
