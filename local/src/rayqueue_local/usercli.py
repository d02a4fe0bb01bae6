"""``rayqueue local user add|list|remove``: manage a running plane's users from a shell.

The command finds the instance's run file (``--name``), takes the admin's token from the kubeconfig
context ``local up`` wrote, and calls the plane's users API (:mod:`rayqueue_local.apiserver.users`) over
HTTPS, verifying the plane's CA. ``add`` then writes a kubeconfig context ``<context>-<user>`` for the new
user (in the user's first namespace; not made current) into the same kubeconfig, so that
``kubectl --context rayqueue-local-alice`` and ``KubeConfigFileAuthentication(context=...)`` work at
once. The token is written only there (0600), never printed. ``remove`` deletes the user (its token
stops working at once) and its context.

Example::

    $ rayqueue local user add alice --namespace team-a
    Added user alice (namespaces: team-a): context "rayqueue-local-alice" in ~/.kube/config
    $ rayqueue local user list
    NAME   NAMESPACES  ADMIN
    alice  team-a      no
"""

from __future__ import annotations

import argparse
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from rayqueue_local.apiserver.kubeconfig import merge_context, remove_context
from rayqueue_local.apiserver.users import USERS_PATH
from rayqueue_local.errors import LocalControlPlaneError
from rayqueue_local.runfile import DEFAULT_INSTANCE, read_run_file

__all__ = ["user_command"]


class _CommandError(LocalControlPlaneError):
    """A failure the command reports in one line (exit 1)."""


def _admin_token(running: dict[str, Any]) -> str:
    """The admin's token, from the kubeconfig context the running plane wrote."""
    doc = yaml.safe_load(Path(running["kubeconfig"]).read_text()) or {}
    context = next((c for c in doc.get("contexts") or [] if c.get("name") == running["context"]), None)
    user_name = (context or {}).get("context", {}).get("user")
    user = next((u for u in doc.get("users") or [] if u.get("name") == user_name), None)
    token = ((user or {}).get("user") or {}).get("token")
    if not token:
        raise _CommandError(f'no admin token in context "{running["context"]}" of {running["kubeconfig"]}')
    return str(token)


def _call(running: dict[str, Any], method: str, path: str, query: list[tuple[str, str]] = ()) -> Any:  # type: ignore[assignment]
    url = running["server"] + path + (("?" + urllib.parse.urlencode(query)) if query else "")
    request = urllib.request.Request(
        url,
        method=method,
        headers={"Authorization": f"Bearer {_admin_token(running)}", "Accept": "application/json"},
    )
    context = ssl.create_default_context(cafile=running["ca_cert"])
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as response:  # noqa: S310 - https only
            return json.loads(response.read())
    except urllib.error.HTTPError as err:
        try:
            message = json.loads(err.read()).get("message") or err.reason
        except ValueError:
            message = err.reason
        raise _CommandError(f"{err.code}: {message}") from None
    except (urllib.error.URLError, OSError) as err:
        raise _CommandError(f"cannot reach the local control plane at {running['server']}: {err}") from None


def user_command(args: argparse.Namespace) -> int:
    """Run ``rayqueue local user <action>`` (parsed ``args``); returns the exit code.

    Example:
        >>> import os, tempfile
        >>> os.environ["RAYQUEUE_HOME"] = tempfile.mkdtemp()  # nothing runs there
        >>> user_command(argparse.Namespace(name="local", user_command="list"))
        No local control plane 'local' is running (start it with `rayqueue local up`).
        1
    """
    running = read_run_file(args.name)
    if running is None:
        suffix = "" if args.name == DEFAULT_INSTANCE else f" --name {args.name}"
        print(f"No local control plane {args.name!r} is running (start it with `rayqueue local up{suffix}`).")
        return 1
    try:
        if args.user_command == "add":
            query = [("name", args.user), *(("namespace", ns) for ns in args.namespace)]
            if args.admin:
                query.append(("admin", "true"))
            created = _call(running, "POST", USERS_PATH, query)
            context = f"{running['context']}-{args.user}"
            merge_context(
                Path(running["kubeconfig"]),
                context,
                cluster=running["context"],
                server=running["server"],
                ca_path=running["ca_cert"],
                user=context,
                token=created["token"],
                namespace=(created["namespaces"] or ["default"])[0],
                make_current=False,
            )
            scope = "admin" if created["admin"] else "namespaces: " + ", ".join(created["namespaces"])
            print(f'Added user {args.user} ({scope}): context "{context}" in {running["kubeconfig"]}')
        elif args.user_command == "list":
            items = _call(running, "GET", USERS_PATH)["items"]
            rows = [("NAME", "NAMESPACES", "ADMIN")] + [
                (u["name"], ",".join(u["namespaces"]) or "-", "yes" if u["admin"] else "no") for u in items
            ]
            widths = [max(len(r[i]) for r in rows) for i in range(3)]
            for row in rows:
                print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        else:
            _call(running, "DELETE", f"{USERS_PATH}/{urllib.parse.quote(args.user, safe='')}")
            remove_context(Path(running["kubeconfig"]), f"{running['context']}-{args.user}")
            print(f"Removed user {args.user}.")
    except _CommandError as err:
        print(f"rayqueue local user {args.user_command}: {err}")
        return 1
    return 0
