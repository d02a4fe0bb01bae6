"""Idle scale-to-zero, the I/O shell: apply and removal of the policy's objects, resume, status.

- :mod:`rayqueue_sdk.scaling.planning` decides the :class:`~rayqueue_sdk.scaling.planning.Plan` (a fetch
  step, then the pure ``build_plan``); :func:`apply_plan` creates its objects in order and, when one is
  refused (a 403 on the Role, say), deletes what it had made before re-raising: nothing half-made stays
  behind. The RayCluster gets the annotation ``scaling.rayqueue-sdk.io/policy``.
- :func:`remove_policy` deletes every object either mode makes (idempotent).
- :func:`on_resume` gives a resumed cluster its whole idle period again: under KEDA the ScaledObject is
  recreated (KEDA's ``lastActiveTime`` is old and the metric still 0, so the old one would scale the
  cluster straight back to zero; a new one has no ``lastActiveTime`` and its ``initialCooldownPeriod``
  counts from its creation); the reaper's state annotation is cleared (its clock restarts anyway at the
  Workload's new admission).
- :func:`idle_status` reads the policy, the idle clock and whether the cluster was scaled to zero into an
  :class:`~rayqueue_sdk.admission.idle.IdleStatus`, and :func:`dry_run` says what the policy would
  decide now and why, using the agent's own decision core (:func:`rayqueue_sdk.scaling.agent.decide`).

Example:
    >>> remove_policy(session, name="no-such-cluster", namespace="default")
    []
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.admission.idle import IdleStatus, PolicyInForce, idle_from, pods_gone, policy_of
from rayqueue_sdk.config.idle import IdlePolicy
from rayqueue_sdk.errors import NotFoundError, RayQueueError
from rayqueue_sdk.kube.kinds import kind_of
from rayqueue_sdk.kube.poll import poll_until
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.idle import IdleMode, StopMechanism
from rayqueue_sdk.manifests.meta import condition_of, meta_of
from rayqueue_sdk.manifests.scaling import (
    IDLE_STATE_ANNOTATION,
    POLICY_ANNOTATION,
    agent_config,
    policy_name,
    token_secret_name,
)
from rayqueue_sdk.scaling.planning import Plan, worker_group_names

__all__ = [
    "apply_plan",
    "dry_run",
    "idle_status",
    "on_resume",
    "read_gpu",
    "remove_policy",
    "settle_before_edit",
]

log = logging.getLogger(__name__)


def _named(obj: Mapping[str, Any]) -> tuple[str, str]:
    """The name and namespace of a manifest, for the session's verbs."""
    meta = meta_of(obj)
    return str(meta.get("name")), str(meta.get("namespace"))


def _get(session: KubeSession, ref: Mapping[str, Any]) -> dict[str, Any]:
    name, namespace = _named(ref)
    return session.get(kind_of(ref), name=name, namespace=namespace)


def _delete(session: KubeSession, ref: Mapping[str, Any]) -> bool:
    name, namespace = _named(ref)
    return session.delete(kind_of(ref), name=name, namespace=namespace, propagation="Background")


def _patch(session: KubeSession, ref: Mapping[str, Any], patch: Mapping[str, Any]) -> None:
    name, namespace = _named(ref)
    session.patch(kind_of(ref), name=name, namespace=namespace, patch=patch)


def _rc_ref(*, name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace},
    }


def apply_plan(session: KubeSession, the_plan: Plan, *, previous: PolicyInForce | None = None) -> list[str]:
    """Replace any previous policy objects with ``the_plan``'s, all or nothing; returns ``Kind/name``s.

    Raises:
        ForbiddenError: a create was refused (names the verb and the resource); what this call had
            created is deleted first.

    Example::

        apply_plan(session, planning.plan(session, stored_raycluster, IdlePolicy(idle_minutes=60)))
    """
    if previous is not None:
        remove_policy(
            session,
            name=the_plan.cluster,
            namespace=the_plan.namespace,
            annotation=False,
            mode=previous.mode,
        )
    made: list[dict[str, Any]] = []
    try:
        for obj in the_plan.objects:
            session.create(kind_of(obj), obj)
            made.append(obj)
        _patch(
            session,
            _rc_ref(name=the_plan.cluster, namespace=the_plan.namespace),
            {"metadata": {"annotations": {POLICY_ANNOTATION: the_plan.annotation}}},
        )
    except RayQueueError:
        for obj in reversed(made):
            try:
                _delete(session, obj)
            except RayQueueError as err:  # pragma: no cover - best effort; the ownerReferences remain
                log.warning("could not remove %s/%s: %s", obj["kind"], obj["metadata"]["name"], err)
        raise
    log.info("%s/%s: %s", the_plan.namespace, the_plan.cluster, the_plan.summary())
    return [f"{o['kind']}/{o['metadata']['name']}" for o in made]


