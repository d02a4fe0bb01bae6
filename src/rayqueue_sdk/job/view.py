"""What a :class:`~rayqueue_sdk.job.rayjob.RayJob` shows and says while it runs: the job view (a notebook
card with a Stop button, a rich panel in a terminal), whether the user may stop the job, and its logs
(kept by :meth:`~rayqueue_sdk.job.rayjob.RayJob.wait` for once no other source is left).

Example:
    >>> from rayqueue_sdk import RayJob
    >>> RayJob(job_name="j", entrypoint="python x.py", cluster_name="ws").stop_permission() is None
    True

    (a job on an existing cluster is stopped through Ray: no Kubernetes verb to ask about)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal, overload

from rayqueue_sdk.admission.cluster import JobPhase
from rayqueue_sdk.display.environment import is_notebook, is_terminal
from rayqueue_sdk.display.jobs import LOG_TAIL_LINES, JobCard, job_panel
from rayqueue_sdk.display.live import execution_count
from rayqueue_sdk.errors import NotFoundError, RayQueueError
from rayqueue_sdk.job.logs import LogKeeper, tail
from rayqueue_sdk.job.owned import OwnedClusterJob

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.job.backend import JobBackend
    from rayqueue_sdk.job.status import RayJobStatus
    from rayqueue_sdk.kube.session import KubeSession

__all__ = ["JobViewMixin"]


class JobViewMixin:
    """The job view, the stop permission and the logs of a ``RayJob``.

    Example:
        >>> from rayqueue_sdk import RayJob
        >>> RayJob(job_name="j", entrypoint="python x.py", cluster_name="ws")._card is None
        True
    """

    _kept_logs: str | None  # what wait() followed, for logs() once no source is left
    _card: JobCard | None  # the job view in a notebook (view(), wait())
    _patch_answer: str | None  # stop_permission's SelfSubjectAccessReview ("" = allowed)

    if TYPE_CHECKING:  # RayJob (rayqueue_sdk.job.rayjob) defines them

        @property
        def session(self) -> KubeSession: ...

        @property
        def _backend(self) -> JobBackend: ...

        def status(self) -> RayJobStatus: ...

        def stop(self) -> bool: ...

    def _follow_card(self, st: RayJobStatus, followed: str | None, *, fetch: bool) -> None:
        """Show the job view in this cell (once) and put ``st`` and the log tail on it."""
        logs = followed
        if fetch and (logs is None or st.done):
            # at the end, the job's own copy (Ray's, else the submitter pod's) may hold lines the
            # followed stream missed: Ray can close it before the last lines
            logs = self._view_logs(st) or logs
        if self._card is None:
            self._card = JobCard(st, logs, stop=self.stop, permission=self.stop_permission)
        else:
            self._card.update(st, logs)
        self._card.live.show_once()

    def _view_logs(self, st: RayJobStatus) -> str | None:
        """The logs for the job view: none while queued; best effort (a job starting has none yet)."""
        if st.phase in (JobPhase.QUEUED, JobPhase.DELETED, JobPhase.DEACTIVATED):
            return self._kept_logs
        try:
            return tail(self.logs(), LOG_TAIL_LINES)
        except RayQueueError:
            return self._kept_logs

    def view(self, *, show: bool | None = None) -> JobCard | None:
        """The job view: status (phase with Kueue's/KubeRay's reason, position, cluster, Ray job id), the
        last log lines and a Stop button.

        In a notebook: a widget card with its ``text/plain`` and ``text/html`` in the same output (shown
        once per cell; :meth:`wait` keeps it up to date), returned. Stop is disabled, with a tooltip naming
        the missing verb and resource, when the server says the user may not stop the job
        (:meth:`stop_permission`). In a terminal (``show=None``; ``True``: anywhere): a rich panel that fits
        80 columns, and ``None`` is returned. ``show=False``: the card is made (or updated) but not shown.

        Example::

            job.view()             # the card in a notebook, a panel in a terminal
            job.view().stop_button.disabled
        """
        st = self.status()
        logs = self._view_logs(st)
        if is_notebook():
            if self._card is None:
                self._card = JobCard(st, logs, stop=self.stop, permission=self.stop_permission)
            else:
                self._card.update(st, logs)
            if show is not False:
                self._card.live.show_once()
            return self._card
        if show or (show is None and is_terminal()):
            # lazy: rich costs ~30 ms, paid only when something is shown
            from rich.console import Console

            Console(stderr=False, width=80).print(job_panel(st, logs))
        return None

    def stop_permission(self, status: RayJobStatus | None = None) -> str | None:
        """``None`` when the server says the user may stop this job in ``status`` (default: now), else its
        answer naming the missing verb and resource (what the job view's Stop tooltip shows).

        A job-owned job that runs is stopped through Ray's job API on its cluster's dashboard, which has no
        Kubernetes verb to ask about: ``None``. One that has not started is stopped by deactivating its Kueue
        Workload, so this asks for ``patch`` on ``workloads.kueue.x-k8s.io`` with a
        ``SelfSubjectAccessReview`` (:func:`~rayqueue_sdk.kube.access.can_i`; asked once per job object).
        A job on an existing cluster is always stopped through Ray: ``None``.

        Example:
            >>> from rayqueue_sdk import ClusterConfiguration, RayJob
            >>> job = RayJob(job_name="doc-rayjob-perm", entrypoint="python x.py",
            ...              cluster_config=ClusterConfiguration(), namespace="default", client=api)
            >>> job.stop_permission() is None   # the local control plane's identity may stop it
            True

            Where the identity may not (not run here)::

                job.stop_permission()   # "may not patch workloads.kueue.x-k8s.io in namespace 'ds'"
        """
        from rayqueue_sdk.kube.access import can_i  # lazy: stop_permission() only

        if not isinstance(self._backend, OwnedClusterJob):
            return None
        phase = (status or self.status()).phase
        if phase is JobPhase.RUNNING:
            return None
        if self._patch_answer is None:
            session = self.session
            workloads = session.kueue_kind("workloads")
            access = can_i(
                session, "patch", workloads.plural, group=workloads.group, namespace=session.namespace
            )
            self._patch_answer = "" if access.allowed else str(access)
        return self._patch_answer or None

    def _ipython_display_(self) -> None:
        if self._card is not None and self._card.live.shown_in == execution_count():
            return
        self.view(show=True)

    def _failure_tail(self, keeper: LogKeeper, lines: int) -> str:
        try:
            return tail(self.logs(), lines)
        except RayQueueError as err:
            kept = keeper.text()
            if kept:
                return tail(kept, lines)
            return f"(logs unavailable: {err})"

    @overload
    def logs(self, follow: Literal[False] = False) -> str: ...

    @overload
    def logs(self, follow: Literal[True]) -> Iterator[str]: ...

    def logs(self, follow: bool = False) -> str | Iterator[str]:
        """The job's logs: all of them so far as one string, or with ``follow=True`` an iterator of
        lines that yields each line as the job prints it and ends when the job ends.

        Following runs Ray's async ``tail_job_logs`` on a background thread with its own event loop, so
        it works in scripts and inside a running event loop alike (a Jupyter cell).

        A job-owned job's logs outlive its cluster: once KubeRay has deleted the cluster they come from
        the log of KubeRay's submitter pod (``pods/{name}/log``), and after that pod is gone from what
        :meth:`wait` followed; with no source left this raises
        :class:`~rayqueue_sdk.errors.NotFoundError` naming the sources it tried.

        Example:
            >>> from rayqueue_sdk import ClusterConfiguration, RayJob
            >>> job = RayJob(job_name="doc-rayjob-logs", entrypoint="python x.py",
            ...              cluster_config=ClusterConfiguration(), namespace="default", client=api)
            >>> job.logs()   # never submitted
            Traceback (most recent call last):
            ...
            rayqueue_sdk.errors.RayQueueError: no logs for RayJob default/doc-rayjob-logs yet: ...

            Once it runs (not run here)::

                print(job.logs())
                for line in job.logs(follow=True):
                    print(line)
        """
        if follow:
            return self._backend.follow()
        try:
            return self._backend.logs()
        except NotFoundError:
            if self._kept_logs is None:
                raise
            return self._kept_logs
