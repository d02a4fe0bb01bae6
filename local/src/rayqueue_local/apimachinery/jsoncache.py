"""Serialised objects, cached by resourceVersion, so that a list does not re-encode unchanged objects.

Every write gives an object a new resourceVersion, and the store never changes a stored object in
place, so ``(resource, served version, namespace, name, resourceVersion)`` identifies its JSON for
good. The cache is bounded (oldest entries go first) and thread-safe.

Example:
    >>> cache = JSONCache(maxsize=2)
    >>> obj = {"metadata": {"name": "a", "namespace": "n", "resourceVersion": "7"}}
    >>> cache.dumps("configmaps", "v1", obj, lambda o: o)
    b'{"metadata":{"name":"a","namespace":"n","resourceVersion":"7"}}'
    >>> cache.hits, cache.misses
    (0, 1)
    >>> _ = cache.dumps("configmaps", "v1", obj, lambda o: o); cache.hits
    1
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["JSONCache"]


def _encode(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


class JSONCache:
    """``dumps(key, version, stored_obj, convert) -> bytes`` with a bounded cache (``maxsize`` entries)."""

    def __init__(self, maxsize: int = 20_000) -> None:
        self.maxsize = maxsize
        self._lock = threading.Lock()
        self._data: dict[tuple[str, str, str, str, str], bytes] = {}
        self.hits = 0
        self.misses = 0

    def dumps(
        self,
        key: str,
        version: str,
        obj: dict[str, Any],
        convert: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> bytes:
        """The JSON of ``convert(obj)``, from the cache when this version of ``obj`` was seen before."""
        meta = obj.get("metadata") or {}
        rv = meta.get("resourceVersion")
        if not rv:
            return _encode(convert(obj))
        ck = (key, version, meta.get("namespace") or "", meta.get("name") or "", str(rv))
        with self._lock:
            cached = self._data.get(ck)
            if cached is not None:
                self.hits += 1
                return cached
        data = _encode(convert(obj))
        with self._lock:
            self.misses += 1
            self._data[ck] = data
            while len(self._data) > self.maxsize:
                del self._data[next(iter(self._data))]
        return data

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)
