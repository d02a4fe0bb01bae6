"""The local control plane's errors: one base, :class:`LocalControlPlaneError`, under which every error
the emulator raises sits (with a stdlib mixin where one fits): the store's ``StoreError``, the API
server's ``HTTPError`` (also its internal control flow: a handler raises it, the server renders the
``Status``), patch and selector errors (``ValueError`` too), the process errors (``RuntimeError``;
``PrometheusNotInstalledError`` is also a ``FileNotFoundError``) and the controllers' own. Arguments
a caller gets wrong still raise the builtin ``TypeError``/``ValueError``.

Example:
    >>> from rayqueue_local.runtime.processes import ProcessStartError
    >>> issubclass(ProcessStartError, LocalControlPlaneError) and issubclass(ProcessStartError, RuntimeError)
    True
"""

from __future__ import annotations

__all__ = ["LocalControlPlaneError"]


class LocalControlPlaneError(Exception):
    """Base of every error of :mod:`rayqueue_local`.

    Example:
        >>> raise LocalControlPlaneError("the state directory is locked")
        Traceback (most recent call last):
        ...
        rayqueue_local.errors.LocalControlPlaneError: the state directory is locked
    """
