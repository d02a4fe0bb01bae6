"""The bad-input catalogue: every case is data, run by the test_reliability_* modules beside it.

Sections (each a list; ids are unique across the whole catalogue):

* :data:`SDK_CASES`: SDK configurations and calls -> a ``ConfigError`` (or the named typed error)
  naming the field, the bad value and what is allowed, before anything is sent;
* :data:`NAME_CASES`: bad names, each tried on every place a name goes in the SDK;
* :data:`CLI_CASES`: ``rayqueue`` arguments and files -> one line naming the option, field or file,
  and the exit code from :mod:`rayqueue_sdk.cli.exit_codes`;
* :data:`HTTP_CASES`: requests to the local control plane (headers, bodies, encodings, sizes, YAML and
  JSON bombs, names) -> the upstream status code and reason, in a ``Status`` whose message or causes
  name the field.

After every case the catalogue's namespace must hold exactly what it held before, and a sentinel
object must still read back unchanged (``conftest.assert_state_unchanged``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rayqueue_sdk import (
    Cluster,
    ClusterConfiguration,
    ManagedClusterConfig,
    PriorityClassNotFoundError,
    QueueNotFoundError,
    RayJob,
    TokenAuthentication,
    WorkerGroup,
)
from rayqueue_sdk.manifests import kueue as k

#: The namespace every case runs in, and the object that must survive every case unchanged.
NS = "reliability"
SENTINEL = "sentinel"


def cc(**kw: Any) -> Callable[[], Any]:
    return lambda: ClusterConfiguration(**{"name": "c", **kw})


def job(**kw: Any) -> Callable[[], Any]:
    base: dict[str, Any] = {"job_name": "j", "entrypoint": "python x.py"}
    if "cluster_name" not in kw:
        base["cluster_config"] = ManagedClusterConfig()
    return lambda: RayJob(**{**base, **kw})


def groups(n: int) -> list[WorkerGroup]:
    return [WorkerGroup(name=f"g{i}") for i in range(n)]


# (id, action, text naming the field, text showing the bad value)
SDK_CASES: list[tuple[str, Callable[[], Any], str, str]] = [
    ("negative-cpu", cc(worker_cpu_requests=-1), "worker_cpu_requests", "-1"),
    ("non-numeric-cpu", cc(head_cpu_requests="lots"), "head_cpu_requests", "'lots'"),
    ("boolean-cpu", cc(worker_cpu_requests=True), "worker_cpu_requests", "True"),
    ("cpu-below-1m", cc(worker_cpu_requests=0.0005), "worker_cpu_requests", "0.0005"),
    ("unparseable-memory", cc(worker_memory_requests="8 GB"), "worker_memory_requests", "'8 GB'"),
    ("memory-string-in-bytes", cc(head_memory_requests="8"), "head_memory_requests", "'8'"),
    ("negative-memory", cc(worker_memory_requests=-4), "worker_memory_requests", "-4"),
    ("zero-memory", cc(worker_memory_requests=0), "worker_memory_requests", "0"),
    ("cpu-limit-below-request", cc(worker_cpu_requests=4, worker_cpu_limits=2), "worker_cpu_limits", "2"),
    (
        "memory-limit-below-request",
        cc(head_memory_requests="8Gi", head_memory_limits="4Gi"),
        "head_memory_limits",
        "'4Gi'",
    ),
    (
        "unmapped-extended-resource",
        cc(worker_extended_resource_requests={"example.com/fpga": 1}),
        "worker_extended_resource_requests['example.com/fpga']",
        "'example.com/fpga'",
    ),
    (
        "fractional-gpu",
        cc(worker_extended_resource_requests={"nvidia.com/gpu": 0.5}),
        "worker_extended_resource_requests['nvidia.com/gpu']",
        "0.5",
    ),
    (
        "override-default-mapping",
        cc(extended_resource_mapping={"nvidia.com/gpu": "A100"}),
        "extended_resource_mapping['nvidia.com/gpu']",
        "'A100'",
    ),
    (
        "mapping-to-ray-cpu",
        cc(extended_resource_mapping={"example.com/x": "CPU"}),
        "extended_resource_mapping['example.com/x']",
        "'CPU'",
    ),
    ("name-too-long", lambda: ClusterConfiguration(name="a" * 54), "name", "'" + "a" * 20),
    ("name-upper-case", lambda: ClusterConfiguration(name="MyCluster"), "name", "'MyCluster'"),
    ("name-underscore", lambda: ClusterConfiguration(name="my_cluster"), "name", "'my_cluster'"),
    ("name-starts-with-digit", lambda: ClusterConfiguration(name="1cluster"), "name", "'1cluster'"),
    (
        "name-missing",
        lambda: Cluster(ClusterConfiguration(num_workers=1)),  # a RayJob's cluster_config may leave it out
        "name",
        "None",
    ),
    (
        "priority-twice",
        cc(priority_class="prod-priority", labels={"kueue.x-k8s.io/priority-class": "dev-priority"}),
        "priority_class",
        "'dev-priority'",
    ),
    (
        "queue-twice",
        cc(local_queue="a", labels={"kueue.x-k8s.io/queue-name": "b"}),
        "local_queue",
        "'b'",
    ),
    ("bad-namespace", cc(namespace="Team A"), "namespace", "'Team A'"),
    ("bad-queue-name", cc(local_queue="My Queue"), "local_queue", "'My Queue'"),
    ("unknown-field", cc(worker_gpus=2), "worker_gpus", "2"),
    ("negative-num-workers", cc(num_workers=-1), "num_workers", "-1"),
    ("non-integer-num-workers", cc(num_workers="two"), "num_workers", "'two'"),
    ("groups-and-flat-fields", cc(worker_groups=groups(1), num_workers=3), "worker_groups", "['g0']"),
    (
        "duplicate-group-names",
        cc(worker_groups=[WorkerGroup(name="gpu"), WorkerGroup(name="gpu")]),
        "worker_groups[1].name",
        "'gpu'",
    ),
    ("group-named-head", cc(worker_groups=[{"name": "head"}]), "worker_groups[0].name", "'head'"),
    ("group-name-upper-case", cc(worker_groups=[{"name": "GPU"}]), "worker_groups[0].name", "'GPU'"),
    ("replicas-above-max", lambda: WorkerGroup(name="g", replicas=5, max_replicas=3), "replicas", "5"),
    ("replicas-below-min", lambda: WorkerGroup(name="g", replicas=1, min_replicas=2), "replicas", "1"),
    (
        "min-above-max",
        lambda: WorkerGroup(name="g", replicas=3, min_replicas=4, max_replicas=2),
        "min_replicas",
        "4",
    ),
    ("num-workers-outside-bounds", cc(num_workers=5, min_workers=1, max_workers=3), "num_workers", "5"),
    (
        "autoscaling-under-queue-with-elastic-false",
        cc(enable_autoscaling=True, max_workers=4, local_queue="q", elastic=False),
        "enable_autoscaling",
        "True",
    ),
    ("too-many-cluster-groups", cc(local_queue="q", worker_groups=groups(18)), "worker_groups", "['g0'"),
    ("group-bad-toleration", cc(worker_tolerations=[{"key": "a", "operator": "In"}]), "operator", "'In'"),
    (
        "mount-without-volume",
        cc(volume_mounts=[{"name": "data", "mountPath": "/data"}]),
        "volume_mounts[0].name",
        "'data'",
    ),
    ("label-value-not-string", cc(labels={"team": 1}), "labels['team']", "1"),
    ("env-value-dict", cc(envs={"A": {"b": 1}}), "envs['A']", "{'b': 1}"),
    ("pull-secrets-not-a-list", cc(image_pull_secrets="regcred"), "image_pull_secrets", "'regcred'"),
    (
        "managed-config-with-kueue-label",
        lambda: ManagedClusterConfig(labels={"kueue.x-k8s.io/queue-name": "q"}),
        "labels['kueue.x-k8s.io/queue-name']",
        "'q'",
    ),
    (
        "cluster-given-managed-config",
        lambda: Cluster(ManagedClusterConfig()),  # type: ignore[arg-type]
        "config",
        "ManagedClusterConfig",
    ),
    (
        "job-cluster-name-and-config",
        job(cluster_name="ws", cluster_config=ManagedClusterConfig()),
        "cluster_name/cluster_config",
        "'ws'",
    ),
    (
        "job-neither-cluster",
        lambda: RayJob(job_name="j", entrypoint="python x.py"),
        "cluster_name/cluster_config",
        "None",
    ),
    ("job-name-too-long", job(job_name="j" * 48), "job_name", "'jjjj"),
    ("job-name-upper-case", job(job_name="Train"), "job_name", "'Train'"),
    (
        "job-ttl-without-shutdown",
        job(shutdown_after_job_finishes=False, ttl_seconds_after_finished=60),
        "ttl_seconds_after_finished",
        "60",
    ),
    (
        "job-queued-without-shutdown",
        job(local_queue="q", shutdown_after_job_finishes=False),
        "shutdown_after_job_finishes",
        "False",
    ),
    ("job-zero-deadline", job(active_deadline_seconds=0), "active_deadline_seconds", "0"),
    ("job-negative-ttl", job(ttl_seconds_after_finished=-5), "ttl_seconds_after_finished", "-5"),
    ("job-bad-submission-mode", job(submission_mode="Batch"), "submission_mode", "'Batch'"),
    (
        "job-too-many-groups-under-queue",
        job(local_queue="q", cluster_config=ManagedClusterConfig(worker_groups=groups(17))),
        "cluster_config.worker_groups",
        "['g0'",
    ),
    ("job-queue-on-existing-cluster", job(cluster_name="ws", local_queue="q"), "local_queue", "'q'"),
    (
        "job-ttl-on-existing-cluster",
        job(cluster_name="ws", ttl_seconds_after_finished=30),
        "ttl_seconds",
        "30",
    ),
    (
        "job-priority-twice",
        job(priority_class="a", labels={"kueue.x-k8s.io/priority-class": "b"}),
        "priority_class",
        "'b'",
    ),
    ("job-pip-not-a-list", job(runtime_env={"pip": 3}), "runtime_env['pip']", "3"),
    (
        "job-empty-entrypoint",
        lambda: RayJob(job_name="j", entrypoint="", cluster_name="ws"),
        "entrypoint",
        "''",
    ),
    (
        "kueue-borrowing-without-cohort",
        lambda: k.cluster_queue(
            "cq",
            resource_groups=[k.resource_group(k.flavor_quotas("f", {"cpu": 1}, borrowing_limits={"cpu": 1}))],
        ),
        "borrowing_limits['cpu']",
        "1",
    ),
    (
        "kueue-borrow-without-reclaim",
        lambda: k.preemption(borrow_within_cohort="LowerPriority"),
        "borrow_within_cohort",
        "'LowerPriority'",
    ),
    (
        "kueue-flavors-disagree",
        lambda: k.resource_group(k.flavor_quotas("a", {"cpu": 1}), k.flavor_quotas("b", {"memory": "1Gi"})),
        "flavors[1]",
        "['memory']",
    ),
    (
        "kueue-priority-not-int",
        lambda: k.workload_priority_class("p", "high"),  # type: ignore[arg-type]
        "value",
        "'high'",
    ),
    ("kueue-negative-quota", lambda: k.flavor_quotas("f", {"cpu": -1}), "nominal['cpu']", "-1"),
    # A trailing newline passed patterns ending in `$` (which also matches before a final "\n").
    ("name-trailing-newline", cc(name="c\n"), "name", "'c\\n'"),
    ("queue-trailing-newline", cc(local_queue="team-queue\n"), "local_queue", "'team-queue\\n'"),
    ("label-key-trailing-newline", cc(labels={"team\n": "a"}), "labels", "'team\\n'"),
    ("label-value-trailing-newline", cc(labels={"team": "a\n"}), "labels", "'a\\n'"),
    ("env-name-trailing-newline", cc(envs={"PATH\n": "x"}), "envs", "'PATH\\n'"),
    # int32 fields take real ints within int32; bools, floats and NaN are refused, not coerced.
    ("workers-past-int32", cc(num_workers=2**31), "num_workers", "2147483648"),
    ("workers-bool", cc(num_workers=True), "num_workers", "True"),
    ("workers-nan", cc(num_workers=float("nan")), "num_workers", "nan"),
    ("max-workers-past-int32", cc(min_workers=0, max_workers=2**31), "max_workers", "2147483648"),
    ("replicas-bool", lambda: WorkerGroup(name="g", replicas=True), "replicas", "True"),
    (
        "max-replicas-past-int32",
        lambda: WorkerGroup(name="g", max_replicas=2**31),
        "max_replicas",
        "2147483648",
    ),
    (
        "quantity-huge-exponent",
        cc(worker_memory_requests="1e999999999"),
        "worker_memory_requests",
        "'1e999999999'",
    ),
    ("cpu-past-int64", cc(head_cpu_requests=2**70), "head_cpu_requests", str(2**70)),
    ("kueue-name-trailing-newline", lambda: k.local_queue("q\n", "team", "cq"), "name", "'q\\n'"),
]


SDK_CASES += [
    # Integers: real ints within int32, no bool, float, NaN or string.
    ("num-workers-bool", cc(num_workers=True), "num_workers", "True"),
    ("num-workers-past-int32", cc(num_workers=2**31), "num_workers", "2147483648"),
    ("num-workers-negative", cc(num_workers=-1), "num_workers", "-1"),
    ("num-workers-float", cc(num_workers=1.5), "num_workers", "1.5"),
    ("num-workers-nan", cc(num_workers=float("nan")), "num_workers", "nan"),
    ("num-workers-string", cc(num_workers="2"), "num_workers", "'2'"),
    (
        "autoscaling-max-past-int32",
        cc(enable_autoscaling=True, max_workers=2**31),
        "max_workers",
        "2147483648",
    ),
    ("min-workers-negative", cc(enable_autoscaling=True, min_workers=-1), "min_workers", "-1"),
    ("min-workers-above-num", cc(enable_autoscaling=True, min_workers=3, num_workers=2), "num_workers", "2"),
    ("max-workers-below-num", cc(enable_autoscaling=True, max_workers=1, num_workers=2), "num_workers", "2"),
    ("group-replicas-bool", lambda: WorkerGroup(name="g", replicas=True), "replicas", "True"),
    ("group-replicas-past-int32", lambda: WorkerGroup(name="g", replicas=2**31), "replicas", "2147483648"),
    # Quantities: finite, parseable, within range.
    ("cpu-infinite", cc(head_cpu_requests=float("inf")), "head_cpu_requests", "inf"),
    ("cpu-nan", cc(worker_cpu_requests=float("nan")), "worker_cpu_requests", "nan"),
    ("cpu-empty-string", cc(head_cpu_requests=""), "head_cpu_requests", "''"),
    ("cpu-list", cc(head_cpu_requests=[1]), "head_cpu_requests", "[1]"),
    ("memory-nan", cc(head_memory_requests=float("nan")), "head_memory_requests", "nan"),
    ("memory-negative-quantity", cc(worker_memory_requests="-1Gi"), "worker_memory_requests", "'-1Gi'"),
    ("memory-bad-suffix", cc(worker_memory_requests="1.5Xi"), "worker_memory_requests", "'1.5Xi'"),
    (
        "gpu-negative",
        lambda: ManagedClusterConfig(head_accelerators={"nvidia.com/gpu": -1}),
        "nvidia.com/gpu",
        "-1",
    ),
    (
        "gpu-words",
        lambda: ManagedClusterConfig(worker_accelerators={"nvidia.com/gpu": "lots"}),
        "nvidia.com/gpu",
        "'lots'",
    ),
    ("gpu-bool", cc(head_extended_resource_requests={"nvidia.com/gpu": True}), "nvidia.com/gpu", "True"),
    # Booleans: real booleans or the usual words.
    ("verify-tls-word", cc(verify_tls="perhaps"), "verify_tls", "'perhaps'"),
    ("autoscaling-word", cc(enable_autoscaling="perhaps"), "enable_autoscaling", "'perhaps'"),
    ("elastic-int", cc(elastic=2), "elastic", "2"),
    (
        "overwrite-mapping-word",
        cc(overwrite_default_resource_mapping="x"),
        "overwrite_default_resource_mapping",
        "'x'",
    ),
    # Maps, lists and objects of the wrong shape.
    ("label-key-space", cc(labels={"bad key": "v"}), "labels", "'bad key'"),
    ("label-value-too-long", cc(labels={"k": "v" * 64}), "labels['k']", "'vvvv"),
    ("label-value-int", cc(labels={"k": 1}), "labels['k']", "1"),
    ("label-value-newline", cc(labels={"k": "v\n"}), "labels['k']", "'v\\n'"),
    ("annotation-value-int", cc(annotations={"a": 1}), "annotations['a']", "1"),
    ("env-name-digit", cc(envs={"1X": "v"}), "envs", "'1X'"),
    ("image-empty", cc(image=""), "image", "''"),
    ("image-with-space", cc(image="ray project/ray"), "image", "'ray project/ray'"),
    ("image-control-char", cc(image="ray\x00"), "image", "'ray\\x00'"),
    ("group-image-space", lambda: WorkerGroup(name="g", image=" ray"), "image", "' ray'"),
    ("pull-secret-bad-name", cc(image_pull_secrets=["Bad_Name"]), "image_pull_secrets", "'Bad_Name'"),
    ("toleration-unknown-key", cc(head_tolerations=[{"bogus": 1}]), "head_tolerations[0]", "'bogus'"),
    ("tolerations-not-list", cc(head_tolerations="x"), "head_tolerations", "'x'"),
    ("node-selector-int", cc(head_node_selector={"k": 1}), "head_node_selector['k']", "1"),
    ("volume-without-name", cc(volumes=[{"nomame": 1}]), "volumes[0]", "'nomame'"),
    ("volume-not-dict", cc(volumes=["x"]), "volumes[0]", "'x'"),
    ("mount-without-name", cc(volume_mounts=[{"mountPath": "/x"}]), "volume_mounts[0]", "'/x'"),
    ("mapping-value-int", cc(extended_resource_mapping={"x": 1}), "extended_resource_mapping['x']", "1"),
    ("worker-groups-not-list", cc(worker_groups="x"), "worker_groups", "'x'"),
    (
        "group-ray-param-int",
        lambda: WorkerGroup(name="g", ray_start_params={"num-gpus": 1}),
        "ray_start_params",
        "1",
    ),
    ("unknown-field-int", cc(unknown_field=1), "unknown_field", "1"),
    ("queue-bad-name", cc(local_queue="Bad_Q"), "local_queue", "'Bad_Q'"),
    ("priority-upper-case", cc(priority_class="High"), "priority_class", "'High'"),
    ("namespace-too-long", cc(namespace="a" * 64), "namespace", "'aaaa"),
    ("name-not-string", lambda: ClusterConfiguration(name=5), "name", "5"),  # type: ignore[arg-type]
    # RayJob: int32 seconds, modes, runtime_env shapes.
    ("job-ttl-bool", job(ttl_seconds_after_finished=True), "ttl_seconds_after_finished", "True"),
    ("job-ttl-past-int32", job(ttl_seconds_after_finished=2**31), "ttl_seconds_after_finished", "2147483648"),
    ("job-ttl-negative", job(ttl_seconds_after_finished=-1), "ttl_seconds_after_finished", "-1"),
    ("job-deadline-zero", job(active_deadline_seconds=0), "active_deadline_seconds", "0"),
    ("job-deadline-past-int32", job(active_deadline_seconds=2**40), "active_deadline_seconds", str(2**40)),
    ("job-deadline-nan", job(active_deadline_seconds=float("nan")), "active_deadline_seconds", "nan"),
    ("job-deadline-float", job(active_deadline_seconds=1.5), "active_deadline_seconds", "1.5"),
    ("job-mode-unknown", job(submission_mode="Foo"), "submission_mode", "'Foo'"),
    ("job-runtime-env-str", job(runtime_env="pip"), "runtime_env", "'pip'"),
    ("job-pip-int", job(runtime_env={"pip": 1}), "runtime_env['pip']", "1"),
    ("job-working-dir-int", job(runtime_env={"working_dir": 1}), "runtime_env['working_dir']", "1"),
    ("job-env-vars-int", job(runtime_env={"env_vars": {"A": 1}}), "runtime_env['env_vars']", "{'A': 1}"),
    ("job-namespace-bad", job(namespace="Bad_NS"), "namespace", "'Bad_NS'"),
    ("job-labels-bad-key", job(labels={"bad key": "v"}), "labels", "'bad key'"),
    ("job-cluster-name-bad", job(cluster_name="Bad_Cluster"), "cluster_name", "'Bad_Cluster'"),
    # Credentials: the token itself is never shown.
    (
        "token-newline",
        lambda: TokenAuthentication(token="abc\ndef", server="https://x"),
        "token",
        "<redacted>",
    ),
    ("token-empty", lambda: TokenAuthentication(token="", server="https://x"), "token", "''"),
    ("token-not-str", lambda: TokenAuthentication(token=5, server="https://x"), "token", "<redacted>"),  # type: ignore[arg-type]
    ("server-ftp", lambda: TokenAuthentication(token="abc", server="ftp://x"), "server", "'ftp://x'"),
    (
        "server-http-no-opt-in",
        lambda: TokenAuthentication(token="abc", server="http://x"),
        "server",
        "'http://x'",
    ),
    (
        "skip-tls-word",
        lambda: TokenAuthentication(token="abc", server="https://x", skip_tls="maybe"),
        "skip_tls",
        "'maybe'",
    ),
]


def _apply_in_ns(**kw: Any) -> Callable[[], Any]:
    """``Cluster(ClusterConfiguration(...)).apply()`` in the catalogue's namespace (reaches the server)."""
    return lambda: Cluster(ClusterConfiguration(**{"name": "c", "namespace": NS, **kw})).apply()


