"""``pods/{name}/log``, and the answers for ``pods/{name}/exec``, ``/attach`` and ``/portforward``.

``GET /api/v1/namespaces/{ns}/pods/{name}/log`` reads a container's log file, kept in the CRI format
(:mod:`rayqueue_local.apimachinery.crilog`) by whoever runs the pod's processes, found through a
``locate(pod, container, previous)`` callable the control plane wires (the API server does not
import the runtime). As upstream [R kubernetes/pkg/registry/core/pod/rest/log.go,
pkg/registry/core/pod/strategy.go LogLocation, pkg/apis/core/validation ValidatePodLogOptions,
pkg/kubelet/kuberuntime/logs/logs.go]:

- the options ``container``, ``follow``, ``previous``, ``timestamps``, ``tailLines``,
  ``sinceSeconds``, ``sinceTime``, ``limitBytes``; a bad number or boolean is a 400, a negative
  ``tailLines``, a ``limitBytes`` or ``sinceSeconds`` below 1, or both ``sinceTime`` and
  ``sinceSeconds`` is a 422 ``PodLogOptions "<pod>" is invalid: ...``;
- no ``container`` with several containers: 400 ``a container name must be specified for pod P,
  choose one of: [a b]`` (`` or one of the init containers: [...]``); an unknown one: 400
  ``container X is not valid for pod P``;
- a container that has not started: 400 ``container "c" in pod "p" is waiting to start: <reason>``;
  no previous run: 400 ``previous terminated container "c" in pod "p" not found``;
- the body is ``text/plain``; with ``timestamps`` each line starts with its RFC3339Nano time; with
  ``follow`` the response streams until the container ends (or the client leaves).

A pod whose processes nothing here runs (a RayCluster's worker pods are API objects only; a head
without Ray) answers 400 saying so. ``exec``, ``attach`` and ``portforward`` are answered with a
400 ``Status`` that says why they are not served and what to do instead (kubectl prints it as
``Error from server (BadRequest): ...``).

Example:
    >>> opts = parse_log_options({"tailLines": ["2"], "timestamps": ["true"]}, "p")
    >>> opts.tail_lines, opts.timestamps, opts.follow
    (2, True, False)
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rayqueue_local.apimachinery.crilog import LogRecord, parse_record
from rayqueue_local.apimachinery.status import HTTPError
from rayqueue_local.apimachinery.time import parse_rfc3339
from rayqueue_local.apiserver.http import Response
from rayqueue_local.storage.store import StoreError

__all__ = ["LogLocator", "LogOptions", "PodLogs", "parse_log_options"]

#: ``locate(pod, container, previous) -> (CRI log file, still running?)`` or ``None``.
LogLocator = Callable[[dict[str, Any], str, bool], "tuple[Path, Callable[[], bool]] | None"]

_POD_PATH = r"/api/v1/namespaces/(?P<namespace>[^/]+)/pods/(?P<name>[^/]+)"
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False", "")
_FOLLOW_POLL = 0.2


@dataclass(frozen=True)
class LogOptions:
    """``PodLogOptions`` as the query gives them."""

    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    since_seconds: int | None = None
    since_time: float | None = None
    limit_bytes: int | None = None


def _bool(query: dict[str, list[str]], name: str) -> bool:
    value = (query.get(name) or ["false"])[-1]
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise HTTPError.bad_request(f'strconv.ParseBool: parsing "{value}": invalid syntax')


def _int(query: dict[str, list[str]], name: str) -> int | None:
    if name not in query:
        return None
    value = query[name][-1]
    try:
        return int(value)
    except ValueError:
        raise HTTPError.bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax') from None


def parse_log_options(query: dict[str, list[str]], pod: str) -> LogOptions:
    """The options of a log request, validated as ``ValidatePodLogOptions`` (raises :class:`HTTPError`).

    Example:
        >>> try:
        ...     parse_log_options({"tailLines": ["-1"]}, "p")
        ... except HTTPError as err:
        ...     print(err.code, err.body["message"])
        422 PodLogOptions "p" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0
    """
    since_time: float | None = None
    if "sinceTime" in query:
        raw = query["sinceTime"][-1]
        since_time = parse_rfc3339(raw)
        if since_time is None:
            raise HTTPError.bad_request(f'parsing time "{raw}" as "2006-01-02T15:04:05Z07:00": cannot parse')
    opts = LogOptions(
        container=(query.get("container") or [""])[-1],
        follow=_bool(query, "follow"),
        previous=_bool(query, "previous"),
        timestamps=_bool(query, "timestamps"),
        tail_lines=_int(query, "tailLines"),
        since_seconds=_int(query, "sinceSeconds"),
        since_time=since_time,
        limit_bytes=_int(query, "limitBytes"),
    )
    causes: list[tuple[str, str, str]] = []  # (field, reason, message)
    if opts.tail_lines is not None and opts.tail_lines < 0:
        causes.append(
            (
                "tailLines",
                "FieldValueInvalid",
                f"Invalid value: {opts.tail_lines}: must be greater than or equal to 0",
            )
        )
    if opts.limit_bytes is not None and opts.limit_bytes < 1:
        causes.append(
            ("limitBytes", "FieldValueInvalid", f"Invalid value: {opts.limit_bytes}: must be greater than 0")
        )
    if opts.since_seconds is not None and opts.since_time is not None:
        causes.append(
            (
                "",
                "FieldValueForbidden",
                "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified",
            )
        )
    elif opts.since_seconds is not None and opts.since_seconds < 1:
        causes.append(
            (
                "sinceSeconds",
                "FieldValueInvalid",
                f"Invalid value: {opts.since_seconds}: must be greater than 0",
            )
        )
    if causes:
        text = ", ".join(f"{f}: {m}" if f else m for f, _, m in causes)
        summary = text if len(causes) == 1 else f"[{text}]"
        raise HTTPError.make(
            422,
            "Invalid",
            f'PodLogOptions "{pod}" is invalid: {summary}',
            details={"name": pod, "kind": "PodLogOptions"},
            causes=[{"reason": r, "message": m, "field": f} for f, r, m in causes],
        )
    return opts


def _container_name(pod: dict[str, Any], wanted: str) -> str:
    """The container a log request is for, or the API server's 400 [strategy.go LogLocation]."""
    name = pod["metadata"]["name"]
    spec = pod.get("spec") or {}
    mains = [str(c.get("name")) for c in spec.get("containers") or []]
    inits = [str(c.get("name")) for c in spec.get("initContainers") or []]
    if not wanted:
        if len(mains) == 1:
            return mains[0]
        if not mains:
            raise HTTPError.bad_request(f"a container name must be specified for pod {name}")
        message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(mains)}]"
        if inits:
            message += f" or one of the init containers: [{' '.join(inits)}]"
        raise HTTPError.bad_request(message)
    if wanted not in mains + inits:
        raise HTTPError.bad_request(f"container {wanted} is not valid for pod {name}")
    return wanted


