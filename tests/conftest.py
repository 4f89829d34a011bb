"""Running the numeric test modules on a foreign target.

With ``COPAPY_TEST_TARGET=riscv32`` (any target name), ``cp.Target()`` in the tests
compiles for that target and runs the program in the emulator, so the same tests —
compared with the same NumPy references — check every architecture. scripts/test.sh
runs the whole suite this way once per foreign target of the table (``_targets.names()``),
in two parts (tests/targets and the rest; scripts/pytest_jobs.py runs the parts of every
pass, native and emulated, as jobs on the free cores); tests that name their targets
themselves skip these passes.

Target-independent tests run once. ``COPAPY_TEST_TARGET_USE=FILE`` (scripts/test.sh sets
it) makes the native pass write to FILE every test that passed without calling
``cp.Target()`` — the one call an emulated pass redirects — and whose module (nor a test
module it imports) never reads the target name (``conftest.TARGET``, the
``"COPAPY_TEST_TARGET"`` variable). Such a test runs the same code with the same inputs in
every pass, so the emulated passes given the same FILE *deselect* it (pytest counts it as
deselected, and the pass says how many and why); everything else runs on every target.
Without the variable, or before the file exists, every pass runs every test. In a module
that reads the target, ``@pytest.mark.target_independent`` says a test does not (it names
its own targets, or none): it is deselected as well, and fails the native pass if it calls
``cp.Target()`` after all.
"""

from __future__ import annotations

import ast
import os
import re
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


# ------------------------------------------------------------- target-independent tests
# (the module docstring): recorded by the native pass, deselected by the emulated ones
TARGET_USE_FILE = os.environ.get("COPAPY_TEST_TARGET_USE")
_READS_TARGET = re.compile(r"""["']COPAPY_TEST_TARGET["']|\bimport\s+TARGET\b|\bconftest\.TARGET\b""")


def _test_module_file(name: str) -> Path | None:
    """The file of a module of this test tree imported by ``name`` (None: not one)."""
    for group in [_HERE, *_GROUPS]:
        path = group / f"{name.split('.')[0]}.py"
        if path.is_file() and path.name != "conftest.py":
            return path
    return None


def _reads_target(path: Path) -> bool:
    """Whether a test module, or a test-tree module it imports (directly or through
    another), reads the target name: its tests may do something else per target without
    calling ``cp.Target()``, so they always run."""
    seen, todo = {path}, [path]
    while todo:
        source = todo.pop().read_text(encoding="utf-8")
        if _READS_TARGET.search(source):
            return True
        for node in ast.walk(ast.parse(source)):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level
                     else [])
            for imported in filter(None, map(_test_module_file, names)):
                if imported not in seen:
                    seen.add(imported)
                    todo.append(imported)
    return False


_RECORDING = bool(TARGET_USE_FILE) and not TARGET
_called_target: set[str] = set()
_passed: set[str] = set()
_candidates: list[str] = []
_target_independent: set[str] = set()
_deselected: list[pytest.Item] = []
if TARGET_USE_FILE and TARGET and Path(TARGET_USE_FILE).is_file():
    _target_independent = set(Path(TARGET_USE_FILE).read_text(encoding="utf-8").splitlines())

if _RECORDING:

    @pytest.fixture(autouse=True)
    def _record_target_use(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
        # the same call the emulated passes redirect (_foreign_target), noted per test
        native = cp.Target
        nodeid = request.node.nodeid
        marked = request.node.get_closest_marker("target_independent") is not None

        def recording_target(*args: Any, **kwargs: Any) -> Any:
            if marked:
                pytest.fail(f"{nodeid} is marked target_independent but calls cp.Target(), the "
                            "target the emulated passes choose: drop the mark", pytrace=False)
            _called_target.add(nodeid)
            return native(*args, **kwargs)

        monkeypatch.setattr(cp, "Target", recording_target)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "target_independent: the test reads no test target though "
                            "its module does; the emulated passes leave it out (tests/conftest.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _RECORDING:
        pinned = {path: _reads_target(path) for path in {item.path for item in items}}
        _candidates.extend(item.nodeid for item in items
                           if not pinned[item.path] or item.get_closest_marker("target_independent"))
    _deselected.extend(item for item in items if item.nodeid in _target_independent)
    if _deselected:
        config.hook.pytest_deselected(items=_deselected)
        items[:] = [item for item in items if item.nodeid not in _target_independent]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _RECORDING and report.when == "call" and report.passed:
        _passed.add(report.nodeid)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _RECORDING and TARGET_USE_FILE:
        once = [n for n in _candidates if n in _passed and n not in _called_target]
        Path(TARGET_USE_FILE).write_text("".join(f"{n}\n" for n in once), encoding="utf-8")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _deselected:
        terminalreporter.write_line(
            f"{len(_deselected)} tests deselected on {TARGET}: the native pass ran them without "
            f"cp.Target() or reading the target ({TARGET_USE_FILE}; tests/conftest.py)")
