"""The unit scaling tests share tests/sdk/unit's helpers (crd_schema)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
