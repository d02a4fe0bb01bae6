"""Credentials that cannot leak: header-illegal tokens, plain HTTP, and yes/no strings for skip_tls.

Each case is refused before anything is sent, with a ConfigError that names the field and never the token.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import KubeConfigFileAuthentication, TokenAuthentication
from rayqueue_sdk.errors import ApiError, ConfigError, TLSVerificationError
from rayqueue_sdk.kube.auth import InClusterAuthentication
from rayqueue_sdk.kube.errors import translate

SECRET = "sEcReT-t0ken"


@pytest.mark.parametrize(
    "token",
    [f"{SECRET}\nX-Injected: 1", f"{SECRET}\rX", f"{SECRET} {SECRET}", f"{SECRET}\x00", f"{SECRET}é", "   "],
)
def test_header_illegal_token_is_refused_without_showing_it(token: str) -> None:
    with pytest.raises(ConfigError) as err:
        TokenAuthentication(token=token, server="https://api.example:6443")
    assert err.value.field == "token"
    for text in (str(err.value), repr(err.value), repr(err.value.value)):
        assert SECRET not in text


def test_kubeconfig_token_with_a_newline_is_refused(tmp_path: Path) -> None:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": f"{SECRET}\nX-Injected: 1"}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "ctx",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError) as err:
        KubeConfigFileAuthentication(path).login()
    assert "ctx" in err.value.field and SECRET not in str(err.value)


def test_in_cluster_token_with_a_newline_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "token").write_text(f"{SECRET}\nX-Injected: 1\n")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    with pytest.raises(ConfigError) as err:
        InClusterAuthentication(tmp_path).login()
    assert str(tmp_path / "token") in err.value.field and SECRET not in str(err.value)


def test_an_error_raised_while_building_a_request_never_quotes_it() -> None:
    # What http.client raises for a header value it refuses: the value, token included, is in the text.
    built = ValueError(f"Invalid header value b'Bearer {SECRET}\\nX: 1'")
    err = translate(built, verb="get", resource="rayclusters.ray.io")
    assert isinstance(err, ApiError) and "ValueError" in str(err)
    assert SECRET not in str(err) and SECRET not in repr(err)


def test_plain_http_is_refused_with_a_token_unless_allowed() -> None:
    with pytest.raises(ConfigError) as err:
        TokenAuthentication(token=SECRET, server="http://api.example:6443")
    assert (
        err.value.field == "server" and "allow_http=True" in str(err.value) and SECRET not in str(err.value)
    )
    with pytest.raises(ConfigError):
        TokenAuthentication(token=SECRET, server="HTTP://api.example:6443")
    allowed = TokenAuthentication(token=SECRET, server="http://127.0.0.1:8080", allow_http=True)
    assert allowed.allow_http is True


def test_plain_http_kubeconfig_context(tmp_path: Path) -> None:
    def kubeconfig(user: dict[str, str]) -> Path:
        cfg = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "proxy", "cluster": {"server": "http://127.0.0.1:8001"}}],
            "users": [{"name": "u", "user": user}],
            "contexts": [{"name": "ctx", "context": {"cluster": "proxy", "user": "u"}}],
            "current-context": "ctx",
        }
        path = tmp_path / f"kubeconfig-{len(user)}"
        path.write_text(yaml.safe_dump(cfg))
        return path

    with pytest.raises(ConfigError) as err:  # a token to an http:// server
        KubeConfigFileAuthentication(kubeconfig({"token": SECRET}))._build()
    assert err.value.field == "server"
    # kubectl proxy: no credentials travel, so plain HTTP is fine; allow_http lets the token through.
    assert KubeConfigFileAuthentication(kubeconfig({}))._build().configuration.host == "http://127.0.0.1:8001"
    assert KubeConfigFileAuthentication(kubeconfig({"token": SECRET}), allow_http=True)._build()


@pytest.mark.parametrize(
    ("given", "expected"),
    [(False, False), (True, True), ("no", False), ("False", False), ("0", False), ("off", False),
     ("yes", True), ("TRUE", True), ("1", True), ("on", True)],
)  # fmt: skip
def test_skip_tls_strings_are_parsed_not_truthy(given: object, expected: bool) -> None:
    assert (
        TokenAuthentication(token=SECRET, server="https://api.example:6443", skip_tls=given).skip_tls
        is expected
    )


@pytest.mark.parametrize("given", ["maybe", "2", 1, 0.0, None, []])
def test_skip_tls_rejects_what_is_not_a_yes_or_no(given: object) -> None:
    with pytest.raises(ConfigError) as err:
        TokenAuthentication(token=SECRET, server="https://api.example:6443", skip_tls=given)  # type: ignore[arg-type]
    assert err.value.field == "skip_tls" and "True or False" in str(err.value)


def test_skip_tls_no_still_verifies_the_certificate(plane: LocalControlPlane) -> None:
    # "no" used to be truthy and switched verification off: now the untrusted CA is refused.
    auth = TokenAuthentication(token=plane.token, server=plane.server, skip_tls="no")
    with pytest.raises(TLSVerificationError):
        auth.login()
    trusted = TokenAuthentication(
        token=plane.token, server=plane.server, skip_tls="no", ca_cert_path=str(plane.ca_cert_path)
    )
    assert trusted.login()
