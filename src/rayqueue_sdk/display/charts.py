"""Pictures for notebooks: the usage chart, the GPU-utilisation sparkline, the queue timeline.

Each picture is a :class:`Picture` with a ``text/plain`` form (bars of block characters, fit for 80
columns and for a saved notebook read as text) and a ``text/html`` form that survives saving: an inline
SVG for the sparkline (light enough for the cluster card), and for the charts a PNG drawn by matplotlib
and embedded as base64 when matplotlib is installed (the optional extra ``rayqueue_sdk[plot]``), else an
HTML table with CSS bars. matplotlib is imported only when a chart is drawn.

* :func:`usage_chart` - allocated vs busy vs reclaimed GPU-hours per cluster (a
  :class:`~rayqueue_sdk.admission.usage.UsageReport`), or per namespace, LocalQueue or ClusterQueue
  (``by=``, or a :class:`~rayqueue_sdk.admission.rollup.Rollup`);
* :func:`sparkline` - GPU utilisation samples (0-100) with the idle countdown beside them;
* :func:`queue_timeline` - :class:`TimelineRow` s: admitted workloads from their admission to their
  expected release, pending ones over their admission window (an open end where nothing bounds it).

Example:
    >>> print(sparkline([0, 50, 100], countdown="idle 2 of 30 min").text)
    GPU ▁▅█ 100% now (idle 2 of 30 min)
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html import escape
from typing import Any, Literal

from rayqueue_sdk.admission.rollup import Rollup, rollup
from rayqueue_sdk.admission.usage import UsageReport

__all__ = ["Picture", "TimelineRow", "matplotlib_available", "queue_timeline", "sparkline", "usage_chart"]

_BLOCKS = "▁▂▃▄▅▆▇█"
_COLOURS = {"allocated": "#0969da", "busy": "#1a7f37", "reclaimed": "#8250df", "pending": "#9a6700"}


@dataclass(frozen=True)
class Picture:
    """A picture with the forms a notebook saves: ``text`` (plain) and ``html``; ``png`` when drawn.

    Example:
        >>> p = Picture("a chart", "<b>a chart</b>")
        >>> sorted(p._repr_mimebundle_())
        ['text/html', 'text/plain']
    """

    text: str
    html: str
    png: bytes | None = None

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text, "text/html": self.html}

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def save(self, path: str) -> None:
        """Write the PNG (when drawn) or the HTML form to ``path``."""
        with open(path, "wb") as fh:
            fh.write(self.png if self.png is not None else self.html.encode())


def matplotlib_available() -> bool:
    """Whether matplotlib can be imported (the ``plot`` extra).

    Example:
        >>> isinstance(matplotlib_available(), bool)
        True
    """
    try:
        import matplotlib  # noqa: F401  # lazy: the optional plotting extra, only probed when drawing
    except ImportError:
        return False
    return True


def _figure_png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt  # lazy: the optional plotting extra, loaded only to draw

    plt.close(fig)
    return buf.getvalue()


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode()
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}"/>'


def _pyplot() -> Any:
    import matplotlib  # lazy: the optional plotting extra, loaded only to draw

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt  # lazy: the optional plotting extra, loaded only to draw

    return plt


def _bar(value: float, top: float, width: int = 20) -> str:
    n = 0 if top <= 0 else round(width * value / top)
    return "█" * n


def _css_bar(value: float | None, top: float, colour: str) -> str:
    if value is None:
        return "<span style='color:#57606a'>no metrics</span>"
    pct = 0 if top <= 0 else max(0.0, min(100.0, 100 * value / top))
    return (
        f"<div style='display:flex;align-items:center;gap:6px'><div style='background:{colour};height:10px;"
        f"width:{pct * 1.6:.1f}px'></div><span>{value:.3f}</span></div>"
    )


@dataclass(frozen=True)
class _Bars:
    """One chart row: its short and full labels and its three figures."""

    short: str
    label: str
    allocated: float
    busy: float | None
    reclaimed: float


def _bars(report: UsageReport | Rollup) -> list[_Bars]:
    if isinstance(report, Rollup):
        return [
            _Bars(r.group, r.group, r.gpu_hours_allocated, r.gpu_hours_busy, r.gpu_hours_reclaimed)
            for r in report.rows
        ]
    return [
        _Bars(
            r.name, f"{r.namespace}/{r.name}", r.gpu_hours_allocated, r.gpu_hours_busy, r.gpu_hours_reclaimed
        )
        for r in report.rows
    ]


def usage_chart(report: UsageReport | Rollup, *, by: str | None = None, draw: bool = True) -> Picture:
    """Allocated vs busy vs reclaimed GPU-hours per cluster of ``report``, or per group of a roll-up
    (``by="namespace"``, ``"queue"``, ``"cluster-queue"``, or a
    :class:`~rayqueue_sdk.admission.rollup.Rollup`).

    ``draw=False`` (or no matplotlib) gives the HTML table with CSS bars instead of the PNG.

    Example:
        >>> from rayqueue_sdk.admission.usage import UsageRow
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> r = UsageReport(t, t + timedelta(days=1), (UsageRow("ds", "ws", "q", 4.0, 1.0, 2.0),))
        >>> print(usage_chart(r, draw=False).text.splitlines()[2])
        ws      allocated ████████████████████ 4.000
        >>> print(usage_chart(r, by="queue", draw=False).text.splitlines()[0])
        GPU-hours by queue 2026-01-01 00:00 - 2026-01-02 00:00 UTC
    """
    if by is not None and isinstance(report, UsageReport):
        report = rollup(report, by)
    rows = _bars(report)
    column = report.by if isinstance(report, Rollup) else "cluster"
    top = max([r.allocated for r in rows] + [r.reclaimed for r in rows] + [0.0])
    per = f" by {column}" if column != "cluster" else ""
    title = f"GPU-hours{per} {report.since:%Y-%m-%d %H:%M} - {report.until:%Y-%m-%d %H:%M} UTC"
    lines = [title, ""]
    width = min(20, max([len(r.short) for r in rows] + [7]))
    for r in rows:
        busy = "no metrics" if r.busy is None else f"{_bar(r.busy, top)} {r.busy:.3f}"
        lines += [
            f"{r.short[:width]:{width}} allocated {_bar(r.allocated, top)} {r.allocated:.3f}",
            f"{'':{width}} busy      {busy}",
            f"{'':{width}} reclaimed {_bar(r.reclaimed, top)} {r.reclaimed:.3f}",
        ]
    if not rows:
        lines.append("(no cluster held GPUs in this window)")
    lines += [f"note: {n}" for n in report.notes]
    text = "\n".join(lines)
    png = _draw_usage(rows) if draw and rows and matplotlib_available() else None
    if png is not None:
        body = _img(png, title)
    else:
        cells = "".join(
            f"<tr><td>{escape(r.label)}</td>"
            f"<td>{_css_bar(r.allocated, top, _COLOURS['allocated'])}</td>"
            f"<td>{_css_bar(r.busy, top, _COLOURS['busy'])}</td>"
            f"<td>{_css_bar(r.reclaimed, top, _COLOURS['reclaimed'])}</td></tr>"
            for r in rows
        )
        body = (
            f"<table class='rayqueue-usage'><tr><th>{escape(column)}</th><th>allocated</th><th>busy</th>"
            f"<th>reclaimed</th></tr>{cells}</table>"
        )
    notes = "".join(f"<div style='color:#57606a'>{escape(n)}</div>" for n in report.notes)
    html = f"<div class='rayqueue-usage-chart'><h4>{escape(title)}</h4>{body}{notes}</div>"
    return Picture(text, html, png)


def _draw_usage(rows: list[_Bars]) -> bytes:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.55 * len(rows)))
    height = 0.26
    for i, r in enumerate(rows):
        y = len(rows) - 1 - i
        ax.barh(
            y + height,
            r.allocated,
            height,
            color=_COLOURS["allocated"],
            label="allocated" if i == 0 else None,
        )
        if r.busy is not None:
            ax.barh(y, r.busy, height, color=_COLOURS["busy"], label="busy" if i == 0 else None)
        else:
            ax.text(0, y, " busy: no metrics", va="center", fontsize=8, color="#57606a")
        ax.barh(
            y - height,
            r.reclaimed,
            height,
            color=_COLOURS["reclaimed"],
            label="reclaimed" if i == 0 else None,
        )
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r.label for r in reversed(rows)])
    ax.set_xlabel("GPU-hours")
    # no title in the picture: its HTML form heads it (a second title would repeat it)
    ax.legend(loc="lower right", fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    return _figure_png(fig)


def sparkline(
    values: Sequence[float], *, countdown: str | None = None, width: int = 160, height: int = 28
) -> Picture:
    """GPU utilisation samples (percent, oldest first) as a sparkline, with the idle countdown beside it.

    An inline SVG (no plotting library): light enough for the cluster card. No samples: an empty picture
    saying so (the card then shows none).

    Example:
        >>> "<svg" in sparkline([10, 90]).html, sparkline([]).text
        (True, 'GPU utilisation: no metrics')
    """
    vals = [max(0.0, min(100.0, float(v))) for v in values]
    if not vals:
        return Picture("GPU utilisation: no metrics", "<span>GPU utilisation: no metrics</span>")
    blocks = "".join(_BLOCKS[min(len(_BLOCKS) - 1, int(v / 100 * len(_BLOCKS)))] for v in vals[-40:])
    tail = f" ({countdown})" if countdown else ""
    text = f"GPU {blocks} {vals[-1]:.0f}% now{tail}"
    n = len(vals)
    step = width / max(1, n - 1)
    points = " ".join(f"{i * step:.1f},{height - 2 - v / 100 * (height - 4):.1f}" for i, v in enumerate(vals))
    svg = (
        f'<svg class="rayqueue-sparkline" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="GPU utilisation, {vals[-1]:.0f}% now">'
        f'<rect width="{width}" height="{height}" fill="#f6f8fa"/>'
        f'<polyline fill="none" stroke="{_COLOURS["busy"]}" stroke-width="1.5" points="{points}"/></svg>'
    )
    html = (
        f"<span style='display:inline-flex;align-items:center;gap:6px'>{svg}"
        f"<span>{vals[-1]:.0f}% now{escape(tail)}</span></span>"
    )
    return Picture(text, html)


@dataclass(frozen=True)
class TimelineRow:
    """One workload on the queue timeline.

    ``kind="admitted"``: it holds quota from ``start`` until ``end`` (its expected release; ``None``: nothing
    bounds it). ``kind="pending"``: it waits since ``start``; ``window`` is its admission estimate
    ``(earliest, latest)`` (either may be ``None``), or ``None`` when there is no estimate.

    Example:
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> TimelineRow("ws", t, None, "admitted").kind
        'admitted'
    """

    name: str
    start: datetime
    end: datetime | None
    kind: Literal["admitted", "pending"]
    window: tuple[datetime | None, datetime | None] | None = None
    note: str = ""


def _hm(t: datetime | None) -> str:
    return "?" if t is None else f"{t.astimezone(UTC):%H:%M}"


def queue_timeline(rows: Sequence[TimelineRow], *, now: datetime | None = None, draw: bool = True) -> Picture:
    """A queue as a timeline: admitted workloads until their expected release, pending ones over their
    admission window (dashed where an end is open: nothing bounds it).

    Example:
        >>> t = datetime(2026, 1, 1, 14, tzinfo=UTC)
        >>> rows = [TimelineRow("first", t - timedelta(hours=1), t + timedelta(minutes=30), "admitted"),
        ...         TimelineRow("second", t - timedelta(minutes=5), None, "pending",
        ...                     (t + timedelta(minutes=30), None))]
        >>> print(queue_timeline(rows, now=t, draw=False).text)
        queue timeline (UTC, now 14:00)
        first      admitted 13:00 -> releases 14:30
        second     pending since 13:55, admission window 14:30 - ? (open end)
    """
    now = now or datetime.now(UTC)
    lines = [f"queue timeline (UTC, now {_hm(now)})"]
    width = min(30, max([len(r.name) for r in rows] + [10]))
    for r in rows:
        if r.kind == "admitted":
            release = f"releases {_hm(r.end)}" if r.end else "release not bounded"
            line = f"{r.name[:width]:{width}} admitted {_hm(r.start)} -> {release}"
        elif r.window is None:
            line = f"{r.name[:width]:{width}} pending since {_hm(r.start)}, no estimate"
        else:
            open_end = " (open end)" if r.window[1] is None else ""
            line = (
                f"{r.name[:width]:{width}} pending since {_hm(r.start)}, admission window "
                f"{_hm(r.window[0])} - {_hm(r.window[1])}{open_end}"
            )
        lines.append(line + (f"; {r.note}" if r.note else ""))
    if not rows:
        lines.append("(nothing admitted or pending)")
    text = "\n".join(lines)
    png = _draw_timeline(rows, now) if draw and rows and matplotlib_available() else None
    if png is not None:
        body = _img(png, lines[0])
    else:
        body = (
            "<table class='rayqueue-timeline'>"
            + "".join(
                f"<tr><td style='color:{_COLOURS['allocated' if r.kind == 'admitted' else 'pending']}'>"
                f"{escape(line)}</td></tr>"
                for r, line in zip(rows, lines[1:], strict=False)
            )
            + "</table>"
        )
    return Picture(text, f"<div class='rayqueue-queue-timeline'><h4>{escape(lines[0])}</h4>{body}</div>", png)


def _draw_timeline(rows: Sequence[TimelineRow], now: datetime) -> bytes:
    plt = _pyplot()
    import matplotlib.dates as matplotlib_dates  # lazy: the optional plotting extra, loaded only to draw

    mdates: Any = matplotlib_dates  # partly untyped upstream

    known = [t for r in rows for t in (r.start, r.end, *(r.window or ())) if t is not None] + [now]
    left, right = min(known), max(known)
    right = right + max((right - left) * 0.15, timedelta(minutes=5))
    fig, ax = plt.subplots(figsize=(7.5, 0.7 + 0.45 * len(rows)))
    for i, r in enumerate(rows):
        y = len(rows) - 1 - i
        if r.kind == "admitted":
            end = r.end or right
            ax.barh(
                y,
                mdates.date2num(end) - mdates.date2num(r.start),
                left=mdates.date2num(r.start),
                height=0.5,
                color=_COLOURS["allocated"],
                hatch=None if r.end else "//",
                alpha=0.9,
            )
            label = f"release {_hm(r.end)}" if r.end else "release not bounded"
            ax.text(mdates.date2num(end), y, f" {label}", va="center", fontsize=8)
        else:
            ax.barh(
                y,
                mdates.date2num(now) - mdates.date2num(r.start),
                left=mdates.date2num(r.start),
                height=0.2,
                color="#d0d7de",
            )
            if r.window is not None:
                lo = r.window[0] or now
                hi = r.window[1] or right
                ax.barh(
                    y,
                    mdates.date2num(hi) - mdates.date2num(lo),
                    left=mdates.date2num(lo),
                    height=0.5,
                    color=_COLOURS["pending"],
                    alpha=0.35 if r.window[1] is None else 0.7,
                    hatch="//" if r.window[1] is None else None,
                    edgecolor=_COLOURS["pending"],
                )
                ax.text(
                    mdates.date2num(lo), y + 0.32, f"ETA {_hm(r.window[0])} - {_hm(r.window[1])}", fontsize=8
                )
            else:
                ax.text(mdates.date2num(now), y, " no estimate", va="center", fontsize=8)
    ax.axvline(mdates.date2num(now), color="#cf222e", linewidth=1)
    ax.text(mdates.date2num(now), len(rows) - 0.4, " now", color="#cf222e", fontsize=8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{r.name} ({r.kind})" for r in reversed(rows)])
    ax.set_xlim(mdates.date2num(left), mdates.date2num(right))
    ax.set_ylim(-0.6, len(rows) - 0.2)
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M", tz=UTC))
    # no title in the picture: its HTML form heads it (a second title would repeat it)
    ax.spines[["top", "right"]].set_visible(False)
    return _figure_png(fig)
