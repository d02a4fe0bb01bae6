"""CRD schema defaults in the store: filled in on every write and on load (upstream defaults on read
from etcd too), after pruning and before validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rayqueue_local.registry.registry import Registry
from rayqueue_local.storage.store import Store

CQ = "clusterqueues.kueue.x-k8s.io"


def _queue(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {},
    }


def test_defaults_on_create_and_update(crd_dir: Any) -> None:
    store = Store(Registry(crd_dir))
    created = store.create(CQ, _queue("q"))
    assert created["spec"]["queueingStrategy"] == "BestEffortFIFO"
    assert created["spec"]["flavorFungibility"] == {
        "whenCanBorrow": "MayStopSearch",
        "whenCanPreempt": "TryNextFlavor",
    }
    created["spec"]["queueingStrategy"] = None  # a null that is not nullable is defaulted again
    assert store.update(CQ, created)["spec"]["queueingStrategy"] == "BestEffortFIFO"
    created["spec"]["queueingStrategy"] = "StrictFIFO"  # a value given is kept
    assert store.update(CQ, created)["spec"]["queueingStrategy"] == "StrictFIFO"


def test_defaults_on_load(crd_dir: Any, tmp_path: Path) -> None:
    old = Store(Registry(crd_dir), state_dir=tmp_path, validate=False, prune=False)
    assert "queueingStrategy" not in old.create(CQ, _queue("q"))["spec"]  # written without defaults
    old.close()
    again = Store(Registry(crd_dir), state_dir=tmp_path)
    try:
        assert again.get(CQ, None, "q")["spec"]["queueingStrategy"] == "BestEffortFIFO"
    finally:
        again.close()
