"""The idle reaper: scales one RayCluster to zero after its idle period (reaper mode, DESIGN §6).

ONE file, standard library only: it ships in a ConfigMap and runs with the Ray image's ``python``
(``python /etc/rayqueue-agent/agent.py``), so it imports neither rayqueue_sdk nor any third-party module.
Its configuration is ``config.json`` beside it (or the file named by ``RAYQUEUE_AGENT_CONFIG``), written
by :func:`rayqueue_sdk.manifests.scaling.agent_config`.

A pure decision core, :func:`decide` (the idle clock, the initial cooldown, a new admission restarting the
clock) with :func:`busy_from` (what counts as busy for ``idle_signal`` gpu | jobs | gpu_and_jobs) and
:func:`hook_outcome` (the pre-stop hook's result in words), separate from its I/O loop (:class:`Agent`):

- the Kubernetes API exactly as a pod reaches it: the token and ``ca.crt`` from
  ``/var/run/secrets/kubernetes.io/serviceaccount/`` (``RAYQUEUE_AGENT_TOKEN_DIR`` overrides the directory,
  for tests), the server from ``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT``;
- idleness from the Prometheus query when one is configured (a bearer token optional), else from Ray's own
  view on the head's dashboard: no pending or running job (``/api/jobs/``), no GPU in use
  (``/nodes?view=summary``: node GPU utilisation, and GPUs held by tasks or actors). The head is found
  from the RayCluster's ``status.head.serviceIP`` (or ``podIP``) and ``status.endpoints.dashboard``;
- after the idle period it runs the pre-stop hook (a Ray job on the head, with its timeout), then patches
  ``Workload.spec.active=false`` (queued) or ``RayCluster.spec.suspend=true`` (no queue);
- it records its state (idle since, last decision, the hook's outcome, when it scaled) as the annotation
  ``scaling.rayqueue-sdk.io/state`` on the object it patches anyway, so its Role needs no other verb.

A signal that cannot be read (Prometheus or the dashboard unreachable) or reads nothing (an empty
query result: no series for the cluster's pods, the exporter down) never scales anything down: the
agent logs it and tries again at the next poll, and the idle clock starts again from there.

Example:
    >>> cfg = dict(idle_seconds=60, initial_cooldown_seconds=60)
    >>> s = decide(AgentState(), Observation(running=True, admitted_at=1000.0, busy=False), 1030.0, **cfg)
    >>> s.action, s.state.idle_since
    ('wait', 1000.0)
    >>> decide(s.state, Observation(running=True, admitted_at=1000.0, busy=False), 1060.0, **cfg).action
    'scale'
"""

from __future__ import annotations

import calendar
import contextlib
import json
import logging
import math
import os
import re
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "HOOK_PREFIX",
    "SCALED_WORDS",
    "SCALING_WORDS",
    "STATE_ANNOTATION",
    "Agent",
    "AgentState",
    "Decision",
    "KubeApi",
    "Observation",
    "busy_from",
    "decide",
    "format_time",
    "gpu_busy_from_ray",
    "hook_outcome",
    "jobs_busy",
    "main",
    "parse_time",
    "no_pods_left",
    "prometheus_busy",
    "settle",
]

log = logging.getLogger("rayqueue-idle-agent")

#: The annotation the agent writes its state into (on the Workload, or the RayCluster without a queue).
STATE_ANNOTATION = "scaling.rayqueue-sdk.io/state"
#: The submission id prefix of pre-stop hook jobs (they never count as the user's jobs).
HOOK_PREFIX = "rayqueue-prestop-"

#: How the agent's decision begins once it deactivated the cluster, while its pods still stop (the quota
#: is not free until they are gone: Kueue may release it earlier, kueue PR #15980) and once they are gone.
SCALING_WORDS = "scaling to zero"
SCALED_WORDS = "scaled to zero"

#: Why an observation is "not running" when the policy's own stop is in force.
_STOPPED = ("deactivated", "suspended")

_SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
_JOB_LIVE = ("PENDING", "RUNNING")
_JOB_DONE = ("SUCCEEDED", "FAILED", "STOPPED")
_USED = re.compile(r"([0-9.]+)/([0-9.]+)\s+GPU\b")


