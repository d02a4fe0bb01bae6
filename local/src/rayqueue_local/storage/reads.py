"""Reads of the store: ``get``, ``get_by_uid``, ``list`` and consistent pagination (``list_page``).

A ``continue`` token encodes the list's resourceVersion and the last key served; later pages are
taken from the state at that version, reconstructed by undoing the newer events of the bounded
history (:meth:`StoreReads._state_at`), and get 410 Expired once the history no longer reaches back
to it. Label and field selectors come from :mod:`rayqueue_local.apimachinery.selectors` (400 when
malformed, :func:`parse_selectors`, which the watches share).
The examples run with :mod:`rayqueue_local.storage.store`'s doctests.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from rayqueue_local.apimachinery.patch import deep_copy
from rayqueue_local.apimachinery.selectors import (
    FieldSelector,
    LabelSelector,
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)
from rayqueue_local.storage.storecore import StoreCore
from rayqueue_local.storage.storetypes import ListResult, ObjKey, StoreError, object_key

__all__ = ["StoreReads", "parse_selectors"]


def _encode_continue(rv: int, start: ObjKey) -> str:
    raw = json.dumps(
        {"v": "meta.k8s.io/v1", "rv": rv, "start": f"{start[0]}/{start[1]}"}, separators=(",", ":")
    )
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, ObjKey]:
    try:
        raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        ns, _, name = raw["start"].partition("/")
        return int(raw["rv"]), (ns, name)
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error):
        # Upstream's words (storage.DecodeContinue), never the decoder's Python exception text.
        raise StoreError(
            400,
            "BadRequest",
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ) from None


def parse_selectors(
    key: str, label_selector: str | None, field_selector: str | None
) -> tuple[LabelSelector, FieldSelector]:
    """The label and field selectors of a list or watch of ``key``; ``StoreError(400)`` when malformed.

    Example:
        >>> labels, fields = parse_selectors("pods", "app=web", "spec.nodeName=n1")
        >>> labels.matches({"app": "web"}), fields.equals("spec.nodeName")
        (True, 'n1')
        >>> parse_selectors("pods", "a in (b", None)
        Traceback (most recent call last):
        ...
        rayqueue_local.storage.storetypes.StoreError: unable to parse requirement: ...
    """
    try:
        return parse_label_selector(label_selector), parse_field_selector(field_selector, key)
    except SelectorError as exc:
        raise StoreError(400, "BadRequest", str(exc)) from None


class StoreReads:
    """The read methods of :class:`~rayqueue_local.storage.store.Store` over the core's objects and history
    (see the methods' examples)."""

    def __init__(self, core: StoreCore) -> None:
        self._core = core

    def get(self, key: str, namespace: str | None, name: str, *, copy: bool = True) -> dict[str, Any]:
        """A copy of one object; ``StoreError(404)`` if absent.

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> Store().get("namespaces", None, "default")["metadata"]["name"]
            'default'
        """
        with self._core.lock:
            obj = self._core.stored(key, namespace, name)
            return deep_copy(obj) if copy else obj

    def get_by_uid(self, uid: str) -> tuple[str, dict[str, Any]] | None:
        """``(key, object copy)`` of the object with ``uid``, or ``None``.

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> uid = store.get("namespaces", None, "default")["metadata"]["uid"]
            >>> store.get_by_uid(uid)[0]
            'namespaces'
        """
        core = self._core
        with core.lock:
            where = core.index.where(uid)
            if where is None:
                return None
            key, ns, name = where
            return key, deep_copy(core.index.bucket(key)[(ns, name)])

    def list(
        self,
        key: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        copy: bool = True,
    ) -> list[dict[str, Any]]:
        """Copies of the matching objects, sorted by namespace and name.

        ``copy=False`` (also on :meth:`get` and :meth:`list_page`) returns the stored objects
        themselves, which the store never changes in place (every write stores a new dict): for
        callers that only read or serialise them, such as the API layer. Never mutate them.

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> meta = {"name": "p", "namespace": "default", "labels": {"a": "b"}}
            >>> _ = store.create("pods", {"metadata": meta})
            >>> [p["metadata"]["name"] for p in store.list("pods", label_selector="a in (b,c)")]
            ['p']
        """
        return self.list_page(
            key, namespace, label_selector=label_selector, field_selector=field_selector, copy=copy
        ).items

    def list_page(
        self,
        key: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        copy: bool = True,
        resource_version: int | None = None,
    ) -> ListResult:
        """One page of a list (``limit``/``continue`` as the API server does them).

        ``resource_version`` lists the state at that version exactly (``resourceVersionMatch=Exact``):
        ``StoreError(410, "Expired")`` once the history no longer reaches back to it; a version the store
        has not reached is the caller's to refuse.

        Pages after the first are taken from the state at the first page's resourceVersion, so
        writes in between neither duplicate nor skip objects. A token older than the event history
        gets ``StoreError(410, "Expired")``.

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> for n in "abc":
            ...     _ = store.create("configmaps", {"metadata": {"name": n, "namespace": "default"}})
            >>> page = store.list_page("configmaps", "default", limit=2)
            >>> [c["metadata"]["name"] for c in page.items], page.remaining_item_count
            (['a', 'b'], 1)
            >>> rest = store.list_page("configmaps", continue_token=page.continue_token)
            >>> [c["metadata"]["name"] for c in rest.items]
            ['c']
        """
        core = self._core
        rt = core.resolve(key)
        labels, fields = parse_selectors(key, label_selector, field_selector)
        ns = core.scope(rt, namespace)
        with core.lock:
            start: ObjKey | None = None
            list_rv = core.rv
            objects = core.index.bucket(key)
            if resource_version is not None and not continue_token:
                if resource_version < core.events.compacted_rv:
                    raise StoreError(410, "Expired", "The resourceVersion for the provided list is too old.")
                if resource_version < core.rv:
                    list_rv, objects = resource_version, self._state_at(key, resource_version)
            if continue_token:
                list_rv, start = _decode_continue(continue_token)
                if list_rv < core.events.compacted_rv:
                    raise StoreError(
                        410,
                        "Expired",
                        "The provided continue parameter is too old to display a consistent list "
                        "result. You can "
                        "start a new list without the continue parameter, or use the continue token in this "
                        "response to retrieve the remainder of the results. Continuing with the "
                        "provided token "
                        "results in an inconsistent list - objects that were created, modified, or "
                        "deleted between "
                        "the time the first chunk was returned and now may show up in the list.",
                    )
                if list_rv < core.rv:
                    objects = self._state_at(key, list_rv)
            name_eq = fields.equals("metadata.name")
            if name_eq is not None and ns:
                candidates = [(ns, name_eq)] if (ns, name_eq) in objects else []
            else:
                candidates = [k for k in objects if not ns or k[0] == ns]
            candidates.sort()
            selected: list[tuple[ObjKey, dict[str, Any]]] = []
            for k in candidates:
                if start is not None and k <= start:
                    continue
                obj = objects[k]
                if not labels.empty and not labels.matches(obj["metadata"].get("labels")):
                    continue
                if not fields.empty and not fields.matches(key, obj):
                    continue
                selected.append((k, obj))
            token: str | None = None
            remaining: int | None = None
            if limit is not None and limit > 0 and len(selected) > limit:
                remaining = len(selected) - limit
                selected = selected[:limit]
                token = _encode_continue(list_rv, selected[-1][0])
            items = [deep_copy(obj) for _k, obj in selected] if copy else [obj for _k, obj in selected]
        return ListResult(items, str(list_rv), token, remaining)

    def _state_at(self, key: str, rv: int) -> dict[ObjKey, dict[str, Any]]:
        """The objects of ``key`` as they were at resourceVersion ``rv`` (undoing later events)."""
        state = dict(self._core.index.bucket(key))
        for event in self._core.events.newest_first():
            if event.resource_version <= rv:
                break
            if event.key != key:
                continue
            k = object_key(event.object)
            if event.type == "ADDED":
                state.pop(k, None)
            elif event.old is not None:
                state[k] = event.old
        return state
