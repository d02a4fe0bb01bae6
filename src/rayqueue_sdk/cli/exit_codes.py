"""The ``rayqueue`` command's exit codes: one table keyed by error class, shared by every command group.

:func:`exit_code` walks the error's MRO, so the most specific class in :data:`EXIT_CODES` wins (a
:class:`~rayqueue_sdk.errors.QueueNotFoundError` is a ``NotFoundError``: 3) and any other
:class:`~rayqueue_sdk.errors.RayQueueError` falls back to 1. A new error class needs a line here only when
a pipeline should tell it apart; :data:`MEANINGS` says what each code means, and ``rayqueue --help`` prints
both (:func:`exit_codes_help`).

Example:
    >>> from rayqueue_sdk.errors import AdmissionTimeout, QueueNotFoundError
    >>> exit_code(QueueNotFoundError("q", [])), exit_code(AdmissionTimeout("c", 1, phase="queued"))
    (3, 4)
"""

from __future__ import annotations

from rayqueue_sdk.errors import (
    AdmissionCheckRejected,
    AdmissionTimeout,
    AuthenticationError,
    ClusterDeletedError,
    ClusterFailedError,
    ConfigError,
    ConnectionFailedError,
    ForbiddenError,
    JobFailedError,
    NotFoundError,
    PreemptedError,
    RayQueueError,
    ScaledToZeroError,
)

__all__ = [
    "EXIT_CODES",
    "DOES_NOT_FIT",
    "INTERRUPTED",
    "JOB_FAILED",
    "MEANINGS",
    "SUCCESS",
    "USAGE",
    "code_for",
    "exit_code",
    "exit_codes_help",
]

#: Error class -> exit code; the most specific class in an error's MRO wins.
EXIT_CODES: dict[type[BaseException], int] = {
    RayQueueError: 1,
    ConfigError: 2,
    NotFoundError: 3,
    AdmissionTimeout: 4,
    PreemptedError: 5,
    AdmissionCheckRejected: 5,
    ClusterDeletedError: 5,
    ClusterFailedError: 5,
    ScaledToZeroError: 5,
    AuthenticationError: 6,
    ForbiddenError: 6,
    ConnectionFailedError: 7,
    JobFailedError: 8,
}

#: Success.
SUCCESS = 0
#: Bad usage (argparse's own code), a bad configuration file, or a command whose package is not installed.
USAGE = EXIT_CODES[ConfigError]
#: A job that failed or was stopped, whether raised (``--wait``) or read (``job status``).
JOB_FAILED = EXIT_CODES[JobFailedError]
#: ``rayqueue queue fits``: the cluster would not be admitted now (or never), an answer rather than an error.
DOES_NOT_FIT = 9
#: Ctrl-C.
INTERRUPTED = 130

#: What each code tells a pipeline (``rayqueue --help`` prints it with the classes of :data:`EXIT_CODES`).
MEANINGS: dict[int, str] = {
    SUCCESS: "success (wait: the cluster is ready; a job: it succeeded)",
    1: "another rayqueue_sdk error (API error, conflict, ...)",
    USAGE: "bad input (usage, configuration file; a command whose package is not installed)",
    3: "not found (job, cluster, LocalQueue, priority class; lists what exists)",
    4: "timed out (gave up waiting: still queued or starting)",
    5: "preempted, deactivated, scaled to zero or deleted while waiting, or a head that cannot start",
    6: "authentication or permission refused (401/403)",
    7: "the API server or the Ray dashboard could not be reached",
    JOB_FAILED: "a job failed or was stopped (the log tail is printed)",
    DOES_NOT_FIT: "does not fit (queue fits: the quota is short, now or for good; the reason is printed)",
    INTERRUPTED: "interrupted (Ctrl-C)",
}


def code_for(error_class: type[BaseException]) -> int:
    """The exit code of an error class: that of the first class of its MRO in :data:`EXIT_CODES`, else 1.

    Example:
        >>> from rayqueue_sdk.errors import ClusterNotFoundError, TLSVerificationError, UnsupportedError
        >>> code_for(ClusterNotFoundError), code_for(TLSVerificationError), code_for(UnsupportedError)
        (3, 7, 1)
    """
    for cls in error_class.__mro__:
        code = EXIT_CODES.get(cls)
        if code is not None:
            return code
    return 1


def exit_code(err: BaseException) -> int:
    """The exit code for ``err`` (:func:`code_for` its class).

    Example:
        >>> from rayqueue_sdk.errors import UnsupportedError
        >>> exit_code(UnsupportedError("workloads/scale is not served")), exit_code(OSError())
        (1, 1)
    """
    return code_for(type(err))


def exit_codes_help() -> str:
    """The exit-code table shown by ``rayqueue --help``: each code, its meaning and its error classes.

    Example:
        >>> print(exit_codes_help().splitlines()[4])
          3  not found (job, cluster, LocalQueue, priority class; lists what exists)  [NotFoundError]
    """
    classes: dict[int, list[str]] = {}
    for cls, code in EXIT_CODES.items():
        classes.setdefault(code, []).append(cls.__name__)
    lines = ["exit codes:"]
    for code, meaning in sorted(MEANINGS.items()):
        names = classes.get(code)
        lines.append(f"  {code}  {meaning}" + (f"  [{', '.join(names)}]" if names else ""))
    return "\n".join(lines)
