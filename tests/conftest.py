"""Shared fixtures. The real upstream CRD schemas live in ../shared/crds (never copied here)."""

from __future__ import annotations

import collections
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from rayqueue_local.runtime.headstarts import HEAD_STARTS_VAR, read_head_starts

# The machine running the suite is shared and noisy (2 cores): a per-example deadline would make
# property tests fail on load rather than on a bug, so the project's profile has none.
settings.register_profile(
    "rayqueue", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("rayqueue")

REPO_ROOT = Path(__file__).resolve().parents[1]
CRDS_DIR = Path(os.environ.get("RAYQUEUE_CRDS_DIR", REPO_ROOT.parent / "shared" / "crds")).resolve()
# Fixtures in rayqueue_local.pytest_plugin read the same variable.
os.environ.setdefault("RAYQUEUE_CRDS_DIR", str(CRDS_DIR))
# The file this run's head starts are recorded in (set by the controller; see pytest_configure).
_HEAD_STARTS = pytest.StashKey[Path]()


@pytest.fixture(scope="session")
def crd_dir() -> Path:
    """The directory of upstream CRD YAML files (kuberay/, kueue/, keda/)."""
    if not (CRDS_DIR / "kuberay" / "ray.io_rayclusters.yaml").is_file():
        raise RuntimeError(f"upstream CRDs not found at {CRDS_DIR}; set RAYQUEUE_CRDS_DIR")
    return CRDS_DIR


# Markers that imply ``slow``: whatever starts Ray processes or a Prometheus is slow, so the fast subset
# (``pytest -m "not slow"``) needs no second marker on those tests.
_SLOW_MARKERS = ("ray", "prometheus")

# Fixtures that start a control plane with real Ray heads (by the directory whose conftest defines them,
# since ``plane`` is a common name): a test that uses one starts, or shares, Ray heads and is slow.
_RAY_PLANE_FIXTURES = {
    ("tests/sdk/e2e/cluster", "plane"),
    ("tests/sdk/e2e/job", "ray_plane"),
    ("tests/sdk/e2e/scaling", "idle_plane"),
    ("tests/sdk/e2e/generations", "kueue_plane"),
    ("tests/sdk/e2e/notebook", "widget_plane"),
    ("tests/sdk/e2e/notebook", "quickstart_run"),
    ("tests/local/controllers/kuberay", "ray_cp"),
    ("tests/docs", "docs_plane"),
    ("tests/interop", "codeflare_plane"),
}


# Session fixtures that cost a Ray head or a notebook run each time they start: under pytest-xdist, the
# tests on one of them run in one worker, so it starts once per run (see pytest_collection_modifyitems).
_ONCE_PER_RUN = {
    ("tests/sdk/e2e/job", "workspace"),
    ("tests/sdk/e2e/notebook", "quickstart_run"),
}


def pytest_configure(config: pytest.Config) -> None:
    """Count the Ray heads this run starts (runtime/headstarts): in a file of the run's own, which
    pytest-xdist workers, planes and notebook kernels inherit through the environment."""
    if hasattr(config, "workerinput") or os.environ.get(HEAD_STARTS_VAR):
        return
    record = Path(tempfile.mkdtemp(prefix="rayqueue-head-starts-")) / "starts"
    os.environ[HEAD_STARTS_VAR] = str(record)
    config.stash[_HEAD_STARTS] = record


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """The count at the end of the run, beside its outcome: what the run cost in Ray heads, which its
    wall time on a shared 2-core machine cannot say (issue 35)."""
    record = config.stash.get(_HEAD_STARTS, None)
    if record is None:
        return
    starts = read_head_starts(str(record))
    by_namespace = collections.Counter(start.label.split("/")[0] for start in starts)
    top = ", ".join(f"{ns} {n}" for ns, n in by_namespace.most_common(12))
    terminalreporter.write_sep("=", f"Ray heads started: {len(starts)}")
    if starts:
        terminalreporter.write_line(f"by namespace: {top}")


def pytest_unconfigure(config: pytest.Config) -> None:
    record = config.stash.get(_HEAD_STARTS, None)
    if record is not None:
        shutil.rmtree(record.parent, ignore_errors=True)
        os.environ.pop(HEAD_STARTS_VAR, None)


def _fixture_keys(item: pytest.Item) -> set[tuple[str, str]]:
    """The fixtures ``item`` uses, as ``(directory of the conftest that defines it, name)``."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return set()
    return {
        (fixturedef.baseid.split("::")[0].rstrip("/"), name)
        for name, defs in info.name2fixturedefs.items()
        for fixturedef in defs
    }


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (--dist loadgroup)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` every ``ray`` or ``prometheus`` test and every test on a Ray-enabled plane fixture.

    Under pytest-xdist (``-n 2 --dist loadgroup``; scripts/test.sh with RAYQUEUE_TEST_WORKERS=2), the
    slow tests of one module run in one worker, in order, sharing its module fixtures; the tests on a
    fixture of ``_ONCE_PER_RUN`` run in one worker, so it starts once; the fast tests go wherever a
    worker is free.
    A session plane itself is cheap, and each worker has its own.
    """
    for item in items:
        fixtures = _fixture_keys(item)
        if any(item.get_closest_marker(name) for name in _SLOW_MARKERS) or fixtures & _RAY_PLANE_FIXTURES:
            item.add_marker(pytest.mark.slow)
        elif not item.get_closest_marker("slow"):
            continue
        once = sorted("::".join(key) for key in fixtures & _ONCE_PER_RUN)
        item.add_marker(pytest.mark.xdist_group(once[0] if once else item.nodeid.split("::")[0]))


class RedisServer:
    """A Redis for GCS fault tolerance (Debian's ``redis-server``) on loopback: ``address``, ``password``."""

    def __init__(self, address: str, password: str) -> None:
        self.address = address
        self.password = password

    def __repr__(self) -> str:
        return f"RedisServer({self.address!r})"  # never the password


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One ``redis-server`` for the session (started by the first test that needs it), with a password,
    nothing persisted. Stopped exactly (its own session) at the end."""
    import secrets
    import shutil
    import socket
    import time

    from rayqueue_local.runtime.processes import free_ports, spawn

    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server not found: install Debian's redis-server (scripts/test.sh does)")
    port, password = free_ports(1)[0], secrets.token_hex(16)
    logs = tmp_path_factory.mktemp("redis")
    process = spawn(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--requirepass", password, "--save", "",
         "--appendonly", "no", "--dir", str(logs)],
        name="redis-server",
        log_path=logs / "redis.log",
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.popen.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start:\n{process.log_tail()}") from None
            time.sleep(0.05)
    try:
        yield RedisServer(f"127.0.0.1:{port}", password)
    finally:
        process.stop(2.0)
