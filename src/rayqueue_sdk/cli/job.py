"""``rayqueue job submit|status|logs|wait|stop|delete``: RayJobs from a shell or a CI pipeline.

Exit codes are the one table of :mod:`rayqueue_sdk.cli.exit_codes`: ``0`` done (the job succeeded, or the
action worked); ``1`` another rayqueue_sdk error; ``2`` bad input; ``3`` not found (job, cluster,
LocalQueue, priority class; the message lists what exists); ``4`` timed out; ``5`` preempted, deactivated
or deleted while waiting; ``6`` authentication or permission refused; ``7`` API server or Ray dashboard
unreachable; ``8`` the job failed or was stopped (the log tail is printed). ``--json`` prints one JSON
object per line. This module is imported only when ``rayqueue job`` runs, so it imports the job layer at
module level.

A job on an existing cluster is named by ``--cluster`` and its Ray submission id (``--job-id``,
printed by ``submit``); a job-owned job by its RayJob name. ``submit --cluster`` to a cluster that is
still queued or starting waits for it (saying why on stderr, at most ``--cluster-timeout`` seconds) and
returns once the job is submitted.

Example::

    $ rayqueue job submit nightly --queue batch-jobs-queue --priority prod-priority \\
          --cluster-config '{"num_workers": 2}' --working-dir . --wait --timeout 3600 -e "python train.py"
    $ rayqueue job status nightly --json
    $ rayqueue job submit quick --cluster my-workspace-cluster --working-dir . -e "python test_model.py"
    $ rayqueue job logs quick --cluster my-workspace-cluster --job-id quick-3f9a1c --follow
"""

from __future__ import annotations

import argparse
from typing import Any

from rayqueue_sdk.admission.cluster import JobPhase
from rayqueue_sdk.cli.common import add_connection_options, emit, fail, guarded, seconds, session_of
from rayqueue_sdk.cli.exit_codes import JOB_FAILED, SUCCESS
from rayqueue_sdk.cli.files import parse_yaml_text, read_yaml_file
from rayqueue_sdk.config.models import ManagedClusterConfig
from rayqueue_sdk.errors import ConfigError, NotFoundError
from rayqueue_sdk.job.rayjob import DEFAULT_CLUSTER_TIMEOUT, RayJob

