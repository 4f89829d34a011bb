"""Loops on every target: sizes, instruction counts, program files, runners and firmware
(the host runner, the cross-built runner of each Linux board under qemu-user, the
Cortex-M4 firmware library in an emulated MCU).

The tests name their targets themselves (the emulator for foreign ones), so they run
once, in the native pass of ``scripts/test.sh``, not again for every
``COPAPY_TEST_TARGET``. Results are compared bit for bit with the unrolled program and
NumPy float32; instruction counts are measured in the emulator (``counted_run`` of
test_determinism), never timed.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import copapy as cp
import numpy as np
import pytest
from copapy import _targets
from copapy._core import Target, value
from helpers import ROOT
from test_determinism import counted_run
from test_firmware_m4 import Mcu, image  # noqa: F401  (the module-scoped fixture)

pytestmark = pytest.mark.skipif(bool(os.environ.get("COPAPY_TEST_TARGET")),
                                reason="names its targets itself: runs once, in the native pass")
TARGETS = _targets.names()
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))
from inverse_kinematics_loop import descend  # noqa: E402

F = np.float32


def bits(x: float) -> int:
    return int(np.array(x, dtype=np.float32).view(np.uint32))


@pytest.mark.parametrize("arch", TARGETS)
def test_ik_as_a_loop_equals_the_unrolled_program_on_every_target(arch: str) -> None:
    looped = descend(48)
    unrolled = descend(48, unroll=True)
    tg = Target(arch)
    tg.compile(looped, unrolled)
    tg.run()
    got, want = tg.read_value(looped), tg.read_value(unrolled)
    assert [bits(v) for v in got] == [bits(v) for v in want]


def test_ik_code_is_flat_in_the_step_count_on_cortex_m4() -> None:
    sizes = []
    for steps in (48, 480, 4800):
        tg = Target("cortex-m4")
        tg.compile(descend(steps))
        sizes.append(tg.stats()[1])
    assert max(sizes) <= 1.05 * min(sizes) and max(sizes) < 4096, sizes


def _program(trips: int, x0: float, k0: int) -> tuple[Any, list[Any]]:
    x, k = value(x0), value(k0)

    def body(i: Any, c: Any) -> Any:
        a, n = c
        a = cp.iif(a > 1.0, a * 0.5, a + cp.to_float(i)) - cp.minimum(a, 0.25)
        return a, (n * 3 + i) % 1000

    return x, list(cp.fori_loop(0, trips, body, (x, k)))


@pytest.mark.parametrize("arch", TARGETS)
def test_each_trip_adds_the_same_instructions_for_every_input(arch: str) -> None:
    per_trip = set()
    for x0, k0 in [(0.5, 1), (7.0, -4), (-3.0, 999), (float("nan"), 2**31 - 1)]:
        counts = []
        for trips in (1, 9):
            tg = Target(arch)
            tg.compile(_program(trips, x0, k0)[1])
            n = counted_run(tg)
            assert n == tg.min_instructions() == tg.max_instructions(), (arch, trips)
            counts.append(n)
        per_trip.add((counts[1] - counts[0]) / 9)
    assert len(per_trip) == 1, (arch, per_trip)


def test_a_saved_loop_runs_in_copapy_run_and_from_the_file(tmp_path: Path) -> None:
    x = cp.value(0.5, name="x")
    y = cp.fori_loop(0, 25, lambda i, c: c * 0.75 + cp.to_float(i) * x, cp.value(1.0))
    tg = cp.Target()
    tg.compile(y, names={"y": y})
    path = tmp_path / "loop.cpy"
    tg.save(path)
    want = F(1.0)
    for i in range(25):
        want = F(want * F(0.75)) + F(F(i) * F(0.5))
    loaded = cp.load(path)
    loaded.run()
    assert bits(loaded.read_value("y")) == bits(want)
    assert loaded.max_instructions() == tg.max_instructions()
    runner = Path(sys.executable).parent / "copapy-run"
    out = subprocess.run([str(runner), str(path)], capture_output=True, text=True, check=True)
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("y="))
    assert bits(float(line.split("=")[1])) == bits(want)


@pytest.mark.parametrize("board", ["aarch64", "armv7", "armv6", "riscv64"])
def test_a_saved_loop_runs_in_the_boards_copapy_run(board: str, tmp_path: Path) -> None:
    """The cross-built runner of each Linux board under qemu-user (test_cross_runners)."""
    from test_cross_runners import command

    x = value(0.5, name="x")
    y = cp.fori_loop(0, 40, lambda i, c: c * 0.75 + cp.to_float(i) * x, value(1.0, name="c"))
    tg = Target(board)
    tg.compile(y, names={"y": y})
    path = tmp_path / "loop.cpy"
    tg.save(path)
    out = subprocess.run([*command(board), str(path)], capture_output=True, text=True, check=True)
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("y="))
    want = F(1.0)
    for i in range(40):
        want = F(want * F(0.75)) + F(F(i) * F(0.5))
    assert bits(float(line.split("=")[1])) == bits(want)


def test_jit_compiles_a_loop_once() -> None:
    @cp.jit
    def f(x: Any) -> Any:
        return cp.fori_loop(0, 30, lambda i, c: c * x + 1.0, 0.0)

    for x in (0.5, -0.25):
        want = F(0.0)
        for _ in range(30):
            want = F(want * F(x)) + F(1.0)
        assert bits(f(x)) == bits(want)


def test_the_firmware_runs_a_loop(image: Any) -> None:  # noqa: F811
    x = value(0.5, name="x")
    y = cp.fori_loop(0, 100, lambda i, c: c * 0.5 + x, value(0.0, name="c"))
    tg = Target("cortex-m4")
    tg.compile(y, names={"y": y})
    mcu = Mcu(image)
    assert mcu.load(tg.program_bytes()) == 0
    mcu.run()
    want = F(0.0)
    for _ in range(100):
        want = F(want * F(0.5)) + F(0.5)
    assert struct.unpack("<I", mcu.read("y")[0])[0] == bits(want)
