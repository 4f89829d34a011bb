"""The standalone ``copapy-run`` binary (``cargo build --release -p copapy-run``), for the
tests that measure or drive the runner process itself (its memory, CPU time, exit codes):
the console script of an install runs the same code inside a Python interpreter, whose
own footprint would hide what these tests measure."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "release" / "copapy-run"


def standalone_runner() -> str:
    """The path of the release binary, built first when missing (scripts/test.sh builds it
    before pytest, so this only builds when a test file runs on its own)."""
    if not BINARY.is_file():
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "copapy-run"], cwd=ROOT, check=True)
    return str(BINARY)
