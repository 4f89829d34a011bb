"""`copapy-run PROGRAM --info`: what a saved program is, for any target, without running it.

The variables are listed in symbol-table order, with auto-named inputs numbered in the
order the user created them, so `--set in1=...` sets the second value made; this is
checked by running the program with those names against a Python float32 reference.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import copapy as cp
import pytest
from copapy._core import Target
from helpers import F32
from standalone import standalone_runner


def info(path: Path) -> list[str]:
    done = subprocess.run([standalone_runner(), str(path), "--info"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_inputs_are_listed_and_set_in_creation_order(tmp_path: Path) -> None:
    first, second, third = cp.value(1.0), cp.value(2.0), cp.value(3.0)
    out = third * 10.0 - second * 3.0 + first  # used in another order than made
    tg = Target()
    tg.compile(out)
    path = tmp_path / "order.cpy"
    tg.save(str(path))
    lines = info(path)
    assert lines[1].split()[:2] == ["program", "x86_64"] and lines[2] == "accepted yes"
    names = [line.split()[0] for line in lines[lines.index("variables 4") + 1:]]
    assert names == ["out0", "in0", "in1", "in2"]
    done = subprocess.run([standalone_runner(), str(path), "--set", "in0=0.5", "--set", "in1=-4.25",
                           "--set", "in2=7.5", "--print", "out0"], capture_output=True, text=True, check=True)
    want = F32(7.5) * F32(10.0) - F32(-4.25) * F32(3.0) + F32(0.5)
    assert F32(float(done.stdout.split("out0=")[1])) == want


@pytest.mark.parametrize("arch", ["armv7", "riscv32", "cortex-m4"])
def test_a_foreign_program_is_described_and_its_refusal_explained(arch: str, tmp_path: Path) -> None:
    a = cp.value(2.0, name="gain")
    tg = Target(arch)
    tg.compile(a * 3.0, names={"y": a * 3.0})
    path = tmp_path / "foreign.cpy"
    tg.save(str(path))
    lines = info(path)
    assert lines[1].split()[:2] == ["program", arch]
    assert lines[2].startswith("accepted no: it is ") and "this runner runs x86_64" in lines[2]
    assert {"y output float -", "gain input float -"} <= {line.strip() for line in lines[4:]}


def test_a_damaged_file_is_refused_with_its_reason(tmp_path: Path) -> None:
    tg = Target()
    tg.compile(cp.value(1.0) + 1.0)
    good = bytearray(tg.program_bytes())
    good[-1] ^= 0x40
    path = tmp_path / "bad.cpy"
    path.write_bytes(bytes(good))
    done = subprocess.run([standalone_runner(), str(path), "--info"], capture_output=True, text=True)
    assert done.returncode != 0 and str(path) in done.stderr and "checksum" in done.stderr.lower()


def _bounds_line(lines: list[str]) -> str:
    found = [line for line in lines if line.startswith("instructions per run ")]
    assert len(found) == 1, lines
    return found[0]


@pytest.mark.parametrize("arch", ["x86_64", "cortex-m4", "riscv32"])
def test_info_shows_the_instruction_bounds_the_program_was_compiled_with(
        arch: str, tmp_path: Path) -> None:
    from test_determinism import counted_run  # unicorn's count: the independent reference

    x, y = cp.value(1.5, name="x"), cp.value(-2.0, name="y")
    tg = Target(arch)
    tg.compile(cp.maximum(x * y, y) + cp.iif(x < y, x, y))  # branch-free
    path = tmp_path / "bounded.cpy"
    tg.save(str(path))
    most = tg.max_instructions()
    assert tg.min_instructions() == most == counted_run(tg)
    assert _bounds_line(info(path)) == f"instructions per run {most} to {most} (constant)"
    loaded = cp.load(str(path))
    assert (loaded.min_instructions(), loaded.max_instructions()) == (most, most)


def test_info_shows_math_programs_as_constant(tmp_path: Path) -> None:
    """sin, cos and tan were the last functions with data-dependent paths; every math
    function is branch-free now, so a program of them has one count."""
    tg = Target()
    tg.compile(cp.exp(cp.value(0.5)) + cp.sin(cp.value(2.0)) * cp.tan(cp.value(1e30)))
    path = tmp_path / "math.cpy"
    tg.save(str(path))
    most = tg.max_instructions()
    assert tg.min_instructions() == most
    assert _bounds_line(info(path)) == f"instructions per run {most} to {most} (constant)"


def test_info_shows_the_counted_bounds_of_an_array_program(tmp_path: Path) -> None:
    # loops over an array's shape: the step's count is found by running it alone
    tg = Target("riscv32")
    tg.compile(cp.array([1.0, 2.0, 3.0, 4.0]).reshape(2, 2).max(axis=1))
    path = tmp_path / "shaped.cpy"
    tg.save(str(path))
    most = tg.max_instructions()
    assert tg.min_instructions() == most
    assert _bounds_line(info(path)) == f"instructions per run {most} to {most} (constant)"
