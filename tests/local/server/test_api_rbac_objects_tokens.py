"""RBAC from objects, TokenRequest and legacy token Secrets, through the real ``kubernetes`` client.

Issue 15 items 2 and 7, issue 12's identities: a ServiceAccount's token (TokenRequest or a
``kubernetes.io/service-account-token`` Secret) may do what Roles and ClusterRoles bound to it allow,
the reviews answer from the same bindings, privilege escalation is refused in upstream's words, and a
token dies when it expires or when its Secret or ServiceAccount is deleted.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from rayqueue_local.apiserver.auth import Authenticator
from rayqueue_local.controllers.serviceaccounts import TokensController

RBAC = "rbac.authorization.k8s.io"
KUEUE = "kueue.x-k8s.io"


def _role(name: str, rules: list[dict[str, Any]], namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "Role" if namespace else "ClusterRole",
        "metadata": meta,
        "rules": rules,
    }


def _binding(
    name: str, role_kind: str, role: str, subjects: list[dict[str, Any]], namespace: str | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "RoleBinding" if namespace else "ClusterRoleBinding",
        "metadata": meta,
        "subjects": subjects,
        "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role},
    }


def _workload(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "queueName": "q",
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                }
            ],
        },
    }


def _sa_token(core: Any, namespace: str, name: str, seconds: int | None = None) -> str:
    spec = client.V1TokenRequestSpec(audiences=[], expiration_seconds=seconds)
    out = core.create_namespaced_service_account_token(
        name, namespace, client.AuthenticationV1TokenRequest(spec=spec)
    )
    return str(out.status.token)


@pytest.fixture
def sa(cp: Any, core: Any, namespace: str) -> Iterator[tuple[str, Any]]:
    """A ServiceAccount ``reaper`` in ``namespace``: its TokenRequest token and an ApiClient with it."""
    core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="reaper"))
    )
    token = _sa_token(core, namespace, "reaper")
    api = cp.api_client(token)
    yield token, api
    api.close()


def _status(call: Any) -> tuple[int, str]:
    """The HTTP status of a call that must fail, and its Status message (the body where it has none)."""
    with pytest.raises(ApiException) as err:
        call()
    try:
        return err.value.status, str(json.loads(err.value.body)["message"])
    except (ValueError, KeyError, TypeError):
        return err.value.status, str(err.value.body)


# -- RBAC from objects -------------------------------------------------------------------------------
def test_a_role_binding_grants_a_service_account_exactly_its_rules(
    cp: Any, custom: Any, namespace: str, sa: tuple[str, Any]
) -> None:
    sa_custom = client.CustomObjectsApi(sa[1])
    cp.apply(_workload("w", namespace))
    code, body = _status(
        lambda: sa_custom.get_namespaced_custom_object(KUEUE, "v1beta2", namespace, "workloads", "w")
    )
    assert code == 403
    assert (
        f'workloads.kueue.x-k8s.io "w" is forbidden: User "system:serviceaccount:{namespace}:reaper" '
        f'cannot get resource "workloads" in API group "kueue.x-k8s.io" in the namespace "{namespace}"'
    ) == body
    # issue 12's reaper Role: get/patch Workloads, get RayClusters by name only
    cp.apply(
        _role(
            "reaper",
            [
                {"apiGroups": [KUEUE], "resources": ["workloads"], "verbs": ["get", "patch"]},
                {
                    "apiGroups": ["ray.io"],
                    "resources": ["rayclusters"],
                    "verbs": ["get"],
                    "resourceNames": ["mine"],
                },
            ],
            namespace,
        )
    )
    cp.apply(_binding("reaper", "Role", "reaper", [{"kind": "ServiceAccount", "name": "reaper"}], namespace))
    got = sa_custom.get_namespaced_custom_object(KUEUE, "v1beta2", namespace, "workloads", "w")
    assert got["metadata"]["name"] == "w"
    patched = sa_custom.patch_namespaced_custom_object(
        KUEUE, "v1beta2", namespace, "workloads", "w", {"spec": {"active": False}}
    )
    assert patched["spec"]["active"] is False
    assert (
        _status(
            lambda: sa_custom.delete_namespaced_custom_object(KUEUE, "v1beta2", namespace, "workloads", "w")
        )[0]
        == 403
    )
    assert (
        _status(lambda: sa_custom.list_namespaced_custom_object(KUEUE, "v1beta2", namespace, "workloads"))[0]
        == 403
    )
    # resourceNames: the named object only, and never a list
    assert (
        _status(
            lambda: sa_custom.get_namespaced_custom_object("ray.io", "v1", namespace, "rayclusters", "other")
        )[0]
        == 403
    )
    assert (
        _status(lambda: sa_custom.list_namespaced_custom_object("ray.io", "v1", namespace, "rayclusters"))[0]
        == 403
    )
    # a RoleBinding's rules apply in its namespace only
    assert (
        _status(
            lambda: sa_custom.get_namespaced_custom_object(KUEUE, "v1beta2", "default", "workloads", "w")
        )[0]
        == 403
    )
    # the index follows deletions
    cp.store.delete(f"rolebindings.{RBAC}", namespace, "reaper")
    assert (
        _status(
            lambda: sa_custom.get_namespaced_custom_object(KUEUE, "v1beta2", namespace, "workloads", "w")
        )[0]
        == 403
    )


def test_cluster_role_bindings_groups_wildcards_and_subresources(
    cp: Any, namespace: str, sa: tuple[str, Any]
) -> None:
    sa_custom = client.CustomObjectsApi(sa[1])
    suffix = uuid.uuid4().hex[:6]
    assert _status(lambda: sa_custom.list_cluster_custom_object(KUEUE, "v1beta2", "clusterqueues"))[0] == 403
    cp.apply(
        _role(
            f"cq-read-{suffix}",
            [
                {"apiGroups": [KUEUE], "resources": ["*"], "verbs": ["list"]},
                {"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["get"]},
            ],
        )
    )
    cp.apply(
        _binding(
            f"cq-read-{suffix}",
            "ClusterRole",
            f"cq-read-{suffix}",
            [{"kind": "Group", "name": f"system:serviceaccounts:{namespace}", "apiGroup": RBAC}],
        )
    )
    try:
        assert sa_custom.list_cluster_custom_object(KUEUE, "v1beta2", "clusterqueues")["items"] is not None
        # a ClusterRoleBinding's rules apply in every namespace too
        assert (
            sa_custom.list_namespaced_custom_object(KUEUE, "v1beta2", "default", "localqueues")["items"] == []
        )
        cp.apply(_workload("w", namespace))
        status = sa_custom.get_namespaced_custom_object_status(KUEUE, "v1beta2", namespace, "workloads", "w")
        assert status["metadata"]["name"] == "w"
        assert (
            _status(
                lambda: sa_custom.get_namespaced_custom_object(KUEUE, "v1beta2", namespace, "workloads", "w")
            )[0]
            == 403
        )
    finally:
        cp.store.delete(f"clusterrolebindings.{RBAC}", None, f"cq-read-{suffix}")


def test_reviews_answer_from_the_bindings(
    cp: Any, api_client: Any, namespace: str, sa: tuple[str, Any]
) -> None:
    cp.apply(
        _role(
            "wl", [{"apiGroups": [KUEUE], "resources": ["workloads"], "verbs": ["get", "patch"]}], namespace
        )
    )
    cp.apply(
        _binding(
            "wl",
            "Role",
            "wl",
            [{"kind": "ServiceAccount", "name": "reaper", "namespace": namespace}],
            namespace,
        )
    )
    authz = client.AuthorizationV1Api(sa[1])

    def self_review(verb: str) -> bool:
        attrs = client.V1ResourceAttributes(namespace=namespace, verb=verb, group=KUEUE, resource="workloads")
        spec = client.V1SelfSubjectAccessReviewSpec(resource_attributes=attrs)
        return bool(
            authz.create_self_subject_access_review(
                client.V1SelfSubjectAccessReview(spec=spec)
            ).status.allowed
        )

    assert (self_review("patch"), self_review("delete")) == (True, False)
    rules = authz.create_self_subject_rules_review(
        client.V1SelfSubjectRulesReview(spec=client.V1SelfSubjectRulesReviewSpec(namespace=namespace))
    ).status.resource_rules
    assert {"api_groups": [KUEUE], "resources": ["workloads"], "verbs": ["get", "patch"]} in [
        {k: v for k, v in r.to_dict().items() if v is not None} for r in rules
    ]
    # a SubjectAccessReview (admin) about the service account names the binding that allows it
    user = f"system:serviceaccount:{namespace}:reaper"
    attrs = client.V1ResourceAttributes(namespace=namespace, verb="get", group=KUEUE, resource="workloads")
    groups = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"]
    review = client.AuthorizationV1Api(api_client).create_subject_access_review(
        client.V1SubjectAccessReview(
            spec=client.V1SubjectAccessReviewSpec(user=user, groups=groups, resource_attributes=attrs)
        )
    )
    assert review.status.allowed is True
    assert review.status.reason == (
        f'RBAC: allowed by RoleBinding "wl/{namespace}" of Role "wl" to ServiceAccount "reaper/{namespace}"'
    )


def test_escalation_is_refused_in_upstreams_words(cp: Any, namespace: str) -> None:
    token = cp.add_user(f"esc-{namespace[-6:]}", [namespace])
    name = f"esc-{namespace[-6:]}"
    rbac = client.RbacAuthorizationV1Api(cp.api_client(token))
    # a Role in the user's namespace is allowed (the plane's policy gives escalate/bind on Roles there)
    role = client.V1Role(
        metadata=client.V1ObjectMeta(name="wl"),
        rules=[client.V1PolicyRule(api_groups=[KUEUE], resources=["workloads"], verbs=["get", "patch"])],
    )
    rbac.create_namespaced_role(namespace, role)
    # binding a ClusterRole the user does not hold is an escalation
    binding = client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name="steal"),
        role_ref=client.V1RoleRef(api_group=RBAC, kind="ClusterRole", name="cluster-admin"),
        subjects=[client.RbacV1Subject(kind="User", name=name, api_group=RBAC)],
    )
    code, body = _status(lambda: rbac.create_namespaced_role_binding(namespace, binding))
    assert code == 403
    assert (
        f'rolebindings.rbac.authorization.k8s.io "steal" is forbidden: user "{name}" '
        f'(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:'
        '\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n{NonResourceURLs:["*"], Verbs:["*"]}'
    ) in body
    # a service account that may create Roles but holds nothing else may not grant what it lacks
    core = client.CoreV1Api(cp.api_client())
    core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="maker"))
    )
    cp.apply(
        _role(
            "maker",
            [
                {"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["create"]},
                {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
            ],
            namespace,
        )
    )
    cp.apply(_binding("maker", "Role", "maker", [{"kind": "ServiceAccount", "name": "maker"}], namespace))
    maker = client.RbacAuthorizationV1Api(cp.api_client(_sa_token(core, namespace, "maker")))
    held = client.V1Role(
        metadata=client.V1ObjectMeta(name="held"),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["secrets"], verbs=["get"])],
    )
    maker.create_namespaced_role(namespace, held)
    more = client.V1Role(
        metadata=client.V1ObjectMeta(name="more"),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["secrets"], verbs=["get", "list", "delete"])],
    )
    code, body = _status(lambda: maker.create_namespaced_role(namespace, more))
    assert code == 403 and '{APIGroups:[""], Resources:["secrets"], Verbs:["list" "delete"]}' in body
    assert body.count("\n{") == 1  # only what is missing
    # roleRef is immutable
    cp.apply(_binding("fixed", "Role", "wl", [{"kind": "User", "name": name, "apiGroup": RBAC}], namespace))
    changed = _binding(
        "fixed", "Role", "maker", [{"kind": "User", "name": name, "apiGroup": RBAC}], namespace
    )
    code, body = _status(
        lambda: client.RbacAuthorizationV1Api(cp.api_client()).replace_namespaced_role_binding(
            "fixed", namespace, changed
        )
    )
    assert code == 422 and "roleRef: Invalid value" in body and "cannot change roleRef" in body


def test_bootstrap_cluster_admin_binds_system_masters(cp: Any, api_client: Any) -> None:
    rbac = client.RbacAuthorizationV1Api(api_client)
    role = rbac.read_cluster_role("cluster-admin")
    assert [r.to_dict() for r in role.rules][0]["verbs"] == ["*"]
    binding = rbac.read_cluster_role_binding("cluster-admin")
    assert [(s.kind, s.name) for s in binding.subjects] == [("Group", "system:masters")]


# -- TokenRequest ------------------------------------------------------------------------------------
def test_token_request_defaults_validation_and_review(
    cp: Any, core: Any, api_client: Any, namespace: str
) -> None:
    core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="bot"))
    )
    spec = client.V1TokenRequestSpec(audiences=[])
    out = core.create_namespaced_service_account_token(
        "bot", namespace, client.AuthenticationV1TokenRequest(spec=spec)
    )
    assert out.spec.expiration_seconds == 3600
    assert out.spec.audiences == ["https://kubernetes.default.svc.cluster.local"]
    lifetime = out.status.expiration_timestamp - out.metadata.creation_timestamp
    assert lifetime.total_seconds() == 3600
    short = client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=599)
    )
    code, body = _status(lambda: core.create_namespaced_service_account_token("bot", namespace, short))
    assert (
        code == 422
        and "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"
        in body
    )
    code, body = _status(
        lambda: core.create_namespaced_service_account_token(
            "nope", namespace, client.AuthenticationV1TokenRequest(spec=spec)
        )
    )
    assert code == 404 and 'serviceaccounts "nope" not found' in body
    review = client.AuthenticationV1Api(api_client).create_token_review(
        client.V1TokenReview(spec=client.V1TokenReviewSpec(token=out.status.token))
    )
    uid = core.read_namespaced_service_account("bot", namespace).metadata.uid
    assert review.status.authenticated is True
    assert (review.status.user.username, review.status.user.uid, review.status.user.groups) == (
        f"system:serviceaccount:{namespace}:bot",
        uid,
        ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
    )


def test_expired_and_orphaned_tokens_are_401(
    cp: Any, core: Any, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="short"))
    )
    token = _sa_token(core, namespace, "short", seconds=600)
    whoami = client.AuthenticationV1Api(cp.api_client(token))
    assert whoami.create_self_subject_review(client.V1SelfSubjectReview()).status.user_info.username.endswith(
        ":short"
    )
    monkeypatch.setattr(cp.auth, "clock", lambda: time.time() + 601)  # ten minutes and a second later
    assert _status(lambda: whoami.create_self_subject_review(client.V1SelfSubjectReview()))[0] == 401
    monkeypatch.undo()
    token = _sa_token(core, namespace, "short")
    api = client.AuthenticationV1Api(cp.api_client(token))
    assert api.create_self_subject_review(client.V1SelfSubjectReview()).status.user_info.username.endswith(
        ":short"
    )
    core.delete_namespaced_service_account("short", namespace)
    assert _status(lambda: api.create_self_subject_review(client.V1SelfSubjectReview()))[0] == 401


# -- legacy token Secrets ----------------------------------------------------------------------------
@pytest.fixture
def tokens_controller(cp: Any) -> Iterator[Any]:
    """The service account tokens controller on the suite's plane (which runs no controllers)."""
    controller = TokensController(cp.auth, ca_pem=cp.ca_cert_path.read_bytes())
    controller.start(cp.store)
    yield controller
    controller.stop()


