"""The local control plane's errors: one base, :class:`LocalControlPlaneError`, under which every error
the emulator raises to its caller sits (with a stdlib mixin where one fits).

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