def _all_kinds(*, name: str, namespace: str, mode: IdleMode | None = None) -> list[dict[str, Any]]:
    base = policy_name(name)
    keda_only = {"ScaledObject", "TriggerAuthentication", "Secret"}
    reaper_only = {"Deployment", "ConfigMap"}
    kinds = [
        ("keda.sh/v1alpha1", "ScaledObject", base),
        ("keda.sh/v1alpha1", "TriggerAuthentication", base),
        ("apps/v1", "Deployment", base),
        ("v1", "ConfigMap", base),
        ("rbac.authorization.k8s.io/v1", "RoleBinding", base),
        ("rbac.authorization.k8s.io/v1", "Role", base),
        ("v1", "Secret", token_secret_name(name)),
        ("v1", "ServiceAccount", base),
    ]
    skip = reaper_only if mode == IdleMode.KEDA else keda_only if mode == IdleMode.REAPER else set()
    return [
        {"apiVersion": v, "kind": k, "metadata": {"name": n, "namespace": namespace}}
        for v, k, n in kinds
        if k not in skip
    ]


def remove_policy(
    session: KubeSession,
    *,
    name: str,
    namespace: str,
    annotation: bool = True,
    mode: IdleMode | None = None,
) -> list[str]:
    """Delete the objects ``mode`` makes (``None``: the policy annotation's mode, else both modes') for
    cluster ``name`` (idempotent); the removed ``Kind/name``s. With ``annotation`` the RayCluster's
    policy annotation goes too.

    A kind the server does not serve (no KEDA) counts as absent.

    Example:
        >>> remove_policy(session, name="ws", namespace="default")   # nothing there: nothing removed
        []
    """
    rc_ref = _rc_ref(name=name, namespace=namespace)
    if mode is None:
        try:
            found = policy_of(_get(session, rc_ref))
            mode = found.mode if found is not None else None
        except NotFoundError:
            mode = None
    removed = []
    for obj in _all_kinds(name=name, namespace=namespace, mode=mode):
        try:
            if _delete(session, obj):
                removed.append(f"{obj['kind']}/{obj['metadata']['name']}")
        except NotFoundError:
            continue
    if annotation:
        with contextlib.suppress(NotFoundError):
            _patch(session, rc_ref, {"metadata": {"annotations": {POLICY_ANNOTATION: None}}})
    return removed


def on_resume(session: KubeSession, rc: dict[str, Any], workload: dict[str, Any] | None) -> str | None:
    """Give a resumed cluster its whole idle period again; what was done, in words (``None``: no policy).

    Example:
        >>> no_policy = {"metadata": {"name": "ws", "namespace": "default"}}
        >>> on_resume(session, no_policy, None) is None
        True

        On a cluster with a KEDA policy (not run here)::

            on_resume(session, raycluster, workload)   # 'ScaledObject ws-idle recreated: ...'
    """
    from rayqueue_sdk.scaling import agent  # lazy: the reaper (urllib, ssl), for its clock and decisions

    info = policy_of(rc)
    if info is None:
        return None
    meta = meta_of(rc)
    name, namespace = str(meta.get("name")), str(meta.get("namespace"))
    if info.mode is IdleMode.KEDA:
        ref = {
            "apiVersion": "keda.sh/v1alpha1",
            "kind": "ScaledObject",
            "metadata": {"name": policy_name(name), "namespace": namespace},
        }
        try:
            old = _get(session, ref)
        except NotFoundError:
            return "no ScaledObject to recreate"
        old_meta = meta_of(old)
        annotations = dict(old_meta.get("annotations") or {})
        annotations["scaling.rayqueue-sdk.io/resumed-at"] = agent.format_time(time.time()) or ""
        fresh = {
            "apiVersion": old["apiVersion"],
            "kind": "ScaledObject",
            "metadata": {
                k: v
                for k, v in {
                    "name": old_meta.get("name"),
                    "namespace": namespace,
                    "labels": {
                        k: v
                        for k, v in (old_meta.get("labels") or {}).items()
                        if not k.startswith("scaledobject.keda.sh/")
                    },
                    "annotations": annotations,
                    "ownerReferences": old_meta.get("ownerReferences"),
                }.items()
                if v
            },
            "spec": old.get("spec"),
        }
        _delete(session, ref)
        _wait_gone(session, ref)
        session.create(kind_of(fresh), fresh)
        return f"ScaledObject {policy_name(name)} recreated: KEDA counts the idle period from now"
    holder = workload if info.mechanism is StopMechanism.WORKLOAD else rc
    if holder is not None:
        ref = {
            "apiVersion": holder.get("apiVersion", "ray.io/v1"),
            "kind": holder.get("kind", "RayCluster"),
            "metadata": {"name": meta_of(holder).get("name"), "namespace": namespace},
        }
        if ref["kind"] == "Workload":
            return "the reaper restarts its idle clock at the new admission"
        _patch(session, ref, {"metadata": {"annotations": {IDLE_STATE_ANNOTATION: None}}})
    return "the reaper restarts its idle clock at the new admission"


