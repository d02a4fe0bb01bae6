"""Plain-text renderings: the ``text/plain`` of every notebook display and the ``repr`` of a status.

Short blocks that fit 80 columns, no colours and no markup, so a saved notebook, ``nbconvert --to
markdown`` or a log shows the last state readably. The rich (:mod:`.console`) and HTML (:mod:`.widgets`)
renderings say the same things.

Example:
    >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
    >>> st = ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued in LocalQueue 'q' at position 0",
    ...                    queue="q", position=0, reason="Pending", priority_class="rd-priority")
    >>> print(status_text(st))
    ds/ws: queued (Pending)
      queued in LocalQueue 'q' at position 0
      queue q, position 0, priority rd-priority
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from rayqueue_sdk.display.console import idle_line, phase_text, workers_text
from rayqueue_sdk.display.views import DetailsView, StatusView

__all__ = ["WIDTH", "clusters_text", "details_text", "status_text"]

#: The width every plain-text block fits in.
WIDTH = 80


def _wrap(text: str, indent: str = "  ") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ") or [indent]


def status_text(status: StatusView) -> str:
    """A few lines: the phase with Kueue's reason, the explanation, queue/position/priority, workers,
    Kueue's message (when the explanation does not already quote it) and the addresses.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> st = ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready (2/2 workers ready)",
        ...                    workers_ready=2, workers_desired=2, dashboard_url="http://127.0.0.1:8265")
        >>> print(status_text(st))
        ds/ws: ready
          ready (2/2 workers ready)
          workers 2/2
          dashboard http://127.0.0.1:8265
        >>> import dataclasses, time
        >>> from rayqueue_sdk.cluster.status import IdleStatus
        >>> clock = IdleStatus("reaper", "workload", 60, "gpu", idle_since=time.time() - 12 * 60)
        >>> idle = dataclasses.replace(st, idle=clock)
        >>> print(status_text(idle).splitlines()[-1])
          scale to zero: reaper mode: idle 12 of 60 min
    """
    lines = [f"{status.namespace}/{status.name}: {phase_text(status)}"]
    lines += _wrap(status.explanation)
    where = []
    if status.queue:
        where.append(f"queue {status.queue}")
    if status.position is not None:
        where.append(f"position {status.position}")
    if status.priority_class:
        where.append(f"priority {status.priority_class}")
    if where:
        lines += _wrap(", ".join(where))
    if status.eta is not None:
        lines += _wrap(f"estimated admission: {status.eta.text()}")
    if status.workers_desired is not None:
        lines.append(f"  workers {workers_text(status)}")
    if status.message and status.message not in status.explanation:
        lines += _wrap(f"Kueue: {status.message}")
    if status.dashboard_url and status.ready:
        lines.append(f"  dashboard {status.dashboard_url}")
    idle = idle_line(status)
    if idle:
        lines += _wrap(f"scale to zero: {idle}")
    return "\n".join(lines)


def details_text(details: DetailsView) -> str:
    """:func:`status_text` followed by one line per group (the head first) and the GPUs asked for.

    Example:
        >>> from rayqueue_sdk.cluster.observe import summarize
        >>> d = summarize({"metadata": {"name": "ws", "namespace": "ds"}, "spec": {"workerGroupSpecs": [
        ...     {"groupName": "gpu", "replicas": 2, "rayStartParams": {"num-gpus": "1"}}]}})
        >>> print(details_text(d).splitlines()[-1])
          gpu: 2 replicas, 1 GPU each
    """
    lines = [status_text(details.status), f"shape ({details.gpus} GPUs):"]
    for g in ([details.head] if details.head else []) + list(details.groups):
        bounds = f" ({g.min_replicas}..{g.max_replicas})" if g.min_replicas is not None else ""
        what = [f"{g.replicas} replica{'s' if g.replicas != 1 else ''}{bounds}"]
        what += [f"cpu {g.cpu}"] if g.cpu else []
        what += [f"memory {g.memory}"] if g.memory else []
        what += [f"{g.gpus} GPU each"] if g.gpus else []
        lines.append(f"  {g.name}: {', '.join(what)}")
    return "\n".join(lines)


def clusters_text(statuses: Sequence[StatusView], gpus: dict[str, int] | None = None) -> str:
    """One line per cluster: name, phase (with Kueue's reason), position, workers, GPUs.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> print(clusters_text([ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "x", position=1)]))
        name                      phase                          position  workers  GPUs
        ws                        queued                         1         -        -
        >>> clusters_text([])
        'no Ray clusters'
    """
    if not statuses:
        return "no Ray clusters"
    rows = [("name", "phase", "position", "workers", "GPUs")]
    for st in statuses:
        position = "-" if st.position is None else str(st.position)
        rows.append(
            (st.name, phase_text(st), position, workers_text(st), str((gpus or {}).get(st.name, "-")))
        )
    return "\n".join(f"{n[:25]:<26}{p[:30]:<31}{pos:<10}{wk:<9}{g}".rstrip() for n, p, pos, wk, g in rows)
