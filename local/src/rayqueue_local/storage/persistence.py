"""State that survives a restart: a snapshot plus an fsynced append-only log, compacted on load.

Layout of a state directory (``0700``; every file ``0600``, since Secrets are stored here)::

    snapshot.json   {"format": 1, "resourceVersion": N, "objects": {key: [obj, ...]}}
    wal.jsonl       one JSON record per committed write since the snapshot:
                    {"rv": N, "op": "put", "key": ..., "obj": {...}} or
                    {"rv": N, "op": "del", "key": ..., "ns": ..., "name": ...}
    wal.quarantine  bytes of damaged log records, set aside at load (only when there were any)

Why this design: a write costs one appended line and one ``fsync`` (no rewrite of a big file, no
10,000 small files to read at start); loading reads one snapshot and replays the log, then
compacts: the new snapshot is written to a temporary file, fsynced, and moved into place with
``os.replace`` (then the directory is fsynced), and only after that is the log emptied.

A long-running store compacts the same way once the log passes ``compact_bytes`` (64 MiB).

Durability policy: a write is acknowledged only after its log record is written in full and
``fsync`` returned (with ``fsync=False``, the option for tests and benchmarks, after the write to
the page cache). When the write or the ``fsync`` fails (``ENOSPC``, ``EIO``, ...) the log is cut
back to the end of the last acknowledged record and :class:`StorageUnavailableError` (HTTP 507,
a ``StoreError``) is raised, so the caller learns that nothing was stored, the state in memory is
left as it was, and the next write, once space returns, appends to an intact log. A compaction
that cannot be written is abandoned (the log still holds every record) and tried again later.

Crash safety and damage: a crash mid-append leaves a truncated last line, which is set aside (the
write it belonged to was never acknowledged); a damaged record in the middle of the log (bad
bytes on disk) is set aside too, and every intact record before and after it is recovered; the
bytes set aside go to ``wal.quarantine`` and :attr:`Persistence.recovery_notes` says what
happened (the control plane reports it at start). A crash mid-compaction leaves a stray ``*.tmp``
file, which is removed, and the old snapshot and log are still complete; log records at or below
the snapshot's resourceVersion (a crash between the snapshot's replace and the log's truncation)
are skipped. uids, resourceVersions and the resourceVersion counter survive with the objects.

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
from typing import Any

from rayqueue_local.storage.storetypes import StoreError

log = logging.getLogger(__name__)

__all__ = ["Persistence", "StorageUnavailableError", "atomic_write", "private_dir"]

_SNAPSHOT = "snapshot.json"
_WAL = "wal.jsonl"
_QUARANTINE = "wal.quarantine"
_FORMAT = 1
_FILE_MODE = 0o600
_DIR_MODE = 0o700


class StorageUnavailableError(StoreError):
    """A write that could not be made durable (disk full, I/O error): nothing was stored.

    The API server answers it as ``507`` with a ``Status``; the state already stored stays readable.

    Example:
        >>> import errno
        >>> err = StorageUnavailableError("/state", OSError(errno.ENOSPC, "No space left on device"))
        >>> err.code, err.to_status()["message"]
        (507, 'the write was not stored: /state: No space left on device; free space there and retry')
    """

    def __init__(self, where: str | os.PathLike[str], cause: OSError) -> None:
        reason = cause.strerror or type(cause).__name__
        super().__init__(
            507,
            "InsufficientStorage",
            f"the write was not stored: {where}: {reason}; free space there and retry",
        )


def private_dir(path: str | os.PathLike[str]) -> Path:
    """Create ``path`` (and parents) if needed and make it ``0700``; returns it as a ``Path``.

    Example:
        >>> import tempfile, pathlib
        >>> d = private_dir(pathlib.Path(tempfile.mkdtemp()) / "state")
        >>> oct(d.stat().st_mode & 0o777)
        '0o700'
    """
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True, mode=_DIR_MODE)
    os.chmod(directory, _DIR_MODE)  # an existing directory (or one made under a umask) too
    return directory


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


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def atomic_write(path: Path, data: bytes, *, fsync: bool = True) -> None:
    """Write ``data`` to ``path`` (mode ``0600``) atomically: temp file, fsync, ``os.replace``, fsync
    the directory. On failure the temp file is removed and ``path`` is untouched.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "f"
        >>> atomic_write(p, b"x"); p.read_bytes(), oct(p.stat().st_mode & 0o777)
        (b'x', '0o600')
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, _FILE_MODE)
    try:
        try:
            _write_all(fd, data)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if fsync:
        _fsync_dir(path.parent)