def settle_before_edit(session: KubeSession, rc: dict[str, Any] | None, *, limit: float = 30.0) -> bool:
    """Before ``apply()`` edits a cluster its policy is scaling to zero, wait (at most ``limit`` s) until
    its pods are gone; whether it waited.

    While the deactivated Workload still holds its quota (KubeRay still deleting the pods), an edit that
    changes the pod sets makes Kueue delete that Workload and create a new, *active* one (the job
    reconciler's "No matching Workload" path): the user's edit would undo the scale-down and queue the
    cluster again. Once the pods are gone and the quota released, Kueue updates the Workload in place and
    keeps ``spec.active=false`` (kueue#6719, fixed by kueue PR #8424); ``resume()`` is how a user asks.

    Example:
        >>> settle_before_edit(None, {"metadata": {}, "spec": {"suspend": False}})  # no policy: no wait
        False
    """
    if rc is None or policy_of(rc) is None or not (rc.get("spec") or {}).get("suspend"):
        return False
    if pods_gone(rc):
        return False
    meta = meta_of(rc)
    ref = _rc_ref(name=str(meta.get("name")), namespace=str(meta.get("namespace")))

    def gone() -> bool:
        try:
            return pods_gone(_get(session, ref))
        except NotFoundError:
            return True

    if poll_until(gone, timeout=limit, interval=0.25, wait_first=True):
        return True
    log.warning(
        "%s/%s: its pods are still stopping after %gs; applying anyway (Kueue may queue it again)",
        meta.get("namespace"),
        meta.get("name"),
        limit,
    )
    return True


def _wait_gone(session: KubeSession, ref: dict[str, Any], limit: float = 10.0) -> None:
    def gone() -> bool:
        try:
            _get(session, ref)
        except NotFoundError:
            return True
        return False

    poll_until(gone, timeout=limit, interval=0.1)


def idle_status(
    session: KubeSession, rc: dict[str, Any], workload: dict[str, Any] | None
) -> IdleStatus | None:
    """Read the policy and its clock for the stored RayCluster ``rc`` (``None``: no policy): the
    ScaledObject in KEDA mode (one GET), then :func:`rayqueue_sdk.admission.idle.idle_from`.

    Example:
        >>> no_policy = {"metadata": {"name": "ws", "namespace": "default"}}
        >>> idle_status(session, no_policy, None) is None
        True

        On a cluster with a policy (not run here)::

            idle_status(session, raycluster, workload).text()   # 'keda mode: idle 12 of 60 min'
    """
    info = policy_of(rc)
    if info is None:
        return None
    so, read = None, True
    if info.mode is IdleMode.KEDA:
        meta = meta_of(rc)
        try:
            so = _get(
                session, _scaled_object_ref(name=str(meta.get("name")), namespace=str(meta.get("namespace")))
            )
        except NotFoundError:
            so = None
        except RayQueueError:
            so, read = None, False
    return idle_from(rc, workload, so, scaled_object_read=read)


def _scaled_object_ref(*, name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": policy_name(name), "namespace": namespace},
    }


