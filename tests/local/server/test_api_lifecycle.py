"""Control planes of their own: restart with a state directory, workload /scale, kubeconfig, apply()."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from rayqueue_local import ControlPlaneOptions, LocalControlPlane
from rayqueue_local.options import option_names

KUEUE = "kueue.x-k8s.io"


def test_restart_with_a_state_dir_keeps_objects_tokens_and_ca(tmp_path: Path, crd_dir: Path) -> None:
    with LocalControlPlane(crd_dir=crd_dir, state_dir=tmp_path, controllers=[]) as cp:
        cp.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n")
        user_token = cp.add_user("alice", ["team-a"])
        admin_token = cp.token
        core = client.CoreV1Api(cp.api_client())
        made = core.create_namespaced_config_map("team-a", {"metadata": {"name": "kept"}, "data": {"k": "v"}})
        ca = cp.ca_cert_path.read_bytes()
    with LocalControlPlane(crd_dir=crd_dir, state_dir=tmp_path, controllers=[]) as cp:
        assert cp.token == admin_token and cp.ca_cert_path.read_bytes() == ca
        core = client.CoreV1Api(cp.api_client())
        kept = core.read_namespaced_config_map("kept", "team-a")
        assert kept.data == {"k": "v"} and kept.metadata.uid == made.metadata.uid
        assert int(kept.metadata.resource_version) == int(made.metadata.resource_version)
        later = core.create_namespaced_config_map("team-a", {"metadata": {"name": "later"}})
        assert int(later.metadata.resource_version) > int(made.metadata.resource_version)
        as_user = client.CoreV1Api(cp.api_client(user_token))
        assert [c.metadata.name for c in as_user.list_namespaced_config_map("team-a").items] == [
            "kept",
            "later",
        ]


def test_without_state_dir_nothing_is_left_behind() -> None:
    with LocalControlPlane(controllers=[]) as cp:
        base = cp.kubeconfig_path.parent
        assert base.is_dir()
    assert not base.exists()


def test_kubeconfig_contexts_work_with_load_kube_config() -> None:
    with LocalControlPlane(controllers=[]) as cp:
        cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-k"}})
        cp.add_user("kim", ["team-k"])
        doc = yaml.safe_load(cp.kubeconfig_path.read_text())
        assert doc["current-context"] == "rayqueue-local"
        assert {c["name"] for c in doc["contexts"]} == {"rayqueue-local", "rayqueue-local-kim"}
        admin = client.CoreV1Api(config.new_client_from_config(str(cp.kubeconfig_path)))
        assert "team-k" in [n.metadata.name for n in admin.list_namespace().items]
        kim = client.CoreV1Api(
            config.new_client_from_config(str(cp.kubeconfig_path), context="rayqueue-local-kim")
        )
        assert kim.list_namespaced_config_map("team-k").items == []
        with pytest.raises(ApiException) as err:
            kim.list_namespace()
        assert err.value.status == 403


def test_apply_creates_then_updates_multi_document_yaml() -> None:
    docs = """
