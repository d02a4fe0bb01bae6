#!/usr/bin/env python3
"""What does ``pip install rayqueue_sdk`` bring, alone? (issue 11: neither jsonschema nor cryptography)

Makes a fresh venv, installs only the SDK from this checkout (``pip install <repo root>``, not ``./local``),
and reports: whether ``pip list`` holds ``jsonschema`` or ``cryptography`` and, for each one present,
which installed distributions require it (the shortest chains from ``rayqueue_sdk`` down to it, read
from the installed metadata with extras and environment markers evaluated as pip did); the number of
distributions; and the venv's size on disk. With ``--peer-venv`` (or ``--make-peer``) it reports the
same for a venv holding codeflare-sdk, side by side.

Usage:
    python3 benchmarks/bench_install_footprint.py [--venv /tmp/rq-footprint] [--reuse]
        [--peer-venv /tmp/cfvenv | --make-peer /tmp/cfvenv]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
WATCHED = ("jsonschema", "cryptography")
PEER_REQUIREMENT = "codeflare-sdk==0.40.1"

# Run inside a venv: from ROOT, the installed distributions each one pulls in, with the extras asked for
# along the way and environment markers evaluated (pip's own vendored ``packaging``), as pip resolved them.
_GRAPH = """
import importlib.metadata as md, json, re, sys
from pip._vendor.packaging.requirements import Requirement
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
dists = {norm(d.metadata["Name"]): d for d in md.distributions()}
root = norm(sys.argv[1])
extras = {root: set()}
edges = {}
todo = [root]
while todo:
    name = todo.pop()
    edges[name] = set()
    for text in dists[name].requires or []:
        req = Requirement(text)
        child = norm(req.name)
        wanted = extras[name] | {""}
        if child not in dists or (req.marker and not any(req.marker.evaluate({"extra": e}) for e in wanted)):
            continue
        edges[name].add(child)
        known = extras.setdefault(child, None)
        if known is None or not set(req.extras) <= known:
            extras[child] = (known or set()) | set(req.extras)
            todo.append(child)
print(json.dumps({"installed": sorted(dists), "edges": {k: sorted(v) for k, v in edges.items()}}))
"""


def make_venv(path: Path, *requirements: str) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(path)], check=True)
    pip = [str(path / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, *requirements], check=True)


def size_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            file = Path(root, name)
            if not file.is_symlink():
                total += file.stat().st_size
    return total


def installed_graph(venv: Path, root: str) -> tuple[list[str], dict[str, list[str]]]:
    """The installed distributions, and the requirement edges reachable from ``root``."""
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", _GRAPH, root], check=True, capture_output=True, text=True
    )
    data = json.loads(out.stdout)
    return data["installed"], data["edges"]


def chains(graph: dict[str, list[str]], start: str, target: str, limit: int = 5) -> list[list[str]]:
    """Up to ``limit`` shortest dependency chains start -> ... -> target (breadth first)."""
    found: list[list[str]] = []
    frontier = [[start]]
    seen = {start}
    while frontier and not found:
        following = []
        for path in frontier:
            for req in graph.get(path[-1], []):
                if req == target:
                    found.append([*path, req])
                elif req not in seen:
                    following.append([*path, req])
        seen.update(p[-1] for p in following)
        frontier = following
    return found[:limit]


def report(label: str, venv: Path, root: str) -> int:
    installed, graph = installed_graph(venv, root)
    size = size_bytes(venv)
    print(f"\n{label}: {venv}")
    print(f"  distributions installed: {len(installed)}")
    print(f"  size on disk: {size / 2**20:.0f} MiB")
    for name in WATCHED:
        if name not in installed:
            print(f"  {name}: not installed")
            continue
        requirers = sorted(n for n, reqs in graph.items() if name in reqs)
        print(f"  {name}: INSTALLED, required by {', '.join(requirers)}")
        for chain in chains(graph, root, name):
            print("    " + " -> ".join(chain))
    return size


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--venv", type=Path, default=Path("/tmp/rq-footprint"), help="the SDK-only venv")
    parser.add_argument("--reuse", action="store_true", help="measure --venv as it is, do not rebuild it")
    peer = parser.add_mutually_exclusive_group()
    peer.add_argument("--peer-venv", type=Path, help=f"an existing venv with {PEER_REQUIREMENT}")
    peer.add_argument("--make-peer", type=Path, help=f"make this venv with {PEER_REQUIREMENT}")
    args = parser.parse_args()

    if not args.reuse:
        print(f"installing {REPO_ROOT} alone into {args.venv} ...", flush=True)
        make_venv(args.venv, str(REPO_ROOT))
    ours = report("rayqueue_sdk alone", args.venv, "rayqueue-sdk")

    peer_venv = args.peer_venv or args.make_peer
    if args.make_peer:
        print(f"\ninstalling {PEER_REQUIREMENT} into {args.make_peer} ...", flush=True)
        make_venv(args.make_peer, PEER_REQUIREMENT)
    if peer_venv:
        theirs = report(PEER_REQUIREMENT, peer_venv, "codeflare-sdk")
        print(
            f"\nsize: rayqueue_sdk {ours / 2**20:.0f} MiB vs codeflare-sdk {theirs / 2**20:.0f} MiB "
            f"({ours / theirs:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
