"""Running the numeric test modules on a foreign target.

With ``COPAPY_TEST_TARGET=riscv32`` (any target name), ``cp.Target()`` in the tests
compiles for that target and runs the program in the emulator, so the same tests —
compared with the same NumPy references — check every architecture. scripts/test.sh
runs the whole suite this way once per foreign target of the table (``_targets.names()``);
tests that name their targets themselves skip these passes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import copapy as cp
import pytest

TARGET = os.environ.get("COPAPY_TEST_TARGET")

# The tests are grouped by feature (tests/arrays, tests/compat, tests/deploy, …); their
# shared modules (helpers.py, refsem.py, …) sit here and one test module may import
# another's reference (``from test_vectors import Prog``), so every group is importable
# by module name, wherever a test file lives.
_HERE = Path(__file__).resolve().parent
_GROUPS = [d for d in _HERE.iterdir() if d.is_dir() and d.name.isidentifier() and not d.name.startswith("_")]
for _group in sorted([_HERE, *_GROUPS]):
    if str(_group) not in sys.path:
        sys.path.insert(0, str(_group))

# tests/once/ installs the package in fresh venvs and measures the README's figures (a
# minute, the same on every target): scripts/test.sh runs it once, with COPAPY_TEST_ONCE=1
collect_ignore = [] if os.environ.get("COPAPY_TEST_ONCE") else ["once"]


if TARGET:
    _native_target = cp.Target

    def _target_for_tests(arch: str = "native", *args: Any, **kwargs: Any) -> Any:
        return _native_target(TARGET if arch == "native" else arch, *args, **kwargs)

    @pytest.fixture(autouse=True)
    def _foreign_target(monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(cp, "Target", _target_for_tests)
