"""``usage_report()``: GPU-hours allocated, busy and reclaimed per cluster, from where clusters keep history.

* **Prometheus**, when one is named (``prometheus=`` a URL or a
  :class:`~rayqueue_sdk.config.idle.PrometheusSource`, or ``$RAYQUEUE_PROMETHEUS_URL``):
  kube-state-metrics' pod GPU requests (``kube_pod_container_resource_requests{resource="nvidia_com_gpu",
  unit="integer"}``, joined to ``kube_pod_owner{owner_kind="RayCluster"}`` and to the pods' phase) give the
  allocated GPU-hours; dcgm-exporter's ``DCGM_FI_DEV_GPU_UTIL`` and ``DCGM_FI_PROF_GR_ENGINE_ACTIVE``
  (busy if either says so, as the idle policies read them) give the busy ones. A ``since`` older than
  Prometheus' retention is said in the report's notes.
* **Kueue's Workloads** otherwise, and always for the reclaimed hours: ``Admitted`` and ``Evicted``
  (deactivation) conditions, ``spec.active`` and ``status.accumulatedPastExecutionTimeSeconds`` (the
  admissions that ended in an eviction) (:func:`~rayqueue_sdk.admission.usage.workload_history`).

A Prometheus whose :class:`~rayqueue_sdk.config.idle.PrometheusSource` says ``auth="bearer"`` gets a
bearer token: ``$RAYQUEUE_PROMETHEUS_TOKEN`` when set, else the Kubernetes credentials' own token. A
RayJob's generated RayCluster is folded into the RayJob's row; each row names its ClusterQueue, for the
roll-ups (:mod:`rayqueue_sdk.admission.rollup`).

The arithmetic is pure (:mod:`rayqueue_sdk.admission.usage`); this module only gathers.

Example:
    >>> from rayqueue_sdk import usage_report

    With Prometheus (not run here)::

        report = usage_report("team-a", since="7d", prometheus="http://prometheus.monitoring:9090")
        [(r.name, r.gpu_hours_allocated, r.gpu_hours_busy) for r in report.rows]
        # [('ws', 41.5, 12.25)]
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from rayqueue_sdk.admission.usage import (
    GPU_RESOURCE,
    UsageKey,
    UsageReport,
    WorkloadHistory,
    build_report,
    cluster_of_pod,
    integrate_samples,
    parse_since,
    step_for,
    workload_history,
)
from rayqueue_sdk.config.idle import PrometheusSource
from rayqueue_sdk.errors import ApiError, ConnectionFailedError, ForbiddenError
from rayqueue_sdk.kube.kinds import RAYCLUSTERS
from rayqueue_sdk.kube.prometheus import PrometheusReader, bearer_token_of
from rayqueue_sdk.kube.session import KubeSession, Objects, SessionLike

__all__ = [
    "PROMETHEUS_TOKEN_ENV",
    "PROMETHEUS_URL_ENV",
    "allocated_query",
    "busy_query",
    "usage_report",
    "utilisation_series",
]

log = logging.getLogger(__name__)

#: The environment variable naming the Prometheus to read when ``prometheus=`` is not given.
PROMETHEUS_URL_ENV = "RAYQUEUE_PROMETHEUS_URL"
#: The environment variable holding the bearer token for a Prometheus source with ``auth="bearer"``
#: (default: the Kubernetes credentials' own token).
PROMETHEUS_TOKEN_ENV = "RAYQUEUE_PROMETHEUS_TOKEN"

_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def allocated_query(namespace: str) -> str:
    """PromQL: GPUs requested by each RayCluster's live pods (kube-state-metrics' series and labels).

    Example:
        >>> 'owner_kind="RayCluster"' in allocated_query("ds")
        True
    """
    ns = f'namespace="{namespace}"'
    return (
        "sum by (namespace, owner_name) (("
        f'sum by (namespace, pod) (kube_pod_container_resource_requests{{{ns},resource="nvidia_com_gpu",'
        'unit="integer"})'
        " * on (namespace, pod) "
        f'max by (namespace, pod) (kube_pod_status_phase{{{ns},phase=~"Pending|Running"}} == 1))'
        " * on (namespace, pod) group_left (owner_name) "
        f'max by (namespace, pod, owner_name) (kube_pod_owner{{{ns},owner_kind="RayCluster"}}))'
    )


def busy_query(
    namespace: str, pod_label: str = "exported_pod", namespace_label: str = "exported_namespace"
) -> str:
    """PromQL: each pod's busy GPUs (0..GPUs): per GPU, the larger of ``DCGM_FI_DEV_GPU_UTIL/100`` and
    ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` (busy if either says so), summed over the pod's GPUs.

    Example:
        >>> busy_query("ds").startswith("sum by (exported_namespace, exported_pod)")
        True
    """
    sel = f'{{{namespace_label}="{namespace}"}}'
    by = f"{namespace_label}, {pod_label}"
    return (
        f"sum by ({by}) (max by ({by}, UUID) ("
        f'label_replace(DCGM_FI_DEV_GPU_UTIL{sel} / 100, "field", "util", "", "") or '
        f'label_replace(DCGM_FI_PROF_GR_ENGINE_ACTIVE{sel}, "field", "gr", "", "")))'
    )


def _values(series: dict[str, Any]) -> list[tuple[float, float]]:
    return [(float(t), float(v)) for t, v in series.get("values") or []]


def _source(prometheus: PrometheusSource | str | None) -> PrometheusSource | None:
    if prometheus is None:
        env = os.environ.get(PROMETHEUS_URL_ENV)
        return PrometheusSource(url=env) if env else None
    return PrometheusSource(url=prometheus) if isinstance(prometheus, str) else prometheus


def _from_prometheus(
    reader: PrometheusReader,
    source: PrometheusSource,
    namespaces: Sequence[str],
    since: datetime,
    until: datetime,
    clusters: set[str],
    cluster_queues: Sequence[str] = (),
) -> tuple[dict[UsageKey, float] | None, dict[UsageKey, float], dict[str, float], list[str]]:
    """(allocated per cluster, or None without kube-state-metrics; busy per cluster; GPU-hours per
    ClusterQueue from Kueue's metrics; notes)."""
    notes: list[str] = []
    retention = reader.retention_seconds()
    if retention is not None and since < until - timedelta(seconds=retention):
        kept = until - timedelta(seconds=retention)
        notes.append(
            f"since {since:%Y-%m-%d %H:%M} UTC is older than what Prometheus keeps (retention "
            f"{timedelta(seconds=retention)}): its GPU-hours before {kept:%Y-%m-%d %H:%M} UTC are not counted"
        )
    step = step_for(since, until)
    allocated: dict[UsageKey, float] | None = None
    if reader.query('count(kube_pod_owner{owner_kind="RayCluster"}) or count(kube_pod_info)', until):
        allocated = {}
        for namespace in namespaces:
            for series in reader.query_range(allocated_query(namespace), since, until, step):
                metric = series.get("metric") or {}
                key = (str(metric.get("namespace") or namespace), str(metric.get("owner_name") or ""))
                allocated[key] = allocated.get(key, 0.0) + integrate_samples(_values(series), step)
                clusters.add(key[1])
    else:
        notes.append(
            "Prometheus has no kube-state-metrics series (kube_pod_owner): allocated GPU-hours come from "
            "the Workloads' conditions"
        )
    busy: dict[UsageKey, float] = {}
    for namespace in namespaces:
        query = busy_query(namespace, source.pod_label, source.namespace_label)
        for series in reader.query_range(query, since, until, step):
            metric = series.get("metric") or {}
            cluster = cluster_of_pod(str(metric.get(source.pod_label) or ""), clusters)
            if cluster is None:
                continue
            key = (namespace, cluster)
            busy[key] = busy.get(key, 0.0) + integrate_samples(_values(series), step)
    queues: dict[str, float] = {}
    if cluster_queues:
        # ClusterQueue names are DNS subdomains: only "." needs escaping, as "\\." inside a PromQL string
        names = "|".join(q.replace(".", "\\\\.") for q in sorted(set(cluster_queues)))
        query = (
            "sum by (cluster_queue) (kueue_cluster_queue_resource_usage"
            f'{{resource="{GPU_RESOURCE}",cluster_queue=~"{names}"}})'
        )
        try:
            for series in reader.query_range(query, since, until, step):
                name = str((series.get("metric") or {}).get("cluster_queue") or "")
                queues[name] = integrate_samples(_values(series), step)
        except ApiError as err:
            notes.append(f"Kueue's ClusterQueue metrics could not be read: {err}")
    return allocated, busy, queues, notes


def usage_report(
    namespace: str | None = None,
    since: str | timedelta | datetime | None = None,
    *,
    prometheus: PrometheusSource | str | None = None,
    client: SessionLike = None,
    until: datetime | None = None,
    all_namespaces: bool = False,
) -> UsageReport:
    """GPU-hours per cluster of ``namespace`` (default: the credentials' one) from ``since`` to ``until``.

    Roll them up per namespace, LocalQueue or ClusterQueue with
    :func:`~rayqueue_sdk.admission.rollup.rollup` (the totals stay the same).

    Args:
        namespace: the namespace to report on.
        since: ``"7d"``, ``"12h"``, ``"30m"``..., a :class:`~datetime.timedelta`, or a timezone-aware
            datetime (default: 7 days). Anything else is a :class:`~rayqueue_sdk.errors.ConfigError`
            naming ``since``, raised before anything is sent.
        prometheus: the Prometheus to read (URL or :class:`~rayqueue_sdk.config.idle.PrometheusSource`;
            default ``$RAYQUEUE_PROMETHEUS_URL``); without one, busy hours are ``None``. A source with
            ``auth="bearer"`` is sent ``$RAYQUEUE_PROMETHEUS_TOKEN``, else the credentials' own token.
        client: the Kubernetes client or credentials.
        until: the end of the window (default: now).
        all_namespaces: every namespace the credentials may list, instead of ``namespace``.

    Returns:
        a :class:`~rayqueue_sdk.admission.usage.UsageReport`: ``rows`` (``namespace``, ``name``, ``queue``,
        ``gpu_hours_allocated``, ``gpu_hours_busy``, ``gpu_hours_reclaimed``), ``sources`` and ``notes``.

    Example:
        >>> usage_report(since="last week")  # checked before anything is sent
        Traceback (most recent call last):
        rayqueue_sdk.errors.ConfigError: since: got 'last week'; allowed: a duration such as 30m, ...
    """
    end = until or datetime.now(UTC)
    start = parse_since(since, end)
    source = _source(prometheus)
    session = KubeSession.of(client, namespace=namespace)
    ns = None if all_namespaces else session.namespace
    scope: dict[str, Any] = {"all_namespaces": True} if all_namespaces else {"namespace": ns}
    workloads = session.list(session.kueue_kind("workloads"), **scope)
    histories: list[WorkloadHistory] = [workload_history(w, end) for w in workloads]
    queues: dict[UsageKey, str] = {}
    owners: dict[UsageKey, UsageKey] = {}
    notes: list[str] = []
    try:
        for rc in session.list(RAYCLUSTERS, **scope):
            meta = rc.get("metadata") or {}
            key = (str(meta.get("namespace") or ns), str(meta.get("name")))
            queue = (meta.get("labels") or {}).get(_QUEUE_LABEL)
            if queue:
                queues[key] = queue
            job = next((r for r in meta.get("ownerReferences") or [] if r.get("kind") == "RayJob"), None)
            if job is not None:
                owners[key] = (key[0], str(job.get("name")))
    except ForbiddenError as err:
        notes.append(f"RayClusters cannot be listed ({err.reason}): queues come from the Workloads only")
    try:
        lqs: Objects = session.list(session.kueue_kind("localqueues"), **scope)
    except ForbiddenError:
        lqs = []
    local_queues = {
        (
            str((lq.get("metadata") or {}).get("namespace") or ns),
            str((lq.get("metadata") or {}).get("name")),
        ): str((lq.get("spec") or {}).get("clusterQueue") or "")
        for lq in lqs
    }
    sources = ["workload-conditions"]
    allocated: dict[UsageKey, float] | None = None
    busy: dict[UsageKey, float] | None = None
    per_queue: dict[str, float] = {}
    if source is None:
        notes.append(
            f"no Prometheus named (prometheus=... or ${PROMETHEUS_URL_ENV}): busy GPU-hours are unknown, "
            "allocated ones come from the Workloads' conditions"
        )
    else:
        clusters = {h.name for h in histories} | {k[1] for k in queues} | {k[1] for k in owners}
        namespaces = sorted(
            {h.namespace for h in histories} | {k[0] for k in queues} | ({ns} if ns else set())
        )
        token = _token(session, source, notes)
        reader = PrometheusReader(source.url, token=token)
        cqs = sorted({q for q in local_queues.values() if q})
        try:
            allocated, busy, per_queue, more = _from_prometheus(
                reader, source, namespaces, start, end, clusters, cqs
            )
        except (ApiError, ConnectionFailedError) as err:
            notes.append(f"Prometheus could not be read ({err}): busy GPU-hours are unknown")
        else:
            notes.extend(more)
            sources.insert(0, "prometheus")
    return build_report(
        start,
        end,
        histories,
        allocated_by_metrics=allocated,
        busy_by_metrics=busy,
        queues=queues,
        sources=sources,
        notes=notes,
        cluster_queues=per_queue,
        owners=owners,
        local_queues=local_queues,
    )


def _token(session: KubeSession, source: PrometheusSource, notes: list[str]) -> str | None:
    """The bearer token for ``source``: none unless it says ``auth="bearer"``; then
    ``$RAYQUEUE_PROMETHEUS_TOKEN``, else the Kubernetes credentials' own (a note when there is none)."""
    if source.auth != "bearer":
        return None
    token = os.environ.get(PROMETHEUS_TOKEN_ENV, "").strip() or bearer_token_of(session.api)
    if token is None:
        notes.append(
            f"the Prometheus source asks for a bearer token, but ${PROMETHEUS_TOKEN_ENV} is not set and the "
            "Kubernetes credentials carry none: the queries were sent without one"
        )
    return token


def utilisation_series(
    namespace: str,
    cluster: str,
    prometheus: PrometheusSource | str | None = None,
    *,
    minutes: float = 30,
    points: int = 40,
) -> list[float]:
    """The cluster's GPU utilisation (%, the busiest of its GPUs; oldest first) over the last ``minutes``,
    from DCGM's series in Prometheus (``prometheus=`` or ``$RAYQUEUE_PROMETHEUS_URL``), for the card's
    sparkline. Empty when no Prometheus is named or it has no samples for the cluster: never a guess.

    Example:
        >>> utilisation_series("ds", "ws", None) if "RAYQUEUE_PROMETHEUS_URL" not in os.environ else []
        []
    """
    source = _source(prometheus)
    if source is None:
        return []
    end = datetime.now(UTC)
    start = end - timedelta(minutes=minutes)
    step = max(1.0, minutes * 60 / points)
    pods = f"{cluster}-(head|[a-z0-9-]+-worker)-[a-z0-9]+"
    sel = f'{{{source.namespace_label}="{namespace}",{source.pod_label}=~"{pods}"}}'
    query = (
        f'100 * max(label_replace(DCGM_FI_DEV_GPU_UTIL{sel} / 100, "field", "util", "", "") or '
        f'label_replace(DCGM_FI_PROF_GR_ENGINE_ACTIVE{sel}, "field", "gr", "", ""))'
    )
    try:
        token = os.environ.get(PROMETHEUS_TOKEN_ENV) if source.auth == "bearer" else None
        result = PrometheusReader(source.url, token=token).query_range(query, start, end, step)
    except (ApiError, ConnectionFailedError) as err:
        log.info("GPU utilisation of %s/%s not read: %s", namespace, cluster, err)
        return []
    return [v for _, v in _values(result[0])] if result else []
