"""Run every example as a subprocess; check it exits 0 and prints the numbers that an
independent float32 / int32 reference computed here gives."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import refsem as R

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
F32 = np.float32
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|-?inf|nan")


def run_example(name: str) -> str:
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, f"{name} exited {proc.returncode}:\n{proc.stderr}"
    return proc.stdout


def numbers(line: str) -> list[str]:
    return NUMBER.findall(line.split(":", 1)[-1] if ":" in line else line)


def test_every_example_is_tested() -> None:
    assert {p.name for p in EXAMPLES.glob("*.py")} == {"basic.py", "pid_controller.py",
                                                       "fixed_point_filter.py"}


def test_basic() -> None:
    out = run_example("basic.py").splitlines()
    c, d, e = (float(numbers(line)[-1]) for line in out[:3])
    fa, fb = F32(0.25), F32(0.87)
    want_c = fa + fb * F32(2.0)
    assert R.same_float(c, want_c)
    assert R.same_float(e, np.sqrt(fb))
    assert R.ulp_distance(d, float(want_c * want_c + R.sin(fa))) <= 1


def pid_reference() -> list[tuple[float, float]]:
    dt, kp, ki, kd, u_min, u_max = 0.01, 2.0, 5.0, 0.1, -10.0, 10.0
    gain, tau = 0.8, 0.5
    y, integral, prev_error = 0.0, F32(0.0), F32(0.0)
    rows = []
    with np.errstate(all="ignore"):
        for step in range(300):
            error = F32(1.0) - F32(y)
            new_integral = integral + error * F32(dt)
            derivative = (error - prev_error) / F32(dt)
            raw = F32(kp) * error + F32(ki) * new_integral + F32(kd) * derivative
            above, below = int(raw > F32(u_max)), int(raw < F32(u_min))
            inside = 1 - above - below
            u = F32(above) * F32(u_max) + F32(below) * F32(u_min) + F32(inside) * raw
            integral, prev_error = new_integral, error
            y += dt * (gain * float(u) - y) / tau
            if step % 50 == 49:
                rows.append((y, float(u)))
    return rows


def test_pid_controller() -> None:
    out = [line for line in run_example("pid_controller.py").splitlines() if line.startswith("t=")]
    got = [(float(re.search(r"y=(\S+)", s)[1]), float(re.search(r"u=(\S+)", s)[1])) for s in out]  # type: ignore[index]
    assert got == pid_reference()


def filter_reference() -> list[int]:
    signal = [(20000 if (n // 16) % 2 == 0 else -12000) + (400000 if n == 37 else 0) for n in range(64)]
    y, out = 0, []
    for x in signal:
        y = R.wrap32(y + (R.wrap32(x - y) >> 3))
        y = max(-32768, min(32767, y))
        out.append(y)
    return out


def test_fixed_point_filter() -> None:
    text = run_example("fixed_point_filter.py")
    got = [int(tok) for tok in text.split()]
    want = filter_reference()
    assert got == want
    assert 32767 in want  # the glitch saturates


@pytest.mark.parametrize("name", ["basic.py", "pid_controller.py", "fixed_point_filter.py"])
def test_examples_are_deterministic(name: str) -> None:
    assert run_example(name) == run_example(name)
