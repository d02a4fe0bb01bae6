"""The idle scale-to-zero policy: :class:`IdlePolicy`, :class:`PrometheusSource`, :class:`PreStopHook`.

Pure models (no I/O), checked in their constructors like every configuration model: a bad value is a
:class:`~rayqueue_sdk.errors.ConfigError` naming the field, the value and what is allowed, raised before
anything is sent. The policy is given to ``ClusterConfiguration(idle_scale_to_zero=...)`` or, on a live
cluster, to ``Cluster.scale_to_zero(...)``; the objects it stands for are built by
:mod:`rayqueue_sdk.manifests.scaling` and applied by :mod:`rayqueue_sdk.scaling`.

What counts as idle is a choice, as in SkyPilot's autostop (``wait_for``): ``idle_signal="gpu"`` (the
default: no GPU use, whatever else runs), ``"jobs"`` (no pending or running Ray job) or ``"gpu_and_jobs"``
(both). KEDA can only see the Prometheus query, so ``mode="keda"`` takes ``idle_signal="gpu"``, a
``prometheus`` source and no ``hook``; ``mode="auto"`` picks the reaper when the policy asks for more.

The Prometheus query is a template: ``{pods}`` (required: the regex of this cluster's head and worker
pods), ``{namespace}``, ``{window}``, ``{pod_label}`` and ``{namespace_label}`` are replaced by plain
text substitution (PromQL's own braces stay as written). The default (:data:`DEFAULT_GPU_QUERY`) reads
two of dcgm-exporter's series as scraped through a ServiceMonitor (labels ``exported_pod`` and
``exported_namespace``): ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` (a 0-1 ratio, per MIG instance, Volta and
later), as a percentage, cross-checked with ``DCGM_FI_DEV_GPU_UTIL`` (0-100, deprecated and blind per
MIG instance, NVIDIA/DCGM#80, so read only from series without a ``GPU_I_ID``); the highest of the two
over the window: busy if either says busy (GR_ENGINE_ACTIVE has read 0 under load on some drivers,
dcgm-exporter#662). A gauge wants ``max_over_time`` over a window (``rate()`` of a gauge is
meaningless), and ``max`` makes it one series, as KEDA requires. Where neither series exists (no pods
yet, the exporter down) the query returns *nothing*, never 0: both modes read that as busy.

Example:
    >>> p = IdlePolicy(idle_minutes=60)
    >>> str(p.mode), p.idle_signal, p.idle_seconds, p.initial_cooldown_seconds
    ('auto', 'gpu', 3600, 3600)
    >>> IdlePolicy(idle_minutes=0)
    Traceback (most recent call last):
    ...
    rayqueue_sdk.errors.ConfigError: idle_minutes: not above 0 (got 0); allowed: a number of minutes > 0...
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from rayqueue_sdk.config.errors import StrictModel
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.idle import IdleMode, IdleModeName, IdleSignal

__all__ = [
    "DEFAULT_GPU_QUERY",
    "KEDA_TIME_LAG_SECONDS",
    "NEW_SERIES_TERM",
    "IDLE_SIGNALS",
    "MODES",
    "IdlePolicy",
    "PreStopHook",
    "PrometheusSource",
    "duration_seconds",
    "prometheus_duration",
]

#: The ways to scale a cluster to zero (:class:`~rayqueue_sdk.manifests.idle.IdleMode`'s values): KEDA on
#: the Workload's ``/scale``, the in-cluster reaper, or whichever the cluster supports (KEDA where served).
MODES: tuple[str, ...] = tuple(m.value for m in IdleMode)
#: What counts as busy: GPU use, Ray jobs pending or running, or either of them.
IDLE_SIGNALS: tuple[str, ...] = ("gpu", "jobs", "gpu_and_jobs")

#: The default query: the highest GPU use of this cluster's GPUs (or MIG instances) over the window, in
#: percent: ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` x 100 or ``DCGM_FI_DEV_GPU_UTIL`` (whole GPUs only), whichever
#: is higher. ``label_replace`` tags the two so that ``or`` keeps both (``or`` drops a right-hand sample
#: whose labels match a left-hand one). No series at all: an empty result, which both modes read as busy.
DEFAULT_GPU_QUERY = (
    "max(label_replace(max_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE"
    '{{namespace_label}="{namespace}",{pod_label}=~"{pods}"}[{window}]) * 100,'
    ' "signal", "gr_engine_active", "", "")'
    " or label_replace(max_over_time(DCGM_FI_DEV_GPU_UTIL"
    '{{namespace_label}="{namespace}",{pod_label}=~"{pods}",GPU_I_ID=""}[{window}]),'
    ' "signal", "gpu_util", "", ""))'
)

#: KEDA only, with the default query: *busy* (100) while this cluster's GPU series are younger than the
#: initial cooldown, i.e. present now but absent a cooldown ago. KEDA counts ``initialCooldownPeriod``
#: from the ScaledObject's creation and cannot see Kueue's admission: a cluster that waited in the
#: queue for longer would be scaled down at its first idle reading after admission, before it ever ran.
#: This term restarts KEDA's clock (``lastActiveTime``) until the pods have had the initial cooldown;
#: the same holds after an exporter outage (the gap may have been busy). ``{cooldown}`` is the initial
#: cooldown as a Prometheus duration.
NEW_SERIES_TERM = (
    'label_replace({present} * 0 + 100, "signal", "new_series", "", "") unless on() {present_then}'
)

#: KEDA's Prometheus scaler asks for its query at the poll's time cut to the whole second (``time=`` in
#: RFC 3339 without a fraction), up to 1 s before the poll: a window ``[W]`` there ends before the last
#: samples. A cluster whose first busy sample (or whose first series) is younger than that second reads
#: idle, and a fresh ScaledObject without ``initialCooldownPeriod`` deactivates it at its first poll. So
#: KEDA's default query reads ``[W + 1s] offset -1s``: from the same start up to a second after KEDA's
#: time, i.e. every sample up to the poll (negative offsets: Prometheus 2.33+, Thanos 0.25+). It reads
#: idle exactly when the plain ``[W]`` would (the start does not move), and busy on the samples of that
#: last second too.
KEDA_TIME_LAG_SECONDS = 1
_KEDA_SHIFT = f" offset -{KEDA_TIME_LAG_SECONDS}s"
_PRESENT = (
    "max(max_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE"
    '{{namespace_label}="{namespace}",{pod_label}=~"{pods}"}[{window}]{offset})'
    " or max_over_time(DCGM_FI_DEV_GPU_UTIL"
    '{{namespace_label}="{namespace}",{pod_label}=~"{pods}"}[{window}]{offset}))'
)

_DURATION = re.compile(r"^([0-9]+(ms|s|m|h|d|w|y))+$")
_DURATION_PART = re.compile(r"([0-9]+)(ms|s|m|h|d|w|y)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_PLACEHOLDERS = ("{pods}", "{namespace}", "{window}", "{pod_label}", "{namespace_label}")


def duration_seconds(text: str) -> float:
    """Seconds in a Prometheus duration (``1m30s``, ``5s``, ``500ms``).

    Example:
        >>> duration_seconds("1m30s"), duration_seconds("500ms")
        (90.0, 0.5)
    """
    return float(sum(int(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(text)))


def prometheus_duration(seconds: float) -> str:
    """A Prometheus duration for a number of seconds (whole milliseconds).

    Example:
        >>> prometheus_duration(30), prometheus_duration(0.25)
        ('30s', '250ms')
    """
    millis = max(1, round(seconds * 1000))
    return f"{millis // 1000}s" if millis % 1000 == 0 else f"{millis}ms"


def _positive_number(field: str, value: Any, unit: str, *, zero_ok: bool = False) -> float:
    allowed = f"a number of {unit} {'>=' if zero_ok else '>'} 0, e.g. 60"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(field, value, allowed, problem="not a number")
    if not math.isfinite(value):
        raise ConfigError(field, value, allowed, problem="not a finite number")
    if value < 0 or (value == 0 and not zero_ok):
        raise ConfigError(field, value, allowed, problem="not above 0" if not zero_ok else "negative")
    return float(value)


def _one_of(field: str, value: Any, choices: tuple[str, ...], problem: str) -> Any:
    if value not in choices:
        raise ConfigError(field, value, "one of " + ", ".join(repr(c) for c in choices), problem=problem)
    return value


class PrometheusSource(StrictModel):
    """Where and how idleness is read from Prometheus (both modes; the reaper can do without it).

    ``url`` is the Prometheus (or Thanos querier) HTTP API base, ``http://`` or ``https://``; seed 000's
    ``https://thanos-querier.openshift-monitoring.svc.cluster.local:9092`` is an example, never a default.
    ``auth="bearer"`` sends the policy's ServiceAccount token (KEDA: through a TriggerAuthentication on
    the token Secret, as seed 000 does; the reaper: its own projected token); ``"none"`` sends nothing.

    Example:
        >>> src = PrometheusSource(url="http://prometheus.monitoring:9090")
        >>> q = src.render_query(pods="ws-.+", namespace="ds")
        >>> q[:62]
        'max(label_replace(max_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE{'
        >>> 'DCGM_FI_DEV_GPU_UTIL{exported_namespace="ds",exported_pod=~"ws-.+",GPU_I_ID=""}[1m]' in q
        True
        >>> PrometheusSource(url="ftp://x")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: url: not an http(s) URL (got 'ftp://x'); allowed: ...
    """

    url: str = Field(description="the Prometheus HTTP API base URL, http:// or https://")
    query: str = Field(
        default=DEFAULT_GPU_QUERY,
        description="a PromQL query returning one series, with the placeholder {pods} (this cluster's pods)",
    )
    pod_label: str = Field(default="exported_pod", description="the label naming the pod on the series")
    namespace_label: str = Field(
        default="exported_namespace", description="the label naming the namespace on the series"
    )
    window: str = Field(default="1m", description="a Prometheus duration such as 30s, 1m or 5m")
    auth: Literal["bearer", "none"] = Field(default="none", description="'bearer' or 'none'")

    @field_validator("url", mode="before")
    @classmethod
    def _url(cls, value: Any) -> Any:
        if not isinstance(value, str) or not re.match(r"^https?://[^/\s]+", value):
            raise ConfigError(
                "url",
                value,
                "an http:// or https:// URL, e.g. http://prometheus.monitoring.svc:9090",
                problem="not an http(s) URL",
            )
        return value.rstrip("/")

    @field_validator("query", mode="before")
    @classmethod
    def _query(cls, value: Any) -> Any:
        if not isinstance(value, str) or "{pods}" not in value:
            raise ConfigError(
                "query",
                value,
                "a PromQL query with the placeholder {pods} (this cluster's pod regex), e.g. "
                + DEFAULT_GPU_QUERY,
                problem="no placeholder for the cluster",
            )
        return value

    @field_validator("pod_label", "namespace_label", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
        if not isinstance(value, str) or not _LABEL.match(value):
            raise ConfigError("label", value, "a Prometheus label name, e.g. exported_pod")
        return value

    @field_validator("window", mode="before")
    @classmethod
    def _window(cls, value: Any) -> Any:
        if not isinstance(value, str) or not _DURATION.match(value) or duration_seconds(value) <= 0:
            raise ConfigError("window", value, "a Prometheus duration above 0 such as 30s, 1m or 5m")
        return value

    @property
    def window_seconds(self) -> float:
        """The query's window in seconds.

        Example:
            >>> PrometheusSource(url="http://p:9090", window="1m30s").window_seconds
            90.0
        """
        return duration_seconds(self.window)

    def render_keda_query(
        self, *, pods: str, namespace: str, window: str | None = None, initial_cooldown_seconds: float = 0
    ) -> str:
        """The query KEDA runs. The default query's windows reach up to KEDA's poll, not to the whole
        second before it (:data:`KEDA_TIME_LAG_SECONDS`), and with an initial cooldown the query also
        reads busy while the cluster's GPU series are younger than it (:data:`NEW_SERIES_TERM`). A query
        of your own is used as given (its windows end at KEDA's whole-second time).

        Example:
            >>> src = PrometheusSource(url="http://p:9090")
            >>> q = src.render_keda_query(pods="ws-.+", namespace="ds", initial_cooldown_seconds=600)
            >>> '"new_series"' in q and "[1m] offset 600s)" in q and q.count("[61s] offset -1s)") == 4
            True
            >>> plain = src.render_keda_query(pods="ws-.+", namespace="ds")
            >>> plain == src.render_query(pods="ws-.+", namespace="ds").replace("[1m]", "[61s] offset -1s")
            True
        """
        if self.query != DEFAULT_GPU_QUERY:
            return self.render_query(pods=pods, namespace=namespace, window=window)
        seconds = duration_seconds(window or self.window)
        reach = prometheus_duration(seconds + KEDA_TIME_LAG_SECONDS)
        shifted = self.model_copy(
            update={"query": DEFAULT_GPU_QUERY.replace("[{window}]", "[{window}]" + _KEDA_SHIFT)}
        )
        query = shifted.render_query(pods=pods, namespace=namespace, window=reach)
        if initial_cooldown_seconds <= 0:
            return query
        # present now (up to the poll); present a cooldown ago (KEDA's own time: never less than the
        # cooldown since the series appeared)
        offset = f" offset {prometheus_duration(initial_cooldown_seconds)}"
        present = self.model_copy(update={"query": _PRESENT.replace("{offset}", _KEDA_SHIFT)})
        then = self.model_copy(update={"query": _PRESENT.replace("{offset}", offset)})
        term = NEW_SERIES_TERM.format(
            present=present.render_query(pods=pods, namespace=namespace, window=reach),
            present_then=then.render_query(pods=pods, namespace=namespace, window=window),
        )
        return f'max(label_replace({query}, "signal", "use", "", "") or {term})'

    def render_query(self, *, pods: str, namespace: str, window: str | None = None) -> str:
        """The query for one cluster: the placeholders replaced (plain text, PromQL braces kept).

        ``window`` replaces the source's own (the policy shortens it to its idle period).

        Example:
            >>> PrometheusSource(url="http://p:9090", query='max(up{pod=~"{pods}"})').render_query(
            ...     pods="a-.*", namespace="n")
            'max(up{pod=~"a-.*"})'
        """
        values = {
            "{pods}": pods,
            "{namespace}": namespace,
            "{window}": window or self.window,
            "{pod_label}": self.pod_label,
            "{namespace_label}": self.namespace_label,
        }
        text = self.query
        for key in _PLACEHOLDERS:
            text = text.replace(key, values[key])
        return text


class PreStopHook(StrictModel):
    """A command run on the Ray head (as a Ray job) before the quota is given back, e.g. a checkpoint.

    It runs with a timeout; its outcome (succeeded, failed, timed out) shows in ``cluster.status()``.
    The cluster is scaled to zero whatever the outcome: the hook is a courtesy, not a veto.

    Example:
        >>> PreStopHook(command="python checkpoint.py", timeout_seconds=120).timeout_seconds
        120.0
    """

    command: str = Field(description="a shell command, run on the head as a Ray job entrypoint")
    timeout_seconds: float = Field(default=300.0, description="a number of seconds > 0")

    @field_validator("command", mode="before")
    @classmethod
    def _command(cls, value: Any) -> Any:
        if not isinstance(value, str) or not value.strip():
            raise ConfigError("command", value, "a non-empty shell command, e.g. 'python ckpt.py'")
        return value

    @field_validator("timeout_seconds", mode="before")
    @classmethod
    def _timeout(cls, value: Any) -> Any:
        return _positive_number("timeout_seconds", value, "seconds")


class IdlePolicy(StrictModel):
    """Scale the cluster to zero after ``idle_minutes`` without use, giving its quota back to the queue.

    Attributes:
        idle_minutes: minutes without use before scaling to zero (fractions allowed, > 0).
        mode: ``"auto"`` (KEDA where Kueue serves ``workloads/scale`` and KEDA is installed, else the
            reaper), ``"keda"`` or ``"reaper"``.
        idle_signal: ``"gpu"`` (default), ``"jobs"`` or ``"gpu_and_jobs"``.
        prometheus: a :class:`PrometheusSource` (or a URL string); KEDA needs one, the reaper uses
            Ray's own view from the head without one.
        hook: a :class:`PreStopHook` (or a command string), reaper only.
        initial_cooldown_minutes: how long a freshly admitted cluster is left alone before its idle
            time counts (default ``idle_minutes``). KEDA counts it from the ScaledObject's creation
            (KEDA cannot see Kueue admission); the reaper from the Workload's admission.
        polling_seconds: how often idleness is checked (KEDA's ``pollingInterval``).

    Example:
        >>> IdlePolicy(idle_minutes=30, mode="keda", prometheus="http://prom:9090").prometheus.url
        'http://prom:9090'
        >>> IdlePolicy(idle_minutes=30, mode="keda", idle_signal="jobs", prometheus="http://prom:9090")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: idle_signal: KEDA sees only the Prometheus query (got 'jobs'); ...
    """

    idle_minutes: float = Field(description="a number of minutes > 0, e.g. 60")
    mode: IdleMode | IdleModeName = Field(
        default=IdleMode.AUTO, description=" or ".join(repr(m) for m in MODES)
    )
    idle_signal: IdleSignal = Field(default="gpu", description="'gpu', 'jobs' or 'gpu_and_jobs'")
    prometheus: PrometheusSource | None = Field(
        default=None, description="a PrometheusSource or an http(s) URL"
    )
    hook: PreStopHook | None = Field(default=None, description="a PreStopHook or a shell command")
    initial_cooldown_minutes: float | None = Field(
        default=None, description="a number of minutes >= 0 (default: idle_minutes)"
    )
    polling_seconds: int = Field(default=30, description="an integer number of seconds >= 1")

    @field_validator("idle_minutes", mode="before")
    @classmethod
    def _idle(cls, value: Any) -> Any:
        return _positive_number("idle_minutes", value, "minutes")

    @field_validator("initial_cooldown_minutes", mode="before")
    @classmethod
    def _initial(cls, value: Any) -> Any:
        return (
            None
            if value is None
            else _positive_number("initial_cooldown_minutes", value, "minutes", zero_ok=True)
        )

    @field_validator("polling_seconds", mode="before")
    @classmethod
    def _polling(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError("polling_seconds", value, "an integer number of seconds >= 1")
        return value

    @field_validator("mode", mode="before")
    @classmethod
    def _mode(cls, value: Any) -> Any:
        return IdleMode(_one_of("mode", value, MODES, "unknown mode"))

    @field_validator("idle_signal", mode="before")
    @classmethod
    def _signal(cls, value: Any) -> Any:
        return _one_of("idle_signal", value, IDLE_SIGNALS, "unknown")

    @field_validator("prometheus", mode="before")
    @classmethod
    def _prometheus(cls, value: Any) -> Any:
        return PrometheusSource(url=value) if isinstance(value, str) else value

    @field_validator("hook", mode="before")
    @classmethod
    def _hook(cls, value: Any) -> Any:
        return PreStopHook(command=value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _keda_limits(self) -> IdlePolicy:
        if self.mode != "keda":
            return self
        if self.idle_signal != "gpu":
            raise ConfigError(
                "idle_signal",
                self.idle_signal,
                "'gpu' with mode='keda', or mode='reaper' (it also reads Ray's jobs)",
                problem="KEDA sees only the Prometheus query",
            )
        if self.prometheus is None:
            raise ConfigError(
                "prometheus",
                None,
                "a PrometheusSource or URL with mode='keda' (e.g. seed 000's "
                "https://thanos-querier.openshift-monitoring.svc.cluster.local:9092), or mode='reaper'",
                problem="KEDA needs a Prometheus to query",
            )
        if self.hook is not None:
            raise ConfigError(
                "hook",
                self.hook.command,
                "no hook with mode='keda', or mode='reaper'",
                problem="KEDA runs no hooks",
            )
        return self

    @property
    def idle_seconds(self) -> int:
        """The idle period in whole seconds (at least 1).

        Example:
            >>> IdlePolicy(idle_minutes=0.1).idle_seconds
            6
        """
        return max(1, math.ceil(self.idle_minutes * 60 - 1e-9))

    @property
    def initial_cooldown_seconds(self) -> int:
        """The initial cooldown in whole seconds (``idle_minutes`` when not given).

        Example:
            >>> IdlePolicy(idle_minutes=1, initial_cooldown_minutes=5).initial_cooldown_seconds
            300
        """
        minutes = (
            self.idle_minutes if self.initial_cooldown_minutes is None else self.initial_cooldown_minutes
        )
        return max(0, math.ceil(minutes * 60 - 1e-9))

    @property
    def query_window(self) -> str | None:
        """The Prometheus query's window: the source's, cut to the idle period (``None``: no Prometheus).

        A sample of use stays in ``max_over_time(...[window])`` for a whole window after the work ends,
        so a window longer than the idle period alone would keep the cluster longer than asked.

        Example:
            >>> IdlePolicy(idle_minutes=0.5, prometheus="http://p:9090").query_window
            '30s'
            >>> IdlePolicy(idle_minutes=60, prometheus="http://p:9090").query_window
            '1m'
        """
        if self.prometheus is None:
            return None
        if self.prometheus.window_seconds <= self.idle_seconds:
            return self.prometheus.window
        return prometheus_duration(self.idle_seconds)

    @property
    def query_window_seconds(self) -> float:
        """:attr:`query_window` in seconds (0 without Prometheus: Ray's own view is instantaneous).

        Example:
            >>> IdlePolicy(idle_minutes=0.5, prometheus="http://p:9090").query_window_seconds
            30.0
        """
        window = self.query_window
        return 0.0 if window is None else duration_seconds(window)

    @property
    def keda_cooldown_seconds(self) -> int:
        """KEDA's ``cooldownPeriod``: the idle period less what the query's window already counted.

        KEDA's ``lastActiveTime`` is the last poll whose query read use, and the query reads use for a
        whole window after the work ended. That last poll came less than a polling interval before the
        first that no longer saw the use, so it is at least ``window - pollingInterval`` after the
        use: that much of the idle period has passed when KEDA's cooldown starts. So a 30 s policy
        acts 30 s after the work ended (plus at most two polling intervals), never before, and never
        after 30 s + the window.

        Example:
            >>> IdlePolicy(idle_minutes=2, polling_seconds=5,
            ...            prometheus={"url": "http://p:9090", "window": "30s"}).keda_cooldown_seconds
            95
            >>> IdlePolicy(idle_minutes=2, polling_seconds=30,  # a window no longer than a poll
            ...            prometheus={"url": "http://p:9090", "window": "30s"}).keda_cooldown_seconds
            120
        """
        counted = max(0, math.ceil(self.query_window_seconds) - self.polling_seconds)
        return max(0, self.idle_seconds - counted)

    def keda_possible(self) -> bool:
        """Whether KEDA could carry this policy (GPU signal, a Prometheus source, no hook).

        Example:
            >>> IdlePolicy(idle_minutes=5).keda_possible(), IdlePolicy(idle_minutes=5,
            ...     prometheus="http://p:9090").keda_possible()
            (False, True)
        """
        return self.idle_signal == "gpu" and self.prometheus is not None and self.hook is None

    def describe(self) -> str:
        """One line for humans: the period, the signal and the mode.

        Example:
            >>> IdlePolicy(idle_minutes=60).describe()
            'scale to zero after 60 idle min (signal gpu, mode auto)'
        """
        what = f"signal {self.idle_signal}, mode {self.mode}"
        return f"scale to zero after {self.idle_minutes:g} idle min ({what})"
