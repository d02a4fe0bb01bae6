"""Pod Security admission (the API server's built-in ``PodSecurity`` plugin), enforce mode only.

A namespace labelled ``pod-security.kubernetes.io/enforce: baseline`` or ``restricted`` has every pod
created in it checked against that Pod Security Standard; a pod that violates it is refused with a
``403 Forbidden`` whose message names each violated check as upstream's does::

    pods "x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false
    (container "c" must set securityContext.allowPrivilegeEscalation=false), ...

The version is the namespace's ``pod-security.kubernetes.io/enforce-version`` label (default
``latest``). Namespaces without the label (the plane's default) are not checked, so nothing changes for
them. Only pod creation is checked, as upstream's plugin does for the pod spec (a pod's spec is immutable
but for images, which no check reads); workload objects (Deployments, Jobs) are not checked: their
controller's pod creation is refused, and it reports that (``FailedCreate``).

The checks, in upstream's order of check IDs (pod-security-admission ``policy/check_*.go``, the
Kubernetes documentation's "Pod Security Standards"): baseline: host namespaces, privileged, capabilities
beyond the default set, ``hostPath`` volumes, host ports, ``Unconfined`` seccomp; restricted adds: no
privilege escalation, ``drop: ["ALL"]`` (only ``NET_BIND_SERVICE`` may be added), ``runAsNonRoot``,
no ``runAsUser: 0``, a ``RuntimeDefault`` or ``Localhost`` seccomp profile, and only the volume types the
standard allows. Windows pods (``spec.os.name: windows``) and the AppArmor, SELinux, ``/proc`` mount and
sysctl checks are not modelled.

Example:
    >>> pod = {"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c"}]}}
    >>> for v in violations(pod, "restricted"): print(v.split(" (")[0])
    allowPrivilegeEscalation != false
    unrestricted capabilities
    runAsNonRoot != true
    seccompProfile
    >>> violations(pod, "baseline")
    []
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rayqueue_local.storage.store import StoreError

__all__ = ["ENFORCE_LABEL", "ENFORCE_VERSION_LABEL", "LEVELS", "forbidden", "install", "violations"]

#: The namespace label that turns enforcement on, and the one that pins the standard's version.
ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
ENFORCE_VERSION_LABEL = "pod-security.kubernetes.io/enforce-version"
#: The levels that check anything (``privileged`` allows everything).
LEVELS = ("baseline", "restricted")

_PODS = "pods"
_BASELINE_CAPS = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
_RESTRICTED_VOLUMES = (
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
)


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        c
        for field in ("initContainers", "containers", "ephemeralContainers")
        for c in spec.get(field) or []
        if isinstance(c, dict)
    ]


def _names(containers: list[dict[str, Any]]) -> str:
    """``container "a"`` or ``containers "a", "b"``, as upstream words them."""
    quoted = ", ".join(f'"{c.get("name", "")}"' for c in containers)
    return f"container {quoted}" if len(containers) == 1 else f"containers {quoted}"


def _sc(obj: dict[str, Any]) -> dict[str, Any]:
    sc = obj.get("securityContext")
    return sc if isinstance(sc, dict) else {}


def _host_namespaces(spec: dict[str, Any], _cs: list[dict[str, Any]]) -> str | None:
    on = [f"{k}=true" for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k) is True]
    return f"host namespaces ({', '.join(on)})" if on else None


def _privileged(_spec: dict[str, Any], cs: list[dict[str, Any]]) -> str | None:
    bad = [c for c in cs if _sc(c).get("privileged") is True]
    return f"privileged ({_names(bad)} must not set securityContext.privileged=true)" if bad else None


def _added(c: dict[str, Any]) -> list[str]:
    return [str(a) for a in (_sc(c).get("capabilities") or {}).get("add") or []]


def _capabilities_baseline(_spec: dict[str, Any], cs: list[dict[str, Any]]) -> str | None:
    bad = [c for c in cs if any(a not in _BASELINE_CAPS for a in _added(c))]
    if not bad:
        return None
    caps = sorted({a for c in bad for a in _added(c) if a not in _BASELINE_CAPS})
    listed = ", ".join(f'"{a}"' for a in caps)
    return (
        f"non-default capabilities ({_names(bad)} must not include {listed} "
        "in securityContext.capabilities.add)"
    )


def _capabilities_restricted(_spec: dict[str, Any], cs: list[dict[str, Any]]) -> str | None:
    parts = []
    no_drop = [c for c in cs if "ALL" not in ((_sc(c).get("capabilities") or {}).get("drop") or [])]
    if no_drop:
        parts.append(f'{_names(no_drop)} must set securityContext.capabilities.drop=["ALL"]')
    adds = [c for c in cs if any(a != "NET_BIND_SERVICE" for a in _added(c))]
    if adds:
        caps = sorted({a for c in adds for a in _added(c) if a != "NET_BIND_SERVICE"})
        listed = ", ".join(f'"{a}"' for a in caps)
        parts.append(f"{_names(adds)} must not include {listed} in securityContext.capabilities.add")
    return f"unrestricted capabilities ({'; '.join(parts)})" if parts else None


def _host_path(spec: dict[str, Any], _cs: list[dict[str, Any]]) -> str | None:
    bad = [v.get("name", "") for v in spec.get("volumes") or [] if isinstance(v, dict) and "hostPath" in v]
    if not bad:
        return None
    noun = "volume" if len(bad) == 1 else "volumes"
    quoted = ", ".join(f'"{n}"' for n in bad)
    return f"hostPath volumes ({noun} {quoted})"


def _host_ports(_spec: dict[str, Any], cs: list[dict[str, Any]]) -> str | None:
    used = [
        (c, p["hostPort"])
        for c in cs
        for p in c.get("ports") or []
        if isinstance(p, dict) and p.get("hostPort")
    ]
    if not used:
        return None
    bad = list({id(c): c for c, _ in used}.values())
    ports = ", ".join(str(p) for _, p in used)
    noun = "hostPort" if len(used) == 1 else "hostPorts"
    return f"hostPort ({_names(bad)} {'uses' if len(bad) == 1 else 'use'} {noun} {ports})"


def _restricted_volumes(spec: dict[str, Any], _cs: list[dict[str, Any]]) -> str | None:
    bad = []
    for vol in spec.get("volumes") or []:
        if not isinstance(vol, dict):
            continue
        kinds = [k for k in vol if k != "name"]
        wrong = [k for k in kinds if k not in _RESTRICTED_VOLUMES]
        if wrong:
            bad.append(f'volume "{vol.get("name", "")}" uses restricted volume type "{wrong[0]}"')
    return f"restricted volume types ({', '.join(bad)})" if bad else None


def _run_as_non_root(spec: dict[str, Any], cs: list[dict[str, Any]]) -> str | None:
    pod = _sc(spec).get("runAsNonRoot")
    if pod is False:
        return "runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)"
    explicit_false = [c for c in cs if _sc(c).get("runAsNonRoot") is False]
    if explicit_false:
        who = _names(explicit_false)
        return f"runAsNonRoot != true ({who} must not set securityContext.runAsNonRoot=false)"
    if pod is True:
        return None
    unset = [c for c in cs if _sc(c).get("runAsNonRoot") is not True]
    if unset:
        return f"runAsNonRoot != true (pod or {_names(unset)} must set securityContext.runAsNonRoot=true)"
    return None


def _run_as_user(spec: dict[str, Any], cs: list[dict[str, Any]]) -> str | None:
    if _sc(spec).get("runAsUser") == 0:
        return "runAsUser=0 (pod must not set runAsUser=0)"
    bad = [c for c in cs if _sc(c).get("runAsUser") == 0]
    return f"runAsUser=0 ({_names(bad)} must not set runAsUser=0)" if bad else None


def _seccomp_type(obj: dict[str, Any]) -> Any:
    return (_sc(obj).get("seccompProfile") or {}).get("type")


def _seccomp_baseline(spec: dict[str, Any], cs: list[dict[str, Any]]) -> str | None:
    if _seccomp_type(spec) == "Unconfined":
        return 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'
    bad = [c for c in cs if _seccomp_type(c) == "Unconfined"]
    if bad:
        who = _names(bad)
        return f'seccompProfile ({who} must not set securityContext.seccompProfile.type to "Unconfined")'
    return None


def _seccomp_restricted(spec: dict[str, Any], cs: list[dict[str, Any]]) -> str | None:
    allowed = ("RuntimeDefault", "Localhost")
    pod = _seccomp_type(spec)
    if pod is not None and pod not in allowed:
        return f'seccompProfile (pod must not set securityContext.seccompProfile.type to "{pod}")'
    wrong = [c for c in cs if _seccomp_type(c) is not None and _seccomp_type(c) not in allowed]
    if wrong:
        kind, who = _seccomp_type(wrong[0]), _names(wrong)
        return f'seccompProfile ({who} must not set securityContext.seccompProfile.type to "{kind}")'
    if pod is not None:
        return None
    unset = [c for c in cs if _seccomp_type(c) is None]
    if unset:
        return (
            f"seccompProfile (pod or {_names(unset)} must set securityContext.seccompProfile.type to "
            '"RuntimeDefault" or "Localhost")'
        )
    return None


def _allow_privilege_escalation(_spec: dict[str, Any], cs: list[dict[str, Any]]) -> str | None:
    bad = [c for c in cs if _sc(c).get("allowPrivilegeEscalation") is not False]
    if not bad:
        return None
    who = _names(bad)
    return (
        f"allowPrivilegeEscalation != false ({who} must set securityContext.allowPrivilegeEscalation=false)"
    )


_Check = Callable[[dict[str, Any], list[dict[str, Any]]], "str | None"]
#: (check ID, the levels it applies to, the check); a restricted check replaces the baseline one it
#: tightens (capabilities, volumes, seccomp), as upstream's ``overrides`` do. Ordered by check ID.
_CHECKS: tuple[tuple[str, tuple[str, ...], _Check], ...] = (
    ("allowPrivilegeEscalation", ("restricted",), _allow_privilege_escalation),
    ("capabilities_baseline", ("baseline",), _capabilities_baseline),
    ("capabilities_restricted", ("restricted",), _capabilities_restricted),
    ("hostNamespaces", LEVELS, _host_namespaces),
    ("hostPathVolumes", ("baseline",), _host_path),
    ("hostPorts", LEVELS, _host_ports),
    ("privileged", LEVELS, _privileged),
    ("restrictedVolumes", ("restricted",), _restricted_volumes),
    ("runAsNonRoot", ("restricted",), _run_as_non_root),
    ("runAsUser", ("restricted",), _run_as_user),
    ("seccompProfile_baseline", ("baseline",), _seccomp_baseline),
    ("seccompProfile_restricted", ("restricted",), _seccomp_restricted),
)


def violations(pod: dict[str, Any], level: str) -> list[str]:
    """What ``pod`` violates at ``level`` (``baseline`` or ``restricted``), each in upstream's words.

    Example:
        >>> ok = {"spec": {"securityContext": {"runAsNonRoot": True,
        ...                                    "seccompProfile": {"type": "RuntimeDefault"}},
        ...                "containers": [{"name": "c", "securityContext": {
        ...                    "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}]}}
        >>> violations(ok, "restricted")
        []
        >>> violations({"spec": {"hostNetwork": True, "containers": [{"name": "c"}]}}, "baseline")
        ['host namespaces (hostNetwork=true)']
    """
    spec = pod.get("spec") or {}
    containers = _containers(spec)
    out = []
    for _id, levels, check in _CHECKS:
        if level in levels:
            found = check(spec, containers)
            if found:
                out.append(found)
    return out


def forbidden(pod: dict[str, Any], level: str, version: str = "latest") -> StoreError | None:
    """The 403 a pod that violates ``level`` gets (``None``: it passes).

    Example:
        >>> pod = {"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c"}]}}
        >>> err = forbidden(pod, "restricted")
        >>> err.code, err.message.split(": ")[0:2]
        (403, ['pods "x" is forbidden', 'violates PodSecurity "restricted:latest"'])
    """
    found = violations(pod, level)
    if not found:
        return None
    name = (pod.get("metadata") or {}).get("name") or (pod.get("metadata") or {}).get("generateName", "")
    message = f'pods "{name}" is forbidden: violates PodSecurity "{level}:{version}": {", ".join(found)}'
    return StoreError(403, "Forbidden", message, details={"name": name, "kind": _PODS})


def install(store: Any) -> None:
    """Check every pod created in a namespace that carries :data:`ENFORCE_LABEL` (``baseline`` or
    ``restricted``); other namespaces are not checked.

    Example:
        >>> from rayqueue_local.storage.store import Store
        >>> install(Store())
    """

    def admit(operation: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        if operation != "CREATE":
            return new
        namespace = (new.get("metadata") or {}).get("namespace")
        try:
            ns = store.get("namespaces", None, namespace) if namespace else None
        except StoreError:
            return new  # the store refuses a pod in a missing namespace itself
        labels = ((ns or {}).get("metadata") or {}).get("labels") or {}
        level = labels.get(ENFORCE_LABEL)
        if level not in LEVELS:
            return new
        err = forbidden(new, str(level), str(labels.get(ENFORCE_VERSION_LABEL) or "latest"))
        if err is not None:
            raise err
        return new

    if _PODS in store.registry:
        store.add_admission_hook(_PODS, admit)
