"""Reading a resumption from a job's logs (job/resume): Ray Train's snapshot line, the training function's
epoch line, several preemptions, and the watch that reads the logs again until it knows the epoch."""

from __future__ import annotations

from rayqueue_sdk import JobPhase, RayJobStatus
from rayqueue_sdk.job.resume import ResumeWatch, find_resumption, with_resumption

SNAPSHOT = (
    "(TrainController pid=9) A run snapshot was found in storage folder at: 'bucket/ray-checkpoints/p/run'"
)
EPOCH = "(RayTrainWorker pid=12) RESUMING FROM CHECKPOINT - Starting at epoch {n}"


def test_the_snapshot_line_names_the_run_and_the_workers_line_the_epoch() -> None:
    r = find_resumption(f"Storage path: s3://bucket/ray-checkpoints/p\n{SNAPSHOT}\n{EPOCH.format(n=2)}\n")
    assert r is not None and (r.storage, r.epoch) == ("bucket/ray-checkpoints/p/run", 2)
    assert str(r) == "resumed from the Ray Train run at bucket/ray-checkpoints/p/run (epoch 2)"


def test_a_fresh_run_did_not_resume_and_the_last_of_several_resumptions_counts() -> None:
    assert find_resumption("NO CHECKPOINT FOUND - Starting fresh training from epoch 0\nEpoch 0/5") is None
    twice = "\n".join([SNAPSHOT, EPOCH.format(n=2), SNAPSHOT, EPOCH.format(n=4)])
    r = find_resumption(twice)
    assert r is not None and r.epoch == 4


def test_the_watch_reads_again_until_it_knows_the_epoch_then_stops() -> None:
    now = [0.0]
    logs = [SNAPSHOT]
    reads: list[int] = []

    def read() -> str:
        reads.append(1)
        return "\n".join(logs)

    watch = ResumeWatch(recheck=10, clock=lambda: now[0])
    status = RayJobStatus("j", "ds", JobPhase.RUNNING, "running", job_id="raysubmit_1", owns_cluster=True)
    first = with_resumption(status, watch, read)
    assert first.resumed_from == "resumed from the Ray Train run at bucket/ray-checkpoints/p/run"
    logs.append(EPOCH.format(n=3))
    assert with_resumption(status, watch, read).resumed_from == first.resumed_from and len(reads) == 1
    now[0] = 11.0
    done = with_resumption(status, watch, read)
    assert done.resumed_from is not None and done.resumed_from.endswith("(epoch 3)") and len(reads) == 2
    now[0] = 30.0
    assert with_resumption(status, watch, read) == done and len(reads) == 2  # complete: not read again
    queued = RayJobStatus("j", "ds", JobPhase.QUEUED, "queued", job_id="raysubmit_1", owns_cluster=True)
    assert with_resumption(queued, watch, read) is queued  # no logs to read while queued


def test_a_job_on_an_existing_cluster_is_not_read_for_a_resumption() -> None:
    reads: list[int] = []
    st = RayJobStatus("j", "ds", JobPhase.RUNNING, "running", job_id="j-1", owns_cluster=False)
    assert with_resumption(st, ResumeWatch(), lambda: reads.append(1) or SNAPSHOT) is st and reads == []
