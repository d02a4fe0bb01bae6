"""What the emulation runs: :class:`ControlPlaneOptions`, the typed options of a ``LocalControlPlane``.

The defaults are ``rayqueue local up``'s: Kueue, KubeRay with a real local Ray head per running
RayCluster, KEDA and a real Prometheus all on; each is turned off by name (``ray_enabled=False`` is
the CLI's ``--no-ray``). Whatever cannot run where the control plane starts (no ``ray`` in this
Python, no ``prometheus`` binary on ``PATH``) is reported when it starts, in
``LocalControlPlane.notices`` and on the ``rayqueue_local`` logger, instead of failing silently.

Stdlib only: the ``rayqueue`` command's parser takes its defaults from here.

Example:
    >>> options = ControlPlaneOptions(ray_enabled=False)
    >>> options.kuberay_enabled, options.ray_enabled, options.max_starting_heads
    (True, False, 2)
    >>> with_overrides(options, {"keda_enabled": False}).keda_enabled
    False
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "KUEUE_API_CHOICES",
    "ControlPlaneOptions",
    "KueueAPIVersions",
    "kueue_served_versions",
    "option_names",
    "with_overrides",
]

#: Which Kueue API generations the plane serves: ``both`` (Kueue 0.15 to 0.19: ``v1beta2``, and the
#: deprecated ``v1beta1``), ``v1beta2`` (Kueue 0.20, which no longer serves ``v1beta1``, kueue#14558) or
#: ``v1beta1`` (the releases before 0.15, still run in the field).
KueueAPIVersions = Literal["both", "v1beta2", "v1beta1"]
KUEUE_API_CHOICES: tuple[str, ...] = ("both", "v1beta2", "v1beta1")


def kueue_served_versions(choice: str) -> tuple[str, ...]:
    """The ``kueue.x-k8s.io`` versions served for a ``kueue_api_versions`` choice, preferred first.

    Example:
        >>> kueue_served_versions("both"), kueue_served_versions("v1beta1")
        (('v1beta2', 'v1beta1'), ('v1beta1',))
    """
    if choice not in KUEUE_API_CHOICES:
        raise ValueError(f"kueue_api_versions must be one of {', '.join(KUEUE_API_CHOICES)}, got {choice!r}")
    return ("v1beta2", "v1beta1") if choice == "both" else (choice,)


@dataclass(frozen=True, kw_only=True)
class ControlPlaneOptions:
    """Every option of the emulation (``LocalControlPlane(..., name=value)`` or ``options=``).

    - ``workload_scale``: serve Kueue ``workloads/scale`` (replicas 1 ⇔ ``spec.active``), as seed 000's
      Kueue build does;
    - ``kuberay_enabled``: KubeRay's RayCluster/RayJob controllers and the GPU-metrics exporter;
    - ``ray_enabled``: a real local Ray head per running RayCluster (``False``: clusters are ready at
      once and RayJobs are simulated for ``simulated_job_seconds``); needs KubeRay;
    - ``keda_enabled``: KEDA's webhook and ScaledObject controller;
    - ``prometheus_enabled``: a real Prometheus (Debian's ``prometheus``) scraping the GPU metrics,
      published as ``cp.prometheus``; needs KubeRay;
    - ``max_starting_heads``: Ray heads started at once (each takes seconds of CPU);
    - ``simulated_job_seconds``: how long a simulated RayJob runs;
    - ``provisioning_delay_seconds``: how long the local cluster autoscaler
      (:mod:`rayqueue_local.controllers.autoscaler`) takes to answer a ProvisioningRequest;
    - ``provisioning_failures``: how many ProvisioningRequests of each Workload it fails before it
      provisions one (``Failed=True``, so Kueue retries per the ProvisioningRequestConfig's
      ``retryStrategy``, then rejects the admission check);
    - ``wait_for_pods_ready_timeout_seconds``: Kueue's ``waitForPodsReady.timeout`` (and
      ``recoveryTimeout``): an admitted Workload whose pods are not all ready in time is evicted
      (``PodsReadyTimeout``) and requeued with backoff (:mod:`rayqueue_local.controllers.kueue.podsready`);
      ``None`` (the default here) leaves it off. Upstream's v1beta2 configuration turns it on with 30 min;
    - ``requeuing_backoff_limit_count`` / ``requeuing_backoff_base_seconds`` /
      ``requeuing_backoff_max_seconds``: its ``requeuingStrategy`` (``None``: requeued without end; 60 s;
      3600 s, Kueue's defaults);
    - ``wait_for_pods_ready_block_admission``: its ``blockAdmission`` (admit nothing more while a Workload
      holding quota is not ``PodsReady``); ``requeuing_timestamp``: its ``requeuingStrategy.timestamp``
      (``Eviction``, Kueue's default: a Workload evicted for ``PodsReadyTimeout`` queues by that eviction's
      time; ``Creation``: by its creation). Both apply only with the timeout set, as upstream's.
    - ``fair_sharing``: Kueue's ``fairSharing.enable`` (cohort fair sharing: DRS ordering and preemption),
      with ``fair_sharing_preemption_strategies`` (comma-separated, in order; upstream's default
      ``LessThanOrEqualToFinalShare,LessThanInitialShare``);
    - ``admission_fair_sharing``: Kueue's ``admissionFairSharing`` config present (ClusterQueues opt in with
      ``spec.admissionScope``), with ``afs_usage_half_life_seconds`` (``usageHalfLifeTime``) and
      ``afs_usage_sampling_interval_seconds`` (``usageSamplingInterval``, upstream's default 5 min).
    - ``kueue_api_versions``: which ``kueue.x-k8s.io`` versions are served, as a Kueue release serves
      them: ``"both"`` (0.15 to 0.19, the default), ``"v1beta2"`` (0.20 on: ``v1beta1`` paths are 404
      and discovery does not list it) or ``"v1beta1"`` (before 0.15). The visibility API
      (``visibility.kueue.x-k8s.io``) serves the same versions. Objects are stored as ``v1beta2``
      whatever is served, so the plane's own controllers do not change.

    Example:
        >>> ControlPlaneOptions().prometheus_enabled
        True
        >>> ControlPlaneOptions(max_starting_heads=0)
        Traceback (most recent call last):
        ...
        ValueError: max_starting_heads must be at least 1, got 0
    """

    workload_scale: bool = False
    kuberay_enabled: bool = True
    ray_enabled: bool = True
    keda_enabled: bool = True
    prometheus_enabled: bool = True
    max_starting_heads: int = 2
    simulated_job_seconds: float = 1.0
    provisioning_delay_seconds: float = 0.5
    provisioning_failures: int = 0
    wait_for_pods_ready_timeout_seconds: float | None = None
    requeuing_backoff_limit_count: int | None = None
    requeuing_backoff_base_seconds: int = 60
    requeuing_backoff_max_seconds: int = 3600
    wait_for_pods_ready_block_admission: bool = False
    requeuing_timestamp: str = "Eviction"
    fair_sharing: bool = False
    fair_sharing_preemption_strategies: str = "LessThanOrEqualToFinalShare,LessThanInitialShare"
    admission_fair_sharing: bool = False
    afs_usage_half_life_seconds: float = 300.0
    afs_usage_sampling_interval_seconds: float = 300.0
    kueue_api_versions: KueueAPIVersions = "both"

    def __post_init__(self) -> None:
        kueue_served_versions(self.kueue_api_versions)  # a ValueError naming the choices
        if self.max_starting_heads < 1:
            raise ValueError(f"max_starting_heads must be at least 1, got {self.max_starting_heads}")
        if self.simulated_job_seconds < 0:
            raise ValueError(f"simulated_job_seconds must be >= 0, got {self.simulated_job_seconds}")
        if self.provisioning_delay_seconds < 0:
            raise ValueError(
                f"provisioning_delay_seconds must be >= 0, got {self.provisioning_delay_seconds}"
            )
        if self.provisioning_failures < 0:
            raise ValueError(f"provisioning_failures must be >= 0, got {self.provisioning_failures}")
        timeout = self.wait_for_pods_ready_timeout_seconds
        if timeout is not None and timeout <= 0:
            raise ValueError(f"wait_for_pods_ready_timeout_seconds must be > 0 or None, got {timeout}")
        limit = self.requeuing_backoff_limit_count
        if limit is not None and limit < 0:
            raise ValueError(f"requeuing_backoff_limit_count must be >= 0 or None, got {limit}")
        if self.requeuing_backoff_base_seconds < 0 or self.requeuing_backoff_max_seconds < 0:
            raise ValueError(
                "requeuing_backoff_base_seconds and requeuing_backoff_max_seconds must be >= 0, got "
                f"{self.requeuing_backoff_base_seconds} and {self.requeuing_backoff_max_seconds}"
            )
        if self.requeuing_timestamp not in ("Eviction", "Creation"):
            timestamp = self.requeuing_timestamp
            raise ValueError(f"requeuing_timestamp must be Eviction or Creation, got {timestamp!r}")
        allowed = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
        for strategy in self.fair_sharing_preemption_strategies.split(","):
            if strategy not in allowed:
                raise ValueError(
                    f"fair_sharing_preemption_strategies: {strategy!r} is not one of {', '.join(allowed)}"
                )
        if self.afs_usage_half_life_seconds < 0:
            raise ValueError(
                f"afs_usage_half_life_seconds must be >= 0, got {self.afs_usage_half_life_seconds}"
            )
        if self.afs_usage_sampling_interval_seconds <= 0:
            raise ValueError(
                "afs_usage_sampling_interval_seconds must be > 0, "
                f"got {self.afs_usage_sampling_interval_seconds}"
            )


def option_names() -> list[str]:
    """The names of every option, in declaration order.

    Example:
        >>> option_names()[:2]
        ['workload_scale', 'kuberay_enabled']
    """
    return [f.name for f in dataclasses.fields(ControlPlaneOptions)]


def with_overrides(
    options: ControlPlaneOptions, overrides: Mapping[str, Any], *, owner: str = "LocalControlPlane"
) -> ControlPlaneOptions:
    """``options`` with ``overrides`` applied; an unknown name is a ``TypeError`` listing the known ones.

    Example:
        >>> with_overrides(ControlPlaneOptions(), {"ray": False})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        TypeError: LocalControlPlane got an unknown option 'ray'; the options are: workload_scale, ...
    """
    names = option_names()
    unknown = [name for name in overrides if name not in names]
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        raise TypeError(
            f"{owner} got an unknown option{plural} {', '.join(map(repr, unknown))}; "
            f"the options are: {', '.join(names)}"
        )
    return dataclasses.replace(options, **overrides)