__all__ = ["JOB_FAILED", "configure"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the actions of ``rayqueue job`` to its parser.

    Example:
        >>> p = argparse.ArgumentParser(); configure(p)
        >>> args = p.parse_args(["logs", "nightly", "--follow", "--json"])
        >>> args.job_command, args.follow, args.json
        ('logs', True, True)
    """
    sub = parser.add_subparsers(dest="job_command", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("name", help="the job name (the RayJob's name for a job-owned cluster)")
        add_connection_options(p)
        p.add_argument("--cluster", help="the existing RayCluster the job runs on")
        p.add_argument("--job-id", help="the Ray submission id (jobs on an existing cluster)")

    submit = sub.add_parser("submit", help="submit a job")
    common(submit)
    submit.add_argument("--cluster-config", help="ManagedClusterConfig as JSON, or @file.json")
    submit.add_argument("--queue", help="Kueue LocalQueue (job-owned cluster)")
    submit.add_argument("--priority", help="Kueue WorkloadPriorityClass (job-owned cluster)")
    submit.add_argument("--working-dir", help="local directory or remote URI shipped with the job")
    submit.add_argument("--pip", help="requirements file, or comma-separated requirements")
    submit.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="env var (repeat)")
    submit.add_argument("--ttl", type=int, default=0, help="ttlSecondsAfterFinished (job-owned)")
    submit.add_argument("--deadline", type=int, help="activeDeadlineSeconds (job-owned)")
    submit.add_argument("--wait", action="store_true", help="wait for the job to end; exit code says how")
    submit.add_argument("--timeout", type=seconds, default=3600.0, help="seconds for --wait (default 3600)")
    submit.add_argument(
        "--cluster-timeout",
        type=seconds,
        default=DEFAULT_CLUSTER_TIMEOUT,
        help="seconds to wait for a --cluster that is still queued or starting before the job is "
        f"submitted (default {DEFAULT_CLUSTER_TIMEOUT:g}; exit 4 when it is not ready by then)",
    )
    submit.add_argument(
        "-e", "--entrypoint", required=True, help="the command to run, e.g. 'python train.py --lr 0.1'"
    )
    submit.set_defaults(func=_submit)

    for action, helptext in (
        ("status", "print the job's status"),
        ("logs", "print the job's logs"),
        ("wait", "wait for the job to end; exit code says how"),
        ("stop", "stop the job"),
        ("delete", "delete the job (and its cluster, when it owns one)"),
    ):
        p = sub.add_parser(action, help=helptext)
        common(p)
        if action == "logs":
            p.add_argument("-f", "--follow", action="store_true", help="stream lines as they come")
        if action == "wait":
            p.add_argument("--timeout", type=seconds, default=3600.0, help="seconds (default 3600)")
        p.set_defaults(func=_act, action=action)


def _runtime_env(args: argparse.Namespace) -> dict[str, Any] | None:
    env: dict[str, Any] = {}
    if args.working_dir:
        env["working_dir"] = args.working_dir
    if args.pip:
        is_file = args.pip.endswith(".txt") or "/" in args.pip
        env["pip"] = args.pip if is_file else [p.strip() for p in args.pip.split(",") if p.strip()]
    if args.env:
        pairs = {}
        for item in args.env:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise ConfigError("--env", item, "KEY=VALUE")
            pairs[key] = value
        env["env_vars"] = pairs
    return env or None


_CLUSTER_CONFIG_ALLOWED = "ManagedClusterConfig fields as JSON or YAML, or @ and a file holding them"


def _cluster_config(text: str | None) -> ManagedClusterConfig:
    if not text:
        return ManagedClusterConfig()
    if text.startswith("@"):
        doc = read_yaml_file(text[1:], "--cluster-config", _CLUSTER_CONFIG_ALLOWED)
    else:
        doc = parse_yaml_text(text, "--cluster-config", text, _CLUSTER_CONFIG_ALLOWED)
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ConfigError(
            "--cluster-config", text, _CLUSTER_CONFIG_ALLOWED, problem="not a mapping of fields"
        )
    config: ManagedClusterConfig = ManagedClusterConfig.model_validate(doc)
    return config


def _submit(args: argparse.Namespace) -> int:
    def action() -> None:
        if args.cluster:
            if args.cluster_config is not None:
                raise ConfigError(
                    "--cluster/--cluster-config",
                    {"--cluster": args.cluster, "--cluster-config": args.cluster_config},
                    "one of them: --cluster (an existing RayCluster) or --cluster-config (a job-owned one)",
                    problem="both given",
                )
            # Queue, priority and lifetime options belong to job-owned clusters: RayJob refuses them here.
            cluster_name, cluster_config = args.cluster, None
        else:
            cluster_name, cluster_config = None, _cluster_config(args.cluster_config)
        job = RayJob(
            args.name,
            args.entrypoint,
            cluster_name=cluster_name,
            cluster_config=cluster_config,
            namespace=args.namespace,
            runtime_env=_runtime_env(args),
            local_queue=args.queue,
            priority_class=args.priority,
            ttl_seconds_after_finished=args.ttl,
            active_deadline_seconds=args.deadline,
            client=session_of(args),
        )
        # On an existing cluster still queued or starting, the command returns once the job is on Ray
        # (a CI step must not exit 0 with a job that is never submitted).
        submitted = (
            job.submit(cluster_timeout=args.cluster_timeout, wait_for_cluster=True)
            if args.cluster
            else job.submit()
        )
        emit(
            args,
            {"name": args.name, "job_id": job.job_id, "submitted": submitted},
            f"submitted {args.name}" + (f" as {job.job_id}" if job.job_id else ""),
        )
        if args.wait:
            st = job.wait(timeout=args.timeout)
            emit(args, st.to_dict(), str(st))

    return guarded(args, action)


def _act(args: argparse.Namespace) -> int:
    def action() -> int:
        job = RayJob.attach(
            args.name,
            cluster_name=args.cluster,
            job_id=args.job_id,
            namespace=args.namespace,
            client=session_of(args),
        )
        if args.action == "status":
            st = job.status()
            if st.phase is JobPhase.DELETED:  # no such job (any more): as `cluster status` of a missing one
                where = f" in namespace {args.namespace!r}" if args.namespace else ""
                kind = f"Ray job on cluster {args.cluster!r}" if args.cluster else "RayJob"
                return fail(
                    args, NotFoundError(404, "NotFound", f"{kind} {args.name!r} does not exist{where}")
                )
            emit(args, st.to_dict(), str(st))
            return JOB_FAILED if st.phase in (JobPhase.FAILED, JobPhase.STOPPED) else SUCCESS
        if args.action == "logs":
            if args.follow:
                for line in job.logs(follow=True):
                    emit(args, {"line": line}, line)
            else:
                text = job.logs()
                emit(args, {"logs": text}, text.rstrip("\n"))
        elif args.action == "wait":
            st = job.wait(timeout=args.timeout)
            emit(args, st.to_dict(), str(st))
        elif args.action == "stop":
            changed = job.stop()
            emit(args, {"stopped": changed}, "stopped" if changed else "nothing to stop")
        else:
            deleted = job.delete()
            emit(args, {"deleted": deleted}, "deleted" if deleted else "nothing to delete")
        return SUCCESS

    return guarded(args, action)
