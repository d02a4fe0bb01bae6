"""Idle scale-to-zero, the plan: which mode and mechanism, and which objects, for one RayCluster.

A fetch step, then a pure decision (as :mod:`rayqueue_sdk.cluster.preflight` does for ``apply()``):

- :func:`fetch_plan_facts` reads what the plan needs once: :func:`discover` (whether Kueue serves
  ``workloads/scale`` and KEDA serves ``scaledobjects.keda.sh``), the cluster's Workload name (waited for:
  Kueue makes it moments after the RayCluster) and Kueue's API version, into :class:`PlanFacts`;
  :func:`offline_facts` stands in for it offline (``to_yaml()``).
- :func:`build_plan` is pure: :func:`choose_mode` turns the facts, the policy and whether the cluster is
  queued into a mode and a mechanism, refusing ``mode="keda"`` where it cannot work with a
  :class:`~rayqueue_sdk.errors.ConfigError` that names what is missing and offers the reaper; then the
  objects (:mod:`rayqueue_sdk.manifests.scaling`) with the RayCluster's uid for the ownerReferences.
- :func:`plan` is the two together; :mod:`rayqueue_sdk.scaling.policy` applies the :class:`Plan`.

Example:
    >>> [str(x) for x in choose_mode(IdlePolicy(idle_minutes=5), Capabilities(True, True), queued=True)]
    ['reaper', 'workload']
    >>> keda_ok = IdlePolicy(idle_minutes=5, prometheus="http://p:9090")
    >>> choose_mode(keda_ok, Capabilities(True, True), queued=True)
    (<IdleMode.KEDA: 'keda'>, <StopMechanism.WORKLOAD: 'workload'>)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rayqueue_sdk.config.idle import IdlePolicy
from rayqueue_sdk.errors import ConfigError, NotFoundError
from rayqueue_sdk.kube.lookups import find_workload
from rayqueue_sdk.kube.poll import poll_until
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.idle import IdleMode, StopMechanism
from rayqueue_sdk.manifests.labels import JOB_UID_LABEL, QUEUE_LABEL
from rayqueue_sdk.manifests.meta import labels_of, meta_of, name_of
from rayqueue_sdk.manifests.scaling import keda_objects, policy_annotation, reaper_objects

__all__ = [
    "Capabilities",
    "Plan",
    "PlanFacts",
    "agent_source",
    "build_plan",
    "choose_mode",
    "discover",
    "fetch_plan_facts",
    "offline_facts",
    "plan",
    "worker_group_names",
]


#: How long :func:`plan` waits for Kueue to create the cluster's Workload (KEDA's target and the
#: reaper's Role name it: the Role grants ``get``/``patch`` of that one Workload).
_WORKLOAD_WAIT = 20.0


@dataclass(frozen=True)
class Capabilities:
    """What the API server serves for KEDA mode.

    Example:
        >>> Capabilities(False, True).missing
        ['workloads/scale (kueue.x-k8s.io: Kueue without the Workload /scale subresource, kueue#4927)']
    """

    workload_scale: bool
    keda: bool

    @property
    def missing(self) -> list[str]:
        """What KEDA mode lacks here, in words."""
        out = []
        if not self.workload_scale:
            out.append(
                "workloads/scale (kueue.x-k8s.io: Kueue without the Workload /scale subresource, kueue#4927)"
            )
        if not self.keda:
            out.append("scaledobjects.keda.sh (KEDA is not installed)")
        return out


def discover(session: KubeSession) -> Capabilities:
    """Ask discovery whether ``workloads/scale`` and ``scaledobjects.keda.sh`` are served.

    Example:
        >>> discover(session)   # upstream Kueue has no Workload /scale; the example's server serves KEDA
        Capabilities(workload_scale=False, keda=True)
    """
    version = session.kueue_version()
    return Capabilities(
        workload_scale="workloads/scale" in session.resources(f"kueue.x-k8s.io/{version}"),
        keda="scaledobjects" in session.resources("keda.sh/v1alpha1"),
    )


def choose_mode(policy: IdlePolicy, caps: Capabilities, *, queued: bool) -> tuple[IdleMode, StopMechanism]:
    """``(mode, mechanism)``: :class:`IdleMode` ``KEDA``/``REAPER`` and :class:`StopMechanism`.

    A cluster without a queue has no Workload: the reaper suspends it through KubeRay's ``spec.suspend``.

    Example:
        >>> [str(x) for x in choose_mode(IdlePolicy(idle_minutes=5), Capabilities(True, True), queued=False)]
        ['reaper', 'suspend']
        >>> choose_mode(IdlePolicy(idle_minutes=5, mode="keda", prometheus="http://p:9090"),
        ...             Capabilities(False, True), queued=True)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: mode: KEDA is not served here: workloads/scale ...
    """
    if not queued:
        if policy.mode is IdleMode.KEDA:
            raise ConfigError(
                "mode",
                "keda",
                "mode='reaper' or 'auto' (a cluster without a queue is suspended: KubeRay's spec.suspend)",
                problem="a cluster without a Kueue queue has no Workload for KEDA to scale",
            )
        return IdleMode.REAPER, StopMechanism.SUSPEND
    if policy.mode is IdleMode.KEDA:
        if caps.missing:
            raise ConfigError(
                "mode",
                "keda",
                "mode='reaper' (works with upstream Kueue) or mode='auto'",
                problem=f"KEDA is not served here: {'; '.join(caps.missing)}",
            )
        return IdleMode.KEDA, StopMechanism.WORKLOAD
    if policy.mode is IdleMode.AUTO and not caps.missing and policy.keda_possible():
        return IdleMode.KEDA, StopMechanism.WORKLOAD
    return IdleMode.REAPER, StopMechanism.WORKLOAD


def agent_source() -> str:
    """The agent's source text, as shipped in the ConfigMap (the very file that runs in the cluster).

    Example:
        >>> "def decide(" in agent_source() and "import rayqueue_sdk" not in agent_source()
        True
    """
    # Read as data, not imported: the agent runs in the cluster, and importing it here would load urllib,
    # http.client and ssl into every session that only renders or applies a policy.
    return Path(__file__).with_name("agent.py").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Plan:
    """What :func:`apply_plan` will create, and why.

    Example:
        >>> p = Plan("ws", "ds", IdleMode.REAPER, StopMechanism.SUSPEND, [])
        >>> p.summary()
        'reaper mode (RayCluster spec.suspend): 0 objects'
        >>> p.headline
        'reaper mode (RayCluster spec.suspend)'
    """

    cluster: str
    namespace: str
    mode: IdleMode
    mechanism: StopMechanism
    objects: list[dict[str, Any]] = field(default_factory=list)
    annotation: str = ""

    @property
    def headline(self) -> str:
        """The mode and the mechanism, in words."""
        return f"{self.mode} mode ({StopMechanism(self.mechanism).describe()})"

    def summary(self) -> str:
        """One line: the mode, the mechanism and the objects."""
        names = ", ".join(f"{o['kind']}/{o['metadata']['name']}" for o in self.objects)
        return f"{self.headline}: {len(self.objects)} objects" + (f": {names}" if names else "")


def worker_group_names(rc: Mapping[str, Any]) -> list[str]:
    """The RayCluster's worker group names, in order.

    Example:
        >>> worker_group_names({"spec": {"workerGroupSpecs": [{"groupName": "gpu"}]}})
        ['gpu']
    """
    return [str(g.get("groupName")) for g in (rc.get("spec") or {}).get("workerGroupSpecs") or []]


def _image(rc: Mapping[str, Any]) -> str:
    containers = (((rc.get("spec") or {}).get("headGroupSpec") or {}).get("template") or {}).get("spec", {})
    return str((containers.get("containers") or [{}])[0].get("image") or "")


@dataclass(frozen=True)
class PlanFacts:
    """What :func:`build_plan` needs from the API server, read once by :func:`fetch_plan_facts`.

    Attributes:
        caps: what the server serves for KEDA mode (:func:`discover`).
        workload: the name of the cluster's Kueue Workload (KEDA's target, the reaper's Role names it);
            ``None`` where the plan does not need it, or offline (a placeholder is shown).
        kueue_version: the Kueue API version KEDA's ``scaleTargetRef`` names.
        agent: the reaper agent's source (:func:`agent_source`), shipped in its ConfigMap.

    Example:
        >>> PlanFacts(Capabilities(False, False)).kueue_version
        'v1beta2'
    """

    caps: Capabilities
    workload: str | None = None
    kueue_version: str = "v1beta2"
    agent: str = ""


def _queued(rc: Mapping[str, Any]) -> bool:
    return bool(labels_of(rc).get(QUEUE_LABEL))


def offline_facts(policy: IdlePolicy) -> PlanFacts:
    """The facts of a plan made offline (``to_yaml()``): ``auto`` renders the reaper (discovery decides at
    apply time) and the Workload's name is a placeholder.

    Example:
        >>> offline_facts(IdlePolicy(idle_minutes=5)).caps
        Capabilities(workload_scale=False, keda=False)
    """
    keda = policy.mode is IdleMode.KEDA
    return PlanFacts(Capabilities(keda, keda), agent=agent_source())


def fetch_plan_facts(
    session: KubeSession,
    rc: Mapping[str, Any],
    policy: IdlePolicy,
    *,
    caps: Capabilities | None = None,
    workload: str | None = None,
) -> PlanFacts:
    """Read what the plan for the stored RayCluster ``rc`` needs: discovery (unless ``caps`` is given)
    and, where the chosen mode names it, the cluster's Workload (waited for: Kueue makes it within moments
    of the RayCluster) and Kueue's API version.

    Raises:
        ConfigError: ``mode="keda"`` where it cannot run here (from :func:`choose_mode`, before any
            other read).
        NotFoundError: Kueue made no Workload within 20 s.

    Example:
        >>> rc = {"metadata": {"name": "ws", "namespace": "default"}}
        >>> facts = fetch_plan_facts(session, rc, IdlePolicy(idle_minutes=5))
        >>> facts.workload is None, bool(facts.agent)   # no queue: spec.suspend, no Workload to name
        (True, True)
    """
    if caps is None:
        caps = discover(session)
    mode, mechanism = choose_mode(policy, caps, queued=_queued(rc))
    meta = meta_of(rc)
    uid = str(meta.get("uid") or "")
    if mechanism is StopMechanism.WORKLOAD and not workload and uid:
        workload = _workload_name(session, namespace=str(meta.get("namespace") or "default"), uid=uid)
    version = session.kueue_version() if mode is IdleMode.KEDA else "v1beta2"
    return PlanFacts(caps, workload, version, agent_source())


def build_plan(rc: Mapping[str, Any], policy: IdlePolicy, facts: PlanFacts) -> Plan:
    """The objects of ``policy`` for the RayCluster ``rc``, decided from ``facts``: pure (no I/O).

    The RayCluster's uid (when it has one) goes into the objects' ownerReferences; without the Workload's
    name (offline) a placeholder stands for it.

    Raises:
        ConfigError: ``mode="keda"`` where ``facts.caps`` says it cannot run.

    Example:
        >>> rc = {"metadata": {"name": "ws", "namespace": "ds", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        ...       "spec": {"workerGroupSpecs": [{"groupName": "g"}]}}
        >>> p = build_plan(rc, IdlePolicy(idle_minutes=5, mode="keda", prometheus="http://p:9090"),
        ...                PlanFacts(Capabilities(True, True), workload="raycluster-ws-1"))
        >>> p.headline, [o["kind"] for o in p.objects]
        ('keda mode (Workload spec.active=false)', ['ScaledObject'])
    """
    meta = meta_of(rc)
    name, namespace = str(meta.get("name")), str(meta.get("namespace") or "default")
    uid = meta.get("uid") or None
    mode, mechanism = choose_mode(policy, facts.caps, queued=_queued(rc))
    groups = worker_group_names(rc)
    # both modes name the Workload: KEDA's scaleTargetRef, the reaper's Role (resourceNames)
    workload = facts.workload or f"raycluster-{name}-<uid>"
    if mode is IdleMode.KEDA:
        objects = keda_objects(
            policy,
            cluster=name,
            namespace=namespace,
            groups=groups,
            workload=workload,
            workload_api_version=f"kueue.x-k8s.io/{facts.kueue_version}",
            uid=uid,
        )
    else:
        objects = reaper_objects(
            policy,
            cluster=name,
            namespace=namespace,
            groups=groups,
            image=_image(rc),
            agent_source=facts.agent,
            mechanism=mechanism,
            workload=workload if mechanism is StopMechanism.WORKLOAD else None,
            uid=uid,
        )
    return Plan(
        name, namespace, mode, mechanism, objects, policy_annotation(policy, mode=mode, mechanism=mechanism)
    )


def plan(
    session: KubeSession | None,
    rc: dict[str, Any],
    policy: IdlePolicy,
    *,
    caps: Capabilities | None = None,
    workload: str | None = None,
) -> Plan:
    """The objects for the stored RayCluster ``rc`` (``session=None``: offline, as ``to_yaml()`` shows them):
    :func:`fetch_plan_facts` (or :func:`offline_facts`), then :func:`build_plan`.

    Offline, ``auto`` renders the reaper (discovery decides at apply time), the ownerReferences are left
    out (the uid is the server's) and the Workload's name (KEDA's target, the reaper's Role) is a
    placeholder. Online, the Workload is waited for (Kueue makes it within moments of the RayCluster).

    Example:
        >>> rc = {"metadata": {"name": "ws", "namespace": "ds", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        ...       "spec": {"workerGroupSpecs": [{"groupName": "g"}]}}
        >>> plan(None, rc, IdlePolicy(idle_minutes=5)).summary()
        'reaper mode (Workload spec.active=false): 5 objects: ServiceAccount/ws-idle, Role/ws-idle, ...'
    """
    if session is None:
        facts = offline_facts(policy)
        if caps is not None or workload is not None:
            facts = PlanFacts(caps or facts.caps, workload, facts.kueue_version, facts.agent)
    else:
        facts = fetch_plan_facts(session, rc, policy, caps=caps, workload=workload)
    return build_plan(rc, policy, facts)


def _workload_name(session: KubeSession, *, namespace: str, uid: str) -> str:
    found = poll_until(
        lambda: find_workload(session, owner_uid=uid, namespace=namespace),
        timeout=_WORKLOAD_WAIT,
        interval=0.1,
        max_interval=1.0,
    )
    if found is None:
        raise NotFoundError(
            404,
            "NotFound",
            f"Kueue made no Workload (label {JOB_UID_LABEL}={uid}) in {namespace!r} within "
            f"{_WORKLOAD_WAIT:g}s: KEDA needs its name (is Kueue running?)",
        )
    return name_of(found)
