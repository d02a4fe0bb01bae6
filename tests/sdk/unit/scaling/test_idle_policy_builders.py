"""IdlePolicy's checks, the KEDA and reaper builders (validated against KEDA's CRDs), to_yaml, seeds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from crd_schema import validate

from rayqueue_sdk import Cluster, ClusterConfiguration, ConfigError, IdlePolicy
from rayqueue_sdk.config.idle import PrometheusSource
from rayqueue_sdk.manifests.scaling import agent_config, keda_objects, pod_regex, policy_name, reaper_objects
from rayqueue_sdk.scaling import agent
from rayqueue_sdk.scaling.planning import Capabilities, agent_source, choose_mode, plan
from rayqueue_sdk.scaling.seeds import render_seeds

PROM = {"url": "https://thanos-querier.openshift-monitoring.svc.cluster.local:9092", "auth": "bearer"}


@pytest.mark.parametrize(
    ("kwargs", "field", "words"),
    [
        ({"idle_minutes": 0}, "idle_minutes", "not above 0"),
        ({"idle_minutes": -5}, "idle_minutes", "not above 0"),
        ({"idle_minutes": "sixty"}, "idle_minutes", "not a number"),
        ({"idle_minutes": True}, "idle_minutes", "not a number"),
        ({"idle_minutes": float("nan")}, "idle_minutes", "not a finite number"),
        ({"idle_minutes": 5, "mode": "turbo"}, "mode", "unknown mode"),
        ({"idle_minutes": 5, "idle_signal": "ssh"}, "idle_signal", "unknown"),
        ({"idle_minutes": 5, "prometheus": "ftp://prom:9090"}, "prometheus.url", "not an http(s) URL"),
        (
            {"idle_minutes": 5, "prometheus": {"url": "http://p:9090", "query": "max(DCGM_FI_DEV_GPU_UTIL)"}},
            "prometheus.query",
            "no placeholder for the cluster",
        ),
        ({"idle_minutes": 5, "mode": "keda"}, "prometheus", "KEDA needs a Prometheus"),
        (
            {"idle_minutes": 5, "mode": "keda", "prometheus": PROM, "hook": "ckpt"},
            "hook",
            "KEDA runs no hooks",
        ),
        ({"idle_minutes": 5, "polling_seconds": 0}, "polling_seconds", ""),
        ({"idle_minutes": 5, "hook": {"command": "x", "timeout_seconds": 0}}, "hook.timeout_seconds", ""),
    ],
)
def test_bad_input_is_a_config_error_naming_the_field(kwargs: dict, field: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        IdlePolicy(**kwargs)
    assert info.value.field == field
    assert words in str(info.value)


def test_cluster_configuration_carries_the_policy_and_rejects_a_bad_one() -> None:
    cfg = ClusterConfiguration(name="ws", idle_scale_to_zero=IdlePolicy(idle_minutes=30))
    assert cfg.idle_scale_to_zero is not None and cfg.idle_scale_to_zero.idle_seconds == 1800
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration(name="ws", idle_scale_to_zero={"idle_minutes": 0})
    assert info.value.field == "idle_scale_to_zero.idle_minutes"


def test_keda_mode_refused_where_not_served_offers_the_reaper() -> None:
    pol = IdlePolicy(idle_minutes=5, mode="keda", prometheus=PROM)
    with pytest.raises(ConfigError) as info:
        choose_mode(pol, Capabilities(workload_scale=False, keda=True), queued=True)
    assert "workloads/scale" in str(info.value) and "mode='reaper'" in str(info.value)
    with pytest.raises(ConfigError) as info:
        choose_mode(pol, Capabilities(workload_scale=True, keda=False), queued=True)
    assert "scaledobjects.keda.sh" in str(info.value)
    assert choose_mode(
        IdlePolicy(idle_minutes=5, prometheus=PROM), Capabilities(False, False), queued=True
    ) == (
        "reaper",
        "workload",
    )
    assert choose_mode(IdlePolicy(idle_minutes=5), Capabilities(True, True), queued=False) == (
        "reaper",
        "suspend",
    )


def test_pod_regex_matches_this_clusters_pods_only() -> None:
    rx = re.compile(pod_regex("first-raycluster", ["small-group-first-raycluster"]))
    assert rx.fullmatch("first-raycluster-head-x7k2p")
    assert rx.fullmatch("first-raycluster-small-group-first-raycluster-worker-ab12c")
    assert not rx.fullmatch("first-raycluster-2-head-x7k2p")  # the seed's first-raycluster.* matched it
    assert not rx.fullmatch("second-raycluster-head-x7k2p")


def test_keda_objects_fit_the_keda_crds_and_correct_the_seed(crd_dir: Path) -> None:
    pol = IdlePolicy(idle_minutes=60, mode="keda", prometheus=PROM, polling_seconds=30)
    objs = keda_objects(
        pol,
        cluster="first-raycluster",
        namespace="demo",
        groups=["g"],
        workload="raycluster-first-raycluster-abcde",
        uid="1234-5678",
    )
    kinds = [o["kind"] for o in objs]
    assert kinds == [
        "ServiceAccount",
        "Secret",
        "Role",
        "RoleBinding",
        "TriggerAuthentication",
        "ScaledObject",
    ]
    for obj in objs:
        assert obj["metadata"]["ownerReferences"] == [
            {"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": "first-raycluster", "uid": "1234-5678"}
        ]
        if obj["apiVersion"].startswith("keda.sh/"):
            validate(obj, crd_dir)
    so = objs[-1]
    spec = so["spec"]
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (0, 1)
    assert spec["scaleTargetRef"]["kind"] == "Workload"
    # the idle period (60 min) is KEDA's cooldown plus the 1 min window's 30 s beyond a 30 s poll
    assert spec["cooldownPeriod"] == 3570 and spec["initialCooldownPeriod"] == 3600
    # fail safe: an empty result is an error (KEDA keeps the replicas), never 0
    assert spec["triggers"][0]["metadata"]["ignoreNullValues"] == "false"
    query = spec["triggers"][0]["metadata"]["query"]
    assert "max_over_time(" in query and "rate(" not in query
    assert 'exported_namespace="demo"' in query and "exported_pod=~" in query
    assert all(isinstance(v, str) for v in spec["triggers"][0]["metadata"].values())  # KEDA: strings
    assert len(so["metadata"]["name"]) <= 54


def test_policy_names_fit_kedas_limit_for_the_longest_cluster_name() -> None:
    long = "c" * 53
    assert len(policy_name(long)) == 54 and policy_name(long) != policy_name("c" * 52 + "d")


def test_label_names_are_settable() -> None:
    pol = IdlePolicy(
        idle_minutes=1,
        mode="keda",
        prometheus={"url": "http://p:9090", "pod_label": "pod", "namespace_label": "namespace"},
    )
    so = keda_objects(pol, cluster="ws", namespace="ds", groups=[], workload="w")[-1]
    # every series of the default signal filtered on the settable labels
    query = so["spec"]["triggers"][0]["metadata"]["query"]
    assert query.count('namespace="ds",pod=~"ws-(head)-[a-z0-9]+"') >= 2 and "exported_" not in query
    assert [o["kind"] for o in keda_objects(pol, cluster="ws", namespace="ds", groups=[], workload="w")] == [
        "ScaledObject"  # no auth: no token, no Role
    ]


def test_reaper_objects_minimal_role_and_the_agent_shipped_in_the_configmap() -> None:
    pol = IdlePolicy(idle_minutes=5, idle_signal="gpu_and_jobs", hook="python ckpt.py")
    objs = reaper_objects(
        pol,
        cluster="ws",
        namespace="ds",
        groups=["g"],
        image="rayproject/ray:2.41.0",
        agent_source=agent_source(),
        workload="raycluster-ws-1a2b3",
        uid="u1",
    )
    role = next(o for o in objs if o["kind"] == "Role")
    # only its own cluster's Workload and RayCluster, by name: no list, no watch (issue 26 part 7)
    assert role["rules"] == [
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads"],
            "resourceNames": ["raycluster-ws-1a2b3"],
            "verbs": ["get", "patch"],
        },
        {"apiGroups": ["ray.io"], "resources": ["rayclusters"], "resourceNames": ["ws"], "verbs": ["get"]},
    ]
    with pytest.raises(ValueError, match="workload"):
        reaper_objects(pol, cluster="ws", namespace="ds", groups=[], image="i", agent_source="")
    cm = next(o for o in objs if o["kind"] == "ConfigMap")
    assert cm["data"]["agent.py"] == Path(agent.__file__).read_text()
    config = json.loads(cm["data"]["config.json"])
    assert config["hook"] == {"command": "python ckpt.py", "timeout_seconds": 300.0}
    assert config["idle_signal"] == "gpu_and_jobs" and config["mechanism"] == "workload"
    assert config["workload"] == "raycluster-ws-1a2b3"
    deploy = objs[-1]
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "rayproject/ray:2.41.0" and container["command"][0] == "python"
    assert deploy["spec"]["replicas"] == 1 and deploy["spec"]["strategy"] == {"type": "Recreate"}
    assert deploy["spec"]["template"]["spec"]["serviceAccountName"] == "ws-idle"
    # Pod Security "restricted": non-root, no escalation, all capabilities dropped, RuntimeDefault
    pod_sc = deploy["spec"]["template"]["spec"]["securityContext"]
    assert pod_sc["runAsNonRoot"] is True and pod_sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    suspend_role = next(
        o
        for o in reaper_objects(
            pol, cluster="ws", namespace="ds", groups=[], image="i", agent_source="", mechanism="suspend"
        )
        if o["kind"] == "Role"
    )
    assert suspend_role["rules"][0]["verbs"] == ["get", "patch"] and "workloads" not in str(suspend_role)


def test_agent_source_imports_only_the_standard_library() -> None:
    import ast
    import sys

    tree = ast.parse(agent_source())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert names - {"__future__"} <= set(sys.stdlib_module_names), names


def test_to_yaml_includes_the_policy_objects(crd_dir: Path) -> None:
    cluster = Cluster(
        ClusterConfiguration(
            name="ws",
            namespace="ds",
            local_queue="q",
            idle_scale_to_zero=IdlePolicy(idle_minutes=60, mode="keda", prometheus=PROM),
        )
    )
    docs = [d for d in yaml.safe_load_all(cluster.to_yaml()) if d]
    assert [d["kind"] for d in docs] == [
        "RayCluster",
        "ServiceAccount",
        "Secret",
        "Role",
        "RoleBinding",
        "TriggerAuthentication",
        "ScaledObject",
    ]
    for d in docs[-2:]:
        validate(d, crd_dir)
    plain = Cluster(ClusterConfiguration(name="ws", namespace="ds"))
    assert [d["kind"] for d in yaml.safe_load_all(plain.to_yaml()) if d] == ["RayCluster"]
    reaper = plan(None, cluster.to_dict(), IdlePolicy(idle_minutes=5))
    assert reaper.mode == "reaper" and reaper.objects[-1]["kind"] == "Deployment"


def test_render_seeds_gives_seed_000s_objects_by_name(crd_dir: Path) -> None:
    objs = render_seeds()
    so = objs["ScaledObject/first-raycluster-idle"]
    assert so["spec"]["triggers"][0]["metadata"]["authModes"] == "bearer"
    assert objs["Secret/first-raycluster-idle-token"]["type"] == "kubernetes.io/service-account-token"
    for key in ("ScaledObject/first-raycluster-idle", "TriggerAuthentication/first-raycluster-idle"):
        validate(objs[key], crd_dir)


def test_the_default_signal_is_gr_engine_active_cross_checked_with_gpu_util_per_mig_instance() -> None:
    pol = IdlePolicy(idle_minutes=5, prometheus="http://p:9090")
    query = agent_config(pol, cluster="ws", namespace="ds", groups=["g"], mechanism="workload")["prometheus"][
        "query"
    ]
    gr, util = query.split(" or ")
    # GR_ENGINE_ACTIVE (a 0-1 ratio, per MIG instance) as a percentage, like GPU_UTIL (0-100)
    assert "DCGM_FI_PROF_GR_ENGINE_ACTIVE" in gr and ") * 100" in gr
    # GPU_UTIL only where there is no MIG instance (it reads nothing per instance: NVIDIA/DCGM#80)
    assert "DCGM_FI_DEV_GPU_UTIL" in util and 'GPU_I_ID=""' in util
    # tagged apart so that `or` keeps both, and one series for KEDA: busy if either says busy
    assert query.startswith("max(label_replace(") and '"signal", "gpu_util"' in util


@pytest.mark.parametrize(
    ("idle_minutes", "window", "cooldown", "rendered", "reach"),
    [
        (0.5, "1m", 5, "[30s]", "[31s]"),
        (2, "30s", 95, "[30s]", "[31s]"),
        (0.1, "5s", 6, "[5s]", "[6s]"),
        (60, "5m", 3305, "[5m]", "[301s]"),
    ],
)
def test_the_idle_period_counts_the_querys_window(
    idle_minutes: float, window: str, cooldown: int, rendered: str, reach: str
) -> None:
    """KEDA's last active poll is at least (window - polling) after the last use: that much of the idle
    period has passed when its cooldown starts (polling 5 s here). KEDA's windows start where the
    window says and reach a second past KEDA's whole-second query time, up to its poll."""
    pol = IdlePolicy(
        idle_minutes=idle_minutes, polling_seconds=5, prometheus={"url": "http://p:9090", "window": window}
    )
    so = keda_objects(pol, cluster="ws", namespace="ds", groups=[], workload="w")[-1]
    assert so["spec"]["cooldownPeriod"] == cooldown
    keda_query = so["spec"]["triggers"][0]["metadata"]["query"]
    assert keda_query.count(f"{reach} offset -1s)") == 4  # the use and "present now", up to the poll
    assert keda_query.count(rendered) == keda_query.count(f"{rendered} offset ") == 2  # a cooldown ago
    cfg = agent_config(pol, cluster="ws", namespace="ds", groups=[], mechanism="workload")
    assert cfg["prometheus"]["query"].count(rendered) == 2
    assert cfg["prometheus"]["window_seconds"] == pol.query_window_seconds
    assert cfg["idle_seconds"] == pol.idle_seconds  # the reaper backdates its clock by the window


