"""Hostile and broken files given to the CLI: one line naming the option and the file, a documented exit code.

No connection is made for any of them (the server below is a closed port: a connection attempt would end
in a ConnectionFailedError instead of the ConfigError asserted here).
"""

from __future__ import annotations

import resource
import socket
import time
from pathlib import Path

import pytest

from rayqueue_sdk.cli.exit_codes import code_for
from rayqueue_sdk.cli.main import main
from rayqueue_sdk.errors import ConfigError


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def connection(tmp_path: Path) -> list[str]:
    """A kubeconfig whose server is a closed port: any attempt to connect fails differently."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:{_closed_port()}'}}}}]\n"
        "users: [{name: u, user: {token: t0ken}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u, namespace: ds}}]\n"
    )
    return ["--kubeconfig", str(kubeconfig)]


def _laughs(levels: int = 9, width: int = 9) -> str:
    lines = ["name: c", "labels:", "  a0: &a0 [" + ",".join(["lol"] * width) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"  a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


YAML_FILES: list[tuple[str, bytes, str]] = [
    ("billion-laughs", _laughs().encode(), "through its aliases"),
    ("recursive-alias", b"name: c\nlabels: &a {x: *a}\n", "refers to itself"),
    ("deep-nesting", b"name: c\nlabels: " + b"[" * 500 + b"]" * 500 + b"\n", "levels deep"),
    ("not-utf8", "name: café\n".encode("latin-1"), "not UTF-8"),
    ("binary", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    ("malformed", b"name: [unclosed\n", "not valid YAML"),
    ("not-a-mapping", b"- just\n- a list\n", "mapping"),
    ("bad-field", b"name: c\nnum_workers: many\n", "num_workers"),
]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("content", "fragment"), [c[1:] for c in YAML_FILES], ids=[c[0] for c in YAML_FILES])
def test_cluster_apply_file_problem_is_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], connection: list[str], content: bytes, fragment: str
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_bytes(content)
    started = time.process_time()
    code, _, err = _run(["cluster", "apply", "-f", str(path), *connection], capsys)
    assert code == code_for(ConfigError)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "ConfigError" in lines[0] and fragment in lines[0]
    if "num_workers" not in fragment:
        assert str(path) in lines[0] and "--file" in lines[0]
    print(f"{fragment}: {time.process_time() - started:.3f} s CPU")


def test_billion_laughs_file_does_not_expand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], connection: list[str]
) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(_laughs(levels=12))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code, _, err = _run(["cluster", "apply", "-f", str(path), *connection], capsys)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert code == code_for(ConfigError) and "aliases" in err
    assert grown_mib < 200  # fully expanded, 9**12 values would need terabytes


def test_missing_and_oversized_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], connection: list[str]
) -> None:
    code, _, err = _run(["cluster", "apply", "-f", str(tmp_path / "nope.yaml"), *connection], capsys)
    assert code == code_for(ConfigError)
    assert "No such file" in err and "nope.yaml" in err
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (10 * 2**20 + 1))
    code, _, err = _run(["cluster", "apply", "-f", str(big), *connection], capsys)
    assert "larger than 10 MiB" in err


@pytest.mark.parametrize(
    ("content", "fragment"),
    [(b"\x00\x01\x02binary", "binary"), (b"\xff\xfe{}", "not UTF-8"), (b'{"num_workers": "x"', "")],
    ids=["binary", "utf16-bom", "malformed-json"],
)
def test_job_cluster_config_file_problem_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], connection: list[str], content: bytes, fragment: str
) -> None:
    path = tmp_path / "managed.json"
    path.write_bytes(content)
    argv = ["job", "submit", "j", "--cluster-config", f"@{path}", *connection, "-e", "python x.py"]
    code, _, err = _run(argv, capsys)
    assert code == code_for(ConfigError)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err and fragment in lines[0], err
