"""Serving fewer versions of a resource than its CRD lists: :func:`with_served_versions`.

A Kueue release serves ``kueue.x-k8s.io`` at the versions it was built with: ``v1beta1`` alone before
0.15, ``v1beta2`` and the deprecated ``v1beta1`` from 0.15 to 0.19, ``v1beta2`` alone from 0.20
(kueue#14558 marks ``v1beta1`` ``served: false``). The plane's CRD files are Kueue 0.19's (both);
:func:`with_served_versions` narrows one type to the versions a release serves, so that the others'
paths answer 404 and discovery does not list them, as on that release's cluster.

The storage version never changes: the plane keeps ``v1beta2`` objects whatever is served (its Kueue
controllers read and write them), converting at the API edge as the conversion webhook does. A CRD
document says what is served: each version's ``served`` flag is rewritten, so ``kubectl get crd`` agrees
with discovery (where only ``v1beta1`` is served, ``v1beta2`` stays listed as the unserved storage
version; a real release before 0.15 lists ``v1beta1`` alone). A version served alone is not
deprecated: there is nothing to move to.

Example:
    >>> from rayqueue_local.registry.builtintypes import builtin_types
    >>> wl = {t.key: t for t in builtin_types()}["workloads.kueue.x-k8s.io"]
    >>> old = with_served_versions(wl, ("v1beta1",))
    >>> old.versions, old.unserved, old.storage_version, old.deprecated
    (('v1beta1',), ('v1beta2',), 'v1beta2', {})
"""

from __future__ import annotations

import dataclasses

from rayqueue_local.apimachinery.patchcore import deep_copy
from rayqueue_local.registry.resourcetypes import ResourceType

__all__ = ["with_served_versions"]


def with_served_versions(rt: ResourceType, served: tuple[str, ...]) -> ResourceType:
    """``rt`` serving only those of ``served`` it knows, in that order (preferred first).

    The versions it no longer serves become :attr:`ResourceType.unserved` (still converted to and from
    storage, for the plane's own ``cp.apply``). ``rt`` itself when it knows none of ``served`` (a type
    of the group at other versions stays as it is).

    Example:
        >>> rt = ResourceType(group="x.io", versions=("v2", "v1"), storage_version="v2", plural="foos",
        ...                   singular="foo", kind="Foo", deprecated={"v1": "use v2"})
        >>> new = with_served_versions(rt, ("v2",))
        >>> new.versions, new.unserved, new.deprecated
        (('v2',), ('v1',), {})
        >>> with_served_versions(rt, ("v3",)) is rt
        True
    """
    known = dict.fromkeys((*rt.versions, *rt.unserved, rt.storage_version, *rt.schemas))
    versions = tuple(v for v in served if v in known)
    if not versions:
        return rt
    unserved = tuple(v for v in known if v not in versions)
    alone = len(versions) == 1
    deprecated = {} if alone else {v: w for v, w in rt.deprecated.items() if v in versions}
    crd = rt.crd
    if crd is not None:
        crd = deep_copy(crd)
        for entry in crd["spec"]["versions"]:
            entry["served"] = entry.get("name") in versions
            if alone or not entry["served"]:
                entry.pop("deprecated", None)
                entry.pop("deprecationWarning", None)
    return dataclasses.replace(
        rt,
        versions=versions,
        unserved=unserved,
        deprecated=deprecated,
        printer_columns={v: c for v, c in rt.printer_columns.items() if v in versions},
        crd=crd,
    )
