"""The HTTPS front end of the local control plane: a Kubernetes REST API on loopback.

Built on the standard library's ``http.server.ThreadingHTTPServer`` (HTTP/1.1 keep-alive, one
thread per connection) with an ``ssl`` context. The stdlib server gives fine control over each
connection, which fault injection needs (drop a connection without a response, end a watch
stream) and adds no dependency. Each request goes through, in order: fault injection,
authentication (401), extra routes / discovery / resources with authorisation (403), and the
REST layer (:mod:`rayqueue_local.apiserver.rest`) over the store. Every error is a ``Status`` body, and
the server keeps serving after any of them.

Example:
    >>> from rayqueue_local import LocalControlPlane
    >>> with LocalControlPlane() as cp:               # doctest: +SKIP
    ...     cp.server
    'https://127.0.0.1:41231'
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import re
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from rayqueue_local.apimachinery.status import HTTPError, status_body
from rayqueue_local.apiserver.auth import Attributes, Authenticator, User, forbidden_message
from rayqueue_local.apiserver.faults import FaultInjector
from rayqueue_local.apiserver.http import MAX_BODY_BYTES, RequestInfo, Response, parse_request
from rayqueue_local.apiserver.rbac import REQUEST_USER, Authorizer
from rayqueue_local.apiserver.requestlog import RequestLog
from rayqueue_local.apiserver.reviews import ReviewAPI
from rayqueue_local.apiserver.tokenrequest import TokenRequestAPI

log = logging.getLogger(__name__)

__all__ = ["APIServer", "Response", "RouteHandler"]

#: ``handler(match, query, user) -> (status_code, body)`` (or a whole :class:`Response`) for
#: :meth:`APIServer.add_route`.
RouteHandler = Callable[[re.Match[str], dict[str, list[str]], User], "tuple[int, dict[str, Any]] | Response"]


@dataclass
class _Route:
    method: str
    pattern: re.Pattern[str]
    handler: RouteHandler
    group: str
    resource: str
    verb: str


_DRAIN_LIMIT = 64 * 1024 * 1024
_HEALTH_PATHS = frozenset({"/healthz", "/readyz", "/livez"})
_CHUNK_LINE_LIMIT = 1024  # a chunk-size line (hex size and extensions) longer than this is malformed
_PROTOCOL_REASONS = {
    400: "BadRequest",
    405: "MethodNotAllowed",
    408: "Timeout",
    414: "RequestURITooLong",
    431: "RequestHeaderFieldsTooLarge",
    505: "HTTPVersionNotSupported",
}


#: The standard library's terse protocol messages, said as what went wrong for the client.
_PROTOCOL_MESSAGES = {
    (431, "Line too long"): "request header fields too large: a header line is longer than 65536 bytes",
    (431, "Too many headers"): "request header fields too large: more than 100 header lines",
    (414, ""): "request URI too long: the request line is longer than 65536 bytes",
}


def _too_large() -> HTTPError:
    return HTTPError.make(
        413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY_BYTES}"
    )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], api: APIServer, ctx: ssl.SSLContext) -> None:
        self.api = api
        self.ssl_context = ctx
        self.connections: set[socket.socket] = set()
        self.conn_lock = threading.Lock()
        super().__init__(address, _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, addr = self.socket.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # The TLS handshake happens in the connection's own thread (see _Handler.setup), so a
        # slow or broken client never blocks accept().
        tls = self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return tls, addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("connection from %s ended with an error", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "rayqueue-local-apiserver"
    sys_version = ""
    timeout = 300  # idle keep-alive connections are closed after 5 minutes
    server: _Server

    def setup(self) -> None:
        self.request.settimeout(30)
        self.request.do_handshake()
        self.request.settimeout(self.timeout)
        super().setup()
        with self.server.conn_lock:
            self.server.connections.add(self.request)

    def finish(self) -> None:
        with self.server.conn_lock:
            self.server.connections.discard(self.request)
        with contextlib.suppress(OSError):
            super().finish()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Protocol-level errors (bad request line, unknown method, huge headers) as ``Status`` bodies too."""
        if code == 501:  # an HTTP method the API does not have
            code, message = (
                405,
                f"the server does not allow this method on the requested resource ({self.command})",
            )
        reason = _PROTOCOL_REASONS.get(code, "BadRequest")
        message = _PROTOCOL_MESSAGES.get((code, message or ""), message)
        self.close_connection = True
        self._send_json(code, status_body(code, reason, message or self.responses.get(code, ("",))[0]), {})

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s " + format, self.address_string(), *args)

    # -- one request ------------------------------------------------------------------------
    def _serve(self) -> None:
        """One request, whatever its method: every ``do_<METHOD>`` the stdlib dispatches to is this."""
        method = self.command
        requests = self.server.api.requests
        if requests is None:
            self._serve_one(method)
            return
        entry = requests.started(
            method, urlsplit(self.path).path, urlsplit(self.path).query, self.headers.get("User-Agent")
        )
        try:
            self._serve_one(method)
        finally:
            requests.ended(entry)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

    def _serve_one(self, method: str) -> None:
        api = self.server.api
        started = time.perf_counter() if api.timings is not None else 0.0
        url = urlsplit(self.path)
        path = url.path
        fault = api.faults.take(method, path)
        lose_response = fault is not None and fault.drop_response
        if fault is not None:
            if fault.delay > 0:
                time.sleep(fault.delay)
            if fault.drop:
                self._drop()
                return
            if fault.status is not None:
                with contextlib.suppress(HTTPError):  # the body is not used; an oversized one is dropped
                    self._read_body_or_none()
                headers = {}
                if fault.retry_after is not None:
                    headers["Retry-After"] = str(fault.retry_after)
                message = fault.message or f"injected fault: {fault.status} {fault.reason}"
                self._send_json(fault.status, status_body(fault.status, fault.reason, message), headers)
                return
        try:
            authorization = self.headers.get("Authorization")
            if (not api.is_public(method, path) or _presents_token(authorization)) and api.auth.authenticate(
                authorization
            ) is None:
                # Refused before a byte of the body is read: an anonymous client cannot make the
                # server buffer anything. The unread body makes the connection unusable: close it.
                # A bearer token that is presented and wrong is a 401 on the public paths too.
                self.close_connection = True
                raise HTTPError.unauthorized()
            body = self._read_body_or_none()
            response = api.handle(method, path, url.query, self.headers, body)
        except HTTPError as err:
            response = Response(err.code, err.body, err.headers)
        except Exception as err:  # the server keeps serving after any bug
            log.exception("internal error serving %s %s", method, path)
            response = Response(500, status_body(500, "InternalError", f"Internal error occurred: {err}"))
        if lose_response:  # handled (a write is made), but the client never hears of it
            close = getattr(response.stream, "close", None)
            if close is not None:
                close()
            self._drop()
            return
        if response.stream is not None:
            self._send_stream(response)
            return
        self._send_json(response.code, response.body, response.headers, head=method == "HEAD")
        if api.timings is not None:
            api.timings.append((method, path, time.perf_counter() - started))

    def _read_body_or_none(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return self._read_chunked()
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self.close_connection = True
            raise HTTPError.bad_request("invalid Content-Length") from None
        if length > MAX_BODY_BYTES:
            self._discard(length)
            raise _too_large()
        return self.rfile.read(length) if length > 0 else b""

    def _discard(self, length: int) -> None:
        """Read and drop a body we refuse, so the client sees our answer instead of a reset.

        Past ``_DRAIN_LIMIT`` the connection is closed instead.
        """
        if length > _DRAIN_LIMIT:
            self.close_connection = True
            return
        while length > 0:
            chunk = self.rfile.read(min(length, 1 << 16))
            if not chunk:
                self.close_connection = True
                return
            length -= len(chunk)

    def _read_chunked(self) -> bytes:
        """Decode a chunked body, holding the limit on the decoded size before each chunk is read."""
        data = bytearray()
        while True:
            line = self.rfile.readline(_CHUNK_LINE_LIMIT)
            try:
                size = int(line.split(b";")[0].strip() or b"0", 16)
            except ValueError:
                size = -1
            if size < 0 or not line.endswith(b"\n"):
                self.close_connection = True
                raise HTTPError.bad_request("invalid chunked transfer encoding")
            if size == 0:
                self.rfile.readline(_CHUNK_LINE_LIMIT)
                return bytes(data)
            if len(data) + size > MAX_BODY_BYTES:  # before reading: a chunk may claim gigabytes
                self.close_connection = True
                raise _too_large()
            chunk = self.rfile.read(size)
            if len(chunk) < size:
                self.close_connection = True
                raise HTTPError.bad_request("the chunked body ended early")
            data += chunk
            self.rfile.readline(_CHUNK_LINE_LIMIT)

    def _client_gone(self) -> bool:
        """During a watch the client sends nothing: a readable socket means it closed (or broke)."""
        try:
            readable, _, _ = select.select([self.request], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.request.shutdown(socket.SHUT_RDWR)

    def _send_json(self, code: int, body: Any, headers: dict[str, str], head: bool = False) -> None:
        payload = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
        lines = [f"HTTP/1.1 {code} {self.responses.get(code, ('',))[0]}"]
        content_type = headers.pop("Content-Type", "application/json")
        lines.append(f"Content-Type: {content_type}")
        lines.append(f"Content-Length: {len(payload)}")
        lines.append(f"Date: {self.date_time_string()}")
        for k, v in headers.items():
            lines.append(f"{k}: {v}")
        if self.close_connection:
            lines.append("Connection: close")
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.log_request(code)
        try:
            self.wfile.write(raw if head else raw + payload)  # one write: no Nagle/delayed-ACK stall
        except OSError:
            self.close_connection = True

    def _send_stream(self, response: Response) -> None:
        content_type = response.headers.get("Content-Type", "application/json")
        head = (
            f"HTTP/1.1 {response.code} OK\r\nContent-Type: {content_type}\r\n"
            f"Transfer-Encoding: chunked\r\nDate: {self.date_time_string()}\r\n\r\n"
        ).encode("latin-1")
        self.log_request(response.code)
        assert response.stream is not None
        try:
            self.wfile.write(head)
            for chunk in response.stream:
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                elif self._client_gone():
                    self.close_connection = True
                    return
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True
        finally:
            close = getattr(response.stream, "close", None)
            if close is not None:
                close()


class APIServer:
    """The HTTPS server: owns the listening socket, the serving thread and the extra routes.

    ``handler`` does the Kubernetes REST work (:class:`rayqueue_local.apiserver.rest.RestAPI`);
    ``authenticator`` checks tokens and rules; ``faults`` is the fault table.

    Example::

        APIServer(rest, Authenticator(), FaultInjector(), tls.server_context()).start()
    """

    def __init__(
        self,
        rest: Any,
        authenticator: Authenticator,
        faults: FaultInjector,
        ssl_context: ssl.SSLContext,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.rest = rest
        self.auth = authenticator
        self.faults = faults
        self._routes: list[_Route] = []
        #: RBAC from the store's Role/ClusterRole/(Cluster)RoleBinding objects, over the plane's policy
        self.authorizer = Authorizer(authenticator, rest.store)
        self.authorizer.ensure_bootstrap()
        self.reviews = ReviewAPI(authenticator, rest.registry, self.authorizer)
        self.tokens = TokenRequestAPI(authenticator, rest.store)
        #: ``(method, path, seconds)`` per answered request once :meth:`record_timings` was called
        self.timings: collections.deque[tuple[str, str, float]] | None = None
        #: every request by client (``User-Agent``) and the open watches, after :meth:`record_requests`
        self.requests: RequestLog | None = None
        self._httpd = _Server((host, port), self, ssl_context)
        self._thread: threading.Thread | None = None
        self.host: str = str(self._httpd.server_address[0])
        self.port: int = int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``https://127.0.0.1:<port>``."""
        return f"https://{self.host}:{self.port}"

    def start(self) -> None:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, name="apiserver", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting, end watches, close every open connection."""
        self._httpd.shutdown()
        self.faults.end_watches()
        with self._httpd.conn_lock:
            conns = list(self._httpd.connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.authorizer.close()
        self.tokens.close()

    def record_timings(self, maxlen: int = 100_000) -> None:
        """Record the in-server handling time of each request (from parsed headers to the last byte
        written) in :attr:`timings`; for benchmarks."""
        self.timings = collections.deque(maxlen=maxlen)

    def record_requests(self) -> RequestLog:
        """Record every request (method, path, watch or not, ``User-Agent``) and the open watch streams
        in :attr:`requests` (kept from an earlier call); for benchmarks and count-based tests."""
        if self.requests is None:
            self.requests = RequestLog()
        return self.requests

    def add_route(
        self, method: str, path_regex: str, handler: RouteHandler, *, resource: str, verb: str
    ) -> None:
        """Serve ``method path_regex`` (full match) with ``handler(match, query, user)``.

        ``resource`` is ``"<plural>[/<subresource>].<group>"`` as RBAC names it (e.g.
        ``"localqueues/pendingworkloads.visibility.kueue.x-k8s.io"``); the user must be allowed
        ``verb`` on it (in the ``namespace`` group of the match, if any) before the handler runs.

        Example::

            server.add_route("GET", r"/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/"
                r"(?P<namespace>[^/]+)/localqueues/(?P<name>[^/]+)/pendingworkloads",
                handler, resource="localqueues/pendingworkloads.visibility.kueue.x-k8s.io", verb="get")
        """
        self._routes.append(
            _Route(method.upper(), re.compile(path_regex), handler, *_split_resource(resource), verb)
        )

    # -- dispatch (called in connection threads) -------------------------------------------------
    @staticmethod
    def is_public(method: str, path: str) -> bool:
        """Whether ``method path`` is served without a token: the health checks, and ``GET /version``
        (public upstream through the ``system:public-info-viewer`` role).

        Anonymous requests anywhere else are a 401: the plane behaves as an API server whose anonymous
        authentication is limited to these endpoints (``AuthenticationConfiguration``
        ``anonymous.conditions``, KEP-4633), so a client without a token learns that it needs one.

        Example:
            >>> APIServer.is_public("GET", "/version"), APIServer.is_public("POST", "/api/v1/namespaces")
            (True, False)
        """
        return path in _HEALTH_PATHS or (path == "/version" and method == "GET")

    def handle(self, method: str, path: str, raw_query: str, headers: Any, body: bytes) -> Response:
        """Handle one request and return the response (raises :class:`HTTPError` for errors)."""
        if path in _HEALTH_PATHS:
            return Response(200, b"ok", {"Content-Type": "text/plain; charset=utf-8"})
        if path == "/version" and method == "GET":
            return self.rest.handle(parse_request(method, path, {}), {}, headers, body, None)
        user = self.auth.authenticate(headers.get("Authorization"))
        if user is None:
            raise HTTPError.unauthorized()
        query = parse_qs(raw_query, keep_blank_values=True) if raw_query else {}
        path_matched = False
        for route in self._routes:
            match = route.pattern.fullmatch(path)
            if match is None:
                continue
            if route.method != method:
                path_matched = True
                continue
            groups = match.groupdict()
            resource, _, subresource = route.resource.partition("/")
            attrs = Attributes(
                route.verb,
                route.group,
                resource,
                groups.get("namespace"),
                subresource,
                groups.get("name") or "",
            )
            self._authorize(user, attrs)
            result = route.handler(match, query, user)
            if isinstance(result, Response):  # e.g. a text/plain or streamed body (pods/log)
                return result
            code, body_dict = result
            return Response(code, body_dict)
        if path_matched:
            raise HTTPError.method_not_allowed(method)
        info = parse_request(method, path, query)
        if info.kind == "resource":
            self._authorize(user, _attributes(info))
            if self.reviews.serves(info):
                return self.reviews.handle(info, body, headers, user)
            if self.tokens.serves(info):
                return self.tokens.handle(info, body, headers, user)
        elif method not in ("GET", "HEAD"):
            raise HTTPError.method_not_allowed(method)
        # The store's RBAC admission hooks refuse privilege escalation by the requesting user.
        reset = REQUEST_USER.set(user)
        try:
            return self.rest.handle(info, query, headers, body, user)
        finally:
            REQUEST_USER.reset(reset)

    def _authorize(self, user: User, attrs: Attributes) -> None:
        if not self.authorizer.authorize(user, attrs):
            raise HTTPError.make(
                403,
                "Forbidden",
                forbidden_message(user, attrs),
                details={k: v for k, v in (("name", attrs.name), ("group", attrs.group)) if v or k == "group"}
                | {"kind": attrs.resource},
            )


def _presents_token(authorization: str | None) -> bool:
    """Whether a request presents a bearer token (then it must be valid, whatever the path).

    Upstream's bearer authenticator answers an invalid token with an error, so the request is a 401
    even where anonymous requests are allowed; no header, another scheme or an empty token leaves the
    request anonymous (``k8s.io/apiserver/pkg/authentication/request/bearertoken``).

    Example:
        >>> _presents_token("Bearer abc"), _presents_token("Bearer "), _presents_token(None)
        (True, False, False)
    """
    scheme, _, credentials = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and bool(credentials.strip())


def _attributes(info: RequestInfo) -> Attributes:
    namespace = info.namespace
    name = info.name
    if info.resource == "namespaces" and not info.group:
        namespace = None
    return Attributes(info.verb, info.group, info.resource, namespace, info.subresource, name)


def _split_resource(resource: str) -> tuple[str, str]:
    """``"localqueues/pendingworkloads.visibility.kueue.x-k8s.io"`` -> (group, resource path)."""
    head, _, group = resource.partition(".")
    return group, head
