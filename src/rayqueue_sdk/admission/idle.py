"""The idle policy's live state, decoded once from what the cluster carries: :class:`IdleStatus`.

:func:`idle_from` reads the RayCluster's policy annotation (``scaling.rayqueue-sdk.io/policy``: mode,
mechanism, period, signal), the reaper's state annotation (``scaling.rayqueue-sdk.io/state`` on the
Workload, or on the RayCluster it suspends) or, in KEDA mode, the ScaledObject's ``lastActiveTime`` and
the Workload's ``Evicted``/``Deactivated`` condition, into one frozen value: the mode, where the idle
clock stands, whether and when the cluster was scaled to zero. Every display (``status()``,
``list_clusters()``, the card, the CLI and its ``--json``) reads this value; nothing parses its text.
Pure: no I/O.

Example:
    >>> import json
    >>> rc = {"metadata": {"annotations": {
    ...     "scaling.rayqueue-sdk.io/policy": json.dumps({"mode": "reaper", "mechanism": "workload",
    ...                                                   "idle_minutes": 60, "idle_signal": "gpu"})}}}
    >>> wl = {"metadata": {"annotations": {
    ...     "scaling.rayqueue-sdk.io/state": json.dumps({"idleSince": "1970-01-01T00:00:00Z"})}},
    ...       "spec": {"active": True}}
    >>> st = idle_from(rc, wl)
    >>> st.mode, st.state, st.releases_at
    (<IdleMode.REAPER: 'reaper'>, <IdleState.IDLE: 'idle'>, 3600.0)
    >>> st.text(now=12 * 60)
    'reaper mode: idle 12 of 60 min'
"""

from __future__ import annotations

import enum
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rayqueue_sdk.manifests.idle import IdleMode, IdleSignal, StopMechanism
from rayqueue_sdk.manifests.meta import annotations_of, conditions_of, epoch_of, meta_of
from rayqueue_sdk.manifests.scaling import IDLE_STATE_ANNOTATION, POLICY_ANNOTATION

__all__ = ["IdleState", "IdleStatus", "PolicyInForce", "idle_from", "pods_gone", "policy_of"]


#: The reaper's decisions under which no idle clock runs (its ``idleSince`` is then its last such poll).
_NO_CLOCK = ("busy", "signal unavailable", "starting")


class IdleState(enum.StrEnum):
    """Where a cluster's idle policy stands.

    ``idle``: the idle clock runs (see :attr:`IdleStatus.idle_since` and :attr:`IdleStatus.releases_at`);
    ``waiting``: no clock runs yet (starting, busy, or the signal not read); ``scaling to zero``: the
    policy deactivated the cluster and its pods are still going (the GPUs are still held); ``scaled to
    zero``: the pods are gone, the quota is back and ``resume()`` queues the cluster again.

    Example:
        >>> IdleState("scaled to zero") is IdleState.SCALED_TO_ZERO
        True
    """

    WAITING = "waiting"
    IDLE = "idle"
    STOPPING = "scaling to zero"
    SCALED_TO_ZERO = "scaled to zero"


