"""The troubleshooting page covers every error class and every message the SDK shows or passes on, and the
SDK's messages point at the entries (docs/troubleshooting.md; the templates come from docs_messages)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docs_messages import error_classes, sdk_templates, upstream_templates

from rayqueue_sdk.errors import ConfigError, JobFailedError, QueueNotFoundError, RayQueueError

TROUBLESHOOTING_PAGE = RayQueueError.troubleshooting_page

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / TROUBLESHOOTING_PAGE
TEXT = PAGE.read_text()
ANCHORS = set(re.findall(r"^#{2,4} .*\{#([a-z0-9-]+)\}\s*$", TEXT, re.MULTILINE))


def test_the_catalogues_find_what_they_should() -> None:
    # guard against a scanner that silently finds nothing (then every check below would pass)
    assert len(error_classes()) >= 19 and RayQueueError in error_classes()
    where = [w for w, _ in sdk_templates()]
    assert len(where) >= 30 and any(w.startswith("admission/") for w in where)
    assert any(w.startswith("job/") for w in where)
    upstream = dict(upstream_templates())
    assert upstream["kueue: local_queue_missing"] == re.escape("LocalQueue ") + ".+?" + re.escape(
        " doesn't exist"
    )
    assert any(w.startswith("kuberay:") for w in upstream) and any(w.startswith("keda:") for w in upstream)


@pytest.mark.parametrize("cls", error_classes(), ids=lambda c: c.__name__)
def test_every_error_class_has_an_entry_named_by_its_anchor(cls: type[RayQueueError]) -> None:
    ref = cls.troubleshooting_ref()
    assert ref == f"{TROUBLESHOOTING_PAGE}#{cls.__name__.lower()}"
    assert cls.__name__.lower() in ANCHORS, f"no '### {cls.__name__} {{#{cls.__name__.lower()}}}' entry"


@pytest.mark.parametrize(("where", "pattern"), sdk_templates(), ids=lambda v: str(v)[:60])
def test_every_sdk_message_template_has_an_entry(where: str, pattern: str) -> None:
    assert re.search(pattern, TEXT), f"{where}: message /{pattern}/ is not on {PAGE.name}"


@pytest.mark.parametrize(("where", "pattern"), list(upstream_templates()), ids=lambda v: str(v)[:60])
def test_every_kueue_kuberay_keda_message_has_an_entry(where: str, pattern: str) -> None:
    section = TEXT.split("{#kueue-kuberay-and-keda-messages}", 1)[1]
    assert re.search(pattern, section), f"{where}: /{pattern}/ is not in the Kueue/KubeRay/KEDA section"


def test_error_messages_end_with_their_entry_and_keep_their_attributes() -> None:
    err = QueueNotFoundError("gpu", ["team-q"], namespace="ds")
    assert str(err).endswith("available: team-q (see docs/troubleshooting.md#queuenotfounderror)")
    assert err.message == "LocalQueue 'gpu' does not exist in namespace 'ds'; available: team-q"
    bad = ConfigError("num_workers", -1, "an integer >= 0")
    assert (
        str(bad) == "num_workers: got -1; allowed: an integer >= 0 (see docs/troubleshooting.md#configerror)"
    )
    failed = JobFailedError("j", "FAILED", None, "line 1\nline 2")
    assert str(failed).splitlines()[-2:] == ["line 2", "(see docs/troubleshooting.md#jobfailederror)"]


def test_every_link_in_an_error_message_resolves_to_an_anchor_of_the_page() -> None:
    for cls in error_classes():
        anchor = cls.troubleshooting_ref().split("#", 1)[1]
        assert anchor in ANCHORS
    # a private helper class shares its public parent's entry
    private = type("_Private", (QueueNotFoundError,), {})
    assert private.troubleshooting_ref() == QueueNotFoundError.troubleshooting_ref()
