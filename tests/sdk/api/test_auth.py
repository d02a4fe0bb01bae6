"""Login against the local control plane over HTTPS with the real kubernetes client."""

from __future__ import annotations

import logging
import socket
import traceback
import warnings
from pathlib import Path

import pytest
import yaml
from sdk_helpers import NS, OTHER_NS

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import KubeConfigFileAuthentication, TokenAuthentication
from rayqueue_sdk.errors import (
    AuthenticationError,
    ConfigError,
    ConnectionFailedError,
    ForbiddenError,
    RayQueueError,
    TLSVerificationError,
)
from rayqueue_sdk.kube.auth import InClusterAuthentication, InsecureTLSWarning, detect
from rayqueue_sdk.kube.client import current_client, default_namespace, get_client
from rayqueue_sdk.kube.kinds import RAYCLUSTERS
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.queues.local_queues import list_local_queues


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_admin_token_login_sets_the_current_client(plane: LocalControlPlane) -> None:
    auth = TokenAuthentication(plane.token, plane.server, ca_cert_path=str(plane.ca_cert_path))
    assert auth.login().startswith(f"Logged into {plane.server}")
    api = current_client()
    assert api is auth.api_client() and get_client() is api
    assert KubeSession(api).list(RAYCLUSTERS, namespace=NS) == []
    assert auth.logout() == f"Logged out of {plane.server}"
    assert current_client() is None


def test_user_token_login_and_forbidden_namespace(plane: LocalControlPlane, user_token: str) -> None:
    auth = TokenAuthentication(user_token, plane.server, ca_cert_path=str(plane.ca_cert_path))
    auth.login()
    assert KubeSession(get_client()).list(RAYCLUSTERS, namespace=NS) == []
    with pytest.raises(ForbiddenError) as info:
        KubeSession(get_client()).list(RAYCLUSTERS, namespace=OTHER_NS)
    err = info.value
    assert (err.verb, err.resource, err.namespace) == ("list", "rayclusters.ray.io", OTHER_NS)
    assert "alice" in str(err) and isinstance(err, PermissionError)


def test_explicit_client_overrides_the_current_login(plane: LocalControlPlane, user_token: str) -> None:
    user = TokenAuthentication(user_token, plane.server, ca_cert_path=str(plane.ca_cert_path))
    user.login()
    admin = TokenAuthentication(plane.token, plane.server, ca_cert_path=str(plane.ca_cert_path))
    # the user may not list queues in team-b; the admin object passed explicitly may
    with pytest.raises(ForbiddenError):
        list_local_queues(OTHER_NS)
    assert list_local_queues(OTHER_NS, client=admin) == []
    assert current_client() is user.api_client()  # the explicit client did not become current


def test_wrong_token_is_authentication_error(plane: LocalControlPlane) -> None:
    auth = TokenAuthentication("not-a-valid-token", plane.server, ca_cert_path=str(plane.ca_cert_path))
    with pytest.raises(AuthenticationError) as info:
        auth.login()
    assert info.value.status == 401
    assert current_client() is None


def test_unreachable_server_fails_with_connection_error() -> None:
    # Bounded by design: one connect timeout of a few seconds, at most two attempts (no hang).
    auth = TokenAuthentication("t", f"https://127.0.0.1:{_closed_port()}")
    with pytest.raises(ConnectionFailedError) as info:
        auth.login()
    assert not isinstance(info.value, TLSVerificationError)
    assert "unreachable" in str(info.value)


def test_untrusted_ca_explains_ca_cert_path_and_skip_tls(plane: LocalControlPlane) -> None:
    with pytest.raises(TLSVerificationError) as info:
        TokenAuthentication(plane.token, plane.server).login()
    text = str(info.value)
    assert "ca_cert_path" in text and "skip_tls" in text and plane.server in text