def _record_ok(rec: Any) -> bool:
    if not isinstance(rec, dict) or not isinstance(rec.get("rv"), int) or not isinstance(rec.get("key"), str):
        return False
    if rec.get("op") == "put":
        meta = rec.get("obj", {}).get("metadata") if isinstance(rec.get("obj"), dict) else None
        return isinstance(meta, dict) and isinstance(meta.get("name"), str)
    return rec.get("op") == "del" and isinstance(rec.get("ns"), str) and isinstance(rec.get("name"), str)


class Persistence:
    """The store's durable state in ``state_dir`` (see the module docstring).

    Call :meth:`load` once, then :meth:`put`/:meth:`delete` for every write, before it is applied
    (the store does this under its lock, so records are in resourceVersion order). A write that
    raises :class:`StorageUnavailableError` was not stored.
    """

    def __init__(
        self, state_dir: str | os.PathLike[str], *, fsync: bool = True, compact_bytes: int = 64 * 2**20
    ) -> None:
        self.dir = private_dir(state_dir)
        self.fsync = fsync
        self.compact_bytes = compact_bytes
        #: What :meth:`load` had to repair (damaged or truncated records set aside), for the operator.
        self.recovery_notes: list[str] = []
        self._wal_fd: int | None = None
        self._wal_end = 0  # offset just past the last acknowledged record
        self._wal_bytes = 0  # appended since the last snapshot
        self._compact_postponed_to = 0  # log size before which a failed compaction is not retried

    # -- load --------------------------------------------------------------------------------------
    def load(self) -> tuple[int, dict[str, list[dict[str, Any]]]]:
        """Read snapshot + log, compact them into a new snapshot, open the log for appending.

        Returns ``(resourceVersion, {key: [objects]})``.
        """
        for stray in self.dir.glob("*.tmp"):
            log.info("ignoring %s left by an interrupted write", stray)
            stray.unlink(missing_ok=True)
        for existing in (_SNAPSHOT, _WAL, _QUARANTINE):
            if (self.dir / existing).exists():
                os.chmod(self.dir / existing, _FILE_MODE)  # state written by an older version
        rv = 0
        objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        snap = self.dir / _SNAPSHOT
        if snap.exists():
            data = json.loads(snap.read_bytes())
            if data.get("format") != _FORMAT:
                raise ValueError(f"{snap}: unknown state format {data.get('format')!r}")
            rv = int(data["resourceVersion"])
            for key, items in data["objects"].items():
                bucket = objects.setdefault(key, {})
                for obj in items:
                    meta = obj["metadata"]
                    bucket[(meta.get("namespace") or "", meta["name"])] = obj
        wal = self.dir / _WAL
        replayed, good_end = 0, 0
        if wal.exists():
            replayed, rv, good_end = self._replay(wal, rv, objects)
        result = {key: list(bucket.values()) for key, bucket in objects.items() if bucket}
        wal_size = wal.stat().st_size if wal.exists() else 0
        compacted = False
        if replayed or not snap.exists() or wal_size:
            try:
                self._write_snapshot(rv, result)  # durable before the log is emptied below
                compacted = True
            except OSError as err:  # e.g. a full disk: keep the log, which still holds everything
                log.warning("%s: cannot compact the state at start (%s); keeping the log", self.dir, err)
        if compacted or not wal.exists():
            self._open_wal(truncate=True)
        else:
            self._open_wal(truncate=False)
            self._wal_end = good_end
            os.ftruncate(self._fd(), good_end)  # drop a torn last line so appends start on a new one
            self._wal_bytes = good_end
        return rv, result

    def _replay(
        self, wal: Path, rv: int, objects: dict[str, dict[tuple[str, str], dict[str, Any]]]
    ) -> tuple[int, int, int]:
        """Apply the log's records above ``rv`` to ``objects``; set damaged ones aside.

        Returns ``(records replayed, resourceVersion, offset past the last complete line)``.
        """
        replayed, offset, good_end = 0, 0, 0
        quarantined: list[bytes] = []
        with open(wal, "rb") as fh:
            for lineno, line in enumerate(fh, 1):
                offset += len(line)
                if not line.endswith(b"\n"):
                    quarantined.append(line)
                    self.recovery_notes.append(
                        f"{wal}:{lineno}: set aside a truncated last record (a write that was never "
                        f"acknowledged, {len(line)} bytes) in {_QUARANTINE}"
                    )
                    break
                good_end = offset
                try:
                    rec = json.loads(line)
                except ValueError:
                    rec = None
                if not _record_ok(rec):
                    quarantined.append(line)
                    self.recovery_notes.append(
                        f"{wal}:{lineno}: set aside a damaged record ({len(line)} bytes) in {_QUARANTINE}; "
                        "every intact record before and after it was recovered"
                    )
                    continue
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
        if quarantined:
            fd = os.open(self.dir / _QUARANTINE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, _FILE_MODE)
            try:
                _write_all(fd, b"".join(q if q.endswith(b"\n") else q + b"\n" for q in quarantined))
                os.fsync(fd)
            finally:
                os.close(fd)
            for note in self.recovery_notes:
                log.warning("%s", note)
        return replayed, rv, good_end

    # -- writes ------------------------------------------------------------------------------------
    def _open_wal(self, *, truncate: bool) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if truncate else 0)
        self._wal_fd = os.open(self.dir / _WAL, flags, _FILE_MODE)
        if self.fsync:
            os.fsync(self._wal_fd)
        self._wal_end = self._wal_bytes = 0

    def _fd(self) -> int:
        if self._wal_fd is None:
            raise RuntimeError("Persistence.load() must be called before writes")
        return self._wal_fd

    def _write_snapshot(self, rv: int, objects: dict[str, list[dict[str, Any]]]) -> None:
        body = json.dumps(
            {"format": _FORMAT, "resourceVersion": rv, "objects": objects}, separators=(",", ":")
        )
        atomic_write(self.dir / _SNAPSHOT, body.encode(), fsync=self.fsync)

    def _append(self, record: dict[str, Any] | str) -> None:
        fd = self._fd()
        text = record if isinstance(record, str) else json.dumps(record, separators=(",", ":"))
        line = text.encode() + b"\n"
        try:
            if os.fstat(fd).st_size != self._wal_end:  # a failed append left bytes behind: cut them
                os.ftruncate(fd, self._wal_end)
            _write_all(fd, line)
            if self.fsync:
                os.fsync(fd)
        except OSError as err:
            try:
                os.ftruncate(fd, self._wal_end)  # frees the space the torn record took
            except OSError:
                log.warning("%s: cannot cut back a torn record yet; the next write retries", self.dir)
            raise StorageUnavailableError(self.dir, err) from None
        self._wal_end += len(line)
        self._wal_bytes += len(line)

    def put(self, key: str, obj: dict[str, Any], rv: int, *, encoded: str | None = None) -> None:
        """Make durable that ``obj`` (of resource ``key``) is stored at resourceVersion ``rv``.

        ``encoded`` is ``obj`` as compact JSON when the caller has it already (saves encoding twice).
        Raises :class:`StorageUnavailableError` when it could not be (then nothing was recorded).
        """
        if encoded is None:
            encoded = json.dumps(obj, separators=(",", ":"))
        self._append(f'{{"rv":{int(rv)},"op":"put","key":{json.dumps(key)},"obj":{encoded}}}')

    def delete(self, key: str, ident: tuple[str, str], rv: int) -> None:
        """Make durable that the object ``(namespace, name)`` of ``key`` is removed at ``rv``."""
        self._append({"rv": rv, "op": "del", "key": key, "ns": ident[0], "name": ident[1]})

    def should_compact(self) -> bool:
        """True once the log has grown past ``compact_bytes`` since the last snapshot."""
        return self._wal_bytes >= max(self.compact_bytes, self._compact_postponed_to)

    def compact(self, rv: int, objects: dict[str, list[dict[str, Any]]]) -> None:
        """Write the complete state at ``rv`` as the snapshot, then empty the log.

        The store calls this (under its lock) when :meth:`should_compact` says so, so that a
        long-running control plane's log does not grow without bound. When the snapshot cannot be
        written (a full disk) the log is kept as it is, and compaction is tried again after another
        quarter of ``compact_bytes``: the write that triggered it is already durable.
        """
        try:
            self._write_snapshot(rv, {key: items for key, items in objects.items() if items})
        except OSError as err:
            self._compact_postponed_to = self._wal_bytes + max(1, self.compact_bytes // 4)
            log.warning("%s: compaction postponed (%s); the log keeps every write", self.dir, err)
            return
        if self._wal_fd is not None:
            os.close(self._wal_fd)
        self._open_wal(truncate=True)
        self._compact_postponed_to = 0

    def close(self) -> None:
        """Close the log (the state on disk is already complete)."""
        if self._wal_fd is not None:
            os.close(self._wal_fd)
            self._wal_fd = None
