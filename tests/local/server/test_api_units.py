"""The pure parts of the front end: request parsing, the user policy matrix, the fault table, TLS files."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from rayqueue_local.apimachinery.status import HTTPError
from rayqueue_local.apiserver.auth import Attributes, Authenticator, Policy, User, forbidden_message
from rayqueue_local.apiserver.faults import FaultInjector
from rayqueue_local.apiserver.http import parse_request
from rayqueue_local.apiserver.tls import make_tls_bundle


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("GET", "/api/v1/namespaces", {}, ("list", "", "v1", None, "namespaces", "", "")),
        ("GET", "/api/v1/namespaces/a", {}, ("get", "", "v1", None, "namespaces", "a", "")),
        ("PUT", "/api/v1/namespaces/a/status", {}, ("update", "", "v1", None, "namespaces", "a", "status")),
        ("GET", "/api/v1/namespaces/a/pods", {"watch": ["true"]}, ("watch", "", "v1", "a", "pods", "", "")),
        ("GET", "/api/v1/watch/namespaces/a/pods", {}, ("watch", "", "v1", "a", "pods", "", "")),
        (
            "DELETE",
            "/apis/ray.io/v1/namespaces/a/rayclusters",
            {},
            ("deletecollection", "ray.io", "v1", "a", "rayclusters", "", ""),
        ),
        (
            "PATCH",
            "/apis/kueue.x-k8s.io/v1beta2/namespaces/a/workloads/w/scale",
            {},
            ("patch", "kueue.x-k8s.io", "v1beta2", "a", "workloads", "w", "scale"),
        ),
        (
            "POST",
            "/apis/kueue.x-k8s.io/v1beta2/clusterqueues",
            {},
            ("create", "kueue.x-k8s.io", "v1beta2", None, "clusterqueues", "", ""),
        ),
    ],
)
def test_parse_request(
    method: str, path: str, query: dict[str, list[str]], expected: tuple[object, ...]
) -> None:
    info = parse_request(method, path, query)
    assert info.kind == "resource"
    assert (
        info.verb,
        info.group,
        info.version,
        info.namespace,
        info.resource,
        info.name,
        info.subresource,
    ) == expected


@pytest.mark.parametrize("path", ["/api", "/api/v1", "/apis", "/apis/ray.io", "/apis/ray.io/v1"])
def test_discovery_paths(path: str) -> None:
    assert parse_request("GET", path, {}).kind == "discovery"


def test_too_deep_path_is_404() -> None:
    with pytest.raises(HTTPError) as err:
        parse_request("GET", "/api/v1/namespaces/a/pods/p/log/extra", {})
    assert err.value.code == 404


ALICE = User("alice", frozenset({"team-a"}))
ALL = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
READ = ("get", "list", "watch")


@pytest.mark.parametrize(
    ("group", "resource", "allowed"),
    [
        ("ray.io", "rayclusters", ALL),
        ("ray.io", "rayjobs", ALL),
        ("", "secrets", ALL),
        ("", "configmaps", ALL),
        ("", "serviceaccounts", ALL),
        ("rbac.authorization.k8s.io", "roles", ALL),
        ("rbac.authorization.k8s.io", "rolebindings", ALL),
        ("keda.sh", "scaledobjects", ALL),
        ("keda.sh", "triggerauthentications", ALL),
        ("kueue.x-k8s.io", "localqueues", READ),
        ("kueue.x-k8s.io", "workloads", READ),
        ("", "pods", READ),
        ("", "services", READ),
        ("", "events", READ),
        ("networking.k8s.io", "ingresses", READ),
        ("kueue.x-k8s.io", "clusterqueues", ()),  # cluster-scoped: never in a namespace
        ("apps", "deployments", ()),
    ],
)
def test_user_policy_in_own_namespace(group: str, resource: str, allowed: tuple[str, ...]) -> None:
    policy = Policy()
    for verb in ALL:
        attrs = Attributes(verb, group, resource, "team-a")
        assert policy.authorize(ALICE, attrs) is (verb in allowed), (verb, resource)
        assert policy.authorize(ALICE, Attributes(verb, group, resource, "team-b")) is False


@pytest.mark.parametrize("resource", ["clusterqueues", "resourceflavors", "workloadpriorityclasses"])
def test_user_reads_but_never_writes_cluster_scoped_kueue_objects(resource: str) -> None:
    policy = Policy()
    for verb in ALL:
        attrs = Attributes(verb, "kueue.x-k8s.io", resource, None, name="x" if verb == "get" else "")
        assert policy.authorize(ALICE, attrs) is (verb in READ)
    assert not policy.authorize(ALICE, Attributes("create", "kueue.x-k8s.io", "cohorts"))


def test_user_gets_only_own_namespace_object() -> None:
    policy = Policy()
    assert policy.authorize(ALICE, Attributes("get", "", "namespaces", None, name="team-a"))
    assert not policy.authorize(ALICE, Attributes("get", "", "namespaces", None, name="team-b"))
    assert not policy.authorize(ALICE, Attributes("list", "", "namespaces"))
    assert not policy.authorize(ALICE, Attributes("delete", "", "namespaces", None, name="team-a"))


def test_forbidden_message_shapes() -> None:
    assert forbidden_message(ALICE, Attributes("list", "", "pods", "team-b")) == (
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" '
        'in the namespace "team-b"'
    )
    assert forbidden_message(
        ALICE, Attributes("update", "kueue.x-k8s.io", "workloads", "team-a", "status", "w")
    ) == (
        'workloads.kueue.x-k8s.io "w" is forbidden: User "alice" cannot update resource "workloads/status" '
        'in API group "kueue.x-k8s.io" in the namespace "team-a"'
    )


def test_authenticator() -> None:
    auth = Authenticator(admin_token="admin-secret")
    token = auth.add_user("bob", ["b"])
    assert auth.authenticate("Bearer admin-secret") == User("admin", admin=True)
    assert auth.authenticate(f"Bearer {token}") == User("bob", frozenset({"b"}))
    for bad in (None, "", "Bearer", "Bearer ", "Basic admin-secret", f"Bearer {token}x", "admin-secret"):
        assert auth.authenticate(bad) is None
    new = auth.add_user("bob", ["c"])  # replacing a user revokes the old token
    assert auth.authenticate(f"Bearer {token}") is None
    assert auth.authenticate(f"Bearer {new}") == User("bob", frozenset({"c"}))


def test_fault_table_counts_and_order() -> None:
    faults = FaultInjector()
    first = faults.inject("GET", r"/api/", status=500, times=1)
    second = faults.inject(None, r"/api/", status=503, times=None)
    assert faults.take("GET", "/api/v1") is first
    assert faults.take("GET", "/api/v1") is second
    assert faults.take("DELETE", "/api/v1") is second
    assert faults.take("GET", "/apis/x") is None  # re.match: anchored at the start
    faults.clear()
    assert faults.take("GET", "/api/v1") is None
    assert second.hits == 2


def test_tls_files(tmp_path: Path) -> None:
    bundle = make_tls_bundle(tmp_path)
    assert stat.S_IMODE((tmp_path / "ca.key").stat().st_mode) == 0o600
    assert stat.S_IMODE(bundle.server_key_path.stat().st_mode) == 0o600
    assert "key" not in repr(bundle)
    again = make_tls_bundle(tmp_path)  # reused, so kubeconfigs stay valid across restarts
    assert again.ca_cert_path.read_bytes() == bundle.ca_cert_path.read_bytes()
    from cryptography import x509

    cert = x509.load_pem_x509_certificate(bundle.server_cert_path.read_bytes())
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in sans.get_values_for_type(x509.DNSName)
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
