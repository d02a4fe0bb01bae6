"""The ``ray start`` command line of a local head: every listener on the port allocated for it."""

from __future__ import annotations

from pathlib import Path

from rayqueue_local.runtime.raylocal import RayHead, RayHeadPorts, RayHeadSpec

NAMES = (
    "gcs-server",
    "dashboard",
    "client",
    "metrics",
    "node-manager",
    "object-manager",
    "dashboard-agent-listen",
    "dashboard-agent-grpc",
    "runtime-env-agent",
    "ray-start-client",
)


def _head(tmp_path: Path) -> tuple[RayHead, dict[str, int]]:
    ports = {name: 41000 + i for i, name in enumerate(NAMES)}
    head = RayHead(RayHeadSpec(num_gpus=1))
    head.ports = RayHeadPorts(ports, range(42000, 42064), range(43000, 43016))
    head.temp_dir = tmp_path
    return head, ports


def test_each_port_flag_takes_the_port_of_its_listener(tmp_path: Path) -> None:
    head, ports = _head(tmp_path)
    args = head.command()
    flags = {
        flag: args[i + 1] for i, flag in enumerate(args) if flag.startswith("--") and flag.endswith("port")
    }
    assert flags == {
        "--port": str(ports["gcs-server"]),
        "--dashboard-port": str(ports["dashboard"]),
        "--ray-client-server-port": str(ports["ray-start-client"]),
        "--metrics-export-port": str(ports["metrics"]),
        "--node-manager-port": str(ports["node-manager"]),
        "--object-manager-port": str(ports["object-manager"]),
        "--dashboard-agent-listen-port": str(ports["dashboard-agent-listen"]),
        "--dashboard-agent-grpc-port": str(ports["dashboard-agent-grpc"]),
        "--runtime-env-agent-port": str(ports["runtime-env-agent"]),
        "--min-worker-port": "42000",
        "--max-worker-port": "42063",
    }
    assert args[args.index("--temp-dir") + 1] == str(tmp_path)
    # The real client proxy serves "client"; ray start's own proxy is kept off it.
    assert str(ports["client"]) not in args
    assert f"--port={ports['client']}" in head.client_proxy_command()
