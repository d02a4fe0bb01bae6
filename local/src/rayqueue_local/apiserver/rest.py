"""The Kubernetes REST semantics of the local API server, over the store.

:class:`RestAPI` turns a parsed request (:class:`~rayqueue_local.apiserver.http.RequestInfo`) into store
calls and a :class:`~rayqueue_local.apiserver.http.Response`: discovery documents, get/list/watch,
create/update/patch/delete/deletecollection, the ``status`` and ``scale`` subresources, version
conversion (Kueue v1beta1 views of v1beta2 objects) and the checks the API server makes before
storage sees a body (kind and apiVersion against the URL, namespace and name against the URL).
Store errors become ``Status`` bodies unchanged.

Example:
    >>> from rayqueue_local.storage.store import Store
    >>> from rayqueue_local.apiserver.http import parse_request
    >>> rest = RestAPI(Store())
    >>> info = parse_request("GET", "/api/v1/namespaces/default", {})
    >>> rest.handle(info, {}, {}, b"").body["metadata"]["name"]
    'default'
"""

from __future__ import annotations

import json
from typing import Any

from rayqueue_local.apimachinery.jsoncache import JSONCache
from rayqueue_local.apimachinery.status import HTTPError, status_body, success_status
from rayqueue_local.apimachinery.strictjson import yaml_duplicate_keys
from rayqueue_local.apiserver import fieldvalidation, listoptions, tables
from rayqueue_local.apiserver.faults import FaultInjector
from rayqueue_local.apiserver.http import RequestInfo, Response, parse_body, query_bool, query_int, query_str
from rayqueue_local.apiserver.requestoptions import (
    BODY_TYPES,
    accepts_json,
    add_warnings,
    delete_options,
    duplicate_fields,
    field_manager,
    is_dry_run,
    media_type,
    not_acceptable,
    patched,
)
from rayqueue_local.apiserver.watchstream import WatchStream, event_line
from rayqueue_local.registry.openapi import OpenAPIDocuments
from rayqueue_local.registry.registry import ResourceType
from rayqueue_local.storage.store import Store, StoreError

__all__ = ["KUBERNETES_VERSION", "RestAPI"]

#: What ``/version`` reports: the Kubernetes minor the emulation follows.
KUBERNETES_VERSION = {
    "major": "1",
    "minor": "34",
    "gitVersion": "v1.34.0-rayqueue-local",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "n/a (Python)",
    "compiler": "cpython",
    "platform": "linux/amd64",
}

#: API groups whose types are compiled into the real API server: only they accept strategic merge patches.
_BUILTIN_GROUPS = frozenset({"", "rbac.authorization.k8s.io", "networking.k8s.io", "apps", "batch"})

_PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": "unsupported",
}

_VERBS = frozenset({"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"})
_DEFAULT_WATCH_TIMEOUT = 1800.0  # the API server's --min-request-timeout


def _from_store(err: StoreError) -> HTTPError:
    return HTTPError(err.code, err.to_status())


