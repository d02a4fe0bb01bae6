"""Run by the mkdocs-gen-files plugin at every ``mkdocs build``: writes the generated pages.

The pages exist only in the build (never in the repository), so they cannot drift from the code; what
they say is in ``generate.py`` beside this file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import mkdocs_gen_files

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generate  # noqa: E402  (beside this script, found through the line above)

for path, make in generate.PAGES.items():
    with mkdocs_gen_files.open(path, "w") as page:
        page.write(make())
