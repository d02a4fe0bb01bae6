"""Protobuf bodies of apps/v1, batch/v1, rbac/v1 and core/v1 Pod/Service kinds, encoded by hand.

The field numbers below are typed from upstream's ``generated.proto`` files (k8s.io/api), not read
from the decoder's tables, so a wrong generated number fails here. Each expected value is what Go's
encoding/json writes for the struct (``omitempty``, pointers kept at 0, structs never left out).
"""

from __future__ import annotations

import pytest

from rayqueue_local.apimachinery.protobuf import ProtobufError, decode, encode_unknown, supported_kinds


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative numbers: ten bytes of two's complement, as Go writes int32/int64
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def ld(number: int, payload: bytes | str) -> bytes:
    """A length-delimited field."""
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def num(number: int, value: int) -> bytes:
    """A varint field."""
    return _varint(number << 3) + _varint(value)


def entry(key: str, value: bytes) -> bytes:
    return ld(1, key) + ld(2, value)


def int_or_string(value: int | str) -> bytes:
    """intstr.IntOrString: 1 type (0 int, 1 string), 2 intVal, 3 strVal."""
    return num(1, 1) + ld(3, value) if isinstance(value, str) else num(1, 0) + num(2, value)


def meta(name: str, **labels: str) -> bytes:
    return ld(1, name) + b"".join(ld(11, entry(k, v.encode())) for k, v in labels.items())


def test_deployment_by_upstream_field_numbers() -> None:
    probe = ld(1, ld(2, ld(1, "/healthz") + ld(2, int_or_string("http")))) + num(4, 5)  # handler.httpGet
    container = (
        ld(1, "web")
        + ld(2, "nginx")
        + ld(3, "sleep")
        + ld(3, "600")
        + ld(6, num(3, 8080) + ld(4, "TCP"))  # ports: containerPort, protocol
        + ld(8, ld(1, entry("cpu", ld(1, "500m"))))  # resources.limits: map<string, Quantity>
        + ld(10, probe)  # livenessProbe
    )
    template = ld(1, meta("", app="web")) + ld(2, ld(2, container))
    strategy = ld(1, "RollingUpdate") + ld(2, ld(1, int_or_string("25%")) + ld(2, int_or_string(1)))
    spec = (
        num(1, 0)  # replicas: a pointer, so 0 is kept
        + ld(2, ld(1, entry("app", b"web")))
        + ld(3, template)
        + ld(4, strategy)
        + num(5, 0)  # minReadySeconds 0: omitempty drops it
    )
    out = decode(encode_unknown("apps/v1", "Deployment", ld(1, meta("web")) + ld(2, spec)))
    assert out["metadata"] == {"name": "web", "creationTimestamp": None}
    assert out["status"] == {}  # a struct: omitempty never drops it
    assert out["spec"]["replicas"] == 0 and "minReadySeconds" not in out["spec"]
    assert out["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert out["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1},
    }
    assert out["spec"]["template"]["metadata"] == {"labels": {"app": "web"}, "creationTimestamp": None}
    assert out["spec"]["template"]["spec"] == {
        "containers": [
            {
                "name": "web",
                "image": "nginx",
                "command": ["sleep", "600"],
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {"limits": {"cpu": "500m"}},
                # ProbeHandler is embedded in Probe: its fields are the probe's own in JSON.
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5},
            }
        ]
    }


def test_job_and_cronjob() -> None:
    security = ld(4, _varint(1000) + _varint(2000)) + num(4, 3000)  # supplementalGroups: packed, then not
    pod = ld(2, ld(1, "c") + ld(2, "python") + ld(4, "-c")) + ld(3, "Never") + ld(14, security)
    job_spec = num(2, 3) + num(3, -1) + num(7, 0) + ld(6, ld(2, pod))  # completions, deadline, backoffLimit
    job = decode(encode_unknown("batch/v1", "Job", ld(1, meta("once")) + ld(2, job_spec)))
    spec = job["spec"]
    assert spec["completions"] == 3 and spec["activeDeadlineSeconds"] == -1 and spec["backoffLimit"] == 0
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    assert spec["template"]["spec"]["securityContext"] == {"supplementalGroups": [1000, 2000, 3000]}
    assert spec["template"]["spec"]["containers"] == [
        {"name": "c", "image": "python", "args": ["-c"], "resources": {}}
    ]
    assert job["status"] == {}

    cron_spec = ld(1, "*/5 * * * *") + num(4, 0) + ld(5, ld(2, job_spec))  # schedule, suspend, jobTemplate
    cron = decode(encode_unknown("batch/v1", "CronJob", ld(1, meta("cj")) + ld(2, cron_spec)))
    assert cron["spec"]["schedule"] == "*/5 * * * *" and cron["spec"]["suspend"] is False
    job_template = cron["spec"]["jobTemplate"]
    assert job_template["metadata"] == {"creationTimestamp": None} and job_template["spec"] == spec


