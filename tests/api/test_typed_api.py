"""The typed API tour (tests/typed_api_check.py): it must run, and mypy --strict must
accept it and the examples. Neither reads the test target, so scripts/test.sh runs them in
the native pass only (tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import ROOT

TYPED_CHECK = ROOT / "tests" / "typed_api_check.py"
EXAMPLES = ROOT / "examples"


def test_typed_api_check_runs() -> None:
    proc = subprocess.run([sys.executable, str(TYPED_CHECK)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "all checks ran" in proc.stdout


def test_typed_api_check_and_examples_pass_mypy_strict() -> None:
    pytest.importorskip("mypy")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", str(TYPED_CHECK), str(EXAMPLES)],
                          capture_output=True, text=True, timeout=600, check=False, cwd=EXAMPLES.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
