"""Instruction counts per run: measured in the emulator, against the static bounds.

The independent reference is unicorn: every instruction executed in the program's code
is counted (UC_HOOK_CODE) during one run. The bounds come from the stencil build's
control-flow analysis (stencils/bounds.py, docs/determinism.md) through
``tg.max_instructions()`` / ``tg.min_instructions()``. Checked on every target:

* every scalar operation runs the same number of instructions whatever its operands
  (NaN, infinities, zeros, subnormals, huge values, INT_MIN, -1, shift counts outside
  0..31), and that number is its bound (min == max), except the math functions, which
  stay within theirs;
* random programs and the examples never exceed their maximum, and hit it exactly when
  branch-free.
"""

from __future__ import annotations

import math
import os
import runpy
import struct
from collections.abc import Callable
from typing import Any

import copapy as cp
import pytest
from helpers import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from instruction_count import counted_run, counted_target

# the module checks every target itself; the suite's reruns under COPAPY_TEST_TARGET
# (scripts/test.sh) would repeat the same runs
pytestmark = pytest.mark.skipif(bool(os.environ.get("COPAPY_TEST_TARGET")),
                                reason="covers all seven targets in the native run")
TARGETS = ["x86_64", "aarch64", "armv7", "armv6", "cortex-m4", "riscv64", "riscv32"]
EXAMPLES = ROOT / "examples"


def f32(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


FLOATS = [0.0, -0.0, 1.0, -1.5, 3.25, math.nan, -math.nan, math.inf, -math.inf,
          f32(1), f32(0x807FFFFF), 3.0e38, -3.0e38, 1e-30, 100.0, 0.5]
INTS = [0, 1, -1, 7, -7, 2**31 - 1, -(2**31), 31, 32, 33, -32, 255, 256, 1000]
FLOAT_BIN: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "pow": lambda a, b: a ** b, "atan2": cp.atan2,
    "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
    "min": cp.minimum, "max": cp.maximum, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
}
INT_BIN: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "and": lambda a, b: a & b,
    "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b, "shl": lambda a, b: a << b,
    "shr": lambda a, b: a >> b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b, "min": cp.minimum, "max": cp.maximum,
}
FLOAT_UN: dict[str, Callable[[Any], Any]] = {
    "neg": lambda a: -a, "abs": cp.abs, "sqrt": cp.sqrt, "sin": cp.sin, "cos": cp.cos,
    "tan": cp.tan, "asin": cp.asin, "acos": cp.acos, "atan": cp.atan, "exp": cp.exp,
    "log": cp.log, "tanh": cp.tanh, "relu": cp.relu, "clamp": lambda a: cp.clamp(a, -1.0, 2.0),
    "to_int": cp.to_int, "select": lambda a: cp.iif(a > 0.0, a, -a),
    "sincos": lambda a: [cp.sin(a), cp.cos(a)],  # one fused step
}
INT_UN: dict[str, Callable[[Any], Any]] = {
    "neg": lambda a: -a, "abs": cp.abs, "to_float": cp.to_float,
    "clamp": lambda a: cp.clamp(a, -5, 300), "relu": cp.relu,
}
# the math functions that still branch (stencils/branch_allowlist.py lists none now: sin,
# cos and tan went branch-free last), so every count must be constant
MATH: set[str] = set()


def measure(arch: str, build: Callable[[], Any]) -> tuple[int, int, int]:
    """(measured, min bound, max bound) for one program."""
    return counted_target(arch, build())


def check_op(arch: str, name: str, cases: list[Callable[[], Any]]) -> None:
    counts = []
    for build in cases:
        n, lo, hi = measure(arch, build)
        assert lo <= n <= hi, (arch, name, n, lo, hi)
        counts.append(n)
    if name not in MATH:
        assert len(set(counts)) == 1, f"{name} on {arch}: counts vary with the data: {counts}"
        assert lo == hi == counts[0], (arch, name, counts[0], lo, hi)


