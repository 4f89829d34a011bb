"""Instruction counts cross-checked with a second, independent counter: qemu-user.

Each program is saved, loaded by the cross-built ``copapy-run`` under qemu-user on the
table's CPU and run; qemu's execution log (one instruction per block) counts the
instructions executed in the program's code (tests/qemu_count.py). That count must
equal unicorn's (tests/instruction_count.py) for the same program and data, and lie
within ``min_instructions()``..``max_instructions()``, equal to both when the program is
branch-free. x86_64, AArch64, ARMv7, ARMv6 and RV64 (the targets with a qemu-user);
run once, in the native pass. Two runs count twice one run: nothing outside the runs
executes in the program's code.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import copapy as cp
import pytest
from instruction_count import counted_run
from qemu_count import TARGETS, qemu_count

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("COPAPY_TEST_TARGET")),
    reason="names its targets itself: runs once, in the native pass",
)

F = [3.0, -1.5, 0.0, float("nan"), -0.0, 1e-45, 3e38, float("-inf"), 2.5, 7.0, -2.0, 0.5]
PROGRAMS: dict[str, Callable[[], Any]] = {
    "scalar": lambda: (cp.value(-7) // cp.value(2) + cp.value(-2**31) % cp.value(-1),
                       cp.minimum(cp.value(1.5), cp.value(float("nan"))) * cp.exp(cp.value(0.7))),
    "sort_sum": lambda: (cp.array(F).sort(), cp.array(F[:7]).argsort(), cp.array(F).sum()),
    "matmul_rows": lambda: (cp.array(F).reshape(3, 4) @ cp.array(F).reshape(4, 3)).max(axis=1),
    "conv_pool": lambda: cp.nn.max_pool2d(cp.nn.conv2d(
        cp.array(F[:9] * 2)[:16].reshape(1, 1, 4, 4), cp.array(F[:4]).reshape(1, 1, 2, 2),
        cp.array([0.25]), padding=1), 2),
    "solve_det": lambda: (cp.solve(cp.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]),
                                   cp.array(F[:3])),
                          cp.det(cp.array(F[:9]).reshape(3, 3))),
    "sin_arrays": lambda: cp.sin(cp.array(F)) + cp.cos(cp.array(F)[::-1]),
    # independent scalar calls: packed into st_pack4_* steps on x86_64 and AArch64
    "packed_math": lambda: ([cp.tanh(cp.value(x)) for x in F[:6]]
                           + [f(cp.value(x) * 2.0) for f in (cp.sin, cp.cos) for x in F[6:]]),
}
VARYING = {"sin_arrays"}


@pytest.mark.parametrize("target", TARGETS)
def test_qemu_counts_what_unicorn_counts_within_the_bounds(target: str, tmp_path: Path) -> None:
    for name, build in PROGRAMS.items():
        tg = cp.Target(target)
        tg.compile(build())
        path = tmp_path / f"{name}.cpy"
        tg.save(str(path))
        lo, hi = tg.min_instructions(), tg.max_instructions()
        qemu, unicorn = qemu_count(target, path), counted_run(tg)
        assert qemu == unicorn, (target, name, qemu, unicorn)
        assert lo <= qemu <= hi, (target, name, qemu, lo, hi)
        if name not in VARYING:
            assert qemu == lo == hi, (target, name, qemu, lo, hi)


def test_two_runs_count_twice_one_run(tmp_path: Path) -> None:
    tg = cp.Target("aarch64")
    tg.compile(PROGRAMS["sort_sum"]())
    path = tmp_path / "sort.cpy"
    tg.save(str(path))
    assert qemu_count("aarch64", path, runs=2) == 2 * qemu_count("aarch64", path)