#: Calls that pass validation and are refused by what the server holds: (id, action, error class, field text).
SDK_CALL_CASES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("apply-missing-queue", _apply_in_ns(local_queue="no-such-queue"), QueueNotFoundError, "no-such-queue"),
    (
        "apply-missing-priority",
        _apply_in_ns(local_queue=None, priority_class="no-such-pc"),
        PriorityClassNotFoundError,
        "no-such-pc",
    ),
    (
        "submit-missing-queue",
        lambda: RayJob(
            job_name="j",
            entrypoint="python x.py",
            namespace=NS,
            local_queue="no-such-queue",
            cluster_config=ManagedClusterConfig(),
        ).submit(),
        QueueNotFoundError,
        "no-such-queue",
    ),
]

#: Bad names, each tried wherever the SDK takes a name (:data:`NAME_TARGETS`): (id, name).
BAD_NAMES: list[tuple[str, Any]] = [
    ("empty", ""),
    ("upper", "Cluster"),
    ("underscore", "a_b"),
    ("dot", "a.b"),
    ("leading-dash", "-a"),
    ("trailing-dash", "a-"),
    ("trailing-newline", "a\n"),
    ("inner-space", "a b"),
    ("unicode", "caf\u00e9"),
    ("slash", "a/b"),
    ("nul", "a\x00b"),
    ("too-long", "a" * 64),
    ("not-a-string", 7),
]

