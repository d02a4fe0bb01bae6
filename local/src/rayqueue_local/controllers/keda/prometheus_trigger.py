"""KEDA's Prometheus scaler: one instant query against any Prometheus over HTTP(S).

Follows KEDA v2.20.2 [E pkg/scalers/prometheus_scaler.go]: ``GET <serverAddress>/api/v1/query``
with ``query``, ``time`` (now, RFC 3339 in whole seconds as Go's ``time.RFC3339`` formats it: up
to 1 s *before* the poll, so a range ``[W]`` ends before the newest samples) and, when set,
``namespace`` and the ``queryParameters``; ``customHeaders``; ``authModes: bearer`` sends
``Authorization: Bearer <token>``, ``basic`` sends basic auth; a ``ca`` from the
TriggerAuthentication verifies the server (``unsafeSsl: "true"`` skips verification).
Results and errors as upstream:

- a non-2xx answer: ``prometheus query api returned error. status: <code>``;
- more than one series: ``prometheus query <query> returned multiple elements``;
- no series (or NaN/Inf): 0 when ``ignoreNullValues`` (the default), else an error.

Active ⇔ value > ``activationThreshold`` (default 0).

Example:
    >>> m = PrometheusTrigger.from_metadata({"serverAddress": "http://127.0.0.1:9", "query": "up",
    ...                                        "threshold": "5"}, {})
    >>> m.threshold, m.activation_threshold, m.ignore_null_values
    (5.0, 0.0, True)
"""

from __future__ import annotations

import base64
import json
import math
import ssl
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime

from rayqueue_local.apimachinery.time import format_rfc3339, now_rfc3339
from rayqueue_local.errors import LocalControlPlaneError

__all__ = ["PrometheusTrigger", "TriggerError"]


class TriggerError(LocalControlPlaneError):
    """The scaler could not produce a value (KEDA logs it and emits a ``KEDAScalerFailed`` event)."""


def _flag(value: str | None, default: bool) -> bool:
    if value is None or value == "":
        return default
    return value.strip().lower() == "true"


