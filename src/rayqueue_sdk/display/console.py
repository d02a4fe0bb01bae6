"""Rich renderings for a console: one cluster's status and shape, a table of clusters, the live wait line.

``rich`` is imported lazily, inside the functions that render (it costs ~30 ms). The renderables are
plain ``rich`` objects, so callers can print them to any ``rich.console.Console`` (tests record one
to a string).

Example:
    >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
    >>> st = ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued in LocalQueue 'q' at position 0",
    ...                    queue="q", position=0, reason="Pending", message="couldn't assign flavors")
    >>> text = render_text(clusters_table([st]), width=120)
    >>> "queued (Pending)" in text and "ws" in text
    True
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from rayqueue_sdk.display.environment import is_terminal
from rayqueue_sdk.display.views import DetailsView, StatusView

__all__ = [
    "PHASE_STYLES",
    "clusters_table",
    "details_panel",
    "idle_cell",
    "idle_line",
    "phase_text",
    "print_details",
    "print_clusters",
    "progress_line",
    "render_text",
    "status_panel",
    "workers_text",
]

#: rich style per phase value.
PHASE_STYLES = {
    "ready": "bold green",
    "starting": "yellow",
    "admitted": "yellow",
    "queued": "cyan",
    "preempted": "bold red",
    "deactivated": "magenta",
    "failed": "bold red",
    "deleted": "dim",
    "unknown": "dim",
}


def idle_line(status: StatusView) -> str | None:
    """The idle policy's line for a status block (``None``: no policy), without repeating the
    explanation: a cluster scaled to zero already says when and how to resume there, so only the
    mode is left.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase, IdleStatus
        >>> idle_line(ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready",
        ...                         idle=IdleStatus("keda", "workload", 60, "gpu", decision="busy")))
        'keda mode: scale to zero after 60 idle min (busy)'
        >>> gone = IdleStatus("keda", "workload", 60, "gpu", scaled_to_zero=True)
        >>> idle_line(ClusterStatus("ws", "ds", ClusterPhase.DEACTIVATED, False, gone.describe(), idle=gone))
        'keda mode'
    """
    idle = status.idle
    if idle is None:
        return None
    if idle.scaled_to_zero and status.explanation == idle.describe():
        return f"{idle.mode} mode"
    return idle.text()


def idle_cell(status: StatusView, now: float | None = None) -> str:
    """The idle policy in a table cell: ``"-"`` (none), ``"keda: idle 12/60 min"``, ``"reaper: waiting"``
    or ``"keda: scaled to zero 14:02 UTC"``.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase, IdleStatus
        >>> st = ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready",
        ...                    idle=IdleStatus("reaper", "workload", 60, "gpu", idle_since=0.0))
        >>> idle_cell(st, now=720.0)
        'reaper: idle 12/60 min'
        >>> idle_cell(ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready"))
        '-'
    """
    idle = status.idle
    if idle is None:
        return "-"
    if idle.scaled_to_zero:
        when = "" if idle.scaled_at is None else time.strftime(" %H:%M UTC", time.gmtime(idle.scaled_at))
        return f"{idle.mode}: scaled to zero{when}"
    seconds = idle.idle_seconds(now)
    if seconds is None:
        return f"{idle.mode}: {idle.state}"
    return f"{idle.mode}: idle {idle.minutes(seconds)}/{idle.idle_minutes:g} min"


def phase_text(status: StatusView) -> str:
    """The phase with Kueue's reason, e.g. ``"queued (Pending)"``.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> st = ClusterStatus("a", "b", ClusterPhase.PREEMPTED, False, "x", reason="InCohortReclamation")
        >>> phase_text(st)
        'preempted (InCohortReclamation)'
    """
    phase = status.phase.value
    if status.reason and status.reason != "Unknown" and not status.ready:  # KubeRay's "Unknown" says nothing
        return f"{phase} ({status.reason})"
    return phase


def workers_text(status: StatusView) -> str:
    """Workers ready out of desired, e.g. ``"1/2"``; ``"-"`` when the cluster does not say.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> st = ClusterStatus("a", "b", ClusterPhase.STARTING, False, "x", workers_desired=2)
        >>> workers_text(st), workers_text(ClusterStatus("a", "b", ClusterPhase.QUEUED, False, "x"))
        ('0/2', '-')
    """
    if status.workers_desired is None:
        return "-"
    return f"{status.workers_ready or 0}/{status.workers_desired}"


def clusters_table(statuses: Sequence[StatusView], gpus: dict[str, int] | None = None) -> Any:
    """A ``rich.table.Table``: name, queue, phase (with Kueue's reason), position, workers, GPUs, the idle
    policy (:func:`idle_cell`), dashboard.

    Example:
        >>> clusters_table([]).row_count
        0
    """
    # lazy: rich costs ~30 ms, paid only when something is shown
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Ray clusters", show_lines=False)
    for column in ("name", "queue", "phase", "position", "workers", "GPUs", "idle", "dashboard"):
        table.add_column(column, no_wrap=column in ("name", "position", "workers", "GPUs"), overflow="fold")
    for st in statuses:
        style = PHASE_STYLES.get(st.phase.value, "")
        cells = [
            st.name,
            st.queue or "-",
            phase_text(st),
            "-" if st.position is None else str(st.position),
            workers_text(st),
            str((gpus or {}).get(st.name, "-")),
            idle_cell(st),
            st.dashboard_url or "-",
        ]
        table.add_row(*[Text(c, style=style if i == 2 else "") for i, c in enumerate(cells)])
    return table


def status_panel(status: StatusView) -> Any:
    """A ``rich.panel.Panel`` with everything :class:`StatusView` says.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> "ready" in render_text(status_panel(ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready")))
        True
    """
    # lazy: rich costs ~30 ms, paid only when something is shown
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    rows: list[tuple[str, str | None]] = [
        ("phase", phase_text(status)),
        ("explanation", status.explanation),
        ("queue", status.queue),
        ("priority", status.priority_class),
        ("cluster queue", status.cluster_queue),
        ("position", None if status.position is None else str(status.position)),
        ("position n/a", status.position_unavailable),
        ("Kueue message", status.message),
        ("workers", workers_text(status) if status.workers_desired is not None else None),
        ("workload", status.workload),
        ("dashboard", status.dashboard_url),
        ("ray client", status.cluster_uri),
        ("scale to zero", idle_line(status)),
    ]
    for label, value in rows:
        if value:
            grid.add_row(label, Text(value))
    style = PHASE_STYLES.get(status.phase.value, "")
    return Panel(grid, title=f"{status.namespace}/{status.name}", border_style=style or "none")


def details_panel(details: DetailsView) -> Any:
    """The status panel followed by a table of the head and every worker group.

    Example:
        >>> from rayqueue_sdk.cluster.observe import summarize
        >>> d = summarize({"metadata": {"name": "ws", "namespace": "ds"}, "spec": {"workerGroupSpecs": [
        ...     {"groupName": "gpu", "replicas": 2, "rayStartParams": {"num-gpus": "1"}}]}})
        >>> "gpu" in render_text(details_panel(d))
        True
    """
    # lazy: rich costs ~30 ms, paid only when something is shown
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"shape ({details.gpus} GPUs)")
    for column in ("group", "replicas", "min..max", "CPU", "memory", "GPUs"):
        table.add_column(column)
    for g in ([details.head] if details.head else []) + list(details.groups):
        bounds = f"{g.min_replicas}..{g.max_replicas}" if g.min_replicas is not None else "-"
        cells = (g.name, str(g.replicas), bounds, g.cpu or "-", g.memory or "-", str(g.gpus))
        table.add_row(*[Text(c) for c in cells])
    return Group(status_panel(details.status), table)


def render_text(renderable: Any, width: int = 100) -> str:
    """A renderable as plain text (no colours), e.g. for tests and logs.

    Example:
        >>> render_text("hello")
        'hello\\n'
    """
    from rich.console import Console  # lazy: rich costs ~30 ms, paid only when something is shown

    console = Console(width=width, record=True, color_system=None, force_terminal=False, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def print_details(details: DetailsView, console: Any = None) -> None:
    """Print :func:`details_panel` to ``console`` (default: a new rich console on stdout).

    Example:
        >>> from io import StringIO
        >>> from rich.console import Console
        >>> from rayqueue_sdk.cluster.observe import summarize
        >>> out = Console(file=StringIO(), width=100)
        >>> print_details(summarize({"metadata": {"name": "ws", "namespace": "ds"}, "spec": {}}), console=out)
        >>> "ds/ws" in out.file.getvalue() and "shape (0 GPUs)" in out.file.getvalue()
        True

        On a cluster (not run here)::

            print_details(cluster.details(show=False))
    """
    # lazy: rich costs ~30 ms, paid only when something is shown
    from rich.console import Console

    (console or Console()).print(details_panel(details))


def print_clusters(
    statuses: Sequence[StatusView], gpus: dict[str, int] | None = None, console: Any = None
) -> None:
    """Print :func:`clusters_table`.

    Example:
        >>> from io import StringIO
        >>> from rich.console import Console
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> out = Console(file=StringIO(), width=100)
        >>> print_clusters([ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued")], console=out)
        >>> "Ray clusters" in out.file.getvalue() and "queued" in out.file.getvalue()
        True

        On a namespace's clusters (not run here)::

            print_clusters(list_clusters("ds-team"))
    """
    # lazy: rich costs ~30 ms, paid only when something is shown
    from rich.console import Console

    (console or Console()).print(clusters_table(statuses, gpus))


@contextlib.contextmanager
def progress_line(show: bool | None = None, console: Any = None) -> Iterator[Callable[[StatusView], None]]:
    """A context giving an ``on_progress`` callback that keeps one live line with the latest status.

    ``show=None``: only when stderr is a terminal (logging reports progress anyway); ``False``: never.

    Example:
        >>> with progress_line(show=False) as update:
        ...     update  # doctest: +ELLIPSIS
        <function ...>
    """
    if show is False or (show is None and not is_terminal()):
        yield lambda _status: None
        return
    # lazy: rich costs ~30 ms, paid only when something is shown
    from rich.console import Console
    from rich.status import Status
    from rich.text import Text

    spinner = Status("waiting for the cluster ...", console=console or Console(stderr=True))

    def update(status: StatusView) -> None:
        style = PHASE_STYLES.get(status.phase.value, "")
        text = f"{status.namespace}/{status.name}: {status.explanation}"
        if status.eta is not None:
            text += f" (estimated admission: {status.eta.text()})"
        spinner.update(Text(text, style=style))

    with spinner:
        yield update
