"""Runs a script under the public Copapy 0.0.7 release, the reference the compatibility
tests compare numbers with where Copapy is right.

The release lives in its own venv, ``.venv-copapy-ref`` (``benches/setup_reference.sh``,
which ``scripts/test.sh`` runs), or the interpreter named by ``COPAPY_REFERENCE_PYTHON``.
Without it these tests fail, saying how to install it: a skip would hide that nothing
was compared.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_PYTHON = Path(
    os.environ.get("COPAPY_REFERENCE_PYTHON", str(ROOT / ".venv-copapy-ref" / "bin" / "python"))
)


def run_reference(script: str) -> Any:
    """Runs ``script`` under Copapy 0.0.7 and returns what it printed as JSON (NaN and
    infinities allowed). The script runs outside the checkout, so it imports Copapy, not us."""
    if not REFERENCE_PYTHON.exists():
        pytest.fail(
            f"Copapy 0.0.7 reference interpreter {REFERENCE_PYTHON} is missing: run "
            "benches/setup_reference.sh (scripts/test.sh does) or set COPAPY_REFERENCE_PYTHON"
        )
    proc = subprocess.run([str(REFERENCE_PYTHON), "-c", script], capture_output=True, text=True,
                          cwd="/", check=False)
    if proc.returncode:
        pytest.fail(f"the script failed under Copapy 0.0.7:\n{proc.stderr}")
    return json.loads(proc.stdout)
