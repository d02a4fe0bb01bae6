"""``rayqueue job submit|status|logs|wait|stop|delete``: RayJobs from a shell or a CI pipeline.

Exit codes are those of ``rayqueue cluster`` (one table for a pipeline, see
:mod:`rayqueue_sdk.cli.cluster`) plus one for the job itself: ``0`` done (the job succeeded, or the
action worked); ``1`` another rayqueue_sdk error; ``2`` bad input; ``3`` not found (job, cluster,
LocalQueue, priority class; the message lists what exists); ``4`` timed out; ``5`` preempted, deactivated
or deleted while waiting; ``6`` authentication or permission refused; ``7`` API server or Ray dashboard
unreachable; ``8`` the job failed or was stopped (the log tail is printed). ``--json`` prints one JSON
object.

A job on an existing cluster is named by ``--cluster`` and its Ray submission id (``--job-id``,
printed by ``submit``); a job-owned job by its RayJob name.

Example::

    $ rayqueue job submit nightly --queue batch-jobs-queue --priority prod-priority \\
          --cluster-config '{"num_workers": 2}' --working-dir . --wait --timeout 3600 -e "python train.py"
    $ rayqueue job status nightly --json
    $ rayqueue job submit quick --cluster my-workspace-cluster --working-dir . -e "python test_model.py"
    $ rayqueue job logs quick --cluster my-workspace-cluster --job-id quick-3f9a1c --follow
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["JOB_FAILED", "register"]

#: The exit code of a job that failed or was stopped (the other codes are ``rayqueue cluster``'s).
JOB_FAILED = 8


def register(subparsers: Any) -> None:
    """Add ``job`` and its actions to the ``rayqueue`` parser.

    Example:
        >>> p = argparse.ArgumentParser(); register(p.add_subparsers(dest="command"))
        >>> p.parse_args(["job", "status", "nightly", "--json"]).json
        True
    """
    job = subparsers.add_parser("job", help="submit and follow Ray jobs (RayJob)")
    sub = job.add_subparsers(dest="job_command", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("name", help="the job name (the RayJob's name for a job-owned cluster)")
        p.add_argument("-n", "--namespace", help="namespace (default: from the credentials)")
        p.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
        p.add_argument("--context", help="kubeconfig context (default: the current one)")
        p.add_argument("--cluster", help="the existing RayCluster the job runs on")
        p.add_argument("--job-id", help="the Ray submission id (jobs on an existing cluster)")
        p.add_argument("--json", action="store_true", help="print JSON")

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
    submit.add_argument("--timeout", type=float, default=3600.0, help="seconds for --wait (default 3600)")
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
            p.add_argument("--timeout", type=float, default=3600.0, help="seconds (default 3600)")
        p.set_defaults(func=_act, action=action)


def _emit(args: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    if getattr(args, "json", False):
        print(json.dumps(payload, default=str))
    else:
        print(text)


def _code(err: BaseException) -> int:
    from rayqueue_sdk.cli.cluster import exit_code
    from rayqueue_sdk.errors import JobFailedError, RayQueueError

    if isinstance(err, JobFailedError):
        return JOB_FAILED
    if isinstance(err, RayQueueError):
        return exit_code(err)
    raise err


def _fail(args: argparse.Namespace, err: BaseException) -> int:
    code = _code(err)
    payload: dict[str, Any] = {"error": type(err).__name__, "message": str(err), "exit_code": code}
    for attr in ("log_tail", "available", "reason", "phase", "position"):
        if hasattr(err, attr):
            payload[attr] = getattr(err, attr)
    if args.json:
        print(json.dumps(payload, default=str))
    else:
        print(f"error: {err}", file=sys.stderr)
    return code


def _client(args: argparse.Namespace) -> Any:
    """An explicit client for ``--kubeconfig``/``--context``; else ``None`` (the usual detection)."""
    if args.kubeconfig or args.context:
        from rayqueue_sdk.kube.auth import KubeConfigFileAuthentication

        return KubeConfigFileAuthentication(args.kubeconfig, context=args.context)
    return None


def _runtime_env(args: argparse.Namespace) -> dict[str, Any] | None:
    from rayqueue_sdk.errors import ConfigError

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


def _cluster_config(text: str | None) -> Any:
    from pathlib import Path

    from rayqueue_sdk.config.models import ManagedClusterConfig

    if not text:
        return ManagedClusterConfig()
    if text.startswith("@"):
        from rayqueue_sdk.errors import ConfigError

        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as err:
            raise ConfigError("--cluster-config", text, "JSON, or @ and a readable JSON file") from err
    return ManagedClusterConfig.model_validate_json(text)


def _submit(args: argparse.Namespace) -> int:
    from rayqueue_sdk.errors import RayQueueError
    from rayqueue_sdk.job.rayjob import RayJob

    try:
        entrypoint = args.entrypoint
        if args.cluster:
            job = RayJob(
                args.name,
                entrypoint,
                cluster_name=args.cluster,
                namespace=args.namespace,
                runtime_env=_runtime_env(args),
                client=_client(args),
            )
        else:
            job = RayJob(
                args.name,
                entrypoint,
                cluster_config=_cluster_config(args.cluster_config),
                namespace=args.namespace,
                runtime_env=_runtime_env(args),
                local_queue=args.queue,
                priority_class=args.priority,
                ttl_seconds_after_finished=args.ttl,
                active_deadline_seconds=args.deadline,
                client=_client(args),
            )
        submitted = job.submit()
        _emit(
            args,
            {"name": args.name, "job_id": job.job_id, "submitted": submitted},
            f"submitted {args.name}" + (f" as {job.job_id}" if job.job_id else ""),
        )
        if args.wait:
            st = job.wait(timeout=args.timeout)
            _emit(args, st.to_dict(), str(st))
    except RayQueueError as err:
        return _fail(args, err)
    return 0


def _act(args: argparse.Namespace) -> int:
    from rayqueue_sdk.admission.cluster import JobPhase
    from rayqueue_sdk.errors import RayQueueError
    from rayqueue_sdk.job.rayjob import RayJob

    try:
        job = RayJob.attach(
            args.name,
            cluster_name=args.cluster,
            job_id=args.job_id,
            namespace=args.namespace,
            client=_client(args),
        )
        if args.action == "status":
            st = job.status()
            _emit(args, st.to_dict(), str(st))
            failed = st.phase in (JobPhase.FAILED, JobPhase.STOPPED)
            return JOB_FAILED if failed else 0
        if args.action == "logs":
            if args.follow:
                for line in job.logs(follow=True):
                    print(json.dumps({"line": line}) if args.json else line, flush=True)
            else:
                text = job.logs()
                _emit(args, {"logs": text}, text.rstrip("\n"))
            return 0
        if args.action == "wait":
            st = job.wait(timeout=args.timeout)
            _emit(args, st.to_dict(), str(st))
            return 0
        if args.action == "stop":
            changed = job.stop()
            _emit(args, {"stopped": changed}, "stopped" if changed else "nothing to stop")
            return 0
        deleted = job.delete()
        _emit(args, {"deleted": deleted}, "deleted" if deleted else "nothing to delete")
        return 0
    except RayQueueError as err:
        return _fail(args, err)
