"""The idle policy's plan, decided without a server: :func:`build_plan` from hand-built facts, and the
typed policy a RayCluster carries (:func:`policy_of`), from the read path to ``resume()``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rayqueue_sdk.admission.idle import PolicyInForce, policy_of
from rayqueue_sdk.config.idle import IdlePolicy
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.idle import IdleMode, StopMechanism
from rayqueue_sdk.manifests.scaling import POLICY_ANNOTATION
from rayqueue_sdk.scaling.planning import Capabilities, PlanFacts, build_plan, offline_facts


def _rc(*, queued: bool, uid: str | None = "uid-1") -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": "q"} if queued else {}
    meta: dict[str, Any] = {"name": "ws", "namespace": "ds", "labels": labels}
    if uid:
        meta["uid"] = uid
    head = {"template": {"spec": {"containers": [{"image": "rayproject/ray:2.55.1"}]}}}
    return {"metadata": meta, "spec": {"headGroupSpec": head, "workerGroupSpecs": [{"groupName": "gpu"}]}}


KEDA_POLICY = IdlePolicy(idle_minutes=30, prometheus="http://prometheus:9090")
SERVED = Capabilities(workload_scale=True, keda=True)


def test_auto_picks_keda_where_served_and_targets_the_workload_named_in_the_facts() -> None:
    facts = PlanFacts(SERVED, workload="raycluster-ws-abc12", kueue_version="v1beta1", agent="SOURCE")
    p = build_plan(_rc(queued=True), KEDA_POLICY, facts)
    assert (p.mode, p.mechanism) == (IdleMode.KEDA, StopMechanism.WORKLOAD)
    so = next(o for o in p.objects if o["kind"] == "ScaledObject")
    target = so["spec"]["scaleTargetRef"]
    assert (target["name"], target["apiVersion"]) == ("raycluster-ws-abc12", "kueue.x-k8s.io/v1beta1")
    assert so["metadata"]["ownerReferences"][0]["uid"] == "uid-1"
    assert json.loads(p.annotation)["mode"] == "keda"


def test_the_reaper_ships_the_agent_source_of_the_facts_and_names_the_workload_in_its_role() -> None:
    facts = PlanFacts(Capabilities(False, False), workload="raycluster-ws-abc12", agent="AGENT SOURCE")
    p = build_plan(_rc(queued=True), KEDA_POLICY, facts)
    assert (p.mode, p.mechanism) == (IdleMode.REAPER, StopMechanism.WORKLOAD)
    config_map = next(o for o in p.objects if o["kind"] == "ConfigMap")
    assert "AGENT SOURCE" in config_map["data"].values()
    role = next(o for o in p.objects if o["kind"] == "Role")
    assert any("raycluster-ws-abc12" in rule.get("resourceNames", []) for rule in role["rules"])


def test_a_cluster_without_a_queue_is_suspended_and_needs_no_workload() -> None:
    p = build_plan(_rc(queued=False), IdlePolicy(idle_minutes=5), PlanFacts(SERVED, agent="SOURCE"))
    assert (p.mode, p.mechanism) == (IdleMode.REAPER, StopMechanism.SUSPEND)
    role = next(o for o in p.objects if o["kind"] == "Role")
    assert not any("raycluster-" in str(rule) for rule in role["rules"])


def test_keda_asked_for_where_it_is_not_served_is_refused_naming_what_is_missing() -> None:
    policy = IdlePolicy(idle_minutes=5, mode="keda", prometheus="http://p:9090")
    with pytest.raises(ConfigError) as err:
        build_plan(_rc(queued=True), policy, PlanFacts(Capabilities(False, True)))
    assert err.value.field == "mode" and "workloads/scale" in str(err.value)


def test_offline_the_workload_is_a_placeholder_and_no_owner_is_set() -> None:
    p = build_plan(_rc(queued=True, uid=None), KEDA_POLICY, offline_facts(KEDA_POLICY))
    assert p.mode is IdleMode.REAPER  # auto, offline: discovery decides at apply time
    role = next(o for o in p.objects if o["kind"] == "Role")
    assert any("raycluster-ws-<uid>" in rule.get("resourceNames", []) for rule in role["rules"])
    assert all("ownerReferences" not in o["metadata"] for o in p.objects)


def _carrying(annotation: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"annotations": {POLICY_ANNOTATION: json.dumps(annotation)}}}


def test_policy_of_types_the_annotation_plan_writes() -> None:
    p = build_plan(_rc(queued=False), IdlePolicy(idle_minutes=5), PlanFacts(SERVED, agent="SOURCE"))
    rc = {"metadata": {"annotations": {POLICY_ANNOTATION: p.annotation}}}
    assert policy_of(rc) == PolicyInForce(IdleMode.REAPER, StopMechanism.SUSPEND, 5.0, 5.0, "gpu", 30.0)


def test_policy_of_reads_old_and_unknown_annotations() -> None:
    old = policy_of(_carrying({"mode": "keda", "idle_minutes": 60}))  # the first versions: no mechanism
    assert old is not None and old.mechanism is StopMechanism.WORKLOAD
    assert old.initial_cooldown_minutes == 60.0  # the idle period unless the annotation says
    assert policy_of(_carrying({"mode": "sleep", "mechanism": "workload"})) is None
    assert policy_of(_carrying({"mode": "reaper", "mechanism": "hibernate"})) is None
    assert policy_of({"metadata": {}}) is None
