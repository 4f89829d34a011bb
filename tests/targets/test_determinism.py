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

import capstone  # type: ignore[import-untyped]
import copapy as cp
import pytest
from copapy import _core, _emulator
from helpers import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

# the module checks every target itself; the suite's reruns under COPAPY_TEST_TARGET
# (scripts/test.sh) would repeat the same runs
pytestmark = pytest.mark.skipif(bool(os.environ.get("COPAPY_TEST_TARGET")),
                                reason="covers all seven targets in the native run")
TARGETS = ["x86_64", "aarch64", "armv7", "armv6", "cortex-m4", "riscv64", "riscv32"]
EXAMPLES = ROOT / "examples"


def _it_block(uc: Any, addr: int) -> list[int]:
    """Addresses of the instructions an IT instruction at addr predicates (none if it
    is not one): Thumb ``IT`` is 0xBFxy with a non-zero mask y."""
    hw = int.from_bytes(bytes(uc.mem_read(addr, 2)), "little")
    if hw & 0xFF00 != 0xBF00 or hw & 0xF == 0:
        return []
    mask = hw & 0xF
    length = 4 - (mask & -mask).bit_length() + 1
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    code = bytes(uc.mem_read(addr + 2, 4 * length))
    return [i.address for i in md.disasm(code, addr + 2, count=length)]


def counted_run(tg: Any) -> int:
    """Instructions one run of tg's program executes, counted by unicorn.

    On Thumb, unicorn does not report an instruction of an IT block whose condition
    fails; the core still issues it (the Armv7-M manual: it executes as a NOP), so
    such a block counts all its instructions, as the static bounds do."""
    program = bytes(tg.program_bytes())
    # imported functions (cp.extern) answer 0: their own instructions are outside the
    # program's code and its bounds (only the call stencils count)
    stubs = {name: (lambda *_: 0) for name, _, _ in _core.program_imports(program)}
    emu = _emulator.Emulator(tg.arch, imports=stubs)
    emu.install(program)
    uc = emu._require()
    count = [0]
    predicated: set[int] = set()
    thumb = tg.arch == "cortex-m4"

    def hook(_uc: Any, addr: int, _size: int, _data: Any) -> None:
        if addr in predicated:
            predicated.discard(addr)  # counted with its IT instruction
            return
        count[0] += 1
        if thumb:
            block = _it_block(_uc, addr)
            predicated.update(block)
            count[0] += len(block)

    code_end = _emulator.CODE_BASE + emu._code_len
    uc.hook_add(emu._uc_mod.UC_HOOK_CODE, hook, begin=_emulator.CODE_BASE, end=code_end - 1)
    emu.run()
    return count[0]


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
    tg = cp.Target(arch)
    tg.compile(build())
    return counted_run(tg), tg.min_instructions(), tg.max_instructions()


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


def test_nested_array_loops_are_reported_unbounded() -> None:
    tg = cp.Target("riscv32")
    tg.compile(cp.array([1.0, 2.0, 3.0, 4.0]).reshape(2, 2).max(axis=1))
    with pytest.raises(ValueError, match=r"\(st_arr_rows_max_f\) runs nested loops"):
        tg.max_instructions()


# clang nests the loops of Cortex-M4's int sum (docs/determinism.md: not bounded)
NESTED_REDUCTIONS = {("cortex-m4", "sum", int)}
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
                if (arch, name, ty) in NESTED_REDUCTIONS:
                    tg = cp.Target(arch)
                    tg.compile(build())
                    with pytest.raises(ValueError, match="nested loops"):
                        tg.max_instructions()
                    continue
                got, lo, hi = measure(arch, build)
                assert lo <= got <= hi, (arch, name, ty, n, got, lo, hi)


ARRAY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "min": cp.minimum, "max": cp.maximum, "lt": lambda a, b: a < b,
    "select": lambda a, b: cp.iif(a < b, a, b), "sin": lambda a, b: cp.sin(a),
    "floordiv": lambda a, b: a // b, "scalar": lambda a, b: a * 3.0 - b,
    "exp": lambda a, b: cp.exp(a), "log": lambda a, b: cp.log(a), "tanh": lambda a, b: cp.tanh(a),
    "cos": lambda a, b: cp.cos(a), "tan": lambda a, b: cp.tan(a),
    "sincos": lambda a, b: [cp.sin(a), cp.cos(a)],  # one fused array step
}
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


def test_a_file_records_a_program_without_a_static_bound() -> None:
    tg = cp.Target("riscv32")
    tg.compile(cp.array([1.0, 2.0, 3.0, 4.0]).reshape(2, 2).max(axis=1))
    loaded = cp.loads(bytes(tg.program_bytes()))
    for method in (loaded.max_instructions, loaded.min_instructions):
        with pytest.raises(ValueError, match="loop kernels without a static bound"):
            method()


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
        try:
            hi = tg.max_instructions()
        except ValueError as e:
            # loops (array kernels) are not bounded yet: the error must say which step
            assert "step" in str(e) and "loop" in str(e)
            continue
        lo = tg.min_instructions()
        n = counted_run(tg)
        assert lo <= n <= hi, (name, n, lo, hi)
        if lo == hi:
            assert n == hi


# array kernels with nested loops: not bounded yet, but their count must not depend on
# the element values either (shapes fixed per program)
SHAPED: dict[str, Callable[[list[float]], Any]] = {
    "sum": lambda xs: cp.array(xs).sum(),
    "min": lambda xs: cp.array(xs).min(),
    "max": lambda xs: cp.array(xs).max(),
    "dot": lambda xs: cp.array(xs).dot(cp.array(xs[::-1])),
    "sort": lambda xs: cp.array(xs).sort(),
    "argsort": lambda xs: cp.array(xs).argsort(),
    "rows_max": lambda xs: cp.array(xs).reshape(3, 4).max(axis=1),
    "matmul": lambda xs: cp.array(xs).reshape(3, 4) @ cp.array(xs).reshape(4, 3),
    "max_pool": lambda xs: cp.nn.max_pool2d(cp.array(xs).reshape(1, 3, 4), 2),
    "median": lambda xs: cp.filters.median(cp.vector([cp.value(x) for x in xs[:7]])),
    "int_floordiv": lambda xs: (cp.array([int(x) if math.isfinite(x) else -7 for x in xs])
                                // cp.array([3, 0, -1, 2] * 3)),
}


@pytest.mark.parametrize("arch", TARGETS)
def test_shaped_array_kernels_take_the_same_instructions_for_any_elements(arch: str) -> None:
    for name, fn in SHAPED.items():
        counts = set()
        for k in range(6):
            xs = [FLOATS[(5 * k + j) % len(FLOATS)] for j in range(12)]
            if name == "int_floordiv":
                xs = [float(INTS[(k + j) % len(INTS)]) for j in range(12)]
            tg = cp.Target(arch)
            tg.compile(fn(xs))
            counts.add(counted_run(tg))
        assert len(counts) == 1, f"{name} on {arch}: {sorted(counts)}"