def test_rbac_kinds() -> None:
    rule = ld(1, "get") + ld(1, "list") + ld(2, "") + ld(3, "pods")  # verbs, apiGroups, resources
    role = decode(encode_unknown("rbac.authorization.k8s.io/v1", "Role", ld(1, meta("reader")) + ld(2, rule)))
    assert role["rules"] == [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]
    no_verbs = decode(encode_unknown("rbac.authorization.k8s.io/v1", "Role", ld(2, ld(5, "/healthz"))))
    assert no_verbs["rules"] == [{"verbs": None, "nonResourceURLs": ["/healthz"]}]  # verbs has no omitempty

    selector = ld(1, ld(1, entry("team", b"a")))  # aggregationRule.clusterRoleSelectors[].matchLabels
    aggregated = decode(encode_unknown("rbac.authorization.k8s.io/v1", "ClusterRole", ld(3, selector)))
    assert aggregated["aggregationRule"] == {"clusterRoleSelectors": [{"matchLabels": {"team": "a"}}]}
    assert aggregated["rules"] is None  # rules has no omitempty either

    subject = ld(1, "ServiceAccount") + ld(3, "robot") + ld(4, "ns")
    role_ref = ld(1, "rbac.authorization.k8s.io") + ld(2, "Role") + ld(3, "reader")
    for kind in ("RoleBinding", "ClusterRoleBinding"):
        body = ld(1, meta("rv")) + ld(2, subject) + ld(2, ld(1, "User") + ld(3, "u")) + ld(3, role_ref)
        binding = decode(encode_unknown("rbac.authorization.k8s.io/v1", kind, body))
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "robot", "namespace": "ns"},
            {"kind": "User", "name": "u"},
        ]
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "reader",
        }


def test_service_ports_and_pod_volumes() -> None:
    port = ld(1, "http") + ld(2, "TCP") + num(3, 80) + ld(4, int_or_string(8080)) + num(5, 30080)
    spec = ld(1, port) + ld(1, num(3, 81)) + ld(2, entry("app", b"web")) + ld(4, "NodePort")
    service = decode(encode_unknown("v1", "Service", ld(1, meta("svc")) + ld(2, spec)))
    assert service["spec"] == {
        "ports": [
            {"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080, "nodePort": 30080},
            {"port": 81, "targetPort": 0},  # IntOrString is a struct: never dropped, 0 when unset
        ],
        "selector": {"app": "web"},
        "type": "NodePort",
    }
    assert service["status"] == {"loadBalancer": {}}

    volume = ld(1, "scratch") + ld(2, ld(2, ld(2, ld(1, "1Gi"))))  # volumeSource.emptyDir.sizeLimit
    pod_spec = ld(1, volume) + ld(2, ld(1, "main")) + num(4, 0)  # terminationGracePeriodSeconds 0 kept
    pod = decode(encode_unknown("v1", "Pod", ld(1, meta("p")) + ld(2, pod_spec)))
    # VolumeSource is embedded in Volume: emptyDir sits beside the volume's name.
    assert pod["spec"]["volumes"] == [{"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}}]
    assert pod["spec"]["containers"] == [{"name": "main", "resources": {}}]
    assert pod["spec"]["terminationGracePeriodSeconds"] == 0
    template = decode(encode_unknown("v1", "PodTemplate", ld(2, ld(2, pod_spec))))
    assert template["template"]["spec"] == pod["spec"]


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (ld(2, ld(3, ld(2, ld(2, ld(1, "c") + num(99, 1))))), "field 99 of core/v1.Container"),
        (ld(2, num(8, 1)), "field 8 of apps/v1.DeploymentSpec"),
        (ld(2, ld(4, ld(2, ld(1, num(9, 1))))), "field 9 of intstr.IntOrString"),
    ],
)
def test_a_field_the_tables_do_not_know_is_refused_naming_it(body: bytes, needle: str) -> None:
    with pytest.raises(ProtobufError, match=needle) as err:
        decode(encode_unknown("apps/v1", "Deployment", body))
    assert err.value.unsupported  # the API server answers 415 UnsupportedMediaType


@pytest.mark.parametrize(
    "body",
    [
        ld(2, ld(1, "0")),  # replicas sent length-delimited
        ld(2, num(3, 1)),  # the pod template sent as a number
        ld(2, ld(3, ld(2, ld(2, ld(1, b"\xff"))))),  # a container name that is not UTF-8
    ],
)
def test_malformed_workload_bodies_are_bad_requests(body: bytes) -> None:
    with pytest.raises(ProtobufError) as err:
        decode(encode_unknown("apps/v1", "Deployment", body))
    assert not err.value.unsupported


@pytest.mark.parametrize(("api_version", "kind"), supported_kinds())
def test_an_empty_object_of_each_kind_is_gos_zero_value(api_version: str, kind: str) -> None:
    out = decode(encode_unknown(api_version, kind, b""))
    assert out["apiVersion"] == api_version and out["kind"] == kind
    assert out["metadata"] == {"creationTimestamp": None}
