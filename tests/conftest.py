"""Running the numeric test modules on a foreign target.

With ``COPAPY_TEST_TARGET=riscv32`` (any target name), ``cp.Target()`` in the tests
compiles for that target and runs the program in the emulator, so the same tests —
compared with the same NumPy references — check every architecture. scripts/test.sh
runs the whole suite this way once per foreign target of the table (``_targets.names()``);
tests that name their targets themselves skip these passes.
"""

from __future__ import annotations

import os
from typing import Any

import copapy as cp
import pytest

TARGET = os.environ.get("COPAPY_TEST_TARGET")

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