@pytest.mark.parametrize("arch", TARGETS)
def test_scalar_operations_take_the_same_instructions_for_any_operands(arch: str) -> None:
    pairs_f = [(a, b) for a in FLOATS[::2] for b in FLOATS[1::2]] + [(a, a) for a in FLOATS]
    for name, fn in FLOAT_BIN.items():
        check_op(arch, f"{name}", [lambda fn=fn, a=a, b=b: fn(cp.value(a), cp.value(b))
                                   for a, b in pairs_f])
    pairs_i = [(a, b) for a in INTS for b in INTS[::3]]
    for name, fn in INT_BIN.items():
        check_op(arch, f"{name}_i", [lambda fn=fn, a=a, b=b: fn(cp.value(a), cp.value(b))
                                     for a, b in pairs_i])
    for name, fn in FLOAT_UN.items():
        check_op(arch, name, [lambda fn=fn, a=a: fn(cp.value(a)) for a in FLOATS])
    for name, fn in INT_UN.items():
        check_op(arch, f"{name}_i", [lambda fn=fn, a=a: fn(cp.value(a)) for a in INTS])


REDUCTIONS: dict[str, Callable[[Any, Any], Any]] = {
    "sum": lambda a, b: a.sum(), "min": lambda a, b: a.min(), "max": lambda a, b: a.max(),
    "dot": lambda a, b: a.dot(b), "dot_add": lambda a, b: (a + b).dot(b),
}


@pytest.mark.parametrize("arch", TARGETS)
def test_reductions_stay_within_their_bounds_for_every_length(arch: str) -> None:
    for name, fn in REDUCTIONS.items():
        for n in (1, 2, 3, 7, 8, 9, 17, 33):
            xs = [FLOATS[j % len(FLOATS)] for j in range(n)]
            ys = [FLOATS[(j + 3) % len(FLOATS)] for j in range(n)]
            for ty in (float, int):
                if ty is int and name == "dot_add":
                    continue
                xv = [INTS[j % len(INTS)] for j in range(n)] if ty is int else xs
                yv = [INTS[(j + 5) % len(INTS)] for j in range(n)] if ty is int else ys
                build = lambda fn=fn, xv=xv, yv=yv: fn(cp.array(xv), cp.array(yv))  # noqa: E731
                got, lo, hi = measure(arch, build)
                assert got == lo == hi, (arch, name, ty, n, got, lo, hi)


ARRAY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "min": cp.minimum, "max": cp.maximum, "lt": lambda a, b: a < b,
    "select": lambda a, b: cp.iif(a < b, a, b), "sin": lambda a, b: cp.sin(a),
    "floordiv": lambda a, b: a // b, "scalar": lambda a, b: a * 3.0 - b,
    "exp": lambda a, b: cp.exp(a), "log": lambda a, b: cp.log(a), "tanh": lambda a, b: cp.tanh(a),
    "cos": lambda a, b: cp.cos(a), "tan": lambda a, b: cp.tan(a),
    "sincos": lambda a, b: [cp.sin(a), cp.cos(a)],  # one fused array step
}
# every array step has one count per shape (sin, cos, tan are branch-free too)
ARRAY_MATH: set[str] = set()


@pytest.mark.parametrize("arch", TARGETS)
def test_element_wise_array_operations_take_the_same_instructions_for_any_elements(
        arch: str) -> None:
    for name, fn in ARRAY_OPS.items():
        for n in (1, 5, 13):
            counts = []
            for k in range(len(FLOATS)):
                xs = [FLOATS[(k + j) % len(FLOATS)] for j in range(n)]
                ys = [FLOATS[(3 * k + j + 1) % len(FLOATS)] for j in range(n)]
                got, lo, hi = measure(arch, lambda fn=fn, xs=xs, ys=ys: fn(cp.array(xs), cp.array(ys)))
                assert lo <= got <= hi, (arch, name, n, got, lo, hi)
                if name not in ARRAY_MATH:
                    assert got == lo == hi, (arch, name, n, got, lo, hi)
                counts.append(got)
            if name not in ARRAY_MATH:
                assert len(set(counts)) == 1, f"{name}[{n}] on {arch}: {counts}"


