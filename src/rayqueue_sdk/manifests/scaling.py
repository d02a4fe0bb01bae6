"""Pure builders of the idle scale-to-zero objects (DESIGN §6): KEDA mode and reaper mode.

**KEDA mode** is seed 000 made correct. A ScaledObject targets the cluster's Kueue Workload (its
``/scale`` subresource: ``replicas`` 1 ⇔ ``spec.active``; only some Kueue builds serve it, kueue#4927 was
closed unimplemented), ``minReplicaCount`` 0 and ``maxReplicaCount`` 1, with one Prometheus trigger.
Its query reads a gauge, so it takes ``max_over_time(...[window])`` (the seed's ``rate()`` of a gauge
means nothing) over this cluster's head and worker pods only (the seed's ``first-raycluster.*`` also
matches ``first-raycluster-2``), through the label names dcgm-exporter's series carry when scraped
(``exported_pod``/``exported_namespace``, settable). The idle period is KEDA's ``cooldownPeriod`` (KEDA
scales to zero once ``lastActiveTime + cooldownPeriod`` has passed [E scale_scaledobjects.go]) plus the
query's window (a sample of use keeps the query above 0 for a window after the work ends, so the
``cooldownPeriod`` is the idle period less the part of the window beyond one polling interval, the
window cut to the idle period: never before the period, at most two polling intervals after), and
``initialCooldownPeriod`` keeps a new ScaledObject from scaling its target away before the first use.
It fails safe: ``ignoreNullValues: "false"`` makes an empty result (no pods or series yet, the exporter
down or restarting, a renamed series) a scaler error, and KEDA changes no replicas on an error when the
ScaledObject has no ``fallback`` [E scale_scaledobjects.go]: missing data never reads as 0.
With ``auth="bearer"``, a ServiceAccount, its token Secret, a Role and RoleBinding that let the token
read metrics for the namespace (what the seed's thanos-querier tenancy port checks: ``get pods``; the
seed's ``nodes`` rule is dropped, a Role cannot grant a cluster-scoped resource) and a
TriggerAuthentication reading ``token`` and ``ca.crt`` from the Secret, as in seed 000.

**Reaper mode** works with upstream Kueue. A small agent (:mod:`rayqueue_sdk.scaling.agent`, one
stdlib-only file) runs in the cluster, from the Ray image's ``python`` (no new image), its code and
configuration in a ConfigMap. Its identity is a ServiceAccount whose Role allows ``get`` and ``patch`` of
this cluster's one Workload and ``get`` of this one RayCluster, both narrowed by ``resourceNames``
(:func:`reaper_rules`): its token cannot read or deactivate a colleague's cluster. The Workload's name
carries a hash Kueue derives from the RayCluster's name and uid, so it is known only once Kueue made it:
the policy is planned after the Workload exists and the agent is told the name (``workload`` in its
configuration); the name stays the same for the RayCluster's life (Kueue derives it again when it
replaces a Workload), so no ``list`` or ``watch`` is needed, and none is granted (a Role cannot narrow
``list``/``watch`` by name). For a cluster without a queue, whose stop is KubeRay's ``spec.suspend``,
``get`` and ``patch`` of that one RayCluster and no Workload verb.

*Pod Security.* Every pod and container the policy creates (the agent's; KEDA mode creates none) passes
the ``restricted`` profile (:func:`rayqueue_sdk.manifests.security.make_restricted`): non-root (uid
1000, the Ray images' ``ray`` user), no privilege escalation, every capability dropped, the
``RuntimeDefault`` seccomp profile, a read-only root filesystem, and nothing but a ConfigMap volume and
the projected token.

*Its own pod, not a sidecar of the head.* A sidecar would have to be in the RayCluster's head template:
adding or removing the policy on a live cluster would change the head pod template, and KubeRay rolls
(restarts) the head for that, killing the user's work. It would also put the Workload-patch token in the
head pod, where every Ray task of the user runs with it mounted; and a sidecar stops with the head, so
it could not record what happened after scaling to zero. Its own Deployment (1 replica, ``Recreate``)
is added and removed on a live cluster without touching the head, holds the token alone, survives the
head being suspended, and costs one small pod (50m CPU, 64Mi requested) that Kueue does not queue.

Every object carries an ``ownerReference`` to the RayCluster (``uid`` known only after apply), so
deleting the cluster lets Kubernetes' garbage collector remove them; the SDK's ``down()`` removes them
first anyway. Objects are named ``<cluster>-idle`` (the token Secret ``<cluster>-idle-token``), cut with
a hash suffix to KEDA's 54-character ScaledObject limit.

Example:
    >>> from rayqueue_sdk.config.idle import IdlePolicy
    >>> pol = IdlePolicy(idle_minutes=60, mode="keda", prometheus={"url": "http://prom:9090"})
    >>> objs = keda_objects(pol, cluster="ws", namespace="ds", groups=["g"], workload="raycluster-ws-1a2b3")
    >>> [o["kind"] for o in objs]
    ['ScaledObject']
    >>> meta = objs[0]["spec"]["triggers"][0]["metadata"]
    >>> meta["ignoreNullValues"], "DCGM_FI_PROF_GR_ENGINE_ACTIVE" in meta["query"]
    ('false', True)
    >>> objs[0]["spec"]["cooldownPeriod"]  # the idle period less the 1m window's 30 s beyond a poll
    3570
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.manifests.labels import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from rayqueue_sdk.manifests.security import make_restricted

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.config.idle import IdlePolicy

#: Where a pod's ServiceAccount token, CA and namespace are projected.
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"

__all__ = [
    "SERVICE_ACCOUNT_DIR",
    "AGENT_CONFIG_KEY",
    "AGENT_MOUNT",
    "AGENT_SOURCE_KEY",
    "IDLE_STATE_ANNOTATION",
    "POLICY_ANNOTATION",
    "POLICY_LABEL",
    "RESUMED_ANNOTATION",
    "SCALEDOBJECT_NAME_LIMIT",
    "agent_config",
    "keda_objects",
    "owner_reference",
    "pod_regex",
    "policy_annotation",
    "policy_name",
    "reaper_objects",
    "reaper_rules",
    "token_secret_name",
]

#: On every policy object: the RayCluster it serves.
POLICY_LABEL = "scaling.rayqueue-sdk.io/cluster"
#: On the RayCluster: the policy in force (JSON: mode, mechanism, idle minutes, signal).
POLICY_ANNOTATION = "scaling.rayqueue-sdk.io/policy"
#: Written by the reaper on the object it patches (the Workload, or the RayCluster without a queue):
#: JSON with the idle clock, its last decision and the hook's outcome.
IDLE_STATE_ANNOTATION = "scaling.rayqueue-sdk.io/state"
#: On the ScaledObject: when ``resume()`` recreated it (its clock starts again from there).
RESUMED_ANNOTATION = "scaling.rayqueue-sdk.io/resumed-at"
#: KEDA's limit on a ScaledObject's name (its HPA is ``keda-hpa-<name>``).
SCALEDOBJECT_NAME_LIMIT = 54
#: Where the agent's ConfigMap is mounted in its pod, and the two keys it holds.
AGENT_MOUNT = "/etc/rayqueue-agent"
AGENT_SOURCE_KEY = "agent.py"
AGENT_CONFIG_KEY = "config.json"

_KEDA_API = "keda.sh/v1alpha1"
_RBAC_API = "rbac.authorization.k8s.io/v1"


def policy_name(cluster: str) -> str:
    """The name of the policy's objects: ``<cluster>-idle``, cut to 54 characters with a hash if needed.

    Example:
        >>> policy_name("first-raycluster")
        'first-raycluster-idle'
        >>> n = policy_name("c" * 53); len(n), n.endswith("-idle")
        (54, True)
    """
    name = f"{cluster}-idle"
    if len(name) <= SCALEDOBJECT_NAME_LIMIT:
        return name
    digest = hashlib.sha256(cluster.encode()).hexdigest()[:5]
    keep = SCALEDOBJECT_NAME_LIMIT - len("-idle") - len(digest) - 1
    return f"{cluster[:keep].rstrip('-')}-{digest}-idle"


def token_secret_name(cluster: str) -> str:
    """The ServiceAccount token Secret's name (KEDA mode with bearer auth).

    Example:
        >>> token_secret_name("ws")
        'ws-idle-token'
    """
    return f"{policy_name(cluster)}-token"


def pod_regex(cluster: str, groups: list[str]) -> str:
    """A regex (PromQL ``=~`` anchors it) matching this cluster's head and worker pods, and no others.

    KubeRay names them ``<cluster>-head-<suffix>`` and ``<cluster>-<group>-worker-<suffix>``; the suffix is
    lowercase alphanumeric, so ``first-raycluster-2-head-x`` is not matched for ``first-raycluster``.

    Example:
        >>> pod_regex("first-raycluster", ["small-group-first-raycluster"])
        'first-raycluster-(head|small-group-first-raycluster-worker)-[a-z0-9]+'
    """
    alternatives = ["head", *(f"{g}-worker" for g in groups)]
    return f"{cluster}-({'|'.join(alternatives)})-[a-z0-9]+"


def owner_reference(cluster: str, uid: str) -> dict[str, Any]:
    """An ownerReference to the RayCluster (garbage collection removes the object with the cluster).

    Example:
        >>> owner_reference("ws", "1234")["kind"]
        'RayCluster'
    """
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": cluster, "uid": uid}


def _meta(name: str, cluster: str, namespace: str, uid: str | None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE, POLICY_LABEL: cluster},
    }
    if uid:
        meta["ownerReferences"] = [owner_reference(cluster, uid)]
    meta.update(extra)
    return meta


def policy_annotation(policy: IdlePolicy, *, mode: str, mechanism: str) -> str:
    """The JSON the RayCluster carries in :data:`POLICY_ANNOTATION`: what status() shows.

    Example:
        >>> from rayqueue_sdk.config.idle import IdlePolicy
        >>> import json
        >>> json.loads(policy_annotation(IdlePolicy(idle_minutes=5), mode="reaper", mechanism="workload"))
        {'mode': 'reaper', 'mechanism': 'workload', 'idle_minutes': 5.0, 'idle_signal': 'gpu', ...}
    """
    return json.dumps(
        {
            "mode": mode,
            "mechanism": mechanism,
            "idle_minutes": policy.idle_minutes,
            "idle_signal": policy.idle_signal,
            "initial_cooldown_minutes": policy.initial_cooldown_seconds / 60,
            "polling_seconds": policy.polling_seconds,
        }
    )


def keda_objects(
    policy: IdlePolicy,
    *,
    cluster: str,
    namespace: str,
    groups: list[str],
    workload: str,
    workload_api_version: str = "kueue.x-k8s.io/v1beta1",
    uid: str | None = None,
    resumed_at: str | None = None,
) -> list[dict[str, Any]]:
    """KEDA mode's objects, in creation order (the ScaledObject last, once what it refers to exists).

    ``workload`` is the name of the cluster's Kueue Workload (Kueue derives it from the RayCluster's uid).
    ``resumed_at`` marks a ScaledObject recreated by ``resume()``.

    Example:
        >>> from rayqueue_sdk.config.idle import IdlePolicy
        >>> pol = IdlePolicy(idle_minutes=1, mode="keda",
        ...                  prometheus={"url": "https://thanos:9092", "auth": "bearer"})
        >>> [o["kind"] for o in keda_objects(pol, cluster="ws", namespace="ds", groups=[], workload="w")]
        ['ServiceAccount', 'Secret', 'Role', 'RoleBinding', 'TriggerAuthentication', 'ScaledObject']
    """
    source = policy.prometheus
    if source is None:  # the model refuses mode="keda" without one; auto needs one to choose KEDA
        raise ValueError("KEDA mode needs policy.prometheus")
    name = policy_name(cluster)
    out: list[dict[str, Any]] = []
    trigger_meta: dict[str, str] = {
        "serverAddress": source.url,
        "query": source.render_keda_query(
            pods=pod_regex(cluster, groups),
            namespace=namespace,
            window=policy.query_window,
            initial_cooldown_seconds=policy.initial_cooldown_seconds,
        ),
        "threshold": "100",
        "activationThreshold": "0",
        # fail safe: no series (no pods yet, the exporter down, a renamed series) is a scaler error,
        # and KEDA keeps the replicas it has on an error without a fallback, never reads it as 0
        "ignoreNullValues": "false",
        "namespace": namespace,
    }
    trigger: dict[str, Any] = {"type": "prometheus", "metadata": trigger_meta}
    if source.auth == "bearer":
        secret = token_secret_name(cluster)
        trigger_meta["authModes"] = "bearer"
        trigger["authenticationRef"] = {"name": name, "kind": "TriggerAuthentication"}
        out += [
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(name, cluster, namespace, uid)},
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": _meta(
                    secret,
                    cluster,
                    namespace,
                    uid,
                    annotations={"kubernetes.io/service-account.name": name},
                ),
                "type": "kubernetes.io/service-account-token",
            },
            {
                "apiVersion": _RBAC_API,
                "kind": "Role",
                "metadata": _meta(name, cluster, namespace, uid),
                "rules": [
                    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
                    {
                        "apiGroups": ["metrics.k8s.io"],
                        "resources": ["pods"],
                        "verbs": ["get", "list", "watch"],
                    },
                ],
            },
            _binding(name, cluster, namespace, uid),
            {
                "apiVersion": _KEDA_API,
                "kind": "TriggerAuthentication",
                "metadata": _meta(name, cluster, namespace, uid),
                "spec": {
                    "secretTargetRef": [
                        {"parameter": "bearerToken", "name": secret, "key": "token"},
                        {"parameter": "ca", "name": secret, "key": "ca.crt"},
                    ]
                },
            },
        ]
    extra = {"annotations": {RESUMED_ANNOTATION: resumed_at}} if resumed_at else {}
    out.append(
        {
            "apiVersion": _KEDA_API,
            "kind": "ScaledObject",
            "metadata": _meta(name, cluster, namespace, uid, **extra),
            "spec": {
                "scaleTargetRef": {"apiVersion": workload_api_version, "kind": "Workload", "name": workload},
                "minReplicaCount": 0,
                "maxReplicaCount": 1,
                "pollingInterval": policy.polling_seconds,
                "cooldownPeriod": policy.keda_cooldown_seconds,
                "initialCooldownPeriod": policy.initial_cooldown_seconds,
                "triggers": [trigger],
            },
        }
    )
    return out


def _binding(name: str, cluster: str, namespace: str, uid: str | None) -> dict[str, Any]:
    return {
        "apiVersion": _RBAC_API,
        "kind": "RoleBinding",
        "metadata": _meta(name, cluster, namespace, uid),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
    }


def agent_config(
    policy: IdlePolicy,
    *,
    cluster: str,
    namespace: str,
    groups: list[str],
    mechanism: str,
    workload: str | None = None,
) -> dict[str, Any]:
    """The agent's configuration (``config.json`` in its ConfigMap): everything it needs, no secrets.

    ``mechanism`` is ``"workload"`` (``Workload.spec.active=false``) or ``"suspend"`` (KubeRay's
    ``spec.suspend``, for a cluster without a queue); ``workload`` the name of the cluster's Workload,
    the one object of its kind the agent may read and patch.

    Example:
        >>> from rayqueue_sdk.config.idle import IdlePolicy
        >>> cfg = agent_config(IdlePolicy(idle_minutes=2, idle_signal="jobs"), cluster="ws",
        ...                    namespace="ds", groups=["g"], mechanism="workload", workload="w")
        >>> cfg["idle_seconds"], cfg["idle_signal"], cfg["prometheus"], cfg["workload"]
        (120, 'jobs', None, 'w')
    """
    source = policy.prometheus
    return {
        "namespace": namespace,
        "cluster": cluster,
        "mechanism": mechanism,
        "workload": workload if mechanism == "workload" else None,
        "idle_seconds": policy.idle_seconds,
        "initial_cooldown_seconds": policy.initial_cooldown_seconds,
        "polling_seconds": policy.polling_seconds,
        "idle_signal": policy.idle_signal,
        "prometheus": None
        if source is None
        else {
            "url": source.url,
            "query": source.render_query(
                pods=pod_regex(cluster, groups), namespace=namespace, window=policy.query_window
            ),
            "auth": source.auth,
            "window_seconds": policy.query_window_seconds,
        },
        "hook": None
        if policy.hook is None
        else {"command": policy.hook.command, "timeout_seconds": policy.hook.timeout_seconds},
    }


def reaper_rules(
    cluster: str, *, mechanism: str = "workload", workload: str | None = None
) -> list[dict[str, Any]]:
    """The reaper's Role rules: only its own cluster's objects, by name (``resourceNames``).

    ``workload`` mechanism: ``get``/``patch`` of the one Workload ``workload`` (read the idle clock and
    the admission, write ``spec.active=false`` and the state annotation) and ``get`` of the RayCluster
    (the head's address, whether its pods are gone). ``suspend``: ``get``/``patch`` of the RayCluster.
    No ``list`` or ``watch``: the agent is told the Workload's name (see the module's notes).

    Raises:
        ValueError: ``mechanism="workload"`` without the Workload's name.

    Example:
        >>> [(r["resources"], r["resourceNames"], r["verbs"]) for r in reaper_rules("ws", workload="w-1")]
        [(['workloads'], ['w-1'], ['get', 'patch']), (['rayclusters'], ['ws'], ['get'])]
        >>> reaper_rules("ws", mechanism="suspend")[0]["verbs"]
        ['get', 'patch']
    """
    if mechanism != "workload":
        return [
            {
                "apiGroups": ["ray.io"],
                "resources": ["rayclusters"],
                "resourceNames": [cluster],
                "verbs": ["get", "patch"],
            }
        ]
    if not workload:
        raise ValueError("workload: the reaper's Role names the cluster's Workload; pass its name")
    return [
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads"],
            "resourceNames": [workload],
            "verbs": ["get", "patch"],
        },
        {"apiGroups": ["ray.io"], "resources": ["rayclusters"], "resourceNames": [cluster], "verbs": ["get"]},
    ]


def reaper_objects(
    policy: IdlePolicy,
    *,
    cluster: str,
    namespace: str,
    groups: list[str],
    image: str,
    agent_source: str,
    mechanism: str = "workload",
    workload: str | None = None,
    uid: str | None = None,
) -> list[dict[str, Any]]:
    """Reaper mode's objects, in creation order: ServiceAccount, Role, RoleBinding, ConfigMap, Deployment.

    ``workload``: the cluster's Workload (needed with ``mechanism="workload"``: the Role names it).
    The Deployment's pod passes Pod Security "restricted".

    Example:
        >>> from rayqueue_sdk.config.idle import IdlePolicy
        >>> objs = reaper_objects(IdlePolicy(idle_minutes=5), cluster="ws", namespace="ds", groups=["g"],
        ...                       image="rayproject/ray:2.41.0", agent_source="print('hi')",
        ...                       workload="raycluster-ws-1a2b3")
        >>> [o["kind"] for o in objs]
        ['ServiceAccount', 'Role', 'RoleBinding', 'ConfigMap', 'Deployment']
        >>> pod = objs[-1]["spec"]["template"]["spec"]
        >>> pod["containers"][0]["command"]
        ['python', '/etc/rayqueue-agent/agent.py']
        >>> pod["securityContext"]["runAsNonRoot"], pod["containers"][0]["securityContext"]["capabilities"]
        (True, {'drop': ['ALL']})
        >>> [(r["resourceNames"], r["verbs"]) for r in objs[1]["rules"]]
        [(['raycluster-ws-1a2b3'], ['get', 'patch']), (['ws'], ['get'])]
    """
    name = policy_name(cluster)
    rules = reaper_rules(cluster, mechanism=mechanism, workload=workload)
    config = agent_config(
        policy, cluster=cluster, namespace=namespace, groups=groups, mechanism=mechanism, workload=workload
    )
    selector = {POLICY_LABEL: cluster, "app.kubernetes.io/name": "rayqueue-idle-agent"}
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _meta(name, cluster, namespace, uid),
        },
        {
            "apiVersion": _RBAC_API,
            "kind": "Role",
            "metadata": _meta(name, cluster, namespace, uid),
            "rules": rules,
        },
        _binding(name, cluster, namespace, uid),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": _meta(name, cluster, namespace, uid),
            "data": {
                AGENT_SOURCE_KEY: agent_source,
                AGENT_CONFIG_KEY: json.dumps(config, indent=2, sort_keys=True),
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": _meta(name, cluster, namespace, uid),
            "spec": {
                "replicas": 1,
                "strategy": {"type": "Recreate"},  # never two agents deciding at once
                "selector": {"matchLabels": dict(selector)},
                "template": {
                    "metadata": {"labels": {**selector, MANAGED_BY_LABEL: MANAGED_BY_VALUE}},
                    "spec": make_restricted(
                        {
                            "serviceAccountName": name,
                            "containers": [
                                {
                                    "name": "agent",
                                    "image": image,
                                    "command": ["python", f"{AGENT_MOUNT}/{AGENT_SOURCE_KEY}"],
                                    "env": [
                                        {
                                            "name": "RAYQUEUE_AGENT_CONFIG",
                                            "value": f"{AGENT_MOUNT}/{AGENT_CONFIG_KEY}",
                                        },
                                        # the default path, named so that a kubelet that maps the
                                        # projected token elsewhere (the local plane's) can rewrite it
                                        {"name": "RAYQUEUE_AGENT_TOKEN_DIR", "value": SERVICE_ACCOUNT_DIR},
                                        {"name": "PYTHONUNBUFFERED", "value": "1"},
                                    ],
                                    "resources": {
                                        "requests": {"cpu": "50m", "memory": "64Mi"},
                                        "limits": {"cpu": "200m", "memory": "256Mi"},
                                    },
                                    "volumeMounts": [
                                        {"name": "agent", "mountPath": AGENT_MOUNT, "readOnly": True}
                                    ],
                                    # the agent writes nothing but its log (stdout)
                                    "securityContext": {"readOnlyRootFilesystem": True},
                                }
                            ],
                            "volumes": [{"name": "agent", "configMap": {"name": name}}],
                        }
                    ),
                },
            },
        },
    ]
