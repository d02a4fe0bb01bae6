"""The environment of the plane's Ray processes, and what a failed head start says about its cause.

The plane's Ray heads must not read the notebook user's Ray state, nor leave theirs where the user's
Ray looks. Two things of the user's reached them before:

- **Token authentication.** Ray 2.5x+ turns token auth on for ``ray start`` when ``RAY_AUTH_MODE`` is
  unset and a token exists (``RAY_AUTH_TOKEN``, the file ``RAY_AUTH_TOKEN_PATH`` names, or
  ``~/.ray/auth_token``, which a plain ``ray.init()`` writes). The head then required that token while
  the client proxy the plane starts beside it, run with the mode unset, sent none: it stopped with
  ``AuthenticationError: InvalidAuthToken`` and every head failed. :func:`ray_process_env` gives
  every process of a head ``RAY_AUTH_MODE=disabled`` (the plane never turns token auth on: its heads
  listen on loopback only) and drops ``RAY_AUTH_TOKEN``/``RAY_AUTH_TOKEN_PATH``, so no token of the
  user's is read, whatever ``~/.ray`` holds.
- **Temp and session directories.** Ray falls back to ``$RAY_TMPDIR``, ``$TMPDIR`` or ``/tmp`` +
  ``/ray`` (``ray_current_cluster``, sessions) for any process not given ``--temp-dir``;
  ``RAY_TMPDIR`` is set to the head's own temp dir.

:func:`diagnose` reads a failed start's output for causes like these and says the cause and the file.

Example:
    >>> env = ray_process_env({"RAY_AUTH_TOKEN": "x", "HOME": "/h"}, Path("/tmp/rqray-1"))
    >>> env["RAY_AUTH_MODE"], env["RAY_TMPDIR"], "RAY_AUTH_TOKEN" in env
    ('disabled', '/tmp/rqray-1', False)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

__all__ = ["AUTH_MODE_VAR", "diagnose", "ray_process_env", "token_sources"]

#: Ray's switch for token authentication (``token`` or ``disabled``; unset: on if a token exists).
AUTH_MODE_VAR = "RAY_AUTH_MODE"
_TOKEN_VAR = "RAY_AUTH_TOKEN"
_TOKEN_PATH_VAR = "RAY_AUTH_TOKEN_PATH"
#: Variables of the caller's environment that must not reach a head (a driver's address and job
#: config, a token of the user's).
_DROPPED = ("RAY_ADDRESS", "RAY_JOB_CONFIG_JSON_ENV_VAR", _TOKEN_VAR, _TOKEN_PATH_VAR)


def ray_process_env(base: Mapping[str, str], temp_dir: Path) -> dict[str, str]:
    """``base`` made fit for a plane's Ray head: its own auth settings and temp dir (module doc).

    Example:
        >>> ray_process_env({"RAY_AUTH_MODE": "token"}, Path("/t"))["RAY_AUTH_MODE"]
        'disabled'
    """
    env = {k: v for k, v in base.items() if k not in _DROPPED}
    env[AUTH_MODE_VAR] = "disabled"
    env["RAY_TMPDIR"] = str(temp_dir)
    env.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    return env


def token_sources(env: Mapping[str, str]) -> list[str]:
    """Where Ray would take a token from under ``env``, in its order: ``RAY_AUTH_TOKEN`` (named, never
    shown), the file ``RAY_AUTH_TOKEN_PATH`` names, ``$HOME/.ray/auth_token``.

    Example:
        >>> token_sources({"RAY_AUTH_TOKEN": "s3cret", "HOME": "/home/u"})
        ['the RAY_AUTH_TOKEN environment variable', '/home/u/.ray/auth_token']
    """
    sources = []
    if env.get(_TOKEN_VAR):
        sources.append(f"the {_TOKEN_VAR} environment variable")
    if env.get(_TOKEN_PATH_VAR):
        sources.append(env[_TOKEN_PATH_VAR])
    home = env.get("HOME") or str(Path.home())
    sources.append(str(Path(home) / ".ray" / "auth_token"))
    return sources


def diagnose(output: str, env: Mapping[str, str], temp_dir: Path | None = None) -> str | None:
    """The cause of a failed head start, named with its file, if ``output`` shows a known one.

    ``env`` is the environment the plane was started with (where a user's token would come from);
    ``temp_dir`` the head's temp dir (removed once the head is stopped, so named only for a full disk).

    Example:
        >>> cause = diagnose("RPC error: InvalidAuthToken: Authentication token is missing", {"HOME": "/u"})
        >>> cause.startswith("Ray token authentication refused"), "/u/.ray/auth_token" in cause
        (True, True)
        >>> diagnose("all fine", {}) is None
        True
    """
    if "InvalidAuthToken" in output or "AuthenticationError" in output:
        sources = " or ".join(token_sources(env))
        return (
            "Ray token authentication refused the connection (InvalidAuthToken): a Ray token of this "
            f"user's ({sources}; a plain ray.init() writes ~/.ray/auth_token) turned token auth on "
            f"for part of the head; the plane runs its heads with {AUTH_MODE_VAR}=disabled"
        )
    if "No space left on device" in output:
        where = str(temp_dir.parent) if temp_dir is not None else "the head's temp dir"
        return f"the disk holding {where} is full (No space left on device)"
    return None
