"""Fuzzing the parsers an API client reaches, for a bounded number of examples in CI.

Any outcome other than a result or the parser's own 4xx-class error (SelectorError, PatchError,
HTTPError with a 4xx code) is a failure: a TypeError or a RecursionError here is a 500 in the server.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rayqueue_local.apimachinery.patchcore import PatchError
from rayqueue_local.apimachinery.rfcpatch import json_patch, merge_patch
from rayqueue_local.apimachinery.selectors import SelectorError, parse_field_selector, parse_label_selector
from rayqueue_local.apimachinery.status import HTTPError
from rayqueue_local.apimachinery.strategic import strategic_merge_patch
from rayqueue_local.apiserver.http import parse_body, parse_request

# derandomize: CI runs the same 300 examples each time (a new finding must not turn an unrelated change red);
# run with --hypothesis-seed=N locally to explore further.
FUZZ = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
PATH_PARTS = st.sampled_from(["api", "apis", "v1", "namespaces", "ns", "pods", "status", "", "..", "%2F"])
QUERY_KEYS = st.sampled_from(["watch", "limit", "labelSelector", "x"])
SELECTOR_ALPHABET = st.sampled_from(list("abz09-_./=!,() \t") + ["in", "notin", "!=", "=="])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@FUZZ
@given(st.lists(SELECTOR_ALPHABET, max_size=30).map("".join) | st.text(max_size=60))
def test_label_and_field_selectors_parse_or_refuse(text: str) -> None:
    for parse in (parse_label_selector, parse_field_selector):
        with contextlib.suppress(SelectorError):
            parse(text)


@FUZZ
@given(
    st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "BREW"]),
    st.lists(PATH_PARTS, max_size=8).map(lambda parts: "/" + "/".join(parts)) | st.text(max_size=40),
    st.dictionaries(QUERY_KEYS, st.lists(st.text(max_size=6), max_size=2)),
)
def test_request_paths_parse_or_refuse(method: str, path: str, query: dict[str, list[str]]) -> None:
    try:
        parse_request(method, path, query)
    except HTTPError as err:
        assert 400 <= err.code < 500


@FUZZ
@given(
    st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()),
    st.sampled_from(["application/json", "application/apply-patch+yaml", "application/yaml"]),
)
def test_bodies_decode_or_are_400(raw: bytes, content_type: str) -> None:
    try:
        parse_body(raw, content_type)
    except HTTPError as err:
        assert err.code == 400


@FUZZ
@given(json_values, json_values)
def test_merge_and_strategic_patches_apply_or_refuse(target: Any, patch: Any) -> None:
    for apply in (merge_patch, strategic_merge_patch):
        with contextlib.suppress(PatchError):
            apply(target, patch)


ops = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
        "path": st.sampled_from(["", "/", "/a", "/a/0", "/a/-", "/b/c", "/~1x", "/a/99"]),
    },
    optional={"value": json_values, "from": st.sampled_from(["/a", "/b", "/a/0", "/zz"])},
)


@FUZZ
@given(json_values, st.lists(ops, max_size=5) | json_values)
def test_json_patches_apply_or_refuse(target: Any, operations: Any) -> None:
    with contextlib.suppress(PatchError):
        json_patch(target, operations)