# -- the pure core ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Observation:
    """What one poll saw: whether the cluster runs, since when, and whether it is busy (``None``: unknown).

    Example:
        >>> Observation(running=False).busy is None
        True
    """

    running: bool
    admitted_at: float | None = None
    busy: bool | None = None
    why: str = ""


@dataclass(frozen=True)
class AgentState:
    """The agent's memory: the admission it counts from, the last busy moment, what it did, and how often
    it looks (``polling_seconds``: recorded so that a reader knows how late after the idle period it acts).

    Example:
        >>> AgentState(admitted_at=10.0, last_busy=25.0).idle_since
        25.0
    """

    admitted_at: float | None = None
    last_busy: float | None = None
    decision: str = "starting"
    hook: str | None = None
    scaled_at: float | None = None
    idle_for: float | None = None
    polling_seconds: float | None = None

    @property
    def idle_since(self) -> float | None:
        """When the idle clock started: the admission or the last busy moment, whichever is later."""
        if self.admitted_at is None:
            return None
        return max(self.admitted_at, self.last_busy or self.admitted_at)

    def to_json(self) -> dict[str, Any]:
        """The annotation's content (times as RFC 3339 UTC).

        Example:
            >>> AgentState(admitted_at=0.0, decision="idle").to_json()["idleSince"]
            '1970-01-01T00:00:00Z'
        """
        return {
            "idleSince": format_time(self.idle_since),
            "admittedAt": format_time(self.admitted_at),
            "decision": self.decision,
            "hook": self.hook,
            "scaledAt": format_time(self.scaled_at),
            "idleSeconds": None if self.idle_for is None else round(self.idle_for),
            "pollingSeconds": self.polling_seconds,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentState:
        """The state read back from the annotation (an agent restart keeps its clock).

        Example:
            >>> AgentState.from_json({"admittedAt": "1970-01-01T00:01:00Z", "idleSince": None}).admitted_at
            60.0
        """
        admitted = parse_time(data.get("admittedAt"))
        idle_since = parse_time(data.get("idleSince"))
        polling = data.get("pollingSeconds")
        return cls(
            admitted_at=admitted,
            last_busy=idle_since if idle_since is not None and idle_since != admitted else None,
            decision=str(data.get("decision") or "starting"),
            hook=data.get("hook"),
            scaled_at=parse_time(data.get("scaledAt")),
            idle_for=data.get("idleSeconds"),
            polling_seconds=float(polling) if isinstance(polling, (int, float)) and polling > 0 else None,
        )


@dataclass(frozen=True)
class Decision:
    """The new state and what to do: ``"wait"`` or ``"scale"`` (run the hook if any, then scale to zero)."""

    state: AgentState
    action: str


def decide(
    state: AgentState,
    obs: Observation,
    now: float,
    *,
    idle_seconds: float,
    initial_cooldown_seconds: float,
    window_seconds: float = 0.0,
) -> Decision:
    """One step of the idle clock.

    ``window_seconds`` is the window the busy signal looks back over (the Prometheus query's
    ``max_over_time`` window; 0 for Ray's own, instantaneous view): an idle reading says the cluster
    was idle for that whole window, so the clock of the first idle reading after a busy one starts a
    window back, and the idle period is the idle time asked for, not the period plus the window.

    - not running (queued, deactivated, suspended): nothing to count; the clock is cleared, the last
      scale-down is remembered for status;
    - a new admission (``admitted_at`` changed, e.g. after ``resume()``): the clock starts again from it,
      so a resumed cluster gets the full idle period;
    - busy, or a signal that could not be read (a failed read, or an empty one: no series for the
      cluster's pods): the clock restarts now (never scale on ignorance);
    - idle for ``idle_seconds`` since the later of the admission and the start of the window of the
      first idle observation after the last busy one (the first idle observation after an unreadable
      one: its own time, the gap is not known to be idle), so the clock never starts early: the
      cluster is idle for at least the whole period, at most one polling interval more; and past the
      initial cooldown from the admission: ``"scale"``.

    Example:
        >>> cfg = dict(idle_seconds=60, initial_cooldown_seconds=300)
        >>> d = decide(AgentState(), Observation(True, admitted_at=0.0, busy=False), 100.0, **cfg)
        >>> d.action, d.state.decision
        ('wait', 'initial cooldown: 200 s left before the first scale-down')
        >>> unknown = Observation(True, admitted_at=0.0, busy=None, why="no Prometheus")
        >>> d = decide(d.state, unknown, 400.0, **cfg)
        >>> d.action, d.state.last_busy, d.state.decision
        ('wait', 400.0, 'signal unavailable (no Prometheus): not scaling down')
    """
    if not obs.running:
        # the scale-down is remembered while the cluster stays stopped (not once resumed and queued)
        kept = state.decision.startswith((SCALING_WORDS, SCALED_WORDS)) and obs.why in _STOPPED
        return Decision(
            replace(
                state,
                admitted_at=None,
                last_busy=None,
                decision=state.decision if kept else (obs.why or "not running"),
            ),
            "wait",
        )
    admitted = obs.admitted_at if obs.admitted_at is not None else (state.admitted_at or now)
    if state.admitted_at != admitted:  # a new admission (resume): a fresh clock, no hook outcome yet
        state = AgentState(admitted_at=admitted)
    if obs.busy is None:
        why = f" ({obs.why})" if obs.why else ""
        return Decision(
            replace(
                state, last_busy=now, idle_for=0.0, decision=f"signal unavailable{why}: not scaling down"
            ),
            "wait",
        )
    if obs.busy:
        return Decision(replace(state, last_busy=now, idle_for=0.0, decision="busy"), "wait")
    if state.decision == "busy":
        # the first idle observation after a busy one: idle for the whole window before it (and maybe
        # no longer: the work may have ended just before that window, never count from the busy poll)
        state = replace(state, last_busy=now - max(0.0, window_seconds))
    elif state.decision.startswith("signal unavailable"):
        # after a gap in the data, only what this reading saw... and the gap may have been busy
        state = replace(state, last_busy=now)
    since = state.idle_since if state.idle_since is not None else admitted
    idle_for = max(0.0, now - since)
    grace_left = admitted + initial_cooldown_seconds - now
    if idle_for >= idle_seconds and grace_left <= 0:
        return Decision(
            replace(state, idle_for=idle_for, decision=f"idle {idle_for / 60:.1f} min: scaling to zero"),
            "scale",
        )
    if grace_left > 0 and (idle_for >= idle_seconds or grace_left > idle_seconds - idle_for):
        decision = f"initial cooldown: {grace_left:.0f} s left before the first scale-down"
    else:
        decision = f"idle {idle_for / 60:.1f} of {idle_seconds / 60:g} min"
    return Decision(replace(state, idle_for=idle_for, decision=decision), "wait")


def no_pods_left(rc: dict[str, Any] | None) -> bool:
    """Whether the RayCluster's pods are all gone: suspended (KubeRay's ``spec.suspend``, which Kueue sets
    on a deactivated Workload) and KubeRay says so (``RayClusterSuspended``, or the ``state: suspended``
    that KubeRay writes only once no pod is left). Until then the GPUs are still held. The agent's own copy
    (it ships alone, stdlib only) of :func:`rayqueue_sdk.admission.idle.pods_gone`; a test ties the two.

    Example:
        >>> no_pods_left({"spec": {"suspend": True}, "status": {"state": "ready"}})
        False
        >>> no_pods_left({"spec": {"suspend": True}, "status": {"conditions": [
        ...     {"type": "RayClusterSuspended", "status": "True"}]}})
        True
        >>> no_pods_left(None)
        True
    """
    if rc is None:  # the RayCluster itself is gone, and its pods with it
        return True
    if not (rc.get("spec") or {}).get("suspend"):
        return False
    status = rc.get("status") or {}
    suspended = _condition(rc, "RayClusterSuspended")
    if suspended is not None:
        return suspended.get("status") == "True"
    return status.get("state") == "suspended"


def settle(state: AgentState, rc: dict[str, Any] | None, now: float, *, mechanism: str) -> AgentState:
    """After a scale-down: "scaled to zero" (and when) is said only once the cluster's pods are gone.

    Example:
        >>> s = AgentState(idle_for=60.0, decision="scaling to zero after 1.0 idle min: waiting for pods")
        >>> settle(s, {"spec": {"suspend": True}, "status": {"state": "ready"}}, 5.0,
        ...        mechanism="workload").scaled_at is None
        True
        >>> done = settle(s, {"spec": {"suspend": True}, "status": {"state": "suspended"}}, 5.0,
        ...               mechanism="workload")
        >>> done.scaled_at, done.decision
        (5.0, 'scaled to zero after 1.0 idle min; pods gone, quota released')
    """
    if not state.decision.startswith(SCALING_WORDS) or not no_pods_left(rc):
        return state
    minutes = (state.idle_for or 0) / 60
    freed = "quota released" if mechanism == "workload" else "suspended"
    return replace(
        state, scaled_at=now, decision=f"{SCALED_WORDS} after {minutes:.1f} idle min; pods gone, {freed}"
    )


def busy_from(signal: str, gpu: bool | None, jobs: bool | None) -> bool | None:
    """Whether the cluster is busy for ``idle_signal``; ``None`` when a needed signal is unknown.

    Example:
        >>> busy_from("gpu", False, True), busy_from("jobs", None, True)
        (False, True)
        >>> busy_from("gpu_and_jobs", None, True)
        True
        >>> busy_from("gpu_and_jobs", None, False) is None
        True
    """
    if signal == "gpu":
        return gpu
    if signal == "jobs":
        return jobs
    if gpu or jobs:
        return True
    if gpu is None or jobs is None:
        return None
    return False


def prometheus_busy(values: list[float]) -> tuple[bool | None, str]:
    """Busy from the query's values, and why unknown: no value (no series for the cluster's pods: not
    running yet, the exporter down or restarting, a renamed series) or NaN is *unknown*, never idle.

    Example:
        >>> prometheus_busy([0.0]), prometheus_busy([0.0, 37.5])
        ((False, ''), (True, ''))
        >>> prometheus_busy([])
        (None, 'no GPU series for the cluster (exporter down, or no pods yet)')
    """
    if not values:
        return None, "no GPU series for the cluster (exporter down, or no pods yet)"
    if any(math.isnan(v) for v in values):
        return None, "the GPU query returned NaN"
    return max(values) > 0, ""


def jobs_busy(jobs: list[dict[str, Any]]) -> bool:
    """Whether any of the user's Ray jobs is pending or running (pre-stop hook jobs left out).

    Example:
        >>> jobs_busy([{"submission_id": "raysubmit_1", "status": "SUCCEEDED"}])
        False
        >>> jobs_busy([{"submission_id": "rayqueue-prestop-1", "status": "RUNNING"}])
        False
        >>> jobs_busy([{"submission_id": "raysubmit_2", "status": "RUNNING"}])
        True
    """
    return any(
        str(j.get("status")) in _JOB_LIVE and not str(j.get("submission_id") or "").startswith(HOOK_PREFIX)
        for j in jobs
    )


def gpu_busy_from_ray(summary: dict[str, Any]) -> bool:
    """Whether Ray's node view shows GPU use: a GPU's utilisation above 0, or GPUs held by tasks/actors.

    ``summary`` is the ``data`` of the dashboard's ``/nodes?view=summary``: ``summary`` (nodes, each with
    ``gpus[].utilizationGpu`` where Ray sees GPUs) and ``nodeLogicalResources`` (``"0.0/1.0 GPU"`` lines).

    Example:
        >>> gpu_busy_from_ray({"summary": [{"gpus": [{"utilizationGpu": 0}]}],
        ...                    "nodeLogicalResources": {"n1": "0.0/2.0 CPU\\n0.0/1.0 GPU"}})
        False
        >>> gpu_busy_from_ray({"summary": [], "nodeLogicalResources": {"n1": "1.0/1.0 GPU"}})
        True
        >>> gpu_busy_from_ray({"summary": [{"gpus": [{"utilizationGpu": 87}]}]})
        True
    """
    for node in summary.get("summary") or []:
        for gpu in node.get("gpus") or []:
            if float(gpu.get("utilizationGpu") or 0) > 0:
                return True
    logical = summary.get("nodeLogicalResources") or summary.get("node_logical_resources") or {}
    for text in logical.values():
        for used, _total in _USED.findall(str(text)):
            if float(used) > 0:
                return True
    return False


def hook_outcome(status: str | None, elapsed: float, timeout: float) -> str:
    """The pre-stop hook's outcome in words, from its Ray job status.

    Example:
        >>> hook_outcome("SUCCEEDED", 12.3, 300)
        'succeeded in 12 s'
        >>> hook_outcome("RUNNING", 300.2, 300)
        'timed out after 300 s (stopped)'
        >>> hook_outcome(None, 0.1, 300)
        'could not be submitted'
    """
    if status is None:
        return "could not be submitted"
    if status == "SUCCEEDED":
        return f"succeeded in {elapsed:.0f} s"
    if status in _JOB_DONE:
        return f"{status.lower()} after {elapsed:.0f} s"
    return f"timed out after {timeout:.0f} s (stopped)"


def format_time(value: float | None) -> str | None:
    """RFC 3339 UTC with seconds, as Kubernetes writes times.

    Example:
        >>> format_time(86400.7), format_time(None)
        ('1970-01-02T00:00:00Z', None)
    """
    return None if value is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(value))