def test_a_zero_window_is_refused() -> None:
    with pytest.raises(ConfigError, match="window"):
        PrometheusSource(url="http://p:9090", window="0s")


def test_keda_reads_a_cluster_busy_until_its_gpu_series_are_as_old_as_the_initial_cooldown() -> None:
    """KEDA counts initialCooldownPeriod from the ScaledObject's creation: without the new-series term, a
    cluster queued for longer would be scaled down at its first idle reading after admission."""
    pol = IdlePolicy(idle_minutes=1, mode="keda", prometheus="http://p:9090", initial_cooldown_minutes=10)
    query = keda_objects(pol, cluster="ws", namespace="ds", groups=[], workload="w")[-1]["spec"]["triggers"][
        0
    ]["metadata"]["query"]
    assert '"new_series"' in query and "* 0 + 100" in query and "unless on()" in query
    assert query.count("[1m] offset 600s)") == 2  # present a cooldown ago: an old cluster, no longer new
    # no initial cooldown, or a query of the user's own: the query as given
    none = IdlePolicy(idle_minutes=1, mode="keda", prometheus="http://p:9090", initial_cooldown_minutes=0)
    plain = keda_objects(none, cluster="ws", namespace="ds", groups=[], workload="w")[-1]
    assert "new_series" not in plain["spec"]["triggers"][0]["metadata"]["query"]
    own = IdlePolicy(
        idle_minutes=1, mode="keda", prometheus={"url": "http://p:9090", "query": 'max(up{pod=~"{pods}"})'}
    )
    mine = keda_objects(own, cluster="ws", namespace="ds", groups=[], workload="w")[-1]
    assert mine["spec"]["triggers"][0]["metadata"]["query"] == 'max(up{pod=~"ws-(head)-[a-z0-9]+"})'
