"""A working_dir with a FIFO, a socket, symlink loops and a file too large: no hang, no raw OSError, no
whole zip in memory before the size check."""

from __future__ import annotations

import logging
import os
import socket
import threading
import tracemalloc
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.job.runtime_env import check_package_size, zip_working_dir


@pytest.fixture
def odd_dir(tmp_path: Path) -> Path:
    root = tmp_path / "wd"
    (root / "pkg").mkdir(parents=True)
    (root / "train.py").write_text("print('hi')\n")
    (root / "pkg" / "util.py").write_text("X = 1\n")
    os.mkfifo(root / "pipe")  # reading it would block forever
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "sock"))  # cannot be opened as a file
    server.close()
    (root / "loop").symlink_to(root / "loop")  # ELOOP
    (root / "dangling").symlink_to(root / "nowhere")
    (root / "pkg" / "back").symlink_to(root)  # a directory loop, if it were followed
    (root / "alias.py").symlink_to(root / "train.py")  # a symlink to a regular file is kept
    return root


def _in_thread(fn: object, *args: object) -> object:
    """Run ``fn`` with a bound on its time: a hang is a failure, not a stuck suite."""
    result: dict[str, object] = {}

    def run() -> None:
        try:
            result["value"] = fn(*args)  # type: ignore[operator]
        except BaseException as err:  # noqa: BLE001 - handed back to the test
            result["error"] = err

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "zipping the working_dir hung"
    if "error" in result:
        raise result["error"]  # type: ignore[misc]
    return result["value"]


def test_special_files_are_skipped_with_a_warning_naming_them(
    odd_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="rayqueue_sdk.job.runtime_env"):
        data = _in_thread(zip_working_dir, odd_dir)
    assert isinstance(data, bytes)
    assert sorted(zipfile.ZipFile(BytesIO(data)).namelist()) == ["alias.py", "pkg/util.py", "train.py"]
    warned = " ".join(r.getMessage() for r in caplog.records)
    for name in ("pipe", "sock", "loop", "dangling"):
        assert name in warned, (name, warned)
    assert isinstance(_in_thread(check_package_size, odd_dir), int)  # Ray's size check walks them too


def test_file_gone_between_listing_and_reading_is_a_config_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "secret.txt").write_text("x")
    real_write = zipfile.ZipFile.write

    def vanish(self: zipfile.ZipFile, filename: str, arcname: str | None = None) -> None:
        Path(filename).unlink()  # another process removes it (or it becomes unreadable) meanwhile
        real_write(self, filename, arcname)

    monkeypatch.setattr(zipfile.ZipFile, "write", vanish)
    with pytest.raises(ConfigError) as err:
        zip_working_dir(tmp_path)
    assert "secret.txt" in str(err.value) and err.value.field == "runtime_env['working_dir']"


def test_size_is_checked_while_streaming(tmp_path: Path) -> None:
    (tmp_path / "weights.bin").write_bytes(os.urandom(16 * 2**20))  # incompressible, 16x the limit
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError) as err:
            zip_working_dir(tmp_path, limit=2**20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "weights.bin" in str(err.value) and "larger than" in str(err.value)
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MiB: the zip was built in memory before the check"
