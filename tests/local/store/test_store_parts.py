"""The store is a facade over parts: its public surface is what it was before it was composed, and no
part inherits from another.

The surface below was recorded from the store of six mixins (``Store(StorePatching, StoreWatches)`` over
``StoreWrites``, ``StoreDeletion``, ``StoreReads`` and ``StoreCore``) before it was recomposed: every
caller in rayqueue_local and the tests uses these names with these signatures.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import rayqueue_local.storage
from rayqueue_local.storage.store import Store

#: Each public name of a ``Store`` and the signature of its method (``None``: a property or attribute).
SURFACE: dict[str, str | None] = {
    "add_admission_hook": "(key: str, hook: AdmissionHook) -> None",
    "apply": (
        "(key: str, obj: dict[str, Any], field_manager: str, force: bool = False, *, subresource: "
        "str | None = None, dry_run: bool = False) -> dict[str, Any]"
    ),
    "close": "() -> None",
    "count": "(key: str | None = None) -> int",
    "create": (
        "(key: str, obj: dict[str, Any], *, dry_run: bool = False, field_manager: str | None = "
        "None) -> dict[str, Any]"
    ),
    "delete": (
        "(key: str, namespace: str | None, name: str, *, propagation_policy: str = Background, "
        "resource_version: str | None = None, uid: str | None = None, dry_run: bool = False) -> "
        "dict[str, Any] | None"
    ),
    "delete_collection": (
        "(key: str, namespace: str | None = None, *, label_selector: str | None = None, "
        "field_selector: str | None = None, propagation_policy: str = Background) -> Objects"
    ),
    "get": "(key: str, namespace: str | None, name: str, *, copy: bool = True) -> dict[str, Any]",
    "get_by_uid": "(uid: str) -> tuple[str, dict[str, Any]] | None",
    "list": (
        "(key: str, namespace: str | None = None, *, label_selector: str | None = None, "
        "field_selector: str | None = None, copy: bool = True) -> list[dict[str, Any]]"
    ),
    "list_page": (
        "(key: str, namespace: str | None = None, *, label_selector: str | None = None, "
        "field_selector: str | None = None, limit: int | None = None, continue_token: str | None = "
        "None, copy: bool = True, resource_version: int | None = None) -> ListResult"
    ),
    "patch": (
        "(key: str, namespace: str | None, name: str, patch: PatchBody, *, patch_type: str = merge,"
        " subresource: str | None = None, dry_run: bool = False, field_manager: str | None = None, "
        "force: bool = False) -> dict[str, Any]"
    ),
    "record_event": (
        "(involved: dict[str, Any], *, type: str, reason: str, message: str, source: str) -> dict[str, Any]"
    ),
    "recovery_notes": None,
    "registry": None,
    "resource_version": None,
    "subscribe": "(callback: Callable[[Event], None]) -> Callable[[], None]",
    "type_changed": "(key: str) -> None",
    "update": (
        "(key: str, obj: dict[str, Any], *, dry_run: bool = False, field_manager: str | None = "
        "None) -> dict[str, Any]"
    ),
    "update_status": (
        "(key: str, obj: dict[str, Any], *, dry_run: bool = False, field_manager: str | None = "
        "None) -> dict[str, Any]"
    ),
    "validating": None,
    "watch": (
        "(key: str, namespace: str | None = None, resource_version: str | None = None, "
        "label_selector: str | None = None, field_selector: str | None = None) -> Watch"
    ),
}


def test_the_public_surface_is_unchanged() -> None:
    store = Store()
    public = {name for name in dir(store) if not name.startswith("_")}
    assert public == set(SURFACE)
    for name, signature in SURFACE.items():
        member = getattr(store, name)
        if signature is None:
            assert not callable(member), name
        else:
            assert str(inspect.signature(member)).replace("'", "") == signature, name


def test_no_storage_class_inherits_from_another_of_the_package() -> None:
    """Parts are held, not inherited: no class of ``rayqueue_local.storage`` derives from a sibling (errors
    aside: ``StorageUnavailableError`` is a ``StoreError``)."""
    package = rayqueue_local.storage
    inherited = []
    for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            if (
                not inspect.isclass(cls)
                or issubclass(cls, Exception)
                or inspect.getfile(cls) != module.__file__
            ):
                continue
            inherited += [
                f"{cls.__name__}({base.__name__})"
                for base in cls.__mro__[1:]
                if base.__module__.startswith(package.__name__)
            ]
    assert not inherited
