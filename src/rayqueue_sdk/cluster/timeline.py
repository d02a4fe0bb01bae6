"""The path ``rayqueue_sdk.cluster.timeline`` that earlier docs showed: the queue timeline now lives in
:mod:`rayqueue_sdk.queues.timeline`, with the rest of the queue read path; this module re-exports it so
code written against the old path keeps working.

Example:
    >>> from rayqueue_sdk.cluster.timeline import queue_timeline_rows
    >>> from rayqueue_sdk.queues import timeline
    >>> queue_timeline_rows is timeline.queue_timeline_rows
    True
"""

from __future__ import annotations

from rayqueue_sdk.queues.timeline import queue_timeline_rows, timeline_rows

__all__ = ["queue_timeline_rows", "timeline_rows"]