def _json(text: Any) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _annotations(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return annotations_of(obj)


@dataclass(frozen=True)
class PolicyInForce:
    """The idle policy a RayCluster carries (its ``scaling.rayqueue-sdk.io/policy`` annotation), typed:
    what :func:`policy_of` decodes, from the read path to ``Cluster.resume()``.

    Attributes:
        mode: :class:`~rayqueue_sdk.manifests.idle.IdleMode` ``KEDA`` or ``REAPER`` (the mode in force).
        mechanism: :class:`~rayqueue_sdk.manifests.idle.StopMechanism` (the Workload or ``spec.suspend``).
        idle_minutes, idle_signal: the policy's period and signal.
        initial_cooldown_minutes: no scale-down before this many minutes (the annotation's, else the
            idle period).
        polling_seconds: how often the policy looks (``None``: an annotation written before it said so).

    Example:
        >>> p = PolicyInForce(IdleMode.KEDA, StopMechanism.WORKLOAD, 60.0, 60.0)
        >>> p.mode is IdleMode.KEDA, p.mechanism.describe()
        (True, 'Workload spec.active=false')
    """

    mode: IdleMode
    mechanism: StopMechanism
    idle_minutes: float
    initial_cooldown_minutes: float
    idle_signal: IdleSignal = "gpu"
    polling_seconds: float | None = None


def _minutes(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _seconds(value: Any) -> float | None:
    """A positive number of seconds, else ``None``."""
    number = _minutes(value) if not isinstance(value, bool) else None
    return number if number is not None and number > 0 else None


def policy_of(rc: Mapping[str, Any] | None) -> PolicyInForce | None:
    """The idle policy a RayCluster carries, decoded and typed (``None``: no policy, or an annotation
    this version cannot read: an unknown mode or mechanism). An annotation without a mechanism is one of
    a queued cluster (the Workload), as the first versions wrote it.

    Example:
        >>> policy_of({"metadata": {"annotations": {POLICY_ANNOTATION: '{"mode": "keda"}'}}})
        PolicyInForce(mode=<IdleMode.KEDA: 'keda'>, mechanism=<StopMechanism.WORKLOAD: 'workload'>, ...)
        >>> policy_of({"metadata": {}}) is None
        True
    """
    info = _json(_annotations(rc).get(POLICY_ANNOTATION))
    if not info:
        return None
    try:
        mode = IdleMode(str(info.get("mode")))
        mechanism = StopMechanism(str(info.get("mechanism") or StopMechanism.WORKLOAD))
    except ValueError:
        return None  # an annotation this version does not know: no policy it can act on
    signal = info.get("idle_signal")
    minutes = _minutes(info.get("idle_minutes")) or 0.0
    cooldown = _minutes(info.get("initial_cooldown_minutes"))
    return PolicyInForce(
        mode=mode,
        mechanism=mechanism,
        idle_minutes=minutes,
        initial_cooldown_minutes=minutes if cooldown is None else cooldown,
        idle_signal=signal if signal in ("gpu", "jobs", "gpu_and_jobs") else "gpu",
        polling_seconds=_seconds(info.get("polling_seconds")),
    )


@dataclass(frozen=True)
class IdleStatus:
    """The policy in force and where its idle clock stands (one field of the cluster's status).

    Attributes:
        mode: :class:`~rayqueue_sdk.manifests.idle.IdleMode` ``KEDA`` or ``REAPER`` (the mode in force).
        mechanism: :class:`~rayqueue_sdk.manifests.idle.StopMechanism` (Workload or ``spec.suspend``).
        idle_minutes, idle_signal: the policy.
        idle_since: when the idle clock started (epoch seconds), if it runs.
        scaled_to_zero: the policy gave the quota back (the cluster's pods are gone) and the cluster
            waits for ``resume()``.
        stopping: the policy deactivated the cluster but its pods are still going: the GPUs are still
            held and the quota is not free yet (Kueue may say it is before: kueue PR #15980).
        scaled_at: when, if known; ``idle_for`` how long it had been idle then (seconds).
        decision, hook: the reaper's last decision and the pre-stop hook's outcome.
        cooldown_until: the end of the initial cooldown (epoch seconds; the reaper counts it from the
            admission, KEDA from the ScaledObject's creation): no scale-down before it.
        period_seconds: how long after ``idle_since`` the policy acts, where it is not the idle period:
            KEDA's ``cooldownPeriod`` after ``lastActiveTime`` (its ``initialCooldownPeriod`` after the
            ScaledObject's creation while never active), as the ScaledObject says.
        polling_seconds: how often the policy looks (the reaper's state annotation, KEDA's
            ``pollingInterval``; ``None``: not said): it acts on its first poll after :attr:`releases_at`.

    Example:
        >>> st = IdleStatus(IdleMode.REAPER, StopMechanism.WORKLOAD, 60, "gpu", idle_since=1000.0)
        >>> st.text(now=1000.0 + 12 * 60), st.releases_at
        ('reaper mode: idle 12 of 60 min', 4600.0)
        >>> IdleStatus("keda", "workload", 60, "gpu", scaled_to_zero=True, scaled_at=0.0,
        ...            idle_for=3600).text(now=10.0)
        'keda mode: scaled to zero at 00:00 UTC after 60 idle min; quota released; ...'
        >>> IdleStatus("keda", "workload", 60, "gpu", stopping=True).text()
        "keda mode: scaling to zero (Workload deactivated): waiting for the cluster's pods to go, ..."
    """

    mode: IdleMode
    mechanism: StopMechanism
    idle_minutes: float
    idle_signal: str
    idle_since: float | None = None
    scaled_to_zero: bool = False
    scaled_at: float | None = None
    idle_for: float | None = None
    decision: str | None = None
    hook: str | None = None
    cooldown_until: float | None = None
    stopping: bool = False
    period_seconds: float | None = None
    polling_seconds: float | None = None

    def __post_init__(
        self,
    ) -> None:  # plain strings are taken (a StrEnum equals its value); a typo fails here
        IdleMode(self.mode)
        StopMechanism(self.mechanism)

    @property
    def state(self) -> IdleState:
        """:class:`IdleState`: scaled to zero, idle (the clock runs) or waiting.

        Example:
            >>> IdleStatus("keda", "workload", 5, "gpu").state
            <IdleState.WAITING: 'waiting'>
        """
        if self.scaled_to_zero:
            return IdleState.SCALED_TO_ZERO
        if self.stopping:
            return IdleState.STOPPING
        return IdleState.IDLE if self.idle_since is not None else IdleState.WAITING

    @property
    def releases_at(self) -> float | None:
        """When the policy scales the cluster to zero if it stays idle (epoch seconds): the idle clock's
        start plus the period, not before the initial cooldown ends; ``None`` when no clock runs or it is
        already scaled to zero. (The policy acts on its next poll after that moment.)

        Example:
            >>> IdleStatus("keda", "workload", 0.5, "gpu", idle_since=100.0).releases_at
            130.0
            >>> st = IdleStatus("reaper", "workload", 0.5, "gpu", idle_since=100.0, cooldown_until=400.0)
            >>> st.releases_at
            400.0
        """
        if self.scaled_to_zero or self.idle_since is None:
            return None
        period = self.idle_minutes * 60 if self.period_seconds is None else self.period_seconds
        return max(self.idle_since + period, self.cooldown_until or 0.0)

    @property
    def acts_by(self) -> float | None:
        """The latest moment the policy acts if the cluster stays idle (epoch seconds): its first poll
        after :attr:`releases_at`, so one polling interval later; ``None`` when no clock runs or the
        interval is not known.

        Example:
            >>> IdleStatus("reaper", "workload", 0.5, "gpu", idle_since=100.0, polling_seconds=5).acts_by
            135.0
        """
        at = self.releases_at
        return None if at is None or self.polling_seconds is None else at + self.polling_seconds

    def idle_seconds(self, now: float | None = None) -> float | None:
        """How long the cluster has been idle at ``now`` (the idle time when it was scaled to zero).

        Example:
            >>> IdleStatus("keda", "workload", 5, "gpu", idle_since=100.0).idle_seconds(now=160.0)
            60.0
        """
        if self.scaled_to_zero:
            return self.idle_for
        if self.idle_since is None:
            return None
        return max(0.0, (time.time() if now is None else now) - self.idle_since)

    def minutes(self, seconds: float) -> str:
        """``seconds`` in whole minutes, or tenths where the period is under 10 minutes (a demo's 0.1 min
        period).

        Example:
            >>> IdleStatus("keda", "workload", 60, "gpu").minutes(720)
            '12'
            >>> IdleStatus("keda", "workload", 1, "gpu").minutes(6)
            '0.1'
        """
        return f"{seconds / 60:.0f}" if self.idle_minutes >= 10 else f"{seconds / 60:.1f}"

    def describe(self, now: float | None = None) -> str:
        """Where the clock stands, without the mode (a status's explanation when scaled to zero).

        Example:
            >>> IdleStatus("keda", "workload", 0.5, "gpu", idle_since=0.0).describe(now=12.0)
            'idle 0.2 of 0.5 min'
        """
        if self.scaled_to_zero:
            when = (
                f" at {time.strftime('%H:%M', time.gmtime(self.scaled_at))} UTC"
                if self.scaled_at is not None
                else ""
            )
            after = f" after {self.minutes(self.idle_for)} idle min" if self.idle_for else ""
            released = "quota released" if self.mechanism == StopMechanism.WORKLOAD else "suspended"
            out = f"scaled to zero{when}{after}; {released}; cluster.resume() queues it again"
        elif self.stopping:
            what = "Workload deactivated" if self.mechanism == StopMechanism.WORKLOAD else "suspended"
            out = f"scaling to zero ({what}): waiting for the cluster's pods to go, quota not free yet"
        elif self.idle_since is not None:
            idle = self.minutes(self.idle_seconds(now) or 0.0)
            out = f"idle {idle} of {self.idle_minutes:g} min"
        else:
            out = f"scale to zero after {self.idle_minutes:g} idle min ({self.decision or 'waiting'})"
        if self.hook:
            out += f"; pre-stop hook {self.hook}"
        return out

    def text(self, now: float | None = None) -> str:
        """One line for humans (times in UTC): the mode and :meth:`describe`.

        Example:
            >>> IdleStatus("keda", "workload", 0.5, "gpu", idle_since=0.0).text(now=12.0)
            'keda mode: idle 0.2 of 0.5 min'
        """
        return f"{self.mode} mode: {self.describe(now)}"

    def to_dict(self, now: float | None = None) -> dict[str, Any]:
        """A JSON-friendly dict: the fields (enums as their values), ``state``, ``releases_at`` and the
        line ``text`` (times as epoch seconds).

        Example:
            >>> d = IdleStatus("keda", "workload", 5, "gpu", idle_since=0.0).to_dict(now=60.0)
            >>> d["mode"], d["state"], d["releases_at"], d["text"]
            ('keda', 'idle', 300.0, 'keda mode: idle 1.0 of 5 min')
        """
        return {
            "mode": IdleMode(self.mode).value,
            "mechanism": StopMechanism(self.mechanism).value,
            "state": self.state.value,
            "idle_minutes": self.idle_minutes,
            "idle_signal": self.idle_signal,
            "idle_since": self.idle_since,
            "releases_at": self.releases_at,
            "scaled_to_zero": self.scaled_to_zero,
            "stopping": self.stopping,
            "scaled_at": self.scaled_at,
            "idle_for": self.idle_for,
            "cooldown_until": self.cooldown_until,
            "polling_seconds": self.polling_seconds,
            "decision": self.decision,
            "hook": self.hook,
            "text": self.text(now),
        }


def pods_gone(rc: Mapping[str, Any] | None) -> bool:
    """Whether the RayCluster's pods are all gone: suspended (``spec.suspend``, which Kueue sets on a
    deactivated Workload) and KubeRay says so (``RayClusterSuspended``, or the ``state: suspended`` it
    writes only once no pod is left). Until then the GPUs are still held. (The reaper, stdlib only in its
    pod, keeps the same rule in :func:`rayqueue_sdk.scaling.agent.pods_gone`.)

    Example:
        >>> pods_gone({"spec": {"suspend": True}, "status": {"state": "ready"}})
        False
        >>> pods_gone({"spec": {"suspend": True}, "status": {"conditions": [
        ...     {"type": "RayClusterSuspended", "status": "True"}]}})
        True
        >>> pods_gone(None)
        True
    """
    if rc is None:  # the RayCluster itself is gone, and its pods with it
        return True
    if not (rc.get("spec") or {}).get("suspend"):
        return False
    suspended = conditions_of(rc)["RayClusterSuspended"]
    if suspended.present:
        return suspended.true
    return (rc.get("status") or {}).get("state") == "suspended"


def _keda_scaled_at(workload: Mapping[str, Any] | None) -> float | None:
    evicted = conditions_of(workload)["Evicted"]
    if evicted.reason == "Deactivated":
        return epoch_of(evicted.transition)
    return None


def idle_from(
    rc: Mapping[str, Any] | None,
    workload: Mapping[str, Any] | None,
    scaled_object: Mapping[str, Any] | None = None,
    *,
    scaled_object_read: bool = True,
) -> IdleStatus | None:
    """Decode the idle policy's state of the RayCluster ``rc`` (``None``: no policy).

    ``workload`` is its Kueue Workload; ``scaled_object`` the policy's ScaledObject (KEDA mode; ``None``
    with ``scaled_object_read=False`` when the caller did not read it: the clock is then unknown).

    Example:
        >>> rc = {"metadata": {"annotations": {
        ...     POLICY_ANNOTATION: '{"mode": "keda", "mechanism": "workload", "idle_minutes": 60}'}}}
        >>> so = {"status": {"lastActiveTime": "1970-01-01T00:00:00Z"}}
        >>> idle_from(rc, {"spec": {"active": True}}, so).idle_since
        0.0
        >>> gone = {"spec": {"active": False}, "status": {"conditions": [{"type": "Evicted",
        ...         "status": "True", "reason": "Deactivated",
        ...         "lastTransitionTime": "1970-01-01T01:00:00Z"}]}}
        >>> idle_from(rc, gone, so).describe()   # deactivated, its pods still there
        "scaling to zero (Workload deactivated): waiting for the cluster's pods to go, quota not free yet"
        >>> stopped = {**rc, "spec": {"suspend": True}, "status": {"state": "suspended"}}
        >>> idle_from(stopped, gone, so).describe()
        'scaled to zero at 01:00 UTC after 60 idle min; quota released; cluster.resume() queues it again'
    """
    info = policy_of(rc)
    if info is None:
        return None
    mode, mechanism, minutes = info.mode, info.mechanism, info.idle_minutes
    cooldown = info.initial_cooldown_minutes * 60
    base: dict[str, Any] = {
        "mode": mode,
        "mechanism": mechanism,
        "idle_minutes": minutes,
        "idle_signal": info.idle_signal,
    }
    deactivated = (
        ((workload or {}).get("spec") or {}).get("active") is False
        if mechanism is StopMechanism.WORKLOAD
        else bool(((rc or {}).get("spec") or {}).get("suspend"))
    )
    # "scaled to zero" and "quota released" only once the pods are gone (Kueue may release the quota
    # while KubeRay still deletes them, kueue PR #15980): until then, "scaling to zero"
    stopped = deactivated and pods_gone(rc)
    base["stopping"] = deactivated and not stopped
    if mode is IdleMode.KEDA:
        since = created = last = period = None
        polling = info.polling_seconds
        active = False
        if scaled_object is not None:
            spec = scaled_object.get("spec") or {}
            created = epoch_of(meta_of(scaled_object).get("creationTimestamp"))
            last = epoch_of((scaled_object.get("status") or {}).get("lastActiveTime"))
            # KEDA's last poll read use (Active): its lastActiveTime moves on with each poll, no clock runs
            active = conditions_of(scaled_object)["Active"].true
            since = None if active else (last if last is not None else created)
            # KEDA scales to zero once lastActiveTime + cooldownPeriod has passed; never active:
            # initialCooldownPeriod from the ScaledObject's creation [E scale_scaledobjects.go] (the SDK
            # writes both; one not there: the policy's idle period)
            period = _minutes(spec.get("cooldownPeriod" if last is not None else "initialCooldownPeriod"))
            polling = _seconds(spec.get("pollingInterval")) or polling
        scaled_at = _keda_scaled_at(workload) if stopped else None
        # not read (a watch carries no ScaledObject): no clock, no word; read and absent: say so
        unknown = "no ScaledObject" if scaled_object_read else None
        return IdleStatus(
            **base,
            idle_since=None if deactivated else since,
            scaled_to_zero=stopped,
            scaled_at=scaled_at,
            idle_for=(scaled_at - since) if scaled_at is not None and since is not None else None,
            decision=(unknown if scaled_object is None else "busy" if active else None)
            if not deactivated
            else None,
            # KEDA's initial cooldown holds only while it never saw use [E scale_scaledobjects.go]
            cooldown_until=None if deactivated or created is None or last is not None else created + cooldown,
            period_seconds=period,
            polling_seconds=polling,
        )
    holder = workload if mechanism is StopMechanism.WORKLOAD else rc
    state = _json(_annotations(holder).get(IDLE_STATE_ANNOTATION))
    idle_for = state.get("idleSeconds")
    admitted = epoch_of(state.get("admittedAt"))
    admission = conditions_of(workload)["Admitted"]
    if admitted is None and mechanism is StopMechanism.WORKLOAD and admission.true:
        admitted = epoch_of(admission.transition)  # the agent has not written yet: Kueue's own word
    decision = state.get("decision")
    # busy, or a signal not read: no clock runs (the annotation's idleSince is the last such poll)
    counting = not str(decision or "").startswith(_NO_CLOCK)
    return IdleStatus(
        **base,
        idle_since=None if deactivated or not counting else epoch_of(state.get("idleSince")),
        scaled_to_zero=stopped,
        scaled_at=epoch_of(state.get("scaledAt")) if stopped else None,
        idle_for=float(idle_for) if stopped and isinstance(idle_for, int | float) else None,
        decision=state.get("decision"),
        hook=state.get("hook"),
        cooldown_until=None if deactivated or admitted is None else admitted + cooldown,
        polling_seconds=_seconds(state.get("pollingSeconds")) or info.polling_seconds,
    )