def parse_time(value: Any) -> float | None:
    """Seconds since the epoch from an RFC 3339 UTC time (``None`` when absent or unreadable).

    Example:
        >>> parse_time("1970-01-02T00:00:00Z"), parse_time("1970-01-01T00:00:00.5Z"), parse_time(3)
        (86400.0, 0.5, None)
    """
    if not isinstance(value, str):
        return None
    text = value.strip().replace("Z", "+00:00")
    match = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?\+00:00$", text)
    if not match:
        return None
    base = calendar.timegm(time.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S"))
    return float(base) + (float(match.group(2)) if match.group(2) else 0.0)


# -- I/O: the Kubernetes API as a pod sees it ----------------------------------------------------------
class KubeApi:
    """A tiny Kubernetes REST client: bearer token and CA from a service-account directory.

    The token file is read on every request (the kubelet rotates projected tokens), and never logged.

    Example:
        >>> KubeApi("https://10.0.0.1:443", token_file="/nonexistent", ca_file=None).server
        'https://10.0.0.1:443'
    """

    def __init__(self, server: str, *, token_file: str, ca_file: str | None, timeout: float = 10.0) -> None:
        self.server = server.rstrip("/")
        self._token_file = token_file
        self._context = (
            ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()
        )
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"KubeApi({self.server!r})"

    @classmethod
    def in_cluster(cls, token_dir: str | None = None) -> KubeApi:
        """From ``KUBERNETES_SERVICE_HOST``/``_PORT`` and the service-account directory."""
        base = token_dir or os.environ.get("RAYQUEUE_AGENT_TOKEN_DIR") or _SA_DIR
        host = os.environ.get("KUBERNETES_SERVICE_HOST")
        port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
        if not host:
            raise RuntimeError("KUBERNETES_SERVICE_HOST is not set: not running in a cluster")
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        ca = os.path.join(base, "ca.crt")
        return cls(f"https://{host}:{port}", token_file=os.path.join(base, "token"), ca_file=ca)

    def request(self, method: str, path: str, body: Any = None, *, content_type: str | None = None) -> Any:
        """One request; the decoded JSON answer. HTTP errors raise ``urllib.error.HTTPError``."""
        with open(self._token_file, encoding="utf-8") as fh:
            token = fh.read().strip()
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {token}")
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type or "application/json")
        with urllib.request.urlopen(req, timeout=self.timeout, context=self._context) as resp:
            return json.loads(resp.read() or b"{}")


