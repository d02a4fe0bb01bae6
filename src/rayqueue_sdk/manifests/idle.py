"""The idle policy's vocabulary, defined once: how a policy scales a cluster to zero and what stops it.

:class:`IdleMode` is the policy's ``mode`` (``IdlePolicy(mode=...)``) and the mode in force on a cluster
(``auto`` is only ever asked for: the policy in force is ``keda`` or ``reaper``). :class:`StopMechanism`
is what scaling to zero writes: the Kueue Workload's ``spec.active=false`` or, for a cluster without a
queue, KubeRay's ``spec.suspend``. Both are ``StrEnum``s, so the JSON annotations and ``--json`` carry
their plain values. Pure: no I/O.

Example:
    >>> IdleMode("keda") is IdleMode.KEDA, str(StopMechanism.WORKLOAD)
    (True, 'workload')
    >>> [m.value for m in IdleMode]
    ['auto', 'keda', 'reaper']
"""

from __future__ import annotations

import enum
from typing import Literal

__all__ = ["IdleMode", "IdleModeName", "IdleSignal", "StopMechanism"]


class IdleMode(enum.StrEnum):
    """How a cluster is scaled to zero: KEDA on the Workload's ``/scale``, the in-cluster reaper, or
    whichever the cluster supports (``auto``: KEDA where served).

    Example:
        >>> IdleMode.REAPER == "reaper"
        True
    """

    AUTO = "auto"
    KEDA = "keda"
    REAPER = "reaper"


#: :class:`IdleMode`'s values as a type, for code that passes a plain string (``IdlePolicy(mode="keda")``)
#: and is type-checked; tests/sdk/unit/scaling/test_idle_state.py keeps it equal to the enum's values.
IdleModeName = Literal["auto", "keda", "reaper"]


#: What tells a cluster is idle (``IdlePolicy(idle_signal=...)``): the GPUs' use, Ray's jobs, or both.
IdleSignal = Literal["gpu", "jobs", "gpu_and_jobs"]


class StopMechanism(enum.StrEnum):
    """What scaling to zero writes: the Workload's ``spec.active=false`` (the quota goes back to the queue)
    or the RayCluster's ``spec.suspend`` (a cluster without a Kueue queue).

    Example:
        >>> StopMechanism.SUSPEND.describe()
        'RayCluster spec.suspend'
    """

    WORKLOAD = "workload"
    SUSPEND = "suspend"

    def describe(self) -> str:
        """The field written, in words."""
        return "Workload spec.active=false" if self is StopMechanism.WORKLOAD else "RayCluster spec.suspend"
