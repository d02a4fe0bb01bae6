"""Selectors, pagination and watches of the store."""

from __future__ import annotations

import pytest

from rayqueue_local.apimachinery.selectors import (
    SelectorError,
    match_selector_object,
    parse_field_selector,
    parse_label_selector,
)
from rayqueue_local.storage.store import Store, StoreError


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("a=b", {"a": "b"}, True),
        ("a==b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a!=b", {"a": "c"}, True),
        ("a!=b", {}, True),
        ("a!=b", {"a": "b"}, False),
        ("a in (b, c)", {"a": "c"}, True),
        ("a in (b,c)", {"a": "d"}, False),
        ("a in (b,c)", {}, False),
        ("a notin (b,c)", {"a": "d"}, True),
        ("a notin (b,c)", {}, True),
        ("a notin (b,c)", {"a": "b"}, False),
        ("a", {"a": ""}, True),
        ("a", {}, False),
        ("!a", {}, True),
        ("!a", {"a": "x"}, False),
        ("a=b,c in (d),!e", {"a": "b", "c": "d"}, True),
        ("a=b,c in (d),!e", {"a": "b", "c": "d", "e": "1"}, False),
        ("kueue.x-k8s.io/queue-name=q", {"kueue.x-k8s.io/queue-name": "q"}, True),
        ("", {"x": "y"}, True),
    ],
)
def test_label_selectors(selector: str, labels: dict, expected: bool) -> None:
    assert parse_label_selector(selector).matches(labels) is expected


@pytest.mark.parametrize("bad", ["a in (b", "a=b,,c", "a b", "a=(x)", "-a=b"])
def test_bad_label_selectors(bad: str) -> None:
    with pytest.raises(SelectorError):
        parse_label_selector(bad)


def test_selector_object() -> None:
    sel = {
        "matchLabels": {"a": "b"},
        "matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["x"]}],
    }
    assert match_selector_object(sel, {"a": "b"})
    assert not match_selector_object(sel, {"a": "b", "c": "x"})
    assert match_selector_object({}, {})
    assert not match_selector_object(None, {})


def test_field_selectors() -> None:
    pod = {"metadata": {"name": "p", "namespace": "ns"}, "status": {"phase": "Running"}}
    assert parse_field_selector("status.phase=Running,metadata.namespace=ns", "pods").matches("pods", pod)
    assert not parse_field_selector("status.phase!=Running", "pods").matches("pods", pod)
    with pytest.raises(SelectorError, match="field label not supported: status.phase"):
        parse_field_selector("status.phase=Running", "configmaps")
    event = {"metadata": {"name": "e"}, "involvedObject": {"name": "rc", "kind": "RayCluster", "uid": "u"}}
    assert parse_field_selector("involvedObject.kind=RayCluster,involvedObject.name=rc", "events").matches(
        "events", event
    )


@pytest.fixture
def store() -> Store:
    s = Store()
    s.create("namespaces", {"metadata": {"name": "team-a"}})
    for ns in ("default", "team-a"):
        for i in range(5):
            s.create(
                "pods",
                {
                    "metadata": {
                        "name": f"p{i}",
                        "namespace": ns,
                        "labels": {"i": str(i), "ray.io/node-type": "worker"},
                    },
                    "spec": {},
                },
            )
    return s


def names(items: list[dict]) -> list[str]:
    return [f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}" for o in items]


def test_list_namespace_and_selectors(store: Store) -> None:
    assert len(store.list("pods")) == 10
    assert names(store.list("pods", "team-a", label_selector="i in (1,3)")) == ["team-a/p1", "team-a/p3"]
    assert names(store.list("pods", field_selector="metadata.name=p4")) == ["default/p4", "team-a/p4"]
    assert names(store.list("pods", "default", field_selector="metadata.name=p4")) == ["default/p4"]
    with pytest.raises(StoreError) as err:
        store.list("pods", label_selector="a in (")
    assert err.value.code == 400
    with pytest.raises(StoreError) as err:
        store.list("pods", field_selector="spec.bogus=1")
    assert (err.value.code, err.value.message) == (400, "field label not supported: spec.bogus")


def test_pagination_is_consistent_across_writes(store: Store) -> None:
    first = store.list_page("pods", limit=4)
    assert names(first.items) == ["default/p0", "default/p1", "default/p2", "default/p3"]
    assert first.remaining_item_count == 6 and first.continue_token
    # Writes between pages must not show up in (or vanish from) later pages.
    store.delete("pods", "team-a", "p0")
    store.create("pods", {"metadata": {"name": "p00", "namespace": "default"}})
    store.patch("pods", "team-a", "p1", {"metadata": {"labels": {"changed": "yes"}}})
    second = store.list_page("pods", limit=4, continue_token=first.continue_token)
    assert names(second.items) == ["default/p4", "team-a/p0", "team-a/p1", "team-a/p2"]
    assert second.resource_version == first.resource_version
    assert "changed" not in second.items[2]["metadata"]["labels"]
    third = store.list_page("pods", limit=4, continue_token=second.continue_token)
    assert names(third.items) == ["team-a/p3", "team-a/p4"]
    assert third.continue_token is None and third.remaining_item_count is None


