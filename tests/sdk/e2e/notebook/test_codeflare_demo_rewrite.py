"""The rewrite of CodeFlare's demo notebooks (no kernel, no Ray): every forced edit applies to the notebooks
it names, and nothing but the import and the listed edits changes a peer cell.

Reads codeflare-sdk's wheel (downloaded once into the tests' cache on first use, see codeflare_demos).
"""

from __future__ import annotations

import difflib

import nbformat
import pytest
from codeflare_demos import FORCED_EDITS, PROBES, RENAME, Plane, peer_notebook, rewrite

NOTEBOOKS = [
    "guided-demos/0_basic_ray.ipynb",
    "guided-demos/1_cluster_job_client.ipynb",
    "guided-demos/2_basic_interactive.ipynb",
    "guided-demos/3_widget_example.ipynb",
    "guided-demos/4_rayjob_existing_cluster.ipynb",
    "guided-demos/5_submit_rayjob_cr.ipynb",
    "guided-demos/6_autoscaling.ipynb",
    "additional-demos/local_interactive.ipynb",
    "additional-demos/ray_job_client.ipynb",
    "additional-demos/remote_ray_job_client.ipynb",
]
PLANE = Plane("https://127.0.0.1:6443", "user-token", "/tmp/ca.crt", "cf-demos", "http://127.0.0.1:8265")


def test_every_edit_and_probe_names_a_notebook_that_is_run() -> None:
    stems = {n.split("/")[1].removesuffix(".ipynb") for n in NOTEBOOKS}
    assert {w for e in FORCED_EDITS for w in e.where} <= stems
    assert {p.where for p in PROBES} <= stems
    assert all(e.reason for e in FORCED_EDITS)


@pytest.mark.parametrize("path", NOTEBOOKS)
def test_only_the_import_and_the_listed_edits_change_the_peers_cells(path: str) -> None:
    peer, ours = peer_notebook(path), rewrite(path, PLANE)
    nbformat.validate(ours)
    peer_code = [c.source for c in peer.cells if c.cell_type == "code"]
    our_code = [c.source for c in ours.cells if c.cell_type == "code" and not c.id.startswith("probe")]
    assert all(c.outputs == [] for c in ours.cells if c.cell_type == "code")
    assert "codeflare_sdk" not in "\n".join(our_code)
    assert "XXXX" not in "\n".join(our_code) and "your-namespace" not in "\n".join(our_code)
    # every line that differs is the import, or the old or new side of one of the listed edits
    edits = [e for e in FORCED_EDITS if path.split("/")[1].removesuffix(".ipynb") in e.where]
    pieces = [RENAME[0], RENAME[1]]
    for e in edits:
        pieces.append(e.old)
        if e.new is not None:
            new = e.new
            for key, value in vars(PLANE).items():
                new = new.replace("{" + key + "}", repr(value))
            pieces.append(new)
    before, after = "\n".join(peer_code).splitlines(), "\n".join(our_code).splitlines()
    for line in difflib.ndiff(before, after):
        if line[:2] in ("- ", "+ ") and line[2:].strip():
            assert any(line[2:].strip() in p or p.strip() in line[2:] for p in pieces), line