def read_gpu(policy: IdlePolicy, rc: dict[str, Any], dashboard: str | None) -> tuple[bool | None, str]:
    """GPU in use now, read as the reaper reads it (its own reading code): the policy's Prometheus
    query, else Ray's node view at ``dashboard``; and what was read, in words (``None``: not readable).

    Example:
        >>> rc = {"metadata": {"name": "ws", "namespace": "ds"}, "spec": {"workerGroupSpecs": []}}
        >>> read_gpu(IdlePolicy(idle_minutes=5), rc, None)
        (None, 'GPU not readable: no head address')
    """
    from rayqueue_sdk.scaling import agent  # lazy: the reaper (urllib, ssl), for its clock and decisions

    meta = meta_of(rc)
    name, namespace = str(meta.get("name")), str(meta.get("namespace") or "default")
    source = policy.prometheus
    if source is not None and source.auth == "bearer":
        return None, (
            f"GPU not read: Prometheus {source.url} takes the policy's ServiceAccount token, which only "
            "the policy's pods hold"
        )
    config = agent_config(
        policy, cluster=name, namespace=namespace, groups=worker_group_names(rc), mechanism="workload"
    )
    # The reaper's own reading (agent.Agent._gpu): the same query, the same rule for a failed read.
    # No Kubernetes call is made by it (the token file is read only with auth="bearer", refused above).
    reader = agent.Agent(config, agent.KubeApi("https://unused.invalid", token_file="", ca_file=None))
    busy, why = reader._gpu(dashboard)
    where = f"Prometheus {source.url}" if source is not None else f"Ray's node view at {dashboard}"
    if busy is None:
        return None, f"GPU not readable: {why or 'no reading'}"
    return busy, f"GPU {'busy' if busy else 'idle'} ({where})"


def dry_run(
    policy: IdlePolicy,
    the_plan: Plan,
    workload: dict[str, Any] | None,
    *,
    rc: dict[str, Any],
    jobs: list[dict[str, Any]] | None,
    gpu: bool | None,
    now: float | None = None,
    gpu_reading: str | None = None,
) -> str:
    """What the policy would decide now and why, without acting (the agent's own decision core).

    ``jobs`` (the Ray jobs) and ``gpu`` (GPU in use) are what the caller could read; ``None``: unknown.
    ``gpu_reading`` says what was read for ``gpu`` (:func:`read_gpu`); the report quotes it.

    Example:
        >>> rc = {"metadata": {"name": "ws", "namespace": "ds"}, "spec": {"suspend": False},
        ...       "status": {"conditions": [{"type": "HeadPodReady", "status": "True",
        ...                                  "lastTransitionTime": "1970-01-01T00:00:00Z"}]}}
        >>> p = Plan("ws", "ds", IdleMode.REAPER, StopMechanism.SUSPEND, [])
        >>> print(dry_run(IdlePolicy(idle_minutes=1, idle_signal="jobs"), p, None, rc=rc, jobs=[],
        ...               gpu=None, now=90.0))
        reaper mode (RayCluster spec.suspend): 0 objects. Now: would scale to zero (idle 1.5 min: ...)
    """
    from rayqueue_sdk.scaling import agent  # lazy: the reaper (urllib, ssl), for its clock and decisions

    now = time.time() if now is None else now
    cond: dict[str, Any]
    if the_plan.mechanism is StopMechanism.SUSPEND:
        running = not (rc.get("spec") or {}).get("suspend")
        cond = dict(condition_of(rc, "HeadPodReady") or {})
    else:
        cond = dict(condition_of(workload, "Admitted") or {})
        active = ((workload or {}).get("spec") or {}).get("active", True) is not False
        running = active and cond.get("status") == "True"
    busy = agent.busy_from(policy.idle_signal, gpu, None if jobs is None else agent.jobs_busy(jobs))
    obs = agent.Observation(
        running,
        admitted_at=agent.parse_time(cond.get("lastTransitionTime")) if running else None,
        busy=busy,
        why="" if running else "not admitted or already scaled to zero",
    )
    if busy is None and running:
        obs = agent.Observation(
            True, admitted_at=obs.admitted_at, busy=None, why="the idle signal is not readable from here"
        )
    decision = agent.decide(
        agent.AgentState(),
        obs,
        now,
        idle_seconds=policy.idle_seconds,
        initial_cooldown_seconds=policy.initial_cooldown_seconds,
    )
    verdict = "would scale to zero" if decision.action == "scale" else "would wait"
    read = f" {gpu_reading}." if gpu_reading else ""
    return f"{the_plan.summary()}.{read} Now: {verdict} ({decision.state.decision})"