#: Where a name goes: (id, field the error names, callable taking the name).
NAME_TARGETS: list[tuple[str, str, Callable[[Any], Any]]] = [
    ("cluster-name", "name", lambda n: ClusterConfiguration(name=n)),
    (
        "job-name",
        "job_name",
        lambda n: RayJob(job_name=n, entrypoint="x", cluster_config=ManagedClusterConfig()),
    ),
    ("group-name", "name", lambda n: WorkerGroup(name=n)),
    ("queue-name", "local_queue", lambda n: ClusterConfiguration(name="c", local_queue=n)),
]

#: (id, name, target id, field, callable): every bad name at every target.
NAME_CASES: list[tuple[str, Any, str, Callable[[Any], Any]]] = [
    (f"{target}-{name_id}", name, field_name, build)
    for name_id, name in BAD_NAMES
    for target, field_name, build in NAME_TARGETS
]


@dataclass(frozen=True)
class CliCase:
    """``rayqueue ARGV`` with an optional file: the exit code and what its one error line names."""

    id: str
    argv: list[str]
    exit_code: int
    names: str
    file: bytes | None = None


def _laughs(levels: int = 9, width: int = 9) -> bytes:
    lines = ["name: c", "labels:", "  a0: &a0 [" + ",".join(["lol"] * width) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"  a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]")
    return ("\n".join(lines) + "\n").encode()


