"""The plot examples (SciPy / python-control designs deployed with copapy): each runs without
a display (matplotlib's Agg backend), writes its PNG, and prints the largest difference of
the compiled program's response (host and Cortex-M4 emulator) from the float64 reference;
the bounds here are float32 rounding through each loop (measured values in comments).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TARGET
from test_examples import EXAMPLES, ON_TARGET

PLOT_EXAMPLES = {
    # name: bound on every printed difference (measured: 4.7e-6; 4.3e-7; 3.1e-7)
    "butterworth_plot.py": 2e-5,
    "lqr_observer_plot.py": 2e-6,
    "pid_step_plot.py": 2e-6,
}


def run_plot_example(name: str, png: Path | None) -> str:
    args = [str(EXAMPLES / name)] + ([str(png)] if png else [])
    cmd = [sys.executable, *args] if not TARGET else [sys.executable, "-c", ON_TARGET, TARGET, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{name} exited {proc.returncode}:\n{proc.stderr}"
    return proc.stdout


@pytest.mark.parametrize("name", sorted(PLOT_EXAMPLES))
def test_plot_example_matches_its_reference(name: str, tmp_path: Path) -> None:
    png = tmp_path / "figure.png"
    out = run_plot_example(name, png)
    lines = [line for line in out.splitlines() if "largest difference" in line]
    assert len(lines) == 2, out  # host (or the emulated test target) and cortex-m4
    for line in lines:
        values = [float(v) for v in re.findall(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?", line.split(":", 1)[1])]
        assert values and all(v < PLOT_EXAMPLES[name] for v in values), line
    assert "bit-identical: True" in out, out  # the same bits on every target
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if not TARGET:  # once: the printed numbers do not change from run to run
        assert run_plot_example(name, None) == out


def test_committed_figures_exist() -> None:
    figures = EXAMPLES.parent / "docs" / "figures"
    for name in PLOT_EXAMPLES:
        assert (figures / name.replace("_plot.py", ".png")).read_bytes()[:4] == b"\x89PNG"