def _wait_for_token(core: Any, namespace: str, name: str) -> Any:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        secret = core.read_namespaced_secret(name, namespace)
        if (secret.data or {}).get("token"):
            return secret
        time.sleep(0.05)
    pytest.fail(f"secret {namespace}/{name} never got a token")


def test_a_token_secret_is_filled_and_dies_with_its_secret_or_account(
    cp: Any, core: Any, namespace: str, tokens_controller: Any
) -> None:
    core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="prom"))
    )
    uid = core.read_namespaced_service_account("prom", namespace).metadata.uid

    def token_secret(name: str) -> Any:
        return client.V1Secret(
            metadata=client.V1ObjectMeta(
                name=name, annotations={"kubernetes.io/service-account.name": "prom"}
            ),
            type="kubernetes.io/service-account-token",
        )

    core.create_namespaced_secret(namespace, token_secret("prom-token"))
    secret = _wait_for_token(core, namespace, "prom-token")
    assert base64.b64decode(secret.data["ca.crt"]) == cp.ca_cert_path.read_bytes()
    assert base64.b64decode(secret.data["namespace"]).decode() == namespace
    assert secret.metadata.annotations["kubernetes.io/service-account.uid"] == uid
    token = base64.b64decode(secret.data["token"]).decode()
    cp.apply(
        _role("secrets", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}], namespace)
    )
    cp.apply(_binding("secrets", "Role", "secrets", [{"kind": "ServiceAccount", "name": "prom"}], namespace))
    as_sa = client.CoreV1Api(cp.api_client(token))
    assert as_sa.list_namespaced_config_map(namespace).items is not None
    assert _status(lambda: as_sa.list_namespaced_secret(namespace))[0] == 403
    core.delete_namespaced_secret("prom-token", namespace)
    assert _status(lambda: as_sa.list_namespaced_config_map(namespace))[0] == 401
    # a second token Secret; deleting the ServiceAccount deletes it (and its token stops at once)
    core.create_namespaced_secret(namespace, token_secret("prom-token-2"))
    token2 = base64.b64decode(_wait_for_token(core, namespace, "prom-token-2").data["token"]).decode()
    as_sa2 = client.CoreV1Api(cp.api_client(token2))
    assert as_sa2.list_namespaced_config_map(namespace).items is not None
    core.delete_namespaced_service_account("prom", namespace)
    assert _status(lambda: as_sa2.list_namespaced_config_map(namespace))[0] == 401
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(
        s.metadata.name == "prom-token-2" for s in core.list_namespaced_secret(namespace).items
    ):
        time.sleep(0.05)
    assert not any(s.metadata.name == "prom-token-2" for s in core.list_namespaced_secret(namespace).items)


