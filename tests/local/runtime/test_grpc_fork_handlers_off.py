"""Why every process of a local Ray head runs with ``GRPC_ENABLE_FORK_SUPPORT=0`` (runtime/raylocal.py),
checked against the installed grpcio: a process that serves gRPC and starts children the way Ray does
(``subprocess.Popen(preexec_fn=...)``, a real fork() followed by exec) loses none of them with the
variable set. Without it, grpcio's post-fork handler starts threads in the child that can crash it before
its exec (25 of 200 children on this machine with grpcio 1.85); if a grpcio release stopped honouring
the variable, this test would see those deaths again."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SPAWNER = textwrap.dedent(
    """
    import subprocess, sys, threading
    from concurrent import futures
    import grpc

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    for _ in range(4):  # channels with live pollers, as in Ray's client proxy
        grpc.channel_ready_future(grpc.insecure_channel(f"127.0.0.1:{port}")).result(timeout=10)
    codes = []

    def child():
        codes.append(subprocess.Popen([sys.executable, "-c", "pass"], preexec_fn=lambda: None).wait())

    for _ in range(int(sys.argv[1]) // 4):  # four at a time, from four threads
        threads = [threading.Thread(target=child) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print(sorted(set(codes)), len(codes))
    """
)


def test_children_forked_to_exec_by_a_grpc_process_survive_with_fork_support_off() -> None:
    env = {**os.environ, "GRPC_ENABLE_FORK_SUPPORT": "0"}
    run = subprocess.run(
        [sys.executable, "-c", SPAWNER, "120"], env=env, capture_output=True, text=True, timeout=240
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["[0]", "120"], run.stdout + run.stderr[-3000:]
