"""The README's and docs' size figures are what this tree gives (scripts/figures.py).

Run once by scripts/test.sh (COPAPY_TEST_ONCE=1): the full check builds the firmware core
for three targets and runs the examples under ours and Copapy 0.0.7
(``benches/setup_reference.sh``, which scripts/test.sh runs first).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "scripts" / "figures.py"


def figures(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(FIGURES), *args], capture_output=True, text=True, cwd=ROOT)


def test_committed_size_figures_match_the_tree() -> None:
    done = figures("--check")
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("examples", "targets", "x86-constants", "array-code", "program-sizes", "runner-size",
                 "copapy-run-size"):
        assert f"figures: {name}: README.md is up to date" in done.stdout
    assert "figures: math-helper-sizes: docs/math.md is up to date" in done.stdout


def docs_copy(tmp_path: Path) -> Path:
    shutil.copy2(ROOT / "README.md", tmp_path / "README.md")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    return tmp_path


def test_a_changed_figure_fails_the_check_and_write_restores_it(tmp_path: Path) -> None:
    root = docs_copy(tmp_path)
    readme = root / "README.md"
    original = readme.read_text()
    start = original.index("<!-- figures:targets -->")
    row = original.index("| riscv32 |", start)
    tampered = original[:row] + original[row:].replace(" B |", " B (typed by hand) |", 1)
    readme.write_text(tampered)
    done = figures("--check", "--only", "targets,examples", "--root", str(root))
    assert done.returncode == 1
    assert "figures: targets in README.md differs from what this tree gives" in done.stdout
    assert "(typed by hand)" in done.stdout and "--write --only targets" in done.stdout
    assert "figures: examples: README.md is up to date" in done.stdout
    done = figures("--write", "--only", "targets", "--root", str(root))
    assert done.returncode == 0 and readme.read_text() == original


def test_a_lost_or_unknown_block_fails_the_check(tmp_path: Path) -> None:
    root = docs_copy(tmp_path)
    readme = root / "README.md"
    original = readme.read_text()
    readme.write_text(original.replace("<!-- figures:examples -->", "<!-- figures:exampels -->"))
    done = figures("--check", "--only", "examples", "--root", str(root))
    assert done.returncode == 1 and "unknown figure names: exampels" in done.stdout
    start = original.index("<!-- figures:examples -->")
    end = original.index("<!-- /figures -->", start) + len("<!-- /figures -->")
    readme.write_text(original[:start] + original[end:])
    done = figures("--check", "--only", "examples", "--root", str(root))
    assert done.returncode == 1 and "no <!-- figures:examples --> block" in done.stdout


def test_timing_figures_are_never_checked() -> None:
    done = figures("--check", "--only", "pid-loop,bench-core")
    assert done.returncode == 0 and done.stdout == ""
