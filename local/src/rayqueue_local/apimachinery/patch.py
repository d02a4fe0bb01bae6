"""The four patch kinds of the Kubernetes API, as pure functions on JSON-like values.

* :func:`merge_patch` — JSON merge patch, RFC 7386 (``application/merge-patch+json``).
* :func:`json_patch` — JSON patch, RFC 6902 (``application/json-patch+json``): add, remove, replace,
  move, copy, test.
* :func:`strategic_merge_patch` — strategic merge (``application/strategic-merge-patch+json``),
  **an approximation**: upstream reads the merge key and strategy of every list from Go struct tags.
  Here a list merges by key only when its field name is in :data:`MERGE_KEYS` (``containers``,
  ``initContainers``, ``env``, ``ports``, ``volumes``, ``volumeMounts``, ``conditions``, ...) and every
  element is an object carrying that key (``ports`` merge by ``containerPort`` or ``port``);
  ``finalizers`` are unioned (``patchStrategy: merge`` upstream); any other list is replaced, as
  upstream does for lists without a patch strategy. Supported directives: ``$patch: delete`` (in a
  list element: remove the element with that key; in a map: remove the map), ``$patch: replace`` (in
  a map: replace instead of merging), ``$retainKeys`` is ignored,
  ``$deleteFromPrimitiveList/<field>`` removes values from a primitive list,
  ``$setElementOrder/<field>`` is accepted and ignored. Custom resources get merge
  patch semantics upstream (415 for strategic); the server decides whether to refuse.
* :func:`server_side_apply` — server-side apply with ``managedFields`` bookkeeping (see its docstring).

Errors are raised as :class:`PatchError` carrying the HTTP status code, reason and causes the API
server would send; the store turns them into ``StoreError``.

Example:
    >>> merge_patch({"a": 1, "b": {"c": 2}}, {"b": {"c": None, "d": 3}})
    {'a': 1, 'b': {'d': 3}}
    >>> json_patch({"a": [1, 2]}, [{"op": "add", "path": "/a/-", "value": 3}])
    {'a': [1, 2, 3]}

Each kind lives in its own module: :mod:`~rayqueue_local.apimachinery.patchcore` (errors, copies),
:mod:`~rayqueue_local.apimachinery.rfcpatch` (merge and JSON patch),
:mod:`~rayqueue_local.apimachinery.strategic`
and :mod:`~rayqueue_local.apimachinery.ssa` (server-side apply); this module re-exports them.
"""

from __future__ import annotations

from rayqueue_local.apimachinery.patchcore import PatchError, deep_copy, interned_copy
from rayqueue_local.apimachinery.rfcpatch import json_patch, merge_patch
from rayqueue_local.apimachinery.ssa import ListKeys as ListKeys
from rayqueue_local.apimachinery.ssa import Path as Path
from rayqueue_local.apimachinery.ssa import default_list_keys as default_list_keys
from rayqueue_local.apimachinery.ssa import fieldset_to_paths as fieldset_to_paths
from rayqueue_local.apimachinery.ssa import paths_to_fieldset as paths_to_fieldset
from rayqueue_local.apimachinery.ssa import record_update as record_update
from rayqueue_local.apimachinery.ssa import server_side_apply
from rayqueue_local.apimachinery.strategic import MERGE_KEYS, strategic_merge_patch
from rayqueue_local.apimachinery.strategic import MERGE_PRIMITIVE_LISTS as MERGE_PRIMITIVE_LISTS

__all__ = [
    "MERGE_KEYS",
    "PatchError",
    "deep_copy",
    "interned_copy",
    "json_patch",
    "merge_patch",
    "server_side_apply",
    "strategic_merge_patch",
]