@pytest.mark.parametrize("arch", ["riscv64", "cortex-m4"])
def test_a_program_read_from_a_file_keeps_its_bounds(arch: str) -> None:
    tg = cp.Target(arch)
    tg.compile(cp.minimum(cp.value(1.0), cp.value(2.0)) * cp.value(3.0))
    loaded = cp.loads(bytes(tg.program_bytes()))
    counted = counted_run(loaded)  # unicorn, on the file's own code
    assert loaded.min_instructions() == loaded.max_instructions() == counted
    assert (loaded.min_instructions(), loaded.max_instructions()) == (
        tg.min_instructions(), tg.max_instructions())


_BRANCH_FREE = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b,
                cp.minimum, cp.maximum, lambda a, b: cp.iif(a < b, a, b),
                lambda a, b: cp.clamp(a, b, b + 1.0), lambda a, b: a / b,
                # the branch-free math functions
                lambda a, b: cp.exp(a) * b, lambda a, b: cp.atan2(a, b),
                lambda a, b: cp.log(cp.abs(a) + b), lambda a, b: a ** b,
                lambda a, b: cp.tanh(a) - b, lambda a, b: a // b]
_BOUNDED = [lambda a, b: cp.sin(a) + b, lambda a, b: cp.cos(a) * b, lambda a, b: cp.tan(a)]


@settings(max_examples=25, deadline=None)
@given(arch=st.sampled_from(TARGETS),
       ops=st.lists(st.integers(0, len(_BRANCH_FREE) + len(_BOUNDED) - 1), min_size=1,
                    max_size=12),
       x=st.floats(width=32), y=st.floats(width=32))
def test_random_programs_stay_within_their_bounds(arch: str, ops: list[int], x: float,
                                                  y: float) -> None:
    table = _BRANCH_FREE + _BOUNDED

    def build() -> Any:
        a, b = cp.value(x), cp.value(y)
        for k in ops:
            a, b = table[k](a, b), a
        return a

    n, lo, hi = measure(arch, build)
    assert lo <= n <= hi
    if all(k < len(_BRANCH_FREE) for k in ops):
        assert n == lo == hi


def _compiled_targets(name: str, arch: str, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Runs an example in this process, its Targets on `arch`, and returns them."""
    made: list[Any] = []
    real = cp.Target

    def recording(target: str = "native", *args: Any, **kwargs: Any) -> Any:
        tg = real(arch if target == "native" else target, *args, **kwargs)
        made.append(tg)
        return tg

    monkeypatch.setattr(cp, "Target", recording)
    monkeypatch.setattr("sys.argv", [name])
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return made


# examples that compile with cp.Target (jit_example compiles through @cp.jit; serial_board
# boots a firmware under QEMU, and test_serial_link.py checks its results there)
EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.py")
                       if "cp.Target(" in p.read_text() and 'runner=f"serial:' not in p.read_text())


def test_every_example_but_the_jit_and_serial_ones_is_checked() -> None:
    others = {p.name for p in EXAMPLES.glob("*.py")} - set(EXAMPLE_FILES)
    assert others == {"jit_example.py", "serial_board.py"}


@pytest.mark.parametrize("arch", TARGETS)
@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_examples_stay_within_their_bounds(name: str, arch: str,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    targets = _compiled_targets(name, arch, monkeypatch)
    capsys.readouterr()
    assert targets, f"{name} compiled nothing"
    for tg in targets:
        hi, lo = tg.max_instructions(), tg.min_instructions()
        n = counted_run(tg)
        assert lo <= n <= hi, (name, n, lo, hi)
        if lo == hi:
            assert n == hi
