"""Where the SVG snapshots live: the top-level snapshots/ folder."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
SNAPSHOT_DIR = REPO_ROOT / "snapshots"