def _pairs(text: str | None) -> dict[str, str]:
    """KEDA's ``key1=value1,key2=value2`` form."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if "=" in part:
            key, value = part.split("=", 1)
            out[key.strip()] = value.strip()
    return out


@dataclass
class PrometheusTrigger:
    """A parsed ``type: prometheus`` trigger with its authentication parameters."""

    server_address: str
    query: str
    threshold: float
    activation_threshold: float = 0.0
    namespace: str = ""
    ignore_null_values: bool = True
    unsafe_ssl: bool = False
    timeout: float = 3.0
    auth_modes: list[str] = field(default_factory=list)
    custom_headers: dict[str, str] = field(default_factory=dict)
    query_parameters: dict[str, str] = field(default_factory=dict)
    auth: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def from_metadata(cls, metadata: dict[str, str], auth: dict[str, str]) -> PrometheusTrigger:
        """Parse trigger ``metadata`` (strings) and resolved auth parameters; ``ValueError`` if invalid."""
        for required in ("serverAddress", "query", "threshold"):
            if not metadata.get(required):
                raise ValueError(
                    f"error parsing prometheus metadata: missing required parameter {required!r}"
                )
        try:
            threshold = float(metadata["threshold"])
            activation = float(metadata.get("activationThreshold") or 0)
        except ValueError as err:
            raise ValueError(f"error parsing prometheus metadata: {err}") from None
        modes = [m.strip() for m in (metadata.get("authModes") or "").split(",") if m.strip()]
        return cls(
            server_address=metadata["serverAddress"].rstrip("/"),
            query=metadata["query"],
            threshold=threshold,
            activation_threshold=activation,
            namespace=metadata.get("namespace", ""),
            ignore_null_values=_flag(metadata.get("ignoreNullValues"), True),
            unsafe_ssl=_flag(metadata.get("unsafeSsl"), False),
            timeout=float(metadata.get("timeout") or 3000) / 1000.0,
            auth_modes=modes,
            custom_headers=_pairs(metadata.get("customHeaders")),
            query_parameters=_pairs(metadata.get("queryParameters")),
            auth=dict(auth),
        )

    def url(self, now: datetime | None = None) -> str:
        """The query URL KEDA would call."""
        stamp = format_rfc3339(now) if now is not None else now_rfc3339()
        url = f"{self.server_address}/api/v1/query?query={urllib.parse.quote_plus(self.query)}&time={stamp}"
        if self.namespace:
            url += f"&namespace={self.namespace}"
        for key, value in self.query_parameters.items():
            url += f"&{urllib.parse.quote_plus(key)}={urllib.parse.quote_plus(value)}"
        return url

    def _headers(self) -> dict[str, str]:
        headers = dict(self.custom_headers)
        if "bearer" in self.auth_modes and self.auth.get("bearerToken"):
            headers["Authorization"] = f"Bearer {self.auth['bearerToken']}"
        elif "basic" in self.auth_modes and self.auth.get("username"):
            raw = f"{self.auth['username']}:{self.auth.get('password', '')}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(raw).decode()
        elif "custom" in self.auth_modes and self.auth.get("customAuthHeader"):
            headers[self.auth["customAuthHeader"]] = self.auth.get("customAuthValue", "")
        return headers

    def _context(self) -> ssl.SSLContext | None:
        if not self.server_address.startswith("https://"):
            return None
        if self.unsafe_ssl:
            return ssl._create_unverified_context()  # noqa: S323 - the user asked for unsafeSsl
        context = ssl.create_default_context()
        if self.auth.get("ca"):
            with tempfile.NamedTemporaryFile("w", suffix=".crt") as fh:
                fh.write(self.auth["ca"])
                fh.flush()
                context.load_verify_locations(fh.name)
        return context

    def value(self, now: datetime | None = None) -> float:
        """Run the query as a poll at ``now`` (default: the current time) would; the metric value
        (KEDA's rules for empty, NaN and several series)."""
        request = urllib.request.Request(self.url(now), headers=self._headers())
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self._context()) as resp:
                body = resp.read()
        except urllib.error.HTTPError as err:
            raise TriggerError(f"prometheus query api returned error. status: {err.code}") from None
        except (OSError, urllib.error.URLError) as err:
            raise TriggerError(f'Get "{request.full_url}": {getattr(err, "reason", err)}') from None
        try:
            result = json.loads(body)["data"]["result"]
        except (ValueError, KeyError, TypeError) as err:
            raise TriggerError(f"prometheus query returned an unexpected body: {err}") from None
        if not result:
            if self.ignore_null_values:
                return 0.0
            raise TriggerError("prometheus metrics 'prometheus' target may be lost, the result is empty")
        if len(result) > 1:
            raise TriggerError(f"prometheus query {self.query} returned multiple elements")
        pair = result[0].get("value") or []
        if not pair:
            if self.ignore_null_values:
                return 0.0
            raise TriggerError("prometheus metrics 'prometheus' target may be lost, the value list is empty")
        if len(pair) < 2:
            raise TriggerError(f"prometheus query {self.query} didn't return enough values")
        number = float(pair[1])
        if math.isinf(number) or math.isnan(number):
            if self.ignore_null_values:
                return 0.0
            raise TriggerError(f"prometheus query returns {number:f}")
        return number

    def is_active(self, value: float) -> bool:
        """KEDA's activation: ``value > activationThreshold``."""
        return value > self.activation_threshold

    def desired_replicas(self, value: float, low: int, high: int) -> int:
        """What the HPA would ask for with an ``AverageValue`` target: ``ceil(value / threshold)``,
        kept within ``[max(low, 1), high]`` (KEDA itself only moves between 0 and that range)."""
        wanted = math.ceil(value / self.threshold) if self.threshold > 0 else high
        return max(max(low, 1), min(wanted, high))