def test_skip_tls_works_and_warns(plane: LocalControlPlane, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="rayqueue_sdk")
    auth = TokenAuthentication(plane.token, plane.server, skip_tls=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        auth.login()
    assert any(issubclass(w.category, InsecureTLSWarning) for w in caught)
    assert any("skip_tls=True" in r.getMessage() for r in caplog.records)
    assert KubeSession(get_client()).list(RAYCLUSTERS, namespace=NS) == []


def _kubeconfig(tmp_path: Path, plane: LocalControlPlane, user_token: str) -> Path:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "local",
                "cluster": {"server": plane.server, "certificate-authority": str(plane.ca_cert_path)},
            },
            {"name": "nowhere", "cluster": {"server": f"https://127.0.0.1:{_closed_port()}"}},
        ],
        "users": [{"name": "alice", "user": {"token": user_token}}],
        "contexts": [
            {"name": "broken", "context": {"cluster": "nowhere", "user": "alice"}},
            {"name": "alice@local", "context": {"cluster": "local", "user": "alice", "namespace": NS}},
        ],
        "current-context": "broken",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_kubeconfig_path_and_context(plane: LocalControlPlane, user_token: str, tmp_path: Path) -> None:
    path = _kubeconfig(tmp_path, plane, user_token)
    with pytest.raises(ConnectionFailedError):
        KubeConfigFileAuthentication(path).login()  # the current context points nowhere
    auth = KubeConfigFileAuthentication(path, context="alice@local")
    auth.login()
    assert list_local_queues() == []  # namespace from the context
    with pytest.raises(ConfigError) as info:
        KubeConfigFileAuthentication(path, context="nope").login()
    assert "alice@local" in str(info.value) and "broken" in str(info.value)


def test_the_control_planes_own_kubeconfig(plane: LocalControlPlane, user_token: str) -> None:
    auth = KubeConfigFileAuthentication(plane.kubeconfig_path, context="rayqueue-local-alice")
    auth.login()
    assert KubeSession(get_client()).list(RAYCLUSTERS, namespace=NS) == []
    # urllib3's own retries are off (the SDK retries): 4 tries per SDK attempt otherwise, each logged
    retries = get_client().rest_client.pool_manager.connection_pool_kw.get("retries")
    assert retries is False or getattr(retries, "total", None) is False, retries


def test_detect_uses_kubeconfig_env(
    plane: LocalControlPlane, user_token: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _kubeconfig(tmp_path, plane, user_token)
    text = yaml.safe_load(path.read_text())
    text["current-context"] = "alice@local"
    path.write_text(yaml.safe_dump(text))
    monkeypatch.setenv("KUBECONFIG", str(path))
    api = get_client()  # nothing logged in: detected from $KUBECONFIG
    assert api.configuration.host == plane.server
    assert KubeSession(api).list(RAYCLUSTERS, namespace=NS) == []
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    assert detect() is api  # the detected client stayed current


def test_no_token_in_reprs_logs_or_errors(
    plane: LocalControlPlane, user_token: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    good = TokenAuthentication(user_token, plane.server, ca_cert_path=str(plane.ca_cert_path))
    texts += [repr(good), str(good), str(vars(good)), good.login()]
    texts += [repr(good.api_client()), repr(good.api_client().configuration.__class__)]
    attempts = [
        lambda: KubeSession(get_client()).list(RAYCLUSTERS, namespace=OTHER_NS),  # 403
        lambda: TokenAuthentication(
            user_token + "x", plane.server, ca_cert_path=str(plane.ca_cert_path)
        ).login(),
        lambda: TokenAuthentication(user_token, plane.server).login(),  # TLS
        lambda: TokenAuthentication(user_token, f"https://127.0.0.1:{_closed_port()}").login(),
    ]
    for attempt in attempts:
        with pytest.raises(RayQueueError) as info:  # each raises a different typed error
            attempt()
        texts.append(repr(info.value))
        texts.append("".join(traceback.format_exception(info.value)))  # chained causes included
    texts.append(good.logout())
    texts += [r.getMessage() for r in caplog.records]
    texts += [str(r.args) for r in caplog.records]
    assert len(texts) > 10
    for text in texts:
        assert user_token not in text


def test_in_cluster_service_account_login(
    plane: LocalControlPlane, user_token: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "token").write_text(user_token)
    (sa / "ca.crt").write_bytes(Path(plane.ca_cert_path).read_bytes())
    (sa / "namespace").write_text(NS)
    host, port = plane.server.removeprefix("https://").rsplit(":", 1)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    assert InClusterAuthentication.available(sa)
    auth = InClusterAuthentication(sa)
    auth.login()
    assert default_namespace() == NS
    assert list_local_queues() == []  # in the service account's namespace
    with pytest.raises(ForbiddenError):
        KubeSession(get_client()).list(RAYCLUSTERS, namespace=OTHER_NS)
    assert user_token not in repr(auth)


def test_in_cluster_outside_a_pod_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert not InClusterAuthentication.available(tmp_path)
    with pytest.raises(AuthenticationError) as info:
        InClusterAuthentication(tmp_path).login()
    assert "not inside a pod" in str(info.value)