def test_pagination_with_selector(store: Store) -> None:
    page = store.list_page("pods", label_selector="i!=0", limit=3)
    rest = store.list_page("pods", label_selector="i!=0", limit=30, continue_token=page.continue_token)
    assert len(page.items) + len(rest.items) == 8


def test_expired_continue_token() -> None:
    s = Store(history=3)
    for i in range(3):
        s.create("configmaps", {"metadata": {"name": f"c{i}", "namespace": "default"}})
    page = s.list_page("configmaps", limit=1)
    for i in range(5):
        s.create("secrets", {"metadata": {"name": f"s{i}", "namespace": "default"}})
    with pytest.raises(StoreError) as err:
        s.list_page("configmaps", limit=1, continue_token=page.continue_token)
    assert (err.value.code, err.value.reason) == (410, "Expired")


def test_bad_continue_token(store: Store) -> None:
    with pytest.raises(StoreError) as err:
        store.list_page("pods", continue_token="!!not-a-token")
    assert err.value.code == 400


def test_watch_from_version_replays_history(store: Store) -> None:
    rv = store.resource_version
    store.patch("pods", "default", "p1", {"metadata": {"labels": {"x": "1"}}})
    store.delete("pods", "default", "p2")
    with store.watch("pods", "default", resource_version=rv) as w:
        e1, e2 = w.get(1), w.get(1)
        assert e1 is not None and e2 is not None
        assert (e1.type, e1.object["metadata"]["name"]) == ("MODIFIED", "p1")
        assert (e2.type, e2.object["metadata"]["name"]) == ("DELETED", "p2")
        assert int(e2.object["metadata"]["resourceVersion"]) > int(e1.object["metadata"]["resourceVersion"])
        assert w.get(0.01) is None
        store.create("pods", {"metadata": {"name": "late", "namespace": "default"}})
        store.create("pods", {"metadata": {"name": "elsewhere", "namespace": "team-a"}})
        e3 = w.get(1)
        assert e3 is not None and e3.object["metadata"]["name"] == "late"
        assert w.get(0.01) is None


def test_watch_without_version_starts_with_current_state(store: Store) -> None:
    w = store.watch("pods", "team-a")
    first = [w.get(1) for _ in range(5)]
    assert [e.type for e in first if e] == ["ADDED"] * 5
    w.close()
    assert w.get(0) is None
    assert list(w) == []


def test_watch_selector_transitions(store: Store) -> None:
    w = store.watch("pods", "default", resource_version=store.resource_version, label_selector="phase=run")
    store.patch("pods", "default", "p0", {"metadata": {"labels": {"phase": "run"}}})
    store.patch("pods", "default", "p0", {"metadata": {"labels": {"i": "changed"}}})
    store.patch("pods", "default", "p0", {"metadata": {"labels": {"phase": "done"}}})
    store.patch("pods", "default", "p1", {"metadata": {"labels": {"i": "ignored"}}})
    types = [e.type for e in (w.get(1), w.get(1), w.get(1)) if e]
    assert types == ["ADDED", "MODIFIED", "DELETED"]
    assert w.get(0.01) is None
    w.close()


def test_watch_too_old_version_is_410() -> None:
    s = Store(history=5)
    start = s.resource_version
    for i in range(10):
        s.create("configmaps", {"metadata": {"name": f"c{i}", "namespace": "default"}})
    with pytest.raises(StoreError) as err:
        s.watch("configmaps", resource_version=start)
    assert (err.value.code, err.value.reason) == (410, "Expired")
    assert err.value.message.startswith(f"too old resource version: {start} (")
    # A version inside the history still works.
    recent = str(int(s.resource_version) - 2)
    w = s.watch("configmaps", resource_version=recent)
    assert [w.get(1).object["metadata"]["name"] for _ in range(2)] == ["c8", "c9"]


def test_watch_iterates_until_closed(store: Store) -> None:
    import threading

    w = store.watch("configmaps", resource_version=store.resource_version)
    got: list[str] = []

    def consume() -> None:
        for event in w:
            got.append(event.object["metadata"]["name"])

    t = threading.Thread(target=consume)
    t.start()
    store.create("configmaps", {"metadata": {"name": "one", "namespace": "default"}})
    store.create("configmaps", {"metadata": {"name": "two", "namespace": "default"}})
    w.close()
    t.join(10)
    assert not t.is_alive()
    assert got == ["one", "two"]
