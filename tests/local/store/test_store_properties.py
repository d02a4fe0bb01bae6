"""Property tests: random write sequences keep the store's invariants."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rayqueue_local.storage.store import Store, StoreError

KEY = "configmaps"
NAMES = ["a", "b", "c", "d", "e"]

operation = st.one_of(
    st.tuples(st.just("create"), st.sampled_from(NAMES), st.sampled_from(["x", "y"])),
    st.tuples(st.just("patch"), st.sampled_from(NAMES), st.sampled_from(["x", "y", "z"])),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("finalize"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("hold"), st.sampled_from(NAMES), st.just("")),
)


def run(store: Store, ops: list[tuple[str, str, str]]) -> None:
    for op, name, value in ops:
        try:
            if op == "create":
                store.create(
                    KEY, {"metadata": {"name": name, "namespace": "default", "labels": {"v": value}}}
                )
            elif op == "patch":
                store.patch(
                    KEY, "default", name, {"metadata": {"labels": {"v": value}}, "data": {"v": value}}
                )
            elif op == "delete":
                store.delete(KEY, "default", name)
            elif op == "hold":
                store.patch(KEY, "default", name, {"metadata": {"finalizers": ["test/hold"]}})
            else:
                store.patch(KEY, "default", name, {"metadata": {"finalizers": None}})
        except StoreError as err:
            assert err.code in (404, 409, 422)


@settings(max_examples=150, deadline=None)
@given(st.lists(operation, max_size=40), st.integers(1, 4))
def test_watch_replay_and_pagination_agree_with_the_final_state(ops: list, limit: int) -> None:
    store = Store(history=1000)
    start = store.resource_version
    watch = store.watch(KEY, "default", resource_version=start)
    run(store, ops)

    # Replaying every event from the start reproduces the state, in strictly increasing versions.
    replayed: dict[str, dict] = {}
    last = int(start)
    while (event := watch.get(timeout=0)) is not None:
        rv = event.resource_version
        assert rv > last
        last = rv
        name = event.object["metadata"]["name"]
        if event.type == "DELETED":
            assert name in replayed
            del replayed[name]
        else:
            assert (name in replayed) == (event.type == "MODIFIED")
            replayed[name] = event.object
    watch.close()
    current = {o["metadata"]["name"]: o for o in store.list(KEY, "default")}
    assert replayed == current

    # Paging in any page size yields the same list, once each, in order.
    pages, token = [], None
    while True:
        page = store.list_page(KEY, "default", limit=limit, continue_token=token)
        pages.extend(page.items)
        token = page.continue_token
        if token is None:
            break
    assert [o["metadata"]["name"] for o in pages] == sorted(current)

    # Selectors agree with a plain filter.
    for value in ("x", "y", "z"):
        selected = {o["metadata"]["name"] for o in store.list(KEY, "default", label_selector=f"v={value}")}
        assert selected == {n for n, o in current.items() if o["metadata"]["labels"].get("v") == value}


@settings(max_examples=100, deadline=None)
@given(st.lists(operation, min_size=1, max_size=30), st.lists(operation, max_size=30), st.integers(1, 3))
def test_pages_after_writes_are_the_snapshot_of_the_first_page(before: list, after: list, limit: int) -> None:
    store = Store(history=1000)
    run(store, before)
    snapshot = [o["metadata"]["name"] for o in store.list(KEY, "default")]
    first = store.list_page(KEY, "default", limit=limit)
    run(store, after)
    names = [o["metadata"]["name"] for o in first.items]
    token = first.continue_token
    while token is not None:
        page = store.list_page(KEY, "default", limit=limit, continue_token=token)
        names.extend(o["metadata"]["name"] for o in page.items)
        token = page.continue_token
    assert names == snapshot
