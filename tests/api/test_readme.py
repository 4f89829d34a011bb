"""Every Python block in README.md runs as shown and prints what the README shows.

Each block runs on its own, exactly as written (no import is added), in a fresh isolated
interpreter in an empty directory; its output must be the ```text block that follows it
(or nothing, where none follows). After a change that moves an output:

    .venv/bin/python tests/api/test_readme.py --write

runs every block and writes the ```text block after each one that prints.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

if __name__ == "__main__":  # run as a script (--write): tests/ holds the shared helpers
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import ROOT  # noqa: E402

README = ROOT / "README.md"
# a Python block, and the text block right after it (one blank line between), if any
BLOCK = re.compile(r"```python\n(.*?)```\n(?:\n```text\n(.*?)```\n)?", re.S)

try:
    from conftest import TARGET
except ImportError:  # run as a script (--write)
    TARGET = None
if TARGET:
    pytest.skip("the blocks run on this machine (and name their own targets): once, in the main pass",
                allow_module_level=True)


def blocks() -> list[re.Match[str]]:
    return list(BLOCK.finditer(README.read_text(encoding="utf-8")))


def run_block(source: str, cwd: str) -> subprocess.CompletedProcess[str]:
    """The block in a fresh interpreter: -I, so neither the checkout nor the environment's
    PYTHON* variables are on its path; only the installed copapy is."""
    return subprocess.run([sys.executable, "-I", "-c", source], capture_output=True, text=True,
                          timeout=300, check=False, cwd=cwd)


def test_the_readme_has_its_python_blocks() -> None:
    found = blocks()
    assert len(found) >= 4
    assert all("import copapy as cp" in m.group(1) for m in found), "every block has its own imports"


@pytest.mark.parametrize("index", range(len(blocks())))
def test_a_readme_block_runs_as_shown_and_prints_what_the_readme_shows(index: int, tmp_path: Path) -> None:
    match = blocks()[index]
    proc = run_block(match.group(1), str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (match.group(2) or ""), (
        "the block's output differs from the README's text block after it: "
        "run tests/api/test_readme.py --write and check the difference")


def write() -> None:
    """Runs every block and puts its output in a text block right after it."""
    text = README.read_text(encoding="utf-8")
    out, last = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in BLOCK.finditer(text):
            proc = run_block(m.group(1), tmp)
            if proc.returncode != 0:
                sys.exit(f"a README block fails:\n{m.group(1)}\n{proc.stderr}")
            shown = f"\n```text\n{proc.stdout}```\n" if proc.stdout else ""
            out.append(text[last:m.start()] + f"```python\n{m.group(1)}```\n" + shown)
            last = m.end()
    README.write_text("".join(out) + text[last:], encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: tests/api/test_readme.py --write  (the checks run under pytest)")
    write()