def test_restarted_controller_registers_the_stored_tokens_again(cp: Any, core: Any, namespace: str) -> None:
    """After a restart the Authenticator is new; the tokens kept in Secrets are registered again."""
    core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="keep"))
    )
    first = TokensController(cp.auth, ca_pem=cp.ca_cert_path.read_bytes())
    first.store = cp.store
    core.create_namespaced_secret(
        namespace,
        client.V1Secret(
            metadata=client.V1ObjectMeta(
                name="keep-token", annotations={"kubernetes.io/service-account.name": "keep"}
            ),
            type="kubernetes.io/service-account-token",
        ),
    )
    first.reconcile(("secrets", namespace, "keep-token"))
    token = base64.b64decode(core.read_namespaced_secret("keep-token", namespace).data["token"]).decode()
    fresh = Authenticator()
    assert fresh.user_for_token(token) is None
    second = TokensController(fresh, ca_pem=cp.ca_cert_path.read_bytes())
    second.store = cp.store
    for item in second.resync():
        second.reconcile(item)
    assert fresh.user_for_token(token).name == f"system:serviceaccount:{namespace}:keep"
    # the stored token is not replaced
    assert (
        base64.b64decode(core.read_namespaced_secret("keep-token", namespace).data["token"]).decode() == token
    )