_APPLY = ["cluster", "apply", "-f", "{file}"]
_SUBMIT = ["job", "submit", "j", "-e", "python x.py", "--cluster-config", "@{file}"]

#: The CLI: usage errors are argparse's (2), files and fields are ConfigErrors (2), missing things 3.
CLI_CASES: list[CliCase] = [
    # Files given to `cluster apply -f`.
    CliCase("apply-billion-laughs", _APPLY, 2, "aliases", _laughs()),
    CliCase("apply-recursive-alias", _APPLY, 2, "refers to itself", b"name: c\nlabels: &a {x: *a}\n"),
    CliCase(
        "apply-deep-nesting", _APPLY, 2, "levels deep", b"name: c\nlabels: " + b"[" * 500 + b"]" * 500 + b"\n"
    ),
    CliCase("apply-latin1", _APPLY, 2, "not UTF-8", "name: caf\u00e9\n".encode("latin-1")),
    CliCase("apply-png", _APPLY, 2, "binary", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
    CliCase("apply-malformed", _APPLY, 2, "not valid YAML", b"name: [unclosed\n"),
    CliCase("apply-list", _APPLY, 2, "mapping", b"- just\n- a list\n"),
    CliCase("apply-scalar", _APPLY, 2, "mapping", b"42\n"),
    CliCase("apply-empty", _APPLY, 2, "mapping", b""),
    CliCase("apply-bad-workers", _APPLY, 2, "num_workers", b"name: c\nnum_workers: many\n"),
    CliCase("apply-workers-past-int32", _APPLY, 2, "num_workers", b"name: c\nnum_workers: 2147483648\n"),
    CliCase("apply-workers-bool", _APPLY, 2, "num_workers", b"name: c\nnum_workers: true\n"),
    CliCase("apply-workers-nan", _APPLY, 2, "num_workers", b"name: c\nnum_workers: .nan\n"),
    CliCase(
        "apply-memory-exponent",
        _APPLY,
        2,
        "worker_memory_requests",
        b"name: c\nworker_memory_requests: 1e999999999\n",
    ),
    CliCase("apply-unknown-field", _APPLY, 2, "nmae", b"nmae: c\n"),
    CliCase("apply-name-newline", _APPLY, 2, "name", b'name: "c\\n"\n'),
    CliCase("apply-name-upper", _APPLY, 2, "name", b"name: MyCluster\n"),
    CliCase("apply-label-int", _APPLY, 2, "labels", b"name: c\nlabels: {k: 1}\n"),
    CliCase("apply-image-empty", _APPLY, 2, "image", b"name: c\nimage: ''\n"),
    CliCase("apply-bad-queue", _APPLY, 2, "local_queue", b"name: c\nlocal_queue: Bad_Q\n"),
    CliCase(
        "apply-manifest-wrong-kind",
        _APPLY,
        2,
        "not a RayCluster",
        b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
    ),
    CliCase("apply-json-truncated", _APPLY, 2, "not valid", b'{"name": "c", "num_workers": '),
    CliCase("apply-nul-bytes", _APPLY, 2, "binary", b"name: c\x00\x00\x00\n"),
    CliCase("apply-utf16", _APPLY, 2, "binary", "name: c\n".encode("utf-16")),
    CliCase("apply-missing-file", ["cluster", "apply", "-f", "{missing}"], 2, "No such file"),
    CliCase("apply-directory", ["cluster", "apply", "-f", "{dir}"], 2, "directory"),
    CliCase("apply-too-large", _APPLY, 2, "larger than 10 MiB", b"#" * (10 * 2**20 + 1)),
    # `job submit --cluster-config @file` and the job's own options.
    CliCase("submit-config-binary", _SUBMIT, 2, "binary", b"\x00\x01\x02binary"),
    CliCase("submit-config-utf16-bom", _SUBMIT, 2, "not UTF-8", b"\xff\xfe{}"),
    CliCase("submit-config-truncated", _SUBMIT, 2, "cluster-config", b'{"num_workers": "x"'),
    CliCase("submit-config-bad-field", _SUBMIT, 2, "num_workers", b'{"num_workers": -1}'),
    CliCase("submit-config-not-object", _SUBMIT, 2, "cluster-config", b"[1, 2]"),
    CliCase("submit-config-laughs", _SUBMIT, 2, "aliases", _laughs()),
    CliCase(
        "submit-bad-job-name",
        ["job", "submit", "Bad_Job", "-e", "x", "--cluster-config", "{{}}"],
        2,
        "job_name",
    ),
    CliCase(
        "submit-job-name-newline",
        ["job", "submit", "j\n", "-e", "x", "--cluster-config", "{{}}"],
        2,
        "job_name",
    ),
    CliCase(
        "submit-ttl-not-int",
        ["job", "submit", "j", "-e", "x", "--cluster-config", "{{}}", "--ttl", "soon"],
        2,
        "--ttl",
    ),
    CliCase(
        "submit-ttl-past-int32",
        ["job", "submit", "j", "-e", "x", "--cluster-config", "{{}}", "--ttl", "2147483648"],
        2,
        "ttl_seconds_after_finished",
    ),
    CliCase(
        "submit-deadline-negative",
        ["job", "submit", "j", "-e", "x", "--cluster-config", "{{}}", "--deadline", "-5"],
        2,
        "active_deadline_seconds",
    ),
    CliCase(
        "submit-env-no-equals",
        ["job", "submit", "j", "-e", "x", "--cluster-config", "{{}}", "--env", "NOVALUE"],
        2,
        "--env",
    ),
    CliCase(
        "submit-empty-entrypoint",
        ["job", "submit", "j", "-e", "", "--cluster-config", "{{}}"],
        2,
        "entrypoint",
    ),
    CliCase(
        "submit-both-cluster-kinds",
        ["job", "submit", "j", "-e", "x", "--cluster", "c", "--cluster-config", "{{}}"],
        2,
        "cluster",
    ),
    CliCase(
        "submit-queue-on-existing-cluster",
        ["job", "submit", "j", "-e", "x", "--cluster", "c", "--queue", "q"],
        2,
        "local_queue",
    ),
    CliCase(
        "submit-ttl-on-existing-cluster",
        ["job", "submit", "j", "-e", "x", "--cluster", "c", "--ttl", "60"],
        2,
        "ttl_seconds_after_finished",
    ),
    CliCase(
        "submit-inline-config-bad",
        ["job", "submit", "j", "-e", "x", "--cluster-config", '{{"num_workers": '],
        2,
        "--cluster-config",
    ),
    CliCase(
        "submit-inline-config-field",
        ["job", "submit", "j", "-e", "x", "--cluster-config", "num_workers: -3"],
        2,
        "num_workers",
    ),
    CliCase(
        "submit-bad-queue",
        ["job", "submit", "j", "-e", "x", "--cluster-config", "{{}}", "--queue", "Bad_Q"],
        2,
        "local_queue",
    ),
    CliCase(
        "submit-missing-working-dir",
        ["job", "submit", "j", "-e", "x", "--cluster-config", "{{}}", "--working-dir", "{missing}"],
        2,
        "working_dir",
    ),
    # Names and options of the other commands.
    CliCase("status-bad-name", ["cluster", "status", "Bad_Name"], 2, "name"),
    CliCase("status-missing", ["cluster", "status", "no-such-cluster"], 3, "no-such-cluster"),
    CliCase("down-bad-name", ["cluster", "down", "Bad_Name"], 2, "name"),
    CliCase("wait-bad-timeout", ["cluster", "wait", "c", "--timeout", "soon"], 2, "--timeout"),
    CliCase("wait-negative-timeout", ["cluster", "wait", "c", "--timeout", "-1"], 2, "timeout"),
    CliCase("job-status-missing", ["job", "status", "no-such-job"], 3, "no-such-job"),
    CliCase("bad-namespace", ["cluster", "list", "-n", "Bad_NS"], 2, "namespace"),
    CliCase("unknown-command", ["clusters"], 2, "invalid choice"),
    CliCase("unknown-option", ["cluster", "list", "--colour"], 2, "--colour"),
    CliCase("missing-kubeconfig", ["cluster", "list", "--kubeconfig", "{missing}"], 2, "kubeconfig"),
    CliCase("unknown-context", ["cluster", "list", "--context", "no-such-context"], 2, "no-such-context"),
]


@dataclass(frozen=True)
class HttpCase:
    """One request to the control plane and the upstream answer: code, reason, and what the Status names."""

    id: str
    method: str
    path: str
    body: bytes | str | None
    status: int
    reason: str
    names: str
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    token: str = "admin"  # "admin", "user" (limited to NS), "none", or a literal token


def _cm(name: str = "bad", **extra: Any) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, **extra.pop("meta", {})},
            **extra,
        }
    )


