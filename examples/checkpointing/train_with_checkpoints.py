"""A CPU stand-in for codeflare-sdk's ``train_with_checkpoints.py``: the same checkpoint and resume logic
(Ray Train's ``storage_path`` and run name, ``ray.train.get_checkpoint()``, the same log lines), without
torch or a dataset download. Each "epoch" sleeps ``EPOCH_SECONDS`` and reports a checkpoint to S3.

Configuration, as the peer's script reads it: ``AWS_S3_BUCKET``, ``RAY_CHECKPOINT_PREFIX``,
``RAY_CHECKPOINT_RUN_NAME``, plus ``EPOCHS`` and ``EPOCH_SECONDS``. pyarrow reaches an S3-compatible store
through ``AWS_ENDPOINT_URL`` and the usual AWS credentials.
"""

import json
import os
import tempfile
import time

import ray
from ray import train
from ray.train import Checkpoint, CheckpointConfig, RunConfig, ScalingConfig
from ray.train.v2.api.data_parallel_trainer import DataParallelTrainer

CHECKPOINT_PREFIX = os.environ.get("RAY_CHECKPOINT_PREFIX", "mnist-demo")
RUN_NAME = os.environ.get("RAY_CHECKPOINT_RUN_NAME", "mnist-checkpointing-run")
STORAGE_PATH = f"s3://{os.environ.get('AWS_S3_BUCKET', 'my-bucket')}/ray-checkpoints/{CHECKPOINT_PREFIX}"


def train_func(config):
    epochs = config["epochs"]
    start_epoch, loss = 0, 1.0
    checkpoint = train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as folder, open(os.path.join(folder, "state.json")) as f:
            state = json.load(f)
        start_epoch, loss = state["epoch"] + 1, state["loss"]
        print("=" * 60)
        print(f"RESUMING FROM CHECKPOINT - Starting at epoch {start_epoch}")
        print(f"Previous loss: {loss}")
        print("=" * 60)
    else:
        print("=" * 60)
        print("NO CHECKPOINT FOUND - Starting fresh training from epoch 0")
        print("=" * 60)
    for epoch in range(start_epoch, epochs):
        time.sleep(config["epoch_seconds"])
        loss = loss * 0.8
        with tempfile.TemporaryDirectory() as tmpdir:
            with open(os.path.join(tmpdir, "state.json"), "w") as f:
                json.dump({"epoch": epoch, "loss": loss}, f)
            train.report(metrics={"loss": loss, "epoch": epoch}, checkpoint=Checkpoint.from_directory(tmpdir))
        print(f"Epoch {epoch}/{epochs - 1}: loss={loss:.4f} [Checkpoint saved to S3]", flush=True)


if __name__ == "__main__":
    ray.init()
    print("=" * 60)
    print(f"Storage path: {STORAGE_PATH}")
    print(f"Run name: {RUN_NAME}")
    print("=" * 60)
    trainer = DataParallelTrainer(
        train_func,
        train_loop_config={
            "epochs": int(os.environ.get("EPOCHS", "10")),
            "epoch_seconds": float(os.environ.get("EPOCH_SECONDS", "3")),
        },
        scaling_config=ScalingConfig(num_workers=1, use_gpu=False),
        run_config=RunConfig(
            name=RUN_NAME,
            storage_path=STORAGE_PATH,
            checkpoint_config=CheckpointConfig(num_to_keep=3),
        ),
    )
    result = trainer.fit()
    print("=" * 60)
    print("TRAINING COMPLETE")
    print(f"Final result path: {result.path}")
    print("=" * 60)
