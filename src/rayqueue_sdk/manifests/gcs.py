"""GCS fault tolerance with an external Redis: KubeRay's ``spec.gcsFaultToleranceOptions``, its rules, and
codeflare-sdk's field names for it (``enable_gcs_ft``, ``redis_address``, ``redis_password_secret``,
``external_storage_namespace``).

Pure: the rules raise :class:`~rayqueue_sdk.errors.ConfigError` naming the field and what is allowed; the
builder renders what KubeRay reads (``redisAddress``, ``redisPassword.valueFrom.secretKeyRef`` and
``externalStorageNamespace``, [R ray-operator/apis/ray/v1/raycluster_types.go GcsFaultToleranceOptions]).
The password itself is never here: only the name and key of the Secret that holds it.

Example:
    >>> gcs_fault_tolerance_options("r.ds.svc:6379", {"name": "redis-pw", "key": "pw"}, None)["redisPassword"]
    {'valueFrom': {'secretKeyRef': {'name': 'redis-pw', 'key': 'pw'}}}
    >>> check_gcs_ft(True, "redis", None, None)
    Traceback (most recent call last):
    ...
    rayqueue_sdk.errors.ConfigError: redis_address: not host:port (got 'redis'); allowed: ...
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.errors import ConfigError

__all__ = [
    "REDIS_ADDRESS_ALLOWED",
    "check_gcs_ft",
    "gcs_fault_tolerance_options",
    "gcs_fields_from_spec",
]

#: What ``redis_address`` may be, in words.
REDIS_ADDRESS_ALLOWED = (
    "host:port of the Redis server (a DNS name, an IPv4 address or [IPv6], and a port 1-65535), "
    "optionally prefixed by redis:// or rediss://, e.g. 'redis.my-ns.svc.cluster.local:6379'"
)
_HOST = re.compile(
    r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[-A-Za-z0-9]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[-A-Za-z0-9]{0,61}"
    r"[A-Za-z0-9])?)*)$"
)
_SECRET_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_SECRET_ALLOWED = "a dict {'name': <Secret name>, 'key': <key in the Secret>} naming the Redis password"


def _check_address(value: Any) -> None:
    text = value if isinstance(value, str) else ""
    for scheme in ("redis://", "rediss://"):
        if text.startswith(scheme):
            text = text[len(scheme) :]
    host, sep, port = text.rpartition(":")
    ok = bool(sep) and bool(_HOST.match(host)) and port.isdigit() and 0 < int(port) < 65536
    if not ok:
        raise ConfigError("redis_address", value, REDIS_ADDRESS_ALLOWED, problem="not host:port")


def _check_secret(value: Any) -> None:
    if not isinstance(value, Mapping) or set(value) != {"name", "key"}:
        raise ConfigError("redis_password_secret", value, _SECRET_ALLOWED, problem="not a Secret reference")
    if (
        not isinstance(value["name"], str)
        or len(value["name"]) > 253
        or not _SECRET_NAME.match(value["name"])
    ):
        raise ConfigError("redis_password_secret['name']", value["name"], "a Secret name (a DNS subdomain)")
    if not isinstance(value["key"], str) or len(value["key"]) > 253 or not _SECRET_KEY.match(value["key"]):
        raise ConfigError(
            "redis_password_secret['key']", value["key"], "a Secret key: letters, digits, '-', '_' and '.'"
        )


def check_gcs_ft(
    enabled: bool, redis_address: Any, password_secret: Any, external_storage_namespace: Any
) -> None:
    """The rules of codeflare-sdk's GCS fault tolerance fields: with ``enabled`` a ``host:port``
    ``redis_address`` is required, ``password_secret`` (optional) names a Secret and its key; without it
    none of the other fields may be set (they would be silently ignored).

    Example:
        >>> check_gcs_ft(True, "10.0.0.7:6379", {"name": "redis-pw", "key": "password"}, "team-a-ws")
        >>> check_gcs_ft(False, "10.0.0.7:6379", None, None)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: redis_address: set without enable_gcs_ft=True ...
    """
    if not enabled:
        for field, value in (
            ("redis_address", redis_address),
            ("redis_password_secret", password_secret),
            ("external_storage_namespace", external_storage_namespace),
        ):
            if value is not None:
                raise ConfigError(
                    field,
                    value,
                    "None, or enable_gcs_ft=True to use GCS fault tolerance with an external Redis",
                    problem="set without enable_gcs_ft=True",
                )
        return
    if redis_address is None:
        raise ConfigError(
            "redis_address", None, REDIS_ADDRESS_ALLOWED, problem="required when enable_gcs_ft is True"
        )
    _check_address(redis_address)
    if password_secret is not None:
        _check_secret(password_secret)
    if external_storage_namespace is not None and (
        not isinstance(external_storage_namespace, str) or not external_storage_namespace.strip()
    ):
        raise ConfigError(
            "external_storage_namespace",
            external_storage_namespace,
            "a non-empty string: the key prefix of this cluster's GCS data in Redis (default: the UID)",
        )


def gcs_fault_tolerance_options(
    redis_address: str, password_secret: Mapping[str, str] | None, external_storage_namespace: str | None
) -> dict[str, Any]:
    """KubeRay's ``gcsFaultToleranceOptions`` for checked fields (:func:`check_gcs_ft`).

    Example:
        >>> gcs_fault_tolerance_options("10.0.0.7:6379", None, "team-a-ws")
        {'redisAddress': '10.0.0.7:6379', 'externalStorageNamespace': 'team-a-ws'}
    """
    options: dict[str, Any] = {"redisAddress": redis_address}
    if password_secret is not None:
        ref = {"name": password_secret["name"], "key": password_secret["key"]}
        options["redisPassword"] = {"valueFrom": {"secretKeyRef": ref}}
    if external_storage_namespace is not None:
        options["externalStorageNamespace"] = external_storage_namespace
    return options


def gcs_fields_from_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """codeflare-sdk's fields back from a RayCluster ``spec`` (empty without GCS fault tolerance); a
    password given as a plain ``value`` is not read back (only a Secret reference is).

    Example:
        >>> spec = {"gcsFaultToleranceOptions": gcs_fault_tolerance_options("r:6379", None, None)}
        >>> gcs_fields_from_spec(spec)
        {'enable_gcs_ft': True, 'redis_address': 'r:6379'}
    """
    options = spec.get("gcsFaultToleranceOptions")
    if not isinstance(options, Mapping):
        return {}
    fields: dict[str, Any] = {"enable_gcs_ft": True, "redis_address": options.get("redisAddress")}
    ref = ((options.get("redisPassword") or {}).get("valueFrom") or {}).get("secretKeyRef") or {}
    if ref.get("name") and ref.get("key"):
        fields["redis_password_secret"] = {"name": ref["name"], "key": ref["key"]}
    if options.get("externalStorageNamespace"):
        fields["external_storage_namespace"] = options["externalStorageNamespace"]
    return fields