def _rc(spec: Any, name: str = "bad-rc") -> str:
    return json.dumps(
        {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": name}, "spec": spec}
    )


def _head() -> dict[str, Any]:
    return {"rayStartParams": {}, "template": {"spec": {"containers": [{"name": "ray", "image": "ray"}]}}}


def _workers(replicas: Any) -> dict[str, Any]:
    return {
        "headGroupSpec": _head(),
        "workerGroupSpecs": [
            {
                "groupName": "g",
                "replicas": replicas,
                "minReplicas": 0,
                "maxReplicas": 4,
                "rayStartParams": {},
                "template": {"spec": {"containers": [{"name": "ray", "image": "ray"}]}},
            }
        ],
    }


def _cq(quota: Any) -> str:
    return json.dumps(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "bad-cq"},
            "spec": {
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": quota}]}],
                    }
                ]
            },
        }
    )


def _yaml_laughs() -> str:
    lines = [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata: {name: bad}",
        "data:",
        "  a0: &a0 [" + ",".join(["lol"] * 9) + "]",
    ]
    for i in range(1, 10):
        lines.append(f"  a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


_CMS = f"/api/v1/namespaces/{NS}/configmaps"
_RCS = f"/apis/ray.io/v1/namespaces/{NS}/rayclusters"
_CQS = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
_SENT = f"{_CMS}/{SENTINEL}"

#: Requests to the server (the sentinel is the target of every update and patch).
HTTP_CASES: list[HttpCase] = [
    # Bodies that do not decode.
    HttpCase(
        "truncated-json",
        "POST",
        _CMS,
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": ',
        400,
        "BadRequest",
        "",
    ),
    HttpCase("json-array", "POST", _CMS, "[1, 2, 3]", 400, "BadRequest", ""),
    HttpCase("json-string", "POST", _CMS, '"configmap"', 400, "BadRequest", ""),
    HttpCase("empty-body", "POST", _CMS, "", 400, "BadRequest", ""),
    HttpCase("not-utf8", "POST", _CMS, b"\xff\xfe{not utf-8", 400, "BadRequest", ""),
    HttpCase("utf16-json", "POST", _CMS, _cm().encode("utf-16"), 400, "BadRequest", ""),
    HttpCase(
        "nan-literal",
        "POST",
        _CMS,
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad", "generation": NaN}}',
        400,
        "BadRequest",
        "",
    ),
    HttpCase(
        "deep-json",
        "POST",
        _CMS,
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad"}, "data": '
        + "[" * 20000
        + "]" * 20000
        + "}",
        400,
        "BadRequest",
        "nest",
    ),
    HttpCase(
        "malformed-yaml",
        "POST",
        _CMS,
        "metadata: [unclosed",
        400,
        "BadRequest",
        "",
        content_type="application/yaml",
    ),
    HttpCase(
        "yaml-laughs-create",
        "POST",
        _CMS,
        _yaml_laughs(),
        400,
        "BadRequest",
        "alias",
        content_type="application/yaml",
    ),
    HttpCase(
        "yaml-laughs-apply",
        "PATCH",
        f"{_CMS}/bad?fieldManager=t",
        _yaml_laughs(),
        400,
        "BadRequest",
        "alias",
        content_type="application/apply-patch+yaml",
    ),
    HttpCase(
        "yaml-deep-apply",
        "PATCH",
        f"{_CMS}/bad?fieldManager=t",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\ndata: " + "[" * 5000 + "]" * 5000 + "\n",
        400,
        "BadRequest",
        "deep",
        content_type="application/apply-patch+yaml",
    ),
    HttpCase(
        "yaml-malformed-apply",
        "PATCH",
        f"{_CMS}/bad?fieldManager=t",
        "kind: ConfigMap\n  bad: indentation: here",
        400,
        "BadRequest",
        "",
        content_type="application/apply-patch+yaml",
    ),
    # Objects that decode but are wrong.
    HttpCase(
        "wrong-kind",
        "POST",
        _CMS,
        json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bad"}}),
        400,
        "BadRequest",
        "Secret",
    ),
    HttpCase(
        "wrong-api-version",
        "POST",
        _CMS,
        json.dumps({"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "bad"}}),
        400,
        "BadRequest",
        "v2",
    ),
    HttpCase(
        "namespace-mismatch", "POST", _CMS, _cm(meta={"namespace": "other"}), 400, "BadRequest", "namespace"
    ),
    HttpCase("name-mismatch-put", "PUT", _SENT, _cm("other"), 400, "BadRequest", "name"),
    HttpCase(
        "no-name",
        "POST",
        _CMS,
        json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
        422,
        "Invalid",
        "metadata.name",
    ),
    HttpCase(
        "metadata-not-object",
        "POST",
        _CMS,
        json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": "x"}),
        400,
        "BadRequest",
        "metadata",
    ),
    HttpCase("data-not-map", "POST", _CMS, _cm(data=[1]), 400, "BadRequest", "ConfigMap.data"),
    HttpCase("data-value-int", "POST", _CMS, _cm(data={"k": 1}), 400, "BadRequest", "ConfigMap.data"),
    HttpCase("data-key-invalid", "POST", _CMS, _cm(data={"bad key": "v"}), 422, "Invalid", "data[bad key]"),
    HttpCase(
        "secret-not-base64",
        "POST",
        f"/api/v1/namespaces/{NS}/secrets",
        json.dumps(
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bad"}, "data": {"k": "not base64!"}}
        ),
        400,
        "BadRequest",
        "base64",
    ),
    HttpCase(
        "secret-string-data-int",
        "POST",
        f"/api/v1/namespaces/{NS}/secrets",
        json.dumps(
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bad"}, "stringData": {"k": 1}}
        ),
        400,
        "BadRequest",
        "Secret.stringData",
    ),
    HttpCase(
        "label-key-invalid",
        "POST",
        _CMS,
        _cm(meta={"labels": {"bad key": "v"}}),
        422,
        "Invalid",
        "metadata.labels",
    ),
    HttpCase(
        "label-value-too-long",
        "POST",
        _CMS,
        _cm(meta={"labels": {"k": "v" * 64}}),
        422,
        "Invalid",
        "metadata.labels",
    ),
    HttpCase(
        "label-value-int", "POST", _CMS, _cm(meta={"labels": {"k": 1}}), 400, "BadRequest", "metadata.labels"
    ),
    HttpCase(
        "annotations-too-large",
        "POST",
        _CMS,
        _cm(meta={"annotations": {"a": "x" * (256 * 1024 + 1)}}),
        422,
        "Invalid",
        "metadata.annotations",
    ),
    HttpCase(
        "generate-name-invalid",
        "POST",
        _CMS,
        json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "Bad_"}}),
        422,
        "Invalid",
        "metadata.generateName",
    ),
    HttpCase(
        "finalizer-invalid",
        "POST",
        _CMS,
        _cm(meta={"finalizers": ["not a finalizer"]}),
        422,
        "Invalid",
        "metadata.finalizers",
    ),
    HttpCase("rc-replicas-string", "POST", _RCS, _rc(_workers("two")), 422, "Invalid", "replicas"),
    HttpCase("rc-replicas-past-int32", "POST", _RCS, _rc(_workers(2**31)), 422, "Invalid", "replicas"),
    HttpCase("rc-replicas-float", "POST", _RCS, _rc(_workers(1.5)), 422, "Invalid", "replicas"),
    HttpCase("rc-no-head", "POST", _RCS, _rc({"workerGroupSpecs": []}), 422, "Invalid", "headGroupSpec"),
    HttpCase("rc-spec-not-object", "POST", _RCS, _rc("x"), 422, "Invalid", "spec"),
    HttpCase("cq-quota-words", "POST", _CQS, _cq("lots"), 422, "Invalid", "nominalQuota"),
    HttpCase("cq-quota-space", "POST", _CQS, _cq("1 Gi"), 422, "Invalid", "nominalQuota"),
    HttpCase("cq-quota-unit-typo", "POST", _CQS, _cq("1Gb"), 422, "Invalid", "nominalQuota"),
    # Sizes.
    HttpCase(
        "object-past-limit",
        "PATCH",
        f"{_CMS}/big?fieldManager=t",
        _cm("big", data={f"k{i}": "x" * 1000 for i in range(3200)}),
        413,
        "RequestEntityTooLarge",
        "limit",
        content_type="application/apply-patch+yaml",
    ),
    HttpCase(
        "body-past-limit",
        "POST",
        _CMS,
        b"{" + b" " * (3 * 1024 * 1024 + 10) + b"}",
        413,
        "RequestEntityTooLarge",
        "limit",
    ),
    HttpCase(
        "url-too-long", "GET", _CMS + "?labelSelector=" + "a" * 70000, None, 414, "RequestURITooLong", "URI"
    ),
    HttpCase(
        "header-too-large",
        "GET",
        _CMS,
        None,
        431,
        "RequestHeaderFieldsTooLarge",
        "header",
        headers={"X-Big": "x" * 70000},
    ),
    # Encodings and content types.
    HttpCase(
        "content-type-text",
        "POST",
        _CMS,
        _cm(),
        415,
        "UnsupportedMediaType",
        "accepted media types",
        content_type="text/plain",
    ),
    HttpCase(
        "content-type-xml",
        "POST",
        _CMS,
        "<ConfigMap/>",
        415,
        "UnsupportedMediaType",
        "accepted media types",
        content_type="application/xml",
    ),
    HttpCase(
        "patch-as-json",
        "PATCH",
        _SENT,
        '{"data": {"k": "x"}}',
        415,
        "UnsupportedMediaType",
        "application/json",
    ),
    HttpCase(
        "strategic-on-crd",
        "PATCH",
        f"{_RCS}/none",
        '{"spec": {}}',
        415,
        "UnsupportedMediaType",
        "accepted media types",
        content_type="application/strategic-merge-patch+json",
    ),
    HttpCase(
        "gzip-body",
        "POST",
        _CMS,
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00",
        400,
        "BadRequest",
        "not UTF-8",
        headers={"Content-Encoding": "gzip"},
    ),
    # Patches.
    HttpCase(
        "merge-patch-array",
        "PATCH",
        _SENT,
        "[1]",
        400,
        "BadRequest",
        "",
        content_type="application/merge-patch+json",
    ),
    HttpCase(
        "merge-patch-data-int",
        "PATCH",
        _SENT,
        '{"data": {"k": 5}}',
        400,
        "BadRequest",
        "ConfigMap.data",
        content_type="application/merge-patch+json",
    ),
    HttpCase(
        "merge-patch-bad-key",
        "PATCH",
        _SENT,
        '{"data": {"bad key": "v"}}',
        422,
        "Invalid",
        "data[bad key]",
        content_type="application/merge-patch+json",
    ),
    HttpCase(
        "merge-patch-rename",
        "PATCH",
        _SENT,
        '{"metadata": {"name": "other"}}',
        400,
        "BadRequest",
        "name",
        content_type="application/merge-patch+json",
    ),
    HttpCase(
        "merge-patch-bad-finalizer",
        "PATCH",
        _SENT,
        '{"metadata": {"finalizers": ["a b"]}}',
        422,
        "Invalid",
        "metadata.finalizers[0]",
        content_type="application/merge-patch+json",
    ),
    HttpCase(
        "json-patch-not-list",
        "PATCH",
        _SENT,
        '{"op": "add"}',
        400,
        "BadRequest",
        "",
        content_type="application/json-patch+json",
    ),
    HttpCase(
        "json-patch-bad-op",
        "PATCH",
        _SENT,
        '[{"op": "frobnicate", "path": "/data"}]',
        422,
        "Invalid",
        "frobnicate",
        content_type="application/json-patch+json",
    ),
    HttpCase(
        "json-patch-bad-path",
        "PATCH",
        _SENT,
        '[{"op": "replace", "path": "/nope/deeper", "value": 1}]',
        422,
        "Invalid",
        "/nope",
        content_type="application/json-patch+json",
    ),
    HttpCase(
        "json-patch-test-fails",
        "PATCH",
        _SENT,
        '[{"op": "test", "path": "/data/k", "value": "other"}]',
        422,
        "Invalid",
        "test",
        content_type="application/json-patch+json",
    ),
    HttpCase(
        "json-patch-rename",
        "PATCH",
        _SENT,
        '[{"op": "replace", "path": "/metadata/name", "value": "other"}]',
        400,
        "BadRequest",
        "name",
        content_type="application/json-patch+json",
    ),
    HttpCase(
        "strategic-bad-directive",
        "PATCH",
        _SENT,
        '{"data": {"$patch": "explode"}}',
        400,
        "BadRequest",
        "explode",
        content_type="application/strategic-merge-patch+json",
    ),
    HttpCase(
        "apply-no-field-manager",
        "PATCH",
        f"{_CMS}/bad",
        _cm(),
        422,
        "Invalid",
        "fieldManager",
        content_type="application/apply-patch+yaml",
    ),
    HttpCase(
        "apply-field-manager-too-long",
        "PATCH",
        f"{_CMS}/bad?fieldManager=" + "m" * 129,
        _cm(),
        422,
        "Invalid",
        "fieldManager",
        content_type="application/apply-patch+yaml",
    ),
    HttpCase(
        "create-field-manager-control-char",
        "POST",
        f"{_CMS}?fieldManager=a%07b",
        _cm(),
        422,
        "Invalid",
        "fieldManager",
    ),
    # Query parameters.
    HttpCase("dry-run-bogus", "POST", f"{_CMS}?dryRun=Bogus", _cm(), 400, "BadRequest", "dryRun"),
    HttpCase(
        "label-selector-broken",
        "GET",
        f"{_CMS}?labelSelector=a%20in%20(",
        None,
        400,
        "BadRequest",
        "unbalanced parenthesis",
    ),
    HttpCase(
        "field-selector-unknown",
        "GET",
        f"{_CMS}?fieldSelector=spec.nope%3Dx",
        None,
        400,
        "BadRequest",
        "spec.nope",
    ),
    HttpCase(
        "timeout-seconds-words",
        "GET",
        f"{_CMS}?watch=1&timeoutSeconds=soon",
        None,
        400,
        "BadRequest",
        "timeoutSeconds",
    ),
    HttpCase("limit-words", "GET", f"{_CMS}?limit=many", None, 400, "BadRequest", "limit"),
    HttpCase(
        "continue-garbage", "GET", f"{_CMS}?limit=1&continue=garbage", None, 400, "BadRequest", "continue"
    ),
    HttpCase(
        "propagation-bogus",
        "DELETE",
        f"{_SENT}?propagationPolicy=Sideways",
        None,
        422,
        "Invalid",
        "propagationPolicy",
    ),
    # Names in bodies and paths.
    HttpCase("name-trailing-newline", "POST", _CMS, _cm("bad\n"), 422, "Invalid", "metadata.name"),
    HttpCase("name-upper", "POST", _CMS, _cm("Bad"), 422, "Invalid", "metadata.name"),
    HttpCase("name-underscore", "POST", _CMS, _cm("a_b"), 422, "Invalid", "metadata.name"),
    HttpCase("name-leading-dash", "POST", _CMS, _cm("-a"), 422, "Invalid", "metadata.name"),
    HttpCase("name-slash", "POST", _CMS, _cm("a/b"), 422, "Invalid", "metadata.name"),
    HttpCase("name-dotdot", "POST", _CMS, _cm(".."), 422, "Invalid", "metadata.name"),
    HttpCase("name-nul", "POST", _CMS, _cm("a\x00b"), 422, "Invalid", "metadata.name"),
    HttpCase("name-unicode", "POST", _CMS, _cm("caf\u00e9"), 422, "Invalid", "metadata.name"),
    HttpCase("name-too-long", "POST", _CMS, _cm("a" * 254), 422, "Invalid", "metadata.name"),
    HttpCase("rc-name-upper", "POST", _RCS, _rc(_workers(1), name="Bad"), 422, "Invalid", "metadata.name"),
    HttpCase(
        "rc-name-underscore", "POST", _RCS, _rc(_workers(1), name="a_b"), 422, "Invalid", "metadata.name"
    ),
    HttpCase(
        "namespace-missing",
        "POST",
        "/api/v1/namespaces/no-such-ns/configmaps",
        _cm(meta={"namespace": "no-such-ns"}),
        404,
        "NotFound",
        "no-such-ns",
    ),
    # Who is asking.
    HttpCase("bad-token", "POST", _CMS, _cm(), 401, "Unauthorized", "Unauthorized", token="not-a-token"),
    HttpCase("no-token", "POST", _CMS, _cm(), 401, "Unauthorized", "Unauthorized", token="none"),
    HttpCase(
        "basic-auth",
        "POST",
        _CMS,
        _cm(),
        401,
        "Unauthorized",
        "Unauthorized",
        token="none",
        headers={"Authorization": "Basic YWRtaW46YWRtaW4="},
    ),
    HttpCase(
        "user-other-namespace",
        "POST",
        "/api/v1/namespaces/default/configmaps",
        _cm(meta={"namespace": "default"}),
        403,
        "Forbidden",
        "configmaps",
        token="user",
    ),
    HttpCase("user-cluster-scoped", "POST", _CQS, _cq(1), 403, "Forbidden", "clusterqueues", token="user"),
    HttpCase(
        "user-delete-namespace",
        "DELETE",
        f"/api/v1/namespaces/{NS}",
        None,
        403,
        "Forbidden",
        "namespaces",
        token="user",
    ),
    # Paths and methods.
    HttpCase("unknown-resource", "POST", f"/api/v1/namespaces/{NS}/widgets", _cm(), 404, "NotFound", ""),
    HttpCase("unknown-group", "GET", "/apis/nope.example.com/v1/things", None, 404, "NotFound", ""),
    HttpCase("put-on-collection", "PUT", _CMS, _cm(), 405, "MethodNotAllowed", "PUT"),
    HttpCase(
        "update-stale-rv",
        "PUT",
        _SENT,
        _cm(SENTINEL, meta={"resourceVersion": "1"}, data={"k": "x"}),
        409,
        "Conflict",
        SENTINEL,
    ),
    HttpCase("create-existing", "POST", _CMS, _cm(SENTINEL), 409, "AlreadyExists", SENTINEL),
]
