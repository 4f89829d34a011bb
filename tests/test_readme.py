"""Every Python block in README.md runs as written (so the README cannot drift from the code)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int) -> None:
    source = BLOCKS[index]
    if "import copapy as cp" not in source:
        source = "import copapy as cp\n" + source
    proc = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr


def test_readme_basic_example_output_is_what_the_code_prints() -> None:
    proc = subprocess.run([sys.executable, "-c", BLOCKS[0]], capture_output=True, text=True, timeout=60,
                          check=True)
    shown = re.search(r"```text\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert shown is not None
    assert proc.stdout == shown.group(1)
