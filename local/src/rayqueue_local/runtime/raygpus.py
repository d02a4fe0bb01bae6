"""Which Ray worker processes hold which GPU ids, asked of the head's raylet (no GPU needed).

Ray gives a task or an actor its GPUs at run time: the worker process that runs a
``@ray.remote(num_gpus=1)`` task, an actor with ``num_gpus``, or a Ray Train worker
(``ScalingConfig(use_gpu=True)``) was started long before, with no ``CUDA_VISIBLE_DEVICES`` of its
own, and sets it for itself when Ray hands it the work. Its ``/proc/<pid>/environ`` never shows it.
The raylet knows: its ``GetNodeStats`` answer lists every core worker with its pid and the resource
slots it uses now (``used_resources["GPU"].resource_slots[].slot``, the ids ``ray.get_gpu_ids()``
returns in that worker). Work in a placement group (every Ray Train worker, Ray Tune trials) uses
the group's resources instead, ``GPU_group_<bundle>_<group id>`` and ``GPU_group_<group id>``, whose
slots are the same GPU ids. That is the question Ray's own dashboard asks of each node.

:class:`RayletGpuHolders` finds the raylet from the head's dashboard (``/nodes?view=summary``, once
per head: the address does not change while the head lives) and asks it over gRPC with Ray's own
generated stubs. Anything that fails (a head starting or gone, a raylet busy) reads as "nobody holds
a GPU": this is a signal for the emulated exporter, which then falls back to what ``/proc`` shows,
and it is logged once per head.

Example:
    >>> holders_from_reply([])
    {}
    >>> holders_from_reply([(101, {"GPU": [0, 1]}), (102, {"CPU": [0]}), (103, {"GPU": [1]})])
    {101: frozenset({0, 1}), 103: frozenset({1})}
    >>> holders_from_reply([(104, {"GPU_group_0_bd": [1], "GPU_group_bd": [1], "bundle_group_bd": [0]})])
    {104: frozenset({1})}
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.request
from collections.abc import Iterable, Mapping, Sequence

import grpc
from ray.core.generated import node_manager_pb2, node_manager_pb2_grpc

log = logging.getLogger(__name__)

__all__ = ["RayletGpuHolders", "WorkerSlots", "holders_from_reply"]

#: What a raylet's answer says of one worker: its pid and resource name -> the slots (ids) it uses.
WorkerSlots = tuple[int, Mapping[str, Sequence[int]]]


def holders_from_reply(workers: Iterable[WorkerSlots]) -> dict[int, frozenset[int]]:
    """Pid -> the GPU ids that worker uses now, for workers that use any (pure).

    Example:
        >>> holders_from_reply([(7, {"GPU": [3]})])
        {7: frozenset({3})}
    """
    held: dict[int, frozenset[int]] = {}
    for pid, slots in workers:
        gpus = frozenset(
            int(slot)
            for name, ids in slots.items()
            if name == "GPU" or name.startswith("GPU_group_")
            for slot in ids
        )
        if pid > 0 and gpus:
            held[pid] = gpus
    return held


class RayletGpuHolders:
    """Asks a head's raylet which of its worker processes hold which GPU ids.

    ``holders(dashboard_url)`` returns pid -> GPU ids (empty when nothing holds a GPU or the raylet
    cannot be asked). ``timeout`` bounds each request (the dashboard read and the gRPC call); an
    answer is kept ``max_age`` seconds, so a scrape that asks for every GPU of a head asks once.

    Example:
        >>> RayletGpuHolders(timeout=0.2).holders("http://127.0.0.1:9")
        {}
    """

    def __init__(self, *, timeout: float = 2.0, max_age: float = 1.0) -> None:
        self.timeout = timeout
        self.max_age = max_age
        self._lock = threading.Lock()
        self._answers: dict[str, tuple[float, dict[int, frozenset[int]]]] = {}
        self._raylets: dict[str, str] = {}  # dashboard url -> raylet "host:port"
        self._warned: set[str] = set()

    def holders(self, dashboard_url: str) -> dict[int, frozenset[int]]:
        """Pid -> GPU ids of every worker of that head's raylet that uses GPUs now."""
        now = time.monotonic()
        with self._lock:
            kept = self._answers.get(dashboard_url)
        if kept is not None and now - kept[0] < self.max_age:
            return dict(kept[1])
        try:
            address = self._raylet(dashboard_url)
            with grpc.insecure_channel(address) as channel:
                stub = node_manager_pb2_grpc.NodeManagerServiceStub(channel)
                # protobuf's generated classes are made at import time: no stubs for mypy to read
                request = node_manager_pb2.GetNodeStatsRequest(include_memory_info=False)  # type: ignore[attr-defined]
                reply = stub.GetNodeStats(request, timeout=self.timeout)
        except (OSError, ValueError, KeyError, IndexError, TypeError, grpc.RpcError) as err:
            with self._lock:
                self._raylets.pop(dashboard_url, None)  # the head may have restarted elsewhere
                first = dashboard_url not in self._warned
                self._warned.add(dashboard_url)
            (log.info if first else log.debug)(
                "raylet behind %s not asked which workers hold GPUs (%s)", dashboard_url, err
            )
            return {}
        held = holders_from_reply(
            (
                int(stats.pid),
                {
                    name: [slot.slot for slot in used.resource_slots]
                    for name, used in stats.used_resources.items()
                },
            )
            for stats in reply.core_workers_stats
        )
        with self._lock:
            self._answers[dashboard_url] = (now, held)
        return dict(held)

    def _raylet(self, dashboard_url: str) -> str:
        with self._lock:
            known = self._raylets.get(dashboard_url)
        if known is not None:
            return known
        with urllib.request.urlopen(dashboard_url + "/nodes?view=summary", timeout=self.timeout) as resp:
            data = json.load(resp)
        raylet = data["data"]["summary"][0]["raylet"]
        address = f"{raylet['nodeManagerAddress']}:{int(raylet['nodeManagerPort'])}"
        with self._lock:
            self._raylets[dashboard_url] = address
        return address