def _not_started(pod: dict[str, Any], container: str, previous: bool) -> HTTPError:
    """The kubelet's 400 for a container without the log asked for."""
    name = pod["metadata"]["name"]
    if previous:
        return HTTPError.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
    status = pod.get("status") or {}
    for entry in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
        if entry.get("name") == container and "waiting" in (entry.get("state") or {}):
            reason = entry["state"]["waiting"].get("reason") or "ContainerCreating"
            return HTTPError.bad_request(
                f'container "{container}" in pod "{name}" is waiting to start: {reason}'
            )
    if not status.get("containerStatuses"):
        return HTTPError.bad_request(
            f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating'
        )
    return HTTPError.bad_request(
        f'container "{container}" in pod "{name}" has no log: the local control plane runs no process '
        "for this pod (it is an API object only, like a RayCluster's worker pods)"
    )


def _records(path: Path, offset: int) -> tuple[list[LogRecord], int]:
    """Complete records from ``offset``; returns them and the offset after the last one."""
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n") + 1
    records = [r for r in map(parse_record, data[:end].splitlines(keepends=True)) if r is not None]
    return records, offset + end


class _Render:
    """Turns records into the response bytes: since, timestamps, limitBytes."""

    def __init__(self, opts: LogOptions) -> None:
        self.opts = opts
        self.since = (
            opts.since_time
            if opts.since_time is not None
            else (time.time() - opts.since_seconds if opts.since_seconds is not None else None)
        )
        self.left = opts.limit_bytes

    def keep(self, record: LogRecord) -> bool:
        return self.since is None or record.when >= self.since

    def render(self, records: list[LogRecord]) -> bytes:
        out = bytearray()
        for record in records:
            if self.opts.timestamps:
                out += record.timestamp.encode() + b" "
            out += record.text
        data = bytes(out)
        if self.left is not None:
            data = data[: self.left]
            self.left -= len(data)
        return data

    @property
    def exhausted(self) -> bool:
        return self.left is not None and self.left <= 0


