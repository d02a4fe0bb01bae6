"""State that survives a restart: a snapshot plus an fsynced append-only log, compacted on load.

Layout of a state directory::

    snapshot.json   {"format": 1, "resourceVersion": N, "objects": {key: [obj, ...]}}
    wal.jsonl       one JSON record per committed write since the snapshot:
                    {"rv": N, "op": "put", "key": ..., "obj": {...}} or
                    {"rv": N, "op": "del", "key": ..., "ns": ..., "name": ...}

Why this design: a write costs one appended line and one ``fsync`` (no rewrite of a big file, no
10,000 small files to read at start); loading reads one snapshot and replays the log, then
compacts: the new snapshot is written to a temporary file, fsynced, and moved into place with
``os.replace`` (then the directory is fsynced), and only after that is the log emptied.

A long-running store compacts the same way once the log passes ``compact_bytes`` (64 MiB).

Crash safety: a crash mid-append leaves a truncated last line, which is ignored (the write it
belonged to was never acknowledged); a crash mid-compaction leaves a stray ``*.tmp`` file, which is
ignored and removed, and the old snapshot and log are still complete; log records at or below the
snapshot's resourceVersion (a crash between the snapshot's replace and the log's truncation) are
skipped. uids, resourceVersions and the resourceVersion counter survive with the objects.

Example:
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> p = Persistence(d)
    >>> p.load()
    (0, {})
    >>> p.put("configmaps", {"metadata": {"name": "c", "namespace": "default"}}, 7); p.close()
    >>> Persistence(d).load()
    (7, {'configmaps': [{'metadata': {'name': 'c', 'namespace': 'default'}}]})
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import IO, Any

log = logging.getLogger(__name__)

__all__ = ["Persistence"]

SNAPSHOT = "snapshot.json"
WAL = "wal.jsonl"
FORMAT = 1


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, fsync: bool = True) -> None:
    """Write ``data`` to ``path`` atomically: temp file, fsync, ``os.replace``, fsync the directory.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "f"
        >>> atomic_write(p, b"x"); p.read_bytes()
        b'x'
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        if fsync:
            os.fsync(fh.fileno())
    os.replace(tmp, path)
    if fsync:
        _fsync_dir(path.parent)


class Persistence:
    """The store's durable state in ``state_dir`` (see the module docstring).

    Call :meth:`load` once, then :meth:`put`/:meth:`delete` for every committed write (the store
    does this under its lock, so records are in resourceVersion order).
    """

    def __init__(
        self, state_dir: str | os.PathLike[str], *, fsync: bool = True, compact_bytes: int = 64 * 2**20
    ) -> None:
        self.dir = Path(state_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self.compact_bytes = compact_bytes
        self._wal: IO[bytes] | None = None
        self._wal_bytes = 0

    def load(self) -> tuple[int, dict[str, list[dict[str, Any]]]]:
        """Read snapshot + log, compact them into a new snapshot, open the log for appending.

        Returns ``(resourceVersion, {key: [objects]})``.
        """
        for stray in self.dir.glob("*.tmp"):
            log.info("ignoring %s left by an interrupted write", stray)
            stray.unlink(missing_ok=True)
        rv = 0
        objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        snap = self.dir / SNAPSHOT
        if snap.exists():
            data = json.loads(snap.read_bytes())
            if data.get("format") != FORMAT:
                raise ValueError(f"{snap}: unknown state format {data.get('format')!r}")
            rv = int(data["resourceVersion"])
            for key, items in data["objects"].items():
                bucket = objects.setdefault(key, {})
                for obj in items:
                    meta = obj["metadata"]
                    bucket[(meta.get("namespace") or "", meta["name"])] = obj
        wal = self.dir / WAL
        replayed = 0
        if wal.exists():
            with open(wal, "rb") as fh:
                for lineno, line in enumerate(fh, 1):
                    if not line.endswith(b"\n"):
                        log.warning("%s:%d: ignoring a truncated last record", wal, lineno)
                        break
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        log.warning("%s:%d: ignoring an unreadable record and what follows", wal, lineno)
                        break
                    if rec["rv"] <= rv:
                        continue
                    rv = rec["rv"]
                    replayed += 1
                    bucket = objects.setdefault(rec["key"], {})
                    if rec["op"] == "put":
                        meta = rec["obj"]["metadata"]
                        bucket[(meta.get("namespace") or "", meta["name"])] = rec["obj"]
                    else:
                        bucket.pop((rec["ns"], rec["name"]), None)
        result = {key: list(bucket.values()) for key, bucket in objects.items() if bucket}
        if replayed or not snap.exists() or (wal.exists() and wal.stat().st_size):
            self._write_snapshot(rv, result)  # durable before the log is emptied below
        self._wal = open(wal, "wb")  # noqa: SIM115 - kept open for appends until close()
        if self.fsync:
            os.fsync(self._wal.fileno())
        return rv, result

    def _write_snapshot(self, rv: int, objects: dict[str, list[dict[str, Any]]]) -> None:
        body = json.dumps(
            {"format": FORMAT, "resourceVersion": rv, "objects": objects}, separators=(",", ":")
        )
        atomic_write(self.dir / SNAPSHOT, body.encode(), fsync=self.fsync)

    def _append(self, record: dict[str, Any]) -> None:
        if self._wal is None:
            raise RuntimeError("Persistence.load() must be called before writes")
        line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        self._wal.write(line)
        self._wal_bytes += len(line)
        self._wal.flush()
        if self.fsync:
            os.fsync(self._wal.fileno())

    def put(self, key: str, obj: dict[str, Any], rv: int) -> None:
        """Record that ``obj`` (of resource ``key``) was stored at resourceVersion ``rv``."""
        self._append({"rv": rv, "op": "put", "key": key, "obj": obj})

    def delete(self, key: str, ident: tuple[str, str], rv: int) -> None:
        """Record that the object ``(namespace, name)`` of ``key`` was removed at ``rv``."""
        self._append({"rv": rv, "op": "del", "key": key, "ns": ident[0], "name": ident[1]})

    def should_compact(self) -> bool:
        """True once the log has grown past ``compact_bytes`` since the last snapshot."""
        return self._wal_bytes >= self.compact_bytes

    def compact(self, rv: int, objects: dict[str, list[dict[str, Any]]]) -> None:
        """Write the complete state at ``rv`` as the snapshot, then empty the log.

        The store calls this (under its lock) when :meth:`should_compact` says so, so that a
        long-running control plane's log does not grow without bound.
        """
        self._write_snapshot(rv, {key: items for key, items in objects.items() if items})
        if self._wal is not None:
            self._wal.close()
        self._wal = open(self.dir / WAL, "wb")  # noqa: SIM115 - kept open for appends until close()
        if self.fsync:
            os.fsync(self._wal.fileno())
        self._wal_bytes = 0

    def close(self) -> None:
        """Close the log (the state on disk is already complete)."""
        if self._wal is not None:
            self._wal.close()
            self._wal = None