apiVersion: v1
kind: Namespace
metadata: {name: team-y}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq-y}
spec: {cohort: research}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: team-y}
data: {a: "1"}
"""
    with LocalControlPlane(controllers=[]) as cp:
        first = cp.apply(docs)
        assert [o["kind"] for o in first] == ["Namespace", "ClusterQueue", "ConfigMap"]
        assert first[1]["spec"]["cohortName"] == "research"  # stored as v1beta2
        again = cp.apply(docs.replace('a: "1"', 'a: "2"'))
        assert again[2]["data"] == {"a": "2"}
        assert again[2]["metadata"]["uid"] == first[2]["metadata"]["uid"]
        with pytest.raises(ValueError):
            cp.apply({"apiVersion": "example.com/v1", "kind": "Nope", "metadata": {"name": "x"}})


def test_workload_scale_subresource() -> None:
    workload = {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "wl", "namespace": "default"},
        "spec": {"queueName": "lq", "active": True, "podSets": []},
    }
    with LocalControlPlane(controllers=[], workload_scale=True) as cp:
        cp.apply(workload)
        custom = client.CustomObjectsApi(cp.api_client())
        scale = custom.get_namespaced_custom_object_scale(KUEUE, "v1beta2", "default", "workloads", "wl")
        assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1
        scale["spec"]["replicas"] = 0
        out = custom.replace_namespaced_custom_object_scale(
            KUEUE, "v1beta2", "default", "workloads", "wl", scale
        )
        assert out["spec"]["replicas"] == 0
        wl = custom.get_namespaced_custom_object(KUEUE, "v1beta2", "default", "workloads", "wl")
        assert wl["spec"]["active"] is False
        custom.patch_namespaced_custom_object_scale(
            KUEUE, "v1beta2", "default", "workloads", "wl", {"spec": {"replicas": 1}}
        )
        assert custom.get_namespaced_custom_object(KUEUE, "v1beta2", "default", "workloads", "wl")["spec"][
            "active"
        ]
        from kubernetes import dynamic

        dyn = dynamic.DynamicClient(cp.api_client())
        assert "scale" in dyn.resources.get(api_version=f"{KUEUE}/v1beta2", kind="Workload").subresources


def test_scale_is_not_served_unless_enabled(custom: Any) -> None:
    with pytest.raises(ApiException) as err:
        custom.get_namespaced_custom_object_scale(KUEUE, "v1beta2", "default", "workloads", "wl")
    assert err.value.status == 404


class _Recorder:
    """A controller that checks the server is up when it starts and still up when it stops."""

    name = "recorder"

    def __init__(self, log: list[str], cp: Any) -> None:
        self.log = log
        self.cp = cp

    def _server_answers(self) -> bool:
        return bool(client.CoreV1Api(self.cp.api_client()).list_namespace().items)

    def start(self, store: Any) -> None:
        self.log.append(f"start:{self._server_answers()}:{store is self.cp.store}")

    def stop(self) -> None:
        self.log.append(f"stop:{self._server_answers()}")


def test_controllers_start_after_the_server_and_stop_before_it() -> None:
    log: list[str] = []
    with LocalControlPlane(controllers=lambda cp: [_Recorder(log, cp)]):
        assert log == ["start:True:True"]
    assert log == ["start:True:True", "stop:True"]


def test_options_by_name_or_whole() -> None:
    cp = LocalControlPlane(controllers=[], ray_enabled=False, simulated_job_seconds=0.5)
    assert cp.options == ControlPlaneOptions(ray_enabled=False, simulated_job_seconds=0.5)
    base = ControlPlaneOptions(keda_enabled=False)
    assert LocalControlPlane(options=base, workload_scale=True).options == ControlPlaneOptions(
        keda_enabled=False, workload_scale=True
    )
    assert LocalControlPlane().options == ControlPlaneOptions()  # everything on, as `local up`


def test_an_unknown_option_is_a_type_error_listing_the_known_ones() -> None:
    with pytest.raises(TypeError) as err:
        LocalControlPlane(token="mine")
    message = str(err.value)
    assert "unknown option 'token'" in message
    assert all(name in message for name in option_names())
    with pytest.raises(TypeError, match="unknown options 'ray', 'keda'"):
        LocalControlPlane(ray=False, keda=False)


def test_setting_an_option_afterwards_is_refused() -> None:
    cp = LocalControlPlane(controllers=[])
    with pytest.raises(AttributeError, match=r"LocalControlPlane\(\.\.\., ray_enabled=False\)"):
        cp.ray_enabled = False  # type: ignore[attr-defined]


def test_missing_prometheus_is_a_notice_not_a_failure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from rayqueue_local.runtime import prometheus

    monkeypatch.setenv("PATH", str(tmp_path))  # no prometheus binary on it ...
    monkeypatch.setattr(prometheus, "_DEBIAN_BINARY", tmp_path / "prometheus")  # ... nor where Debian puts it
    with caplog.at_level("WARNING", logger="rayqueue_local"):
        cp = LocalControlPlane(ray_enabled=False, keda_enabled=False)
        with cp:
            assert cp.prometheus is None and cp.gpu_metrics is not None
            assert "prometheus" in cp.unavailable
    [notice] = cp.notices
    assert "Prometheus is not installed" in notice and "apt-get install prometheus" in notice
    assert [r.getMessage() for r in caplog.records if r.name == "rayqueue_local"] == [notice]
    quiet = LocalControlPlane(ray_enabled=False, keda_enabled=False, prometheus_enabled=False)
    with quiet:
        assert quiet.notices == []


def test_without_ray_a_raycluster_says_why_it_cannot_start(monkeypatch: pytest.MonkeyPatch) -> None:
    from rayqueue_local import controlplane

    def no_ray() -> list[str]:
        raise controlplane.ProcessStartError("the `ray` command is not installed")

    monkeypatch.setattr(controlplane, "ray_command", no_ray)
    with LocalControlPlane(keda_enabled=False, prometheus_enabled=False) as cp:
        assert "ray" in cp.unavailable and "ray_enabled=False" in cp.notices[0]
        cp.apply(
            {
                "apiVersion": "ray.io/v1",
                "kind": "RayCluster",
                "metadata": {"name": "rc"},
                "spec": {
                    "headGroupSpec": {
                        "rayStartParams": {},
                        "template": {
                            "spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.40.0"}]}
                        },
                    }
                },
            }
        )
        deadline = time.monotonic() + 30
        failure: dict[str, Any] = {}
        while not failure and time.monotonic() < deadline:
            conditions = (cp.store.get("rayclusters.ray.io", "default", "rc").get("status") or {}).get(
                "conditions"
            )
            failure = next((c for c in conditions or [] if c["type"] == "ReplicaFailure"), {})
            time.sleep(0.05)
        assert failure["status"] == "True" and "Ray is not installed" in failure["message"]


def test_without_crds_a_warning_says_objects_are_unvalidated(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING"), LocalControlPlane(controllers=[]):
        pass
    assert any("unvalidated" in r.getMessage() and r.levelname == "WARNING" for r in caplog.records)


def test_a_failed_start_leaves_nothing_running() -> None:
    class Broken:
        name = "broken"

        def start(self, store: Any) -> None:
            raise RuntimeError("cannot start")

        def stop(self) -> None:
            raise AssertionError("a controller that did not start is not stopped")

    cp = LocalControlPlane(controllers=[Broken()])
    with pytest.raises(RuntimeError):
        cp.start()
    base = cp.kubeconfig_path.parent
    assert not base.exists()
    with pytest.raises(RuntimeError):
        _ = cp.api_server  # not running
    with LocalControlPlane(controllers=[], port=cp.port or 0) as again:
        assert again.server


def test_port_in_use_is_an_error() -> None:
    with LocalControlPlane(controllers=[]) as first, pytest.raises(OSError):
        LocalControlPlane(controllers=[], port=first.api_server.port).start()