def _tail(records: list[LogRecord], lines: int | None) -> list[LogRecord]:
    """The records of the last ``lines`` lines (a partial record belongs to the line it starts)."""
    if lines is None:
        return records
    if lines == 0:
        return []
    kept: deque[LogRecord] = deque()
    full = 0
    for record in reversed(records):
        if not record.partial:
            full += 1
            if full > lines:
                break
        kept.appendleft(record)
    return list(kept)


class PodLogs:
    """Serves ``pods/log`` from the store (pods) and ``locate`` (their log files); see the module.

    Example:
        >>> [r[1].rsplit("/", 1)[-1] for r in PodLogs(None, lambda p, c, prev: None).routes()]
        ['log', 'exec', 'exec', 'attach', 'attach', 'portforward', 'portforward']
    """

    def __init__(self, store: Any, locate: LogLocator) -> None:
        self.store = store
        self.locate = locate

    def routes(self) -> list[tuple[str, str, Callable[..., Any], str, str]]:
        """``(method, path regex, handler, resource, verb)`` for :meth:`APIServer.add_route`."""
        out: list[tuple[str, str, Callable[..., Any], str, str]] = [
            ("GET", _POD_PATH + "/log", self.log, "pods/log", "get")
        ]
        for sub in ("exec", "attach", "portforward"):
            for method in ("GET", "POST"):
                out.append((method, _POD_PATH + "/" + sub, self._unserved(sub), f"pods/{sub}", "create"))
        return out

    def _pod(self, namespace: str, name: str) -> dict[str, Any]:
        try:
            return dict(self.store.get("pods", namespace, name))
        except StoreError as err:
            if err.code == 404:
                raise HTTPError.make(
                    404, "NotFound", f'pods "{name}" not found', details={"name": name, "kind": "pods"}
                ) from None
            raise

    def log(self, match: Any, query: dict[str, list[str]], user: Any) -> Response:
        """``GET .../pods/{name}/log``."""
        namespace, name = match.group("namespace"), match.group("name")
        opts = parse_log_options(query, name)
        pod = self._pod(namespace, name)
        container = _container_name(pod, opts.container)
        found = self.locate(pod, container, opts.previous)
        if found is None:
            raise _not_started(pod, container, opts.previous)
        path, alive = found
        render = _Render(opts)
        records, offset = _records(path, 0)
        records = _tail([r for r in records if render.keep(r)], opts.tail_lines)
        first = render.render(records)
        headers = {"Content-Type": "text/plain"}
        if not opts.follow or render.exhausted:
            return Response(200, first, headers)
        return Response(200, None, headers, stream=self._follow(path, offset, alive, render, first))

    @staticmethod
    def _follow(
        path: Path, offset: int, alive: Callable[[], bool], render: _Render, first: bytes
    ) -> Iterator[bytes]:
        """Chunks of the log as it grows, until the container ends; ``b""`` lets the server check
        that the client is still there."""
        if first:
            yield first
        while not render.exhausted:
            running = alive()
            records, offset = _records(path, offset)
            data = render.render([r for r in records if render.keep(r)])
            if data:
                yield data
            elif not running:
                return
            else:
                yield b""
                time.sleep(_FOLLOW_POLL)

    def _unserved(self, sub: str) -> Callable[..., tuple[int, dict[str, Any]]]:
        def handler(match: Any, query: dict[str, list[str]], user: Any) -> tuple[int, dict[str, Any]]:
            namespace, name = match.group("namespace"), match.group("name")
            pod = self._pod(namespace, name)
            raise HTTPError.bad_request(self._why(sub, pod))

        return handler

    def _why(self, sub: str, pod: dict[str, Any]) -> str:
        name = pod["metadata"]["name"]
        if sub == "portforward":
            return (
                f"pods/portforward is not served by the local control plane: pod {name}'s processes run on "
                f"this machine and listen on 127.0.0.1 already; connect to them directly"
                + self._addresses(pod)
            )
        return (
            f"pods/{sub} is not served by the local control plane: pod {name}'s containers are local "
            "processes, not containers of a runtime that could start a command inside them; run the "
            "command on this machine instead"
        )

    def _addresses(self, pod: dict[str, Any]) -> str:
        """``" (dashboard: http://127.0.0.1:8265, ...)"`` from a Ray head's Service, if any."""
        cluster = (pod["metadata"].get("labels") or {}).get("ray.io/cluster")
        if not cluster:
            return ""
        try:
            svc = self.store.get("services", pod["metadata"].get("namespace"), f"{cluster}-head-svc")
        except StoreError:
            return ""
        ports = [
            f"{p.get('name')}: http://127.0.0.1:{p.get('port')}"
            for p in (svc.get("spec") or {}).get("ports") or []
            if p.get("port")
        ]
        return f" ({', '.join(ports)})" if ports else ""
