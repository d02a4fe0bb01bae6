"""Reading Prometheus' HTTP API (``/api/v1/query_range``, ``/api/v1/status/runtimeinfo``) for usage reports.

:class:`PrometheusReader` is the only place the SDK itself asks Prometheus something (the idle policies'
queries run in KEDA or in the in-cluster reaper). Errors become :class:`~rayqueue_sdk.errors.ApiError`
with Prometheus' own message; a Prometheus that cannot be reached is a
:class:`~rayqueue_sdk.errors.ConnectionFailedError`.

Example:
    >>> PrometheusReader("http://prometheus.monitoring:9090/").url
    'http://prometheus.monitoring:9090'
    >>> parse_prometheus_duration("15d"), parse_prometheus_duration("1d12h"), parse_prometheus_duration("x")
    (1296000.0, 129600.0, None)
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import requests

from rayqueue_sdk.errors import ApiError, ConnectionFailedError

__all__ = ["PrometheusReader", "bearer_token_of", "parse_prometheus_duration"]

_PART = re.compile(r"(\d+)(ms|y|w|d|h|m|s)")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def parse_prometheus_duration(text: str) -> float | None:
    """Seconds of a Prometheus duration (``2h``, ``15d``, ``1d12h``); ``None`` when it is not one.

    Example:
        >>> parse_prometheus_duration("2h")
        7200.0
    """
    text = text.strip()
    if not text or _PART.sub("", text):
        return None
    return float(sum(int(n) * _SECONDS[unit] for n, unit in _PART.findall(text)))


def bearer_token_of(api: Any) -> str | None:
    """The bearer token a ``kubernetes`` ``ApiClient`` sends (after its refresh hook, for rotating
    tokens), without the ``Bearer`` prefix; ``None`` for credentials without one (client certificates).

    Example:
        >>> from kubernetes.client import ApiClient, Configuration
        >>> cfg = Configuration(); cfg.api_key = {"authorization": "Bearer abc"}
        >>> bearer_token_of(ApiClient(cfg)), bearer_token_of(ApiClient(Configuration()))
        ('abc', None)
    """
    cfg = api.configuration
    if cfg.refresh_api_key_hook is not None:
        cfg.refresh_api_key_hook(cfg)
    keys = cfg.api_key or {}
    value = keys.get("BearerToken") or keys.get("authorization")
    if not value:
        return None
    token = str(value).strip().removeprefix("Bearer ").strip()
    return token or None


class PrometheusReader:
    """A Prometheus (or Thanos querier) at ``url``; ``token`` is sent as a bearer token when given.

    Example:
        >>> "s3cret" in repr(PrometheusReader("http://p:9090", token="s3cret"))   # the token never shows
        False
    """

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 30.0, verify: bool = True):
        self.url = url.rstrip("/")
        self._token = token
        self.timeout = timeout
        self.verify = verify

    def __repr__(self) -> str:
        return f"PrometheusReader({self.url!r})"

    def _get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else {}
        try:
            resp = requests.get(
                self.url + path, params=params, headers=headers, timeout=self.timeout, verify=self.verify
            )
        except requests.RequestException as err:
            raise ConnectionFailedError(f"Prometheus at {self.url} could not be reached: {err}") from None
        try:
            body = resp.json()
        except ValueError:
            body = {}
        if resp.status_code != 200 or body.get("status") != "success":
            message = body.get("error") or resp.text[:200]
            raise ApiError(
                resp.status_code, body.get("errorType") or "PrometheusError", f"Prometheus: {message}"
            )
        return body.get("data")

    def query_range(self, promql: str, start: datetime, end: datetime, step: float) -> list[dict[str, Any]]:
        """``/api/v1/query_range``: the matrix (``[{"metric": {...}, "values": [[t, "v"], ...]}]``)."""
        data = self._get(
            "/api/v1/query_range",
            {"query": promql, "start": start.timestamp(), "end": end.timestamp(), "step": f"{step:g}"},
        )
        result: list[dict[str, Any]] = (data or {}).get("result") or []
        return result

    def query(self, promql: str, at: datetime | None = None) -> list[dict[str, Any]]:
        """``/api/v1/query``: the instant vector."""
        params: dict[str, Any] = {"query": promql}
        if at is not None:
            params["time"] = at.timestamp()
        result: list[dict[str, Any]] = (self._get("/api/v1/query", params) or {}).get("result") or []
        return result

    def retention_seconds(self) -> float | None:
        """How far back this Prometheus keeps samples (``storageRetention``'s time part), if it says."""
        try:
            info = self._get("/api/v1/status/runtimeinfo") or {}
        except ApiError:
            return None
        text = str(info.get("storageRetention") or "")
        for part in text.split(" or "):
            seconds = parse_prometheus_duration(part)
            if seconds:
                return seconds
        return None