def _http_json(
    url: str, *, method: str = "GET", body: Any = None, token: str | None = None, timeout: float = 10.0
) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Accept", "application/json")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b"{}")


def _condition(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return None


class Agent:
    """The I/O loop around :func:`decide` for one RayCluster.

    Example:
        >>> cfg = {"namespace": "ds", "cluster": "ws", "mechanism": "workload", "idle_seconds": 60,
        ...        "initial_cooldown_seconds": 60, "polling_seconds": 5, "idle_signal": "jobs",
        ...        "prometheus": None, "hook": None}
        >>> Agent(cfg, KubeApi("https://127.0.0.1:1", token_file="/nonexistent", ca_file=None)).cluster
        'ws'
    """

    def __init__(self, config: dict[str, Any], api: KubeApi, *, clock: Any = time.time) -> None:
        self.config = config
        self.api = api
        self.clock = clock
        self.namespace = str(config["namespace"])
        self.cluster = str(config["cluster"])
        self.state: AgentState | None = None
        self._kueue_version: str | None = None
        self._written: str | None = None

    # -- reads
    def _raycluster(self) -> dict[str, Any]:
        path = f"/apis/ray.io/v1/namespaces/{self.namespace}/rayclusters/{self.cluster}"
        return dict(self.api.request("GET", path))

    def _workload(self, uid: str) -> dict[str, Any] | None:
        name = self.config.get("workload")
        if name:
            return self._workload_by_name(str(name))
        versions = [self._kueue_version] if self._kueue_version else ["v1beta2", "v1beta1"]
        selector = urllib.parse.quote(f"kueue.x-k8s.io/job-uid={uid}")
        for version in versions:
            path = (
                f"/apis/kueue.x-k8s.io/{version}/namespaces/{self.namespace}/workloads"
                f"?labelSelector={selector}"
            )
            try:
                items = self.api.request("GET", path).get("items") or []
            except urllib.error.HTTPError as err:
                if err.code == 404 and len(versions) > 1:
                    continue
                raise
            self._kueue_version = version
            live = [w for w in items if not (w.get("metadata") or {}).get("deletionTimestamp")]
            live.sort(key=lambda w: str((w.get("metadata") or {}).get("creationTimestamp") or ""))
            return live[-1] if live else None
        return None

    def _workload_by_name(self, name: str) -> dict[str, Any] | None:
        """The one Workload the Role grants (``get`` by name: no ``list`` is granted); ``None``: gone."""
        versions = [self._kueue_version] if self._kueue_version else ["v1beta2", "v1beta1"]
        for version in versions:
            path = f"/apis/kueue.x-k8s.io/{version}/namespaces/{self.namespace}/workloads/{name}"
            try:
                found = dict(self.api.request("GET", path))
            except urllib.error.HTTPError as err:
                if err.code == 404:
                    continue  # that version is not served, or the Workload is gone
                raise
            self._kueue_version = version
            return None if (found.get("metadata") or {}).get("deletionTimestamp") else found
        return None

    def _dashboard(self, rc: dict[str, Any]) -> str | None:
        status = rc.get("status") or {}
        head = status.get("head") or {}
        host = head.get("serviceIP") or head.get("podIP")
        if not host:
            return None
        port = (status.get("endpoints") or {}).get("dashboard") or "8265"
        return f"http://{host}:{port}"

    def _gpu(self, dashboard: str | None) -> tuple[bool | None, str]:
        prom = self.config.get("prometheus")
        if prom:
            token = None
            if prom.get("auth") == "bearer":
                with open(self.api._token_file, encoding="utf-8") as fh:
                    token = fh.read().strip()
            url = prom["url"] + "/api/v1/query?" + urllib.parse.urlencode({"query": prom["query"]})
            try:
                result = _http_json(url, token=token).get("data", {}).get("result") or []
                values = [float(r["value"][1]) for r in result]
            except (OSError, ValueError, KeyError, IndexError, TypeError) as err:
                log.warning("Prometheus at %s unreachable (%s): not scaling down; retrying", prom["url"], err)
                return None, "Prometheus unreachable"
            return prometheus_busy(values)
        if dashboard is None:
            return None, "no head address"
        try:
            data = _http_json(dashboard + "/nodes?view=summary").get("data") or {}
        except (OSError, ValueError) as err:
            log.warning("Ray dashboard %s unreachable (%s): not scaling down; retrying", dashboard, err)
            return None, "Ray dashboard unreachable"
        return gpu_busy_from_ray(data), ""

    def _jobs(self, dashboard: str | None) -> tuple[bool | None, str]:
        if dashboard is None:
            return None, "no head address"
        try:
            jobs = _http_json(dashboard + "/api/jobs/")
        except (OSError, ValueError) as err:
            log.warning("Ray dashboard %s unreachable (%s): not scaling down; retrying", dashboard, err)
            return None, "Ray dashboard unreachable"
        return jobs_busy(list(jobs or [])), ""

    def observe(self) -> tuple[Observation, dict[str, Any], dict[str, Any] | None]:
        """Read the cluster (and its Workload) and the idle signal: (observation, RayCluster, Workload)."""
        rc = self._raycluster()
        workload: dict[str, Any] | None = None
        if self.config.get("mechanism") == "suspend":
            running = not (rc.get("spec") or {}).get("suspend")
            ready = _condition(rc, "HeadPodReady")
            admitted_at = parse_time((ready or {}).get("lastTransitionTime")) if running else None
            why = "" if running else "suspended"
        else:
            workload = self._workload(str((rc.get("metadata") or {}).get("uid") or ""))
            admitted = _condition(workload or {}, "Admitted")
            active = ((workload or {}).get("spec") or {}).get("active", True) is not False
            running = bool(workload) and active and (admitted or {}).get("status") == "True"
            admitted_at = parse_time((admitted or {}).get("lastTransitionTime")) if running else None
            why = "" if running else ("deactivated" if workload and not active else "queued (not admitted)")
        if not running:
            return Observation(False, why=why), rc, workload
        signal = str(self.config.get("idle_signal") or "gpu")
        dashboard = self._dashboard(rc)
        gpu, gpu_why = (None, "") if signal == "jobs" else self._gpu(dashboard)
        jobs, jobs_why = (None, "") if signal == "gpu" else self._jobs(dashboard)
        busy = busy_from(signal, gpu, jobs)
        return Observation(True, admitted_at=admitted_at, busy=busy, why=gpu_why or jobs_why), rc, workload

    # -- writes
    def _target(self, rc: dict[str, Any], workload: dict[str, Any] | None) -> str | None:
        if self.config.get("mechanism") == "suspend":
            return f"/apis/ray.io/v1/namespaces/{self.namespace}/rayclusters/{self.cluster}"
        if workload is None:
            return None
        name = (workload.get("metadata") or {}).get("name")
        return f"/apis/kueue.x-k8s.io/{self._kueue_version}/namespaces/{self.namespace}/workloads/{name}"

    def _patch(self, path: str, patch: dict[str, Any]) -> None:
        self.api.request("PATCH", path, patch, content_type="application/merge-patch+json")

    def run_hook(self, dashboard: str | None) -> str:
        """Run the pre-stop hook as a Ray job on the head; its outcome in words."""
        hook = self.config.get("hook") or {}
        timeout = float(hook.get("timeout_seconds") or 300)
        if dashboard is None:
            return hook_outcome(None, 0.0, timeout)
        started = self.clock()
        sid = f"{HOOK_PREFIX}{int(started)}"
        try:
            _http_json(
                dashboard + "/api/jobs/",
                method="POST",
                body={"entrypoint": hook["command"], "submission_id": sid},
            )
        except (OSError, ValueError) as err:
            log.warning("pre-stop hook could not be submitted: %s", err)
            return hook_outcome(None, 0.0, timeout)
        status: str | None = "PENDING"
        while self.clock() - started < timeout:
            try:
                status = str(_http_json(f"{dashboard}/api/jobs/{sid}").get("status"))
            except (OSError, ValueError):
                status = "UNKNOWN"
            if status in _JOB_DONE:
                break
            time.sleep(min(1.0, max(0.1, timeout / 20)))
        if status not in _JOB_DONE:
            with contextlib.suppress(OSError, ValueError):
                _http_json(f"{dashboard}/api/jobs/{sid}/stop", method="POST")
        return hook_outcome(status, self.clock() - started, timeout)

    def _window_seconds(self) -> float:
        """How far back an idle reading reaches: the query's window when the GPU alone is the signal
        and Prometheus reads it (Ray's job list is instantaneous, so ``gpu_and_jobs`` counts from now)."""
        prom = self.config.get("prometheus") or {}
        if not prom or str(self.config.get("idle_signal") or "gpu") != "gpu":
            return 0.0
        return float(prom.get("window_seconds") or 0.0)

    def step(self) -> Decision:
        """One poll: observe, decide, act, record."""
        obs, rc, workload = self.observe()
        target = self._target(rc, workload)
        if self.state is None:  # a restart keeps the clock written by the previous agent
            holder = workload if self.config.get("mechanism") != "suspend" else rc
            saved = ((holder or {}).get("metadata") or {}).get("annotations", {}).get(STATE_ANNOTATION)
            try:
                self.state = AgentState.from_json(json.loads(saved)) if saved else AgentState()
            except ValueError:
                self.state = AgentState()
        now = self.clock()
        decision = decide(
            self.state,
            obs,
            now,
            idle_seconds=float(self.config["idle_seconds"]),
            initial_cooldown_seconds=float(self.config.get("initial_cooldown_seconds") or 0),
            window_seconds=self._window_seconds(),
        )
        state = replace(decision.state, polling_seconds=float(self.config.get("polling_seconds") or 30))
        stop: dict[str, Any] = {}
        if decision.action == "scale" and target is not None:
            if self.config.get("hook"):
                state = replace(state, hook=self.run_hook(self._dashboard(rc)))
            minutes = (state.idle_for or 0) / 60
            what = "suspended" if self.config.get("mechanism") == "suspend" else "Workload deactivated"
            state = replace(
                state,
                scaled_at=None,
                decision=f"{SCALING_WORDS} after {minutes:.1f} idle min: {what}, waiting for its pods to go",
            )
            stop = (
                {"spec": {"suspend": True}}
                if self.config.get("mechanism") == "suspend"
                else {"spec": {"active": False}}
            )
            log.info("%s/%s: %s", self.namespace, self.cluster, state.decision)
        elif not obs.running and state.decision.startswith(SCALING_WORDS):
            state = settle(state, rc, self.clock(), mechanism=str(self.config.get("mechanism")))
            if state.scaled_at is not None:
                log.info("%s/%s: %s", self.namespace, self.cluster, state.decision)
        self.state = state
        text = json.dumps(state.to_json(), sort_keys=True)
        if target is not None and (stop or text != self._written):
            self._patch(target, {"metadata": {"annotations": {STATE_ANNOTATION: text}}, **stop})
            self._written = text
        return Decision(state, decision.action)


def main(argv: list[str] | None = None) -> int:
    """Run the agent until its RayCluster is gone (``--once``: one poll, for tests)."""
    args = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    path = os.environ.get("RAYQUEUE_AGENT_CONFIG") or os.path.join(os.path.dirname(__file__), "config.json")
    with open(path, encoding="utf-8") as fh:
        config = json.load(fh)
    agent = Agent(config, KubeApi.in_cluster())
    log.info(
        "watching %s/%s: %s",
        agent.namespace,
        agent.cluster,
        {k: config.get(k) for k in ("mechanism", "idle_seconds", "idle_signal", "polling_seconds")},
    )
    while True:
        try:
            decision = agent.step()
            log.info("%s", decision.state.decision)
        except urllib.error.HTTPError as err:
            if err.code == 404 and "rayclusters" in (err.url or ""):
                log.info("RayCluster %s/%s is gone: exiting", agent.namespace, agent.cluster)
                return 0
            log.warning("API error %s on %s: retrying", err.code, err.url)
        except (OSError, ValueError) as err:
            log.warning("poll failed (%s): retrying", err)
        if "--once" in args:
            return 0
        time.sleep(float(config.get("polling_seconds") or 30))


if __name__ == "__main__":
    sys.exit(main())
