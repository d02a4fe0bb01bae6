"""The rayqueue_sdk error tree, documented in one place.

Every error the SDK raises on purpose is a :class:`RayQueueError`, and every one is defined here.
Leaves also inherit from the standard-library exception a caller would naturally catch, so
``except ValueError`` or ``except TimeoutError`` keeps working. The exit code the ``rayqueue`` CLI
gives each class is in brackets (a subclass has its parent's unless it is listed); the CLI's one
table of them, keyed by class, is :data:`rayqueue_sdk.cli.exit_codes.EXIT_CODES`::

    RayQueueError [1]
    ├── ConfigError(ValueError) [2]         bad input, rejected before anything is sent
    ├── ApiError [1]                        the Kubernetes API answered with an error Status
    │   ├── AuthenticationError [6]         401: missing, wrong or expired credentials
    │   ├── ForbiddenError(PermissionError) [6]  403: names the verb and the resource
    │   ├── NotFoundError(LookupError) [3]  404
    │   │   ├── QueueNotFoundError          the LocalQueue does not exist; lists the usable queues
    │   │   ├── PriorityClassNotFoundError  the WorkloadPriorityClass does not exist; lists the classes
    │   │   ├── ClusterNotFoundError        the RayCluster does not exist; lists the user's clusters
    │   │   └── DashboardNotFoundError      no address (yet) for a cluster's Ray dashboard
    │   ├── AlreadyExistsError              409 AlreadyExists
    │   └── ConflictError                   409 Conflict (stale resourceVersion)
    ├── ConnectionFailedError(ConnectionError) [7]  the API server or the Ray dashboard cannot be reached
    │   ├── TLSVerificationError            the server certificate was not trusted
    │   └── OutcomeUnknownError             a write's answer was lost and reading back could not settle it
    ├── AdmissionTimeout(TimeoutError) [4]  gave up waiting; carries the phase, Kueue's reason, the position
    ├── ClusterDeletedError [5]             the cluster went away while we waited
    ├── ClusterFailedError [5]              the cluster's head cannot start (image, crash loop, ...)
    ├── PreemptedError [5]                  Kueue evicted the workload (preemption, deactivation, ...)
    ├── JobFailedError [8]                  a Ray job ended FAILED or STOPPED; carries the log tail
    ├── ScaledToZeroError [5]               the idle policy scaled the cluster to zero; resume() it
    └── UnsupportedError [1]                the installation lacks a capability (e.g. Workload /scale)

Secrets never reach these messages: the SDK builds them from names, fields and the server's
``Status`` message, never from request headers or credentials.

Every message ends with where to read more: ``(see docs/troubleshooting.md#<class name in lower
case>)``, the entry for the error's class in the troubleshooting page
(:meth:`RayQueueError.troubleshooting_ref`).
That is a path in the repository and, with ``.md`` dropped, on the documentation site; the class name
is a word a search finds. Only ``str(err)`` carries it: attributes such as ``message`` (the server's or
Kueue's own words) are left as they were.

Example:
    >>> from rayqueue_sdk.errors import ConfigError
    >>> try:
    ...     raise ConfigError("num_workers", -1, "an integer >= 0")
    ... except ValueError as err:
    ...     print(err)
    num_workers: got -1; allowed: an integer >= 0 (see docs/troubleshooting.md#configerror)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

__all__ = [
    "AdmissionCheckRejected",
    "AdmissionTimeout",
    "AlreadyExistsError",
    "ApiError",
    "AuthenticationError",
    "ClusterDeletedError",
    "ClusterFailedError",
    "ClusterNotFoundError",
    "ConfigError",
    "ConflictError",
    "ConnectionFailedError",
    "DashboardNotFoundError",
    "ForbiddenError",
    "JobFailedError",
    "NotFoundError",
    "OutcomeUnknownError",
    "PreemptedError",
    "PriorityClassNotFoundError",
    "QueueNotFoundError",
    "RayQueueError",
    "ScaledToZeroError",
    "TLSVerificationError",
    "UnsupportedError",
]


class RayQueueError(Exception):
    """Base class of every error rayqueue_sdk raises on purpose.

    ``str(err)`` is the message, then where its troubleshooting entry is (:meth:`troubleshooting_ref`):
    on the same line, or on a line of its own after a message of several lines (a log tail).

    Example:
        >>> issubclass(ConfigError, RayQueueError), str(RayQueueError("x"))
        (True, 'x (see docs/troubleshooting.md#rayqueueerror)')
    """

    #: The page (a path in the repository, and on the site without ``.md``) with an entry per class.
    troubleshooting_page: ClassVar[str] = "docs/troubleshooting.md"

    @classmethod
    def troubleshooting_ref(cls) -> str:
        """Where the troubleshooting entry of this class is: the page and the anchor of the class.

        The anchor is the name of the first public class in the MRO (private helpers share their
        public parent's entry), in lower case, as MkDocs and GitHub both make it from the heading.

        Example:
            >>> QueueNotFoundError.troubleshooting_ref()
            'docs/troubleshooting.md#queuenotfounderror'
        """
        public = next(c for c in cls.__mro__ if not c.__name__.startswith("_"))
        return f"{cls.troubleshooting_page}#{public.__name__.lower()}"

    #: How to fix it, in one line, for an error a user is expected to meet (a queue that does not exist, a
    #: wait that timed out, a preemption, a failed job, ...). Those render in IPython/Jupyter as a short
    #: message with this fix instead of a traceback (:attr:`_render_traceback_`); ``None`` (unexpected
    #: errors) keeps IPython's full traceback.
    fix: ClassVar[str | None] = None
    #: The most lines of the message a short rendering shows (a job's log tail is cut to its last lines).
    short_lines: ClassVar[int] = 14

    @property
    def _render_traceback_(self) -> Callable[[], list[str]]:
        """IPython's hook: an error with a :attr:`fix` renders as :meth:`short_traceback`.

        IPython calls ``err._render_traceback_()`` when the attribute exists [IPython
        core/interactiveshell.py InteractiveShell.showtraceback]; for an error without a fix the attribute
        does not exist (``hasattr`` is False) and IPython shows its usual traceback. Only the display is
        short: the exception object, its attributes and ``__traceback__`` keep everything.
        """
        if self.fix is None:
            raise AttributeError("_render_traceback_")
        return self.short_traceback

    def short_traceback(self) -> list[str]:
        """The lines a notebook shows for this error: the class and message, then the fix and the entry.

        Example:
            >>> err = QueueNotFoundError("gpu-queue", ["parked", "team-q"], namespace="ds")
            >>> for line in err.short_traceback():
            ...     print(line.replace("\x1b[1;31m", "").replace("\x1b[1m", "").replace("\x1b[0m", ""))
            QueueNotFoundError: 404 NotFound: LocalQueue 'gpu-queue' does not exist in namespace 'ds'; \
available: parked, team-q
            Fix: set local_queue= to one of the LocalQueues listed, or ask an admin to create it
            More: docs/troubleshooting.md#queuenotfounderror (the exception object keeps every detail)
        """
        lines = Exception.__str__(self).splitlines() or [type(self).__name__]
        if len(lines) > self.short_lines:
            cut = len(lines) - self.short_lines + 1
            lines = [lines[0], f"... ({cut} lines left out)"] + lines[-(self.short_lines - 1) :]
        out = [f"\x1b[1;31m{type(self).__name__}\x1b[0m: {lines[0]}", *lines[1:]]
        if self.fix:
            out.append(f"\x1b[1mFix\x1b[0m: {self.fix}")
        out.append(f"More: {self.troubleshooting_ref()} (the exception object keeps every detail)")
        return out

    def __str__(self) -> str:
        text = super().__str__()
        see = f"(see {self.troubleshooting_ref()})"
        if not text:
            return see
        return f"{text}\n{see}" if "\n" in text else f"{text} {see}"


class ConfigError(RayQueueError, ValueError):
    """Bad input, rejected before anything is sent to a server.

    The message names the field, the bad value and what is allowed.

    Args:
        field: dotted name of the offending field, e.g. ``"worker_groups[0].name"``.
        value: the value that was given.
        allowed: what would have been accepted, in words.
        problem: optional short description of what is wrong, placed before the value.

    Example:
        >>> print(ConfigError("name", "My_Cluster", "a DNS-1035 label", problem="not a DNS name"))
        ... # doctest: +NORMALIZE_WHITESPACE
        name: not a DNS name (got 'My_Cluster'); allowed: a DNS-1035 label
        (see docs/troubleshooting.md#configerror)
    """

    fix = "correct the field named above with one of the values allowed; nothing was sent"

    def __init__(self, field: str, value: Any, allowed: str, *, problem: str | None = None) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        self.problem = problem
        shown = _short_repr(value)
        head = f"{field}: {problem} (got {shown})" if problem else f"{field}: got {shown}"
        super().__init__(f"{head}; allowed: {allowed}")


class ApiError(RayQueueError):
    """The Kubernetes API answered with an error ``Status``.

    Attributes:
        status: the HTTP status code (0 when unknown).
        reason: the ``Status.reason`` (e.g. ``"Invalid"``, ``"Forbidden"``).
        message: the server's own message.
        causes: ``Status.details.causes`` when the server gave them.

    Example:
        >>> err = ApiError(422, "Invalid", "spec.replicas: Invalid value")
        >>> (err.status, err.reason)
        (422, 'Invalid')
    """

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        causes: Sequence[dict[str, Any]] | None = None,
    ) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        self.causes = list(causes or [])
        super().__init__(f"{status} {reason}: {message}" if status else message)


class AuthenticationError(ApiError):
    """401 Unauthorized: the token is missing, wrong or expired.

    Example:
        >>> AuthenticationError(401, "Unauthorized", "Unauthorized").status
        401
    """

    fix = "log in again (rayqueue login, or TokenAuthentication(...).login()) and rerun the cell"


class ForbiddenError(ApiError, PermissionError):
    """403 Forbidden: the identity may not do ``verb`` on ``resource``.

    Example:
        >>> err = ForbiddenError(403, "Forbidden", "no", verb="create", resource="rayclusters.ray.io")
        >>> (err.verb, err.resource)
        ('create', 'rayclusters.ray.io')
    """

    fix = (
        "ask an admin for the verb on the resource named above in that namespace, "
        "or use a namespace you may write"
    )

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        causes: Sequence[dict[str, Any]] | None = None,
        *,
        verb: str | None = None,
        resource: str | None = None,
        namespace: str | None = None,
    ) -> None:
        self.verb = verb
        self.resource = resource
        self.namespace = namespace
        super().__init__(status, reason, message, causes)


class NotFoundError(ApiError, LookupError):
    """404 Not Found.

    Example:
        >>> isinstance(NotFoundError(404, "NotFound", "gone"), LookupError)
        True
    """


class _ListingNotFound(NotFoundError):
    """A named thing is missing; the message lists what does exist."""

    what = "object"

    def __init__(
        self, name: str, available: Sequence[str], *, namespace: str | None = None, hint: str | None = None
    ) -> None:
        self.name = name
        self.available = sorted(available)
        self.namespace = namespace
        where = f" in namespace {namespace!r}" if namespace else ""
        listing = ", ".join(self.available) if self.available else "none"
        msg = f"{self.what} {name!r} does not exist{where}; available: {listing}"
        if hint:
            msg += f". {hint}"
        super().__init__(404, "NotFound", msg)


class QueueNotFoundError(_ListingNotFound):
    """The LocalQueue does not exist; ``available`` lists the queues the user can use.

    Example:
        >>> print(QueueNotFoundError("gpu", ["team-q"], namespace="ds"))  # doctest: +NORMALIZE_WHITESPACE
        404 NotFound: LocalQueue 'gpu' does not exist in namespace 'ds'; available: team-q
        (see docs/troubleshooting.md#queuenotfounderror)
    """

    fix = "set local_queue= to one of the LocalQueues listed, or ask an admin to create it"

    what = "LocalQueue"


class PriorityClassNotFoundError(_ListingNotFound):
    """The WorkloadPriorityClass does not exist; ``available`` lists the classes that do.

    Example:
        >>> PriorityClassNotFoundError("urgent", ["dev-priority", "prod-priority"]).available
        ['dev-priority', 'prod-priority']
    """

    fix = "set priority_class= to one of the classes listed, or leave it out"

    what = "WorkloadPriorityClass"


class ClusterNotFoundError(_ListingNotFound):
    """The RayCluster does not exist; ``available`` lists the user's clusters in the namespace.

    Example:
        >>> ClusterNotFoundError("ws", [], namespace="ds").available
        []
    """

    fix = "use one of the clusters listed, or apply() the cluster first"

    what = "RayCluster"


class DashboardNotFoundError(NotFoundError):
    """No address is known (yet) for a cluster's Ray dashboard or Ray client.

    Raised while the cluster is queued or starting (KubeRay reports no head address yet) and no
    Route, HTTPRoute or Ingress exposes it.

    Example:
        >>> err = DashboardNotFoundError("ws", "ds", "the head is not running yet (queued?)")
        >>> (err.name, err.status, isinstance(err, LookupError))
        ('ws', 404, True)
    """

    def __init__(self, name: str, namespace: str, why: str) -> None:
        self.name = name
        self.namespace = namespace
        super().__init__(404, "NotFound", f"no Ray address for RayCluster {namespace}/{name}: {why}")


class AlreadyExistsError(ApiError):
    """409 AlreadyExists: an object of that name exists.

    Example:
        >>> AlreadyExistsError(409, "AlreadyExists", "exists").reason
        'AlreadyExists'
    """


class ConflictError(ApiError):
    """409 Conflict: the object changed since it was read (stale ``resourceVersion``).

    Example:
        >>> ConflictError(409, "Conflict", "modified").status
        409
    """


class ConnectionFailedError(RayQueueError, ConnectionError):
    """A server (the Kubernetes API or a Ray dashboard) could not be reached in time.

    Example:
        >>> isinstance(ConnectionFailedError("https://127.0.0.1:1 is unreachable"), ConnectionError)
        True
    """

    fix = "check the server address and your network, then rerun the cell"


class TLSVerificationError(ConnectionFailedError):
    """The server's TLS certificate was not trusted.

    The message explains ``ca_cert_path`` (trust this CA) and ``skip_tls`` (do not verify).

    Example:
        >>> issubclass(TLSVerificationError, ConnectionFailedError)
        True
    """


class OutcomeUnknownError(ConnectionFailedError):
    """A write may have been carried out, but its answer was lost and reading the object back could not
    settle what happened (the server is still unreachable, or the object is there but not as sent).

    The message names the object and what to do; calling ``apply()`` again settles a lost create or
    update (it creates or updates, whichever is needed), ``status()`` reads what is there now.

    Attributes:
        verb: the write (``create``, ``patch``, ``delete``).
        resource: the resource (``rayclusters.ray.io``).
        namespace, name: the object.
        why: what was lost, and why reading back did not settle it.

    Example:
        >>> err = OutcomeUnknownError("create", "rayclusters.ray.io", "ds", "ws", "the server is unreachable")
        >>> isinstance(err, ConnectionFailedError), err.name
        (True, 'ws')
        >>> print(str(err).split(" (see")[0])
        create rayclusters.ray.io ds/ws: the answer was lost and the outcome is unknown \
(the server is unreachable); it may have been done: read it back, or repeat the call
    """

    fix = "read the object back (status()), or repeat the call: apply() settles a lost create or update"

    def __init__(
        self, verb: str, resource: str, namespace: str | None, name: str, why: str, advice: str | None = None
    ) -> None:
        self.verb = verb
        self.resource = resource
        self.namespace = namespace
        self.name = name
        self.why = why
        where = f"{namespace}/{name}" if namespace else name
        super().__init__(
            f"{verb} {resource} {where}: the answer was lost and the outcome is unknown ({why}); "
            f"{advice or 'it may have been done: read it back, or repeat the call'}"
        )


class AdmissionTimeout(RayQueueError, TimeoutError):
    """Gave up waiting for a cluster or job, with the last thing Kueue said.

    Attributes:
        phase: the last observed phase (e.g. ``"queued"``).
        reason: Kueue's last reason/message for the wait, if any.
        position: the last known position in the LocalQueue (0-based), or ``None``.

    Example:
        >>> err = AdmissionTimeout("ws", 5.0, phase="queued", reason="insufficient quota", position=0)
        >>> isinstance(err, TimeoutError), err.position
        (True, 0)
    """

    fix = (
        "wait longer (timeout=, queue_timeout=), ask for less, or use a queue with free quota; "
        "the queue view shows who is ahead"
    )

    def __init__(
        self,
        name: str,
        timeout: float,
        *,
        phase: str,
        reason: str | None = None,
        position: int | None = None,
        what: str = "admission",
    ) -> None:
        self.name = name
        self.timeout = timeout
        self.phase = phase
        self.reason = reason
        self.position = position
        msg = f"{name}: gave up waiting for {what} after {timeout:g}s; last phase {phase}"
        if position is not None:
            msg += f", position {position} in queue"
        if reason:
            msg += f": {reason}"
        super().__init__(msg)


class ClusterDeletedError(RayQueueError):
    """The object was deleted (by someone else) while the SDK was waiting on it.

    Example:
        >>> str(ClusterDeletedError("ws was deleted while waiting"))
        'ws was deleted while waiting (see docs/troubleshooting.md#clusterdeletederror)'
    """

    fix = "apply() the cluster (or submit the job) again"


class _Decided(RayQueueError):
    """Someone decided the object's fate (KubeRay, the kubelet, Kueue): its name, their reason and message,
    said by the subclass's :attr:`template`."""

    #: The message, from ``{name}``, ``{reason}`` and ``{message}``.
    template: ClassVar[str] = "{name} ({reason}): {message}"

    def __init__(self, name: str, reason: str, message: str) -> None:
        self.name = name
        self.reason = reason
        self.message = message
        super().__init__(self.template.format(name=name, reason=reason, message=message))


class ClusterFailedError(_Decided):
    """The RayCluster cannot become ready by itself: its head cannot start (KubeRay could not create the
    head pod, or the kubelet cannot run its container: a bad image, a command that keeps exiting), or
    Kueue finished its workload. Raised at once by a wait, not after the timeout.

    Attributes:
        name: the RayCluster.
        reason: KubeRay's, the kubelet's or Kueue's reason (e.g. ``"ImagePullBackOff"``,
            ``"CrashLoopBackOff"``, ``"FailedCreateHeadPod"``).
        message: their message, as they wrote it.

    Example:
        >>> err = ClusterFailedError("ws", "CrashLoopBackOff", "ray-head: back-off restarting")
        >>> err.reason, str(err).split(" (see")[0]
        ('CrashLoopBackOff', 'RayCluster ws cannot start (CrashLoopBackOff): ray-head: back-off restarting')
    """

    fix = "fix the image or command in the configuration, then down() and apply() again"
    template = "RayCluster {name} cannot start ({reason}): {message}"


class PreemptedError(_Decided):
    """Kueue evicted the workload: preemption, deactivation, a stopped queue, ...

    Attributes:
        reason: Kueue's reason (e.g. ``"InCohortReclamation"``, ``"Deactivated"``).
        message: Kueue's message, as Kueue wrote it.

    Example:
        >>> PreemptedError("ws", "InClusterQueue", "Preempted to accommodate a workload").reason
        'InClusterQueue'
    """

    fix = (
        "Kueue gave the quota to a higher-priority workload and requeues yours: "
        "wait_ready() again (resume() it if deactivated)"
    )
    template = "{name} was evicted ({reason}): {message}"


class AdmissionCheckRejected(PreemptedError):
    """Kueue rejected an admission check of the workload (e.g. its ProvisioningRequest failed on the last
    attempt) and deactivated it (``Evicted`` reason ``DeactivatedDueToAdmissionCheck``;
    https://kueue.sigs.k8s.io/docs/concepts/admission_check/).

    A :class:`PreemptedError` (the workload was deactivated while waiting), so existing handlers catch it.

    Attributes:
        reason: Kueue's reason (``"DeactivatedDueToAdmissionCheck"``).
        message: Kueue's message, naming the check and why it was rejected.

    Example:
        >>> err = AdmissionCheckRejected("ws", "DeactivatedDueToAdmissionCheck", "The workload is "
        ...     'deactivated due to AdmissionCheck in Rejected state: "sample-prov" (no nodes)')
        >>> str(err).split(" (see")[0]
        'ws: admission check rejected: The workload is deactivated due to AdmissionCheck in Rejected state: \
"sample-prov" (no nodes)'
    """

    template = "{name}: admission check rejected: {message}"


class JobFailedError(RayQueueError):
    """A Ray job ended without succeeding.

    Attributes:
        job_id: the Ray submission id.
        status: the terminal status (``"FAILED"`` or ``"STOPPED"``).
        reason: KubeRay's or Ray's reason, if any.
        log_tail: the last lines of the job's logs.

    Example:
        >>> err = JobFailedError("job-1", "FAILED", "AppFailed", "Traceback ...\\nValueError: boom")
        >>> err.log_tail.splitlines()[-1], str(err).splitlines()[-1]
        ('ValueError: boom', '(see docs/troubleshooting.md#jobfailederror)')
    """

    fix = "read the log lines above (job.logs() has them all), fix the entrypoint or code, and submit again"

    def __init__(self, job_id: str, status: str, reason: str | None, log_tail: str) -> None:
        self.job_id = job_id
        self.status = status
        self.reason = reason
        self.log_tail = log_tail
        msg = f"job {job_id} ended {status}"
        if reason:
            msg += f" ({reason})"
        if log_tail:
            msg += "; last log lines:\n" + log_tail
        super().__init__(msg)


class ScaledToZeroError(RayQueueError):
    """The cluster's idle policy scaled it to zero: its quota went back to the queue, no head runs.

    Raised at once by ``wait_ready()`` and ``cluster_uri()`` rather than waiting for a cluster that will
    not come back by itself; ``cluster.resume()`` queues it again.

    Attributes:
        name, namespace: the RayCluster.
        detail: what the SDK knows (when, after how long, by which mechanism).

    Example:
        >>> err = ScaledToZeroError("ws", "ds", "scaled to zero at 14:02 after 60 idle min")
        >>> str(err).split(" (see")[0]
        'ds/ws: scaled to zero at 14:02 after 60 idle min; call cluster.resume()'
        >>> err.troubleshooting_ref()
        'docs/troubleshooting.md#scaledtozeroerror'
    """

    fix = "call cluster.resume() and wait_ready() again"

    def __init__(self, name: str, namespace: str, detail: str = "scaled to zero") -> None:
        self.name = name
        self.namespace = namespace
        self.detail = detail
        super().__init__(f"{namespace}/{name}: {detail}; call cluster.resume()")


class UnsupportedError(RayQueueError):
    """The installation lacks a capability the call needs (e.g. a Workload ``/scale`` subresource).

    Example:
        >>> str(UnsupportedError("workloads/scale is not served"))
        'workloads/scale is not served (see docs/troubleshooting.md#unsupportederror)'
    """


def _short_repr(value: Any, limit: int = 80) -> str:
    if isinstance(value, os.PathLike):  # a file's name is what finds it: never clipped
        return repr(os.fspath(value))
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