class RestAPI:
    """Serves resource and discovery requests from a :class:`~rayqueue_local.storage.store.Store`.

    ``bookmark_interval`` is how often an idle watch with ``allowWatchBookmarks`` gets a
    ``BOOKMARK`` event (the API server sends one about every minute; we default to 5 s).

    Example:
        >>> from rayqueue_local.apiserver.http import parse_request
        >>> RestAPI(Store()).handle(parse_request("GET", "/apis", {}), {}, {}, b"").body["kind"]
        'APIGroupList'
    """

    def __init__(
        self, store: Store, faults: FaultInjector | None = None, *, bookmark_interval: float = 5.0
    ) -> None:
        self.store = store
        self.registry = store.registry
        self.faults = faults or FaultInjector()
        self.bookmark_interval = bookmark_interval
        self.json_cache = JSONCache()
        self.openapi = OpenAPIDocuments(self.registry)

    # -- entry ---------------------------------------------------------------------------------
    def handle(
        self,
        info: RequestInfo,
        query: dict[str, list[str]],
        headers: Any,
        body: bytes,
        user: Any = None,
    ) -> Any:
        """One request -> a ``Response`` (raises :class:`HTTPError` for errors)."""
        if info.kind == "other":
            if info.path.rstrip("/") == "/version":
                return Response(200, KUBERNETES_VERSION)
            if info.path.startswith("/openapi/"):
                return self._openapi(info.path, query, headers)
            raise HTTPError.not_found_resource()
        if info.kind == "discovery":
            doc = self._discovery(info)
            if doc is None:
                raise HTTPError.not_found_resource()
            return Response(200, doc)
        rt = self.registry.lookup(info.group, info.version, info.resource)
        if rt is None:
            raise HTTPError.not_found_resource()
        self._check_scope(info, rt)
        if info.verb not in rt.verbs and not info.subresource:  # e.g. a GET of a create-only review
            raise HTTPError.method_not_allowed(info.verb.upper())
        handler = getattr(self, "_" + info.verb, None) if info.verb in _VERBS else None
        if handler is None:
            raise HTTPError.method_not_allowed(info.verb.upper())
        try:
            response: Response = handler(info, rt, query, headers, body)
        except StoreError as err:
            raise _from_store(err) from None
        warning = rt.deprecated.get(info.version)
        if warning:
            add_warnings(response, [warning])
        return response

    def _openapi(self, path: str, query: dict[str, list[str]], headers: Any) -> Response:
        """``/openapi/v2``, ``/openapi/v3`` and ``/openapi/v3/<group-version>``, in JSON.

        Upstream serves protobuf too; a client that accepts only protobuf gets 406 NotAcceptable
        (kubectl asks ``/openapi/v3`` first, in JSON, and uses v2 only where v3 is missing). A
        document URL whose ``hash`` is stale is redirected (301) to the current one, as upstream
        does; a current one is cacheable for good, and ``If-None-Match`` with its ETag gets 304.
        """
        if not accepts_json(headers.get("Accept")):
            raise HTTPError.make(
                406,
                "NotAcceptable",
                "only the following media types are accepted: application/json, */*",
            )
        path = path.rstrip("/")
        if path == "/openapi/v2":
            return Response(200, self.openapi.v2_document())
        if path == "/openapi/v3":
            return Response(200, self.openapi.v3_index(), {"Cache-Control": "no-cache, private"})
        found = self.openapi.v3_document(path.removeprefix("/openapi/v3/"))
        if not path.startswith("/openapi/v3/") or found is None:
            raise HTTPError.not_found_resource()
        body, digest = found
        etag = f'"{digest}"'
        asked = query_str(query, "hash")
        if asked and asked != digest:
            location = f"{path}?hash={digest}"
            return Response(301, status_body(301, "MovedPermanently", location), {"Location": location})
        cache = {"Etag": etag, "Cache-Control": "public, immutable" if asked else "no-cache, private"}
        if headers.get("If-None-Match") == etag:
            return Response(304, b"", cache)
        return Response(200, body, cache)

    def _discovery(self, info: RequestInfo) -> dict[str, Any] | None:
        reg = self.registry
        if info.prefix == "api":
            if not info.version:
                return reg.api_versions()
            return reg.api_resource_list("", info.version)
        if not info.group:
            return reg.api_group_list()
        if not info.version:
            return reg.api_group(info.group)
        return reg.api_resource_list(info.group, info.version)

    def _check_scope(self, info: RequestInfo, rt: ResourceType) -> None:
        if info.namespace is not None and not rt.namespaced:
            raise HTTPError.not_found_resource()
        if info.subresource:
            if info.subresource not in rt.subresources or not info.name:
                raise HTTPError.not_found_resource()
            if info.verb not in ("get", "update", "patch"):
                raise HTTPError.method_not_allowed(info.verb)
        if rt.namespaced and info.namespace is None:
            if info.verb in ("create", "deletecollection"):
                raise HTTPError.method_not_allowed(info.verb)
            if info.name:
                raise HTTPError.not_found_resource()

    # -- conversions -----------------------------------------------------------------------------
    def _out(self, rt: ResourceType, obj: dict[str, Any], version: str) -> dict[str, Any]:
        if version == rt.storage_version:
            return obj
        return self.registry.from_storage(rt.key, obj, version)

    def _in(
        self, info: RequestInfo, rt: ResourceType, body: bytes, headers: Any, query: Any
    ) -> tuple[dict[str, Any], list[str]]:
        """Decode and check a create/update body: ``(object in the storage version, warnings)``.

        ``fieldValidation`` is applied here (:mod:`~rayqueue_local.apiserver.fieldvalidation`).
        """
        mode = fieldvalidation.directive(query, info.verb)
        media = media_type(headers)
        if media not in BODY_TYPES:
            raise HTTPError.make(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: "
                + ", ".join(BODY_TYPES),
            )
        obj = parse_body(body, media)
        if not isinstance(obj, dict):
            raise HTTPError.bad_request(
                "the body of the request was in an unknown format - expected an object, "
                f"got {type(obj).__name__}"
            )
        self._check_body(info, rt, obj)
        warnings: list[str] = []
        if info.subresource != "scale":
            duplicates = duplicate_fields(body, media) if mode != "Ignore" else []
            warnings = fieldvalidation.check_object(
                rt, info.version, obj, duplicates, mode, operation=info.verb
            )
        return self.registry.to_storage(rt.key, obj, info.version), warnings

    def _check_body(self, info: RequestInfo, rt: ResourceType, obj: dict[str, Any]) -> None:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        expected_av = rt.api_version_for(info.version)
        if info.subresource == "scale":
            return
        if api_version not in (None, "") and api_version != expected_av:
            raise HTTPError.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({expected_av})"
            )
        if kind not in (None, "") and kind != rt.kind:
            raise HTTPError.bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
            )
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        if not isinstance(meta, dict):
            raise HTTPError.bad_request("metadata must be an object")
        if rt.namespaced and info.namespace is not None:
            ns = meta.get("namespace")
            if ns in (None, ""):
                meta["namespace"] = info.namespace
            elif ns != info.namespace:
                raise HTTPError.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
        if info.name:
            name = meta.get("name")
            if name in (None, ""):
                meta["name"] = info.name
            elif name != info.name:
                raise HTTPError.bad_request(
                    f"the name of the object ({name}) does not match the name on the URL ({info.name})"
                )

    # -- reads -------------------------------------------------------------------------------------
    def _get(self, info: RequestInfo, rt: ResourceType, query: Any, headers: Any, body: bytes) -> Any:
        # copy=False: the stored object itself (never changed in place); we only serialise it
        target = tables.negotiate(headers.get("Accept"))
        include = tables.include_object_option(query_str(query, "includeObject")) if target else ""
        obj = self.store.get(rt.key, info.namespace, info.name, copy=False)
        if info.subresource == "scale":
            return Response(200, self.registry.scale_of(rt.key, obj))
        out = self._out(rt, obj, info.version)
        if target is None:
            return Response(200, out)
        kind, api_version = target
        if kind == "PartialObjectMetadata":
            return Response(200, tables.partial_metadata(out, api_version))
        if kind != "Table":
            raise not_acceptable(kind)
        meta = {"resourceVersion": (out.get("metadata") or {}).get("resourceVersion", "")}
        return Response(
            200,
            tables.table(
                rt, info.version, [out], api_version=api_version, metadata=meta, include_object=include
            ),
        )

    def _list(self, info: RequestInfo, rt: ResourceType, query: Any, headers: Any, body: bytes) -> Any:
        target = tables.negotiate(headers.get("Accept"))
        include = tables.include_object_option(query_str(query, "includeObject")) if target else ""
        limit = query_int(query, "limit")
        exact = self._list_version(listoptions.parse(query, watch=False))
        page = self.store.list_page(
            rt.key,
            info.namespace,
            label_selector=query_str(query, "labelSelector"),
            field_selector=query_str(query, "fieldSelector"),
            limit=limit,
            continue_token=query_str(query, "continue") or None,
            copy=False,
            resource_version=exact,
        )
        meta: dict[str, Any] = {"resourceVersion": page.resource_version}
        if page.continue_token:
            meta["continue"] = page.continue_token
        if page.remaining_item_count is not None:
            meta["remainingItemCount"] = page.remaining_item_count
        version = info.version

        def convert(obj: dict[str, Any]) -> dict[str, Any]:
            return self._out(rt, obj, version)

        if target is not None:
            kind, api_version = target
            objects = [convert(o) for o in page.items]
            if kind == "Table":
                return Response(
                    200,
                    tables.table(
                        rt, version, objects, api_version=api_version, metadata=meta, include_object=include
                    ),
                )
            if kind != "PartialObjectMetadataList":
                raise not_acceptable(kind)
            partial = [tables.partial_metadata(o, api_version) for o in objects]
            return Response(
                200, {"kind": kind, "apiVersion": api_version, "metadata": meta, "items": partial}
            )
        head = json.dumps(
            {
                "apiVersion": rt.api_version_for(version),
                "kind": rt.list_kind or rt.kind + "List",
                "metadata": meta,
            },
            separators=(",", ":"),
        ).encode()
        items = b",".join(self.json_cache.dumps(rt.key, version, o, convert) for o in page.items)
        return Response(200, head[:-1] + b',"items":[' + items + b"]}")

    def _list_version(self, options: listoptions.ListOptions) -> int | None:
        """Wait for a future ``resourceVersion`` (or 504); the version to list exactly, if ``Exact``."""
        if options.resource_version in (None, "0"):
            return None
        wanted = listoptions.version_number(str(options.resource_version))
        listoptions.wait_for_version(lambda: self.store.resource_version, wanted)
        return wanted if options.match == "Exact" else None

    def _watch_encoder(
        self, rt: ResourceType, version: str, target: tables.TableTarget | None, include: str
    ) -> Any:
        """How a watch writes each object: as stored (cached JSON), or as a one-row Table / metadata."""
        if target is None:
            return lambda obj: self.json_cache.dumps(
                rt.key, version, obj, lambda o: self._out(rt, o, version)
            )
        kind, api_version = target
        if kind not in ("Table", "PartialObjectMetadata"):
            raise not_acceptable(kind)
        first = [True]

        def encode(obj: dict[str, Any]) -> bytes:
            out = self._out(rt, obj, version)
            if kind == "PartialObjectMetadata":
                doc = tables.partial_metadata(out, api_version)
            else:
                meta = {"resourceVersion": (out.get("metadata") or {}).get("resourceVersion", "")}
                doc = tables.table(
                    rt,
                    version,
                    [out],
                    api_version=api_version,
                    metadata=meta,
                    include_object=include,
                    headers=first[0],  # upstream sends the column definitions once per watch
                )
                first[0] = False
            return json.dumps(doc, separators=(",", ":")).encode()

        return encode

    def _watch(self, info: RequestInfo, rt: ResourceType, query: Any, headers: Any, body: bytes) -> Any:
        target = tables.negotiate(headers.get("Accept"))
        include = tables.include_object_option(query_str(query, "includeObject")) if target else ""
        timeout = query_int(query, "timeoutSeconds")
        options = listoptions.parse(query, watch=True)
        rv = options.resource_version
        if options.send_initial_events:  # a watch-list: the state (not older than rv), then changes
            if rv not in (None, "0"):
                listoptions.wait_for_version(
                    lambda: self.store.resource_version, listoptions.version_number(str(rv))
                )
            rv = None
        elif options.send_initial_events is False and rv is None:
            rv = self.store.resource_version  # no initial events: start at the current version
        field_selector = query_str(query, "fieldSelector")
        if info.name:  # GET .../watch/<plural>/<name>
            name_sel = f"metadata.name={info.name}"
            field_selector = f"{field_selector},{name_sel}" if field_selector else name_sel
        try:
            watch = self.store.watch(
                rt.key,
                info.namespace,
                resource_version=rv,
                label_selector=query_str(query, "labelSelector"),
                field_selector=field_selector,
            )
        except StoreError as err:
            if err.code != 410:
                raise
            # Upstream answers 200 and sends the 410 as an ERROR event in the stream.
            error = {"type": "ERROR", "object": status_body(410, err.reason, err.message)}
            return Response(200, stream=iter([event_line(error)]))
        version = info.version
        encode = self._watch_encoder(rt, version, target, include)
        kind, api_version = (target[0], target[1]) if target else (rt.kind, rt.api_version_for(version))
        stream = WatchStream(
            watch,
            encode=encode,
            current_version=lambda: self.store.resource_version,
            faults=self.faults,
            kind=kind,
            api_version=api_version,
            timeout=float(timeout) if timeout and timeout > 0 else _DEFAULT_WATCH_TIMEOUT,
            bookmark_interval=self.bookmark_interval if query_bool(query, "allowWatchBookmarks") else None,
            initial_events_end=bool(options.send_initial_events) and query_bool(query, "allowWatchBookmarks"),
        )
        return Response(200, stream=stream)

    # -- writes ------------------------------------------------------------------------------------
    def _create(self, info: RequestInfo, rt: ResourceType, query: Any, headers: Any, body: bytes) -> Any:
        if info.subresource or info.name:
            raise HTTPError.method_not_allowed("POST")
        obj, warnings = self._in(info, rt, body, headers, query)
        created = self.store.create(
            rt.key, obj, dry_run=is_dry_run(query), field_manager=field_manager(query, "CreateOptions")
        )
        return add_warnings(Response(201, self._out(rt, created, info.version)), warnings)

    def _update(self, info: RequestInfo, rt: ResourceType, query: Any, headers: Any, body: bytes) -> Any:
        if not info.name:
            raise HTTPError.method_not_allowed("PUT")
        obj, warnings = self._in(info, rt, body, headers, query)
        dry_run, manager = is_dry_run(query), field_manager(query, "UpdateOptions")
        if info.subresource == "scale":
            replicas = (obj.get("spec") or {}).get("replicas")
            return Response(200, self._set_replicas(info, rt, replicas, dry_run))
        if info.subresource == "status":
            updated = self.store.update_status(rt.key, obj, dry_run=dry_run, field_manager=manager)
        else:
            updated = self.store.update(rt.key, obj, dry_run=dry_run, field_manager=manager)
        return add_warnings(Response(200, self._out(rt, updated, info.version)), warnings)

    def _patch(self, info: RequestInfo, rt: ResourceType, query: Any, headers: Any, body: bytes) -> Any:
        if not info.name:
            raise HTTPError.method_not_allowed("PATCH")
        media = media_type(headers)
        patch_type = _PATCH_TYPES.get(media)
        if (
            patch_type is None
            or patch_type == "unsupported"
            or (patch_type == "strategic" and rt.group not in _BUILTIN_GROUPS)
        ):
            accepted = (
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
            )
            if rt.group in _BUILTIN_GROUPS:
                accepted += ", application/strategic-merge-patch+json"
            raise HTTPError.make(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: "
                + accepted,
            )
        patch = parse_body(body, media)
        if patch_type == "json" and not isinstance(patch, list):
            raise HTTPError.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
        if patch_type != "json" and not isinstance(patch, dict):
            raise HTTPError.bad_request(
                "the body of the request was in an unknown format - expected an object"
            )
        dry_run, manager = is_dry_run(query), field_manager(query, "PatchOptions")
        if info.subresource == "scale":
            return Response(200, self._patch_scale(info, rt, patch, patch_type, dry_run))
        warnings = self._check_patch_fields(info, rt, patch, patch_type, body, media, query)
        if patch_type == "apply":
            self._check_body(info, rt, patch)
            for required in ("apiVersion", "kind"):
                if not patch.get(required):
                    raise HTTPError.bad_request(f"{required} must be set in an apply patch")
            patch = self.registry.to_storage(rt.key, patch, info.version)
        elif info.version != rt.storage_version:
            converted = self._patch_converted(info, rt, patch, patch_type, dry_run, manager)
            return add_warnings(Response(200, converted), warnings)
        patched = self.store.patch(
            rt.key,
            info.namespace,
            info.name,
            patch,
            patch_type=patch_type,
            subresource=info.subresource or None,
            dry_run=dry_run,
            field_manager=manager,
            force=query_bool(query, "force"),
        )
        return add_warnings(Response(200, self._out(rt, patched, info.version)), warnings)

    @staticmethod
    def _check_patch_fields(
        info: RequestInfo, rt: ResourceType, patch: Any, patch_type: str, body: bytes, media: str, query: Any
    ) -> list[str]:
        """``fieldValidation`` of a patch (Strict raises); returns the warnings to send."""
        mode = fieldvalidation.directive(query, "patch")
        if patch_type == "apply":
            duplicates = yaml_duplicate_keys(body.decode("utf-8", "replace")) if mode != "Ignore" else []
            return fieldvalidation.check_apply(rt, info.version, patch, duplicates, mode)
        json_duplicates = duplicate_fields(body, media) if mode != "Ignore" else []
        return fieldvalidation.check_patch(rt, info.version, patch, patch_type, json_duplicates, mode)

    def _patch_converted(
        self,
        info: RequestInfo,
        rt: ResourceType,
        patch: Any,
        patch_type: str,
        dry_run: bool,
        manager: str | None,
    ) -> dict[str, Any]:
        """Patch the requested-version view of an object, then store it back in the storage version."""
        current = self.store.get(rt.key, info.namespace, info.name)
        view = self.registry.from_storage(rt.key, current, info.version)
        new = patched(view, patch, patch_type, info, rt)
        new.setdefault("metadata", {}).setdefault("resourceVersion", current["metadata"]["resourceVersion"])
        stored = self.registry.to_storage(rt.key, new, info.version)
        if info.subresource == "status":
            out = self.store.update_status(rt.key, stored, dry_run=dry_run, field_manager=manager)
        else:
            out = self.store.update(rt.key, stored, dry_run=dry_run, field_manager=manager)
        return self._out(rt, out, info.version)

    def _set_replicas(
        self, info: RequestInfo, rt: ResourceType, replicas: Any, dry_run: bool
    ) -> dict[str, Any]:
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise HTTPError.make(
                422,
                "Invalid",
                f'Scale.autoscaling "{info.name}" is invalid: spec.replicas: Invalid value: '
                f"{json.dumps(replicas)}: must be greater than or equal to 0",
                details={"name": info.name, "group": "autoscaling", "kind": "Scale"},
                causes=[
                    {"reason": "FieldValueInvalid", "field": "spec.replicas", "message": "Invalid value"}
                ],
            )
        assert rt.scale is not None
        current = self.store.get(rt.key, info.namespace, info.name)
        new = rt.scale.set_replicas(current, replicas)
        updated = self.store.update(rt.key, new, dry_run=dry_run)
        return self.registry.scale_of(rt.key, updated)

    def _patch_scale(
        self, info: RequestInfo, rt: ResourceType, patch: Any, patch_type: str, dry_run: bool
    ) -> dict[str, Any]:
        scale = self.registry.scale_of(rt.key, self.store.get(rt.key, info.namespace, info.name))
        new = patched(scale, patch, patch_type, info, rt, strategic=False)
        return self._set_replicas(info, rt, (new.get("spec") or {}).get("replicas"), dry_run)

    def _delete(self, info: RequestInfo, rt: ResourceType, query: Any, headers: Any, body: bytes) -> Any:
        options = delete_options(query, headers, body)
        pre = options.get("preconditions") or {}
        result = self.store.delete(
            rt.key,
            info.namespace,
            info.name,
            propagation_policy=options.get("propagationPolicy") or "Background",
            resource_version=pre.get("resourceVersion"),
            uid=pre.get("uid"),
            dry_run=is_dry_run(query) or options.get("dryRun") == ["All"],
        )
        if result is None:
            return Response(200, success_status({"name": info.name, "group": rt.group, "kind": rt.plural}))
        meta = result.get("metadata", {})
        if rt.group in _BUILTIN_GROUPS and not meta.get("deletionTimestamp"):
            details = {"name": info.name, "group": rt.group, "kind": rt.plural, "uid": meta.get("uid")}
            return Response(200, success_status(details))
        code = 202 if meta.get("deletionTimestamp") and meta.get("finalizers") else 200
        return Response(code, self._out(rt, result, info.version))

    def _deletecollection(
        self, info: RequestInfo, rt: ResourceType, query: Any, headers: Any, body: bytes
    ) -> Any:
        options = delete_options(query, headers, body)
        deleted = self.store.delete_collection(
            rt.key,
            info.namespace,
            label_selector=query_str(query, "labelSelector"),
            field_selector=query_str(query, "fieldSelector"),
            propagation_policy=options.get("propagationPolicy") or "Background",
        )
        items = [self._out(rt, o, info.version) for o in deleted]
        return Response(
            200,
            {
                "apiVersion": rt.api_version_for(info.version),
                "kind": rt.list_kind or rt.kind + "List",
                "metadata": {"resourceVersion": self.store.resource_version},
                "items": items,
            },
        )
