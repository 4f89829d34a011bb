"""Every target architecture: the same programs give the same bits as on x86_64.

The operator, math and function test modules run once per target in scripts/test.sh
(``COPAPY_TEST_TARGET``, see conftest.py), each against NumPy. This module checks what
those cannot: that every target gives *bit-identical* results to the native x86_64
build for the math library (where NumPy is only a within-1-ulp reference), whole
programs from the README and examples, and the Target/emulator interface itself.

NaN rule (README "Semantics"): a NaN result is a NaN on every target; its sign and
payload are unspecified (x86 creates 0xffc00000, ARM and RISC-V 0x7fc00000). Every
other result has the same bits everywhere.
"""

from __future__ import annotations

import math
import struct
import sys
from collections.abc import Callable
from typing import Any

import copapy as cp
import numpy as np
import pytest
import refsem as R
from conftest import TARGET
from copapy import _optable as T
from copapy import _targets
from test_optable import spelled

ALL = _targets.names()  # the shared table (crates/copapy-program/src/targets.rs)
FOREIGN = [t for t in ALL if t != "x86_64"]


def _bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return _bits(a) == _bits(b)
    return type(a) is type(b) and bool(a == b)


def _run(arch: str, build: Callable[[], tuple[list[Any], list[Any]]]) -> list[Any]:
    """Builds fresh inputs and outputs with ``build`` and runs them on ``arch``."""
    inputs, outputs = build()
    tg = cp.Target(arch)
    tg.compile(outputs)
    tg.run()
    result: list[Any] = tg.read_value(outputs)
    return result


def _edge_and_random_floats(n: int, seed: int) -> list[float]:
    edges = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 0.5, 2.0, 1e-30, 1e30,
             1.401298464324817e-45, -5.877471754111438e-39, float(np.finfo(np.float32).max),
             float(np.finfo(np.float32).tiny), 3.1415927, -1.5707964, 88.72, -103.9, 1e-7]
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    wide = [float(x) for x in bits.view(np.float32)]
    near = [float(x) for x in rng.uniform(-10.0, 10.0, n).astype(np.float32)]
    return edges + wide + near


def _takes_float(name: str) -> bool:
    return any(ty == "f" for ty, _ in T.SIGNATURES[name])


# every op of the table with float operands, spelled as Python code writes it
UNARY: dict[str, Callable[[Any], Any]] = {n: spelled(n) for n in T.UNARY if _takes_float(n)}
BINARY: dict[str, Callable[[Any, Any], Any]] = {n: spelled(n) for n in T.BINARY if _takes_float(n)}


def _math_program() -> tuple[list[Any], list[Any]]:
    xs = _edge_and_random_floats(300, 7)
    ys = _edge_and_random_floats(300, 8)[::-1]
    ins = [cp.value(x) for x in xs]
    ins2 = [cp.value(y) for y in ys]
    outs: list[Any] = []
    for f in UNARY.values():
        outs += [f(v) for v in ins]
    for g in BINARY.values():
        outs += [g(a, b) for a, b in zip(ins, ins2, strict=True)]
    return ins + ins2, outs


@pytest.fixture(scope="module")
def native_math() -> list[Any]:
    return _run("x86_64", _math_program)


@pytest.mark.parametrize("arch", FOREIGN)
def test_math_library_is_bit_identical_to_x86_64(arch: str, native_math: list[Any]) -> None:
    got = _run(arch, _math_program)
    names = [n for n in UNARY for _ in range(len(got) // (len(UNARY) + len(BINARY)))]
    names += [n for n in BINARY for _ in range(len(got) // (len(UNARY) + len(BINARY)))]
    bad = [f"{names[k]} #{k}: {arch} {g!r} vs x86_64 {w!r}"
           for k, (g, w) in enumerate(zip(got, native_math, strict=True)) if not _same(g, w)]
    assert not bad, f"{len(bad)} differences, first: " + "; ".join(bad[:8])


INT_EDGES = [0, 1, -1, 2, -2, 3, -7, 7, 31, 32, -33, 1_000_003, 2**31 - 1, -(2**31), -(2**31) + 1]


# every binary op of the table with int operands
INT_BINARY = [n for n in T.BINARY if any(ty == "i" for ty, _ in T.SIGNATURES[n])]


def _int_program() -> tuple[list[Any], list[Any]]:
    a = [cp.value(x) for x in INT_EDGES for _ in INT_EDGES]
    b = [cp.value(y) for _ in INT_EDGES for y in INT_EDGES]
    outs: list[Any] = []
    for name in INT_BINARY:
        op = spelled(name)
        outs += [op(x, y) for x, y in zip(a, b, strict=True)]
    return a + b, outs


@pytest.mark.parametrize("arch", FOREIGN)
def test_integer_ops_match_numpy_on_every_target(arch: str) -> None:
    """Division, remainder and shifts by edge values included: ARMv6 and Cortex-A9 (armv7)
    divide with copapy's helper, not an instruction."""
    got = _run(arch, _int_program)
    x = np.array([p for p in INT_EDGES for _ in INT_EDGES], dtype=np.int32)
    y = np.array([q for _ in INT_EDGES for q in INT_EDGES], dtype=np.int32)
    n = len(x)
    for k, name in enumerate(INT_BINARY):
        with np.errstate(all="ignore"):
            ref = np.asarray(R.REFERENCE[name](x, y))
        chunk = got[k * n:(k + 1) * n]
        expect = [bool(v) if ref.dtype == bool else int(v) for v in ref]
        assert chunk == expect, f"{name} on {arch}"


def _basic_example() -> tuple[list[Any], list[Any]]:
    a = cp.value(0.25)
    b = cp.value(0.87)
    c = a + b * 2.0
    d = c**2 + cp.sin(a)
    e = cp.sqrt(b)
    return [a, b], [c, d, e]


@pytest.mark.parametrize("arch", FOREIGN)
def test_basic_example_same_bits_as_x86_64(arch: str) -> None:
    got = _run(arch, _basic_example)
    assert got == _run("x86_64", _basic_example)
    assert got == [1.9900000095367432, 4.207503795623779, 0.9327378869056702]  # Copapy's


def _inverse_kinematics() -> tuple[list[Any], list[Any]]:
    """Copapy's gradient-descent example (examples/inverse_kinematics.py), 48 steps."""
    target = cp.vector([0.7, 0.7])
    theta: Any = cp.vector([cp.value(0.0), cp.value(0.5)])
    arm = [1.0, 0.5]
    for _ in range(48):
        x = arm[0] * cp.cos(theta[0]) + arm[1] * cp.cos(theta[0] + theta[1])
        y = arm[0] * cp.sin(theta[0]) + arm[1] * cp.sin(theta[0] + theta[1])
        err = (x - target[0]) ** 2 + (y - target[1]) ** 2
        theta = theta - 0.1 * cp.vector(cp.grad(err, [theta[0], theta[1]]))
    return [], [theta[0], theta[1], err]


@pytest.mark.parametrize("arch", FOREIGN)
def test_inverse_kinematics_same_bits_as_x86_64(arch: str) -> None:
    assert _run(arch, _inverse_kinematics) == _run("x86_64", _inverse_kinematics)


def test_state_persists_and_writes_work_on_a_foreign_target() -> None:
    x = cp.value(1.5)
    n = cp.value(3)
    y = x * 2.0 + n
    tg = cp.Target("riscv32")
    tg.compile(y)
    assert tg.read_value(x) == 1.5
    tg.run()
    assert tg.read_value(y) == 6.0
    tg.write_value(x, -0.25)
    tg.write_value(n, 10)
    tg.run()
    assert tg.read_value(y) == 9.5


def test_target_names() -> None:
    # under COPAPY_TEST_TARGET (conftest.py) the default target is that one
    assert cp.Target().arch == (TARGET or "x86_64")
    assert cp.Target("native").arch == (TARGET or "x86_64")
    assert cp.Target("arm64").arch == "aarch64"  # Copapy's name
    for arch in ALL:
        assert cp.Target(arch).arch == arch
    for bad in ("x86", "armv7thumb", "cortex-m0", ""):
        with pytest.raises(ValueError, match="copapy compiles for x86_64, aarch64, armv7, armv6"):
            cp.Target(bad)


def test_code_sizes_differ_but_results_do_not() -> None:
    """Each target links its own stencils (the sizes are the README's figures)."""
    sizes = {}
    for arch in ALL:
        a, b = cp.value(0.25), cp.value(0.87)
        tg = cp.Target(arch)
        tg.compile(a + b * 2.0)
        sizes[arch] = tg.stats()[1]
    assert len(set(sizes.values())) > 1, sizes


def test_runaway_program_is_stopped_with_a_message() -> None:
    from copapy._emulator import Emulator

    a = cp.value(0.5)
    outs = [cp.sin(a + k) for k in range(20)]
    tg = cp.Target("aarch64")
    tg.compile(outs)
    dev = Emulator("aarch64", budget=50)
    dev.install(tg.program_bytes())
    with pytest.raises(RuntimeError, match="did not return within 50 instructions"):
        dev.run()


def test_emulator_refuses_a_corrupted_program() -> None:
    from copapy._emulator import Emulator

    tg = cp.Target("armv7")
    tg.compile(cp.value(1.0) + cp.value(2.0))
    data = bytearray(tg.program_bytes())
    data[40] ^= 0xFF
    with pytest.raises(ValueError, match="invalid program file"):
        Emulator("armv7").install(bytes(data))


def test_without_unicorn_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "unicorn", None)
    a = cp.value(1.0)
    tg = cp.Target("riscv64")
    tg.compile(a + 1.0)  # compiling needs no emulator: the program can still be saved
    assert len(tg.program_bytes()) > 0
    with pytest.raises(RuntimeError, match=r"pip install unicorn capstone .* pip install '\.\[emulate\]'"):
        tg.run()


def test_a_device_refuses_a_program_it_cannot_run() -> None:
    """The header's architecture and CPU feature level are checked before anything is
    placed: an armv7 program needs ARMv7 + VFPv3, which an ARMv6 core lacks."""
    from copapy._emulator import Emulator

    a = cp.value(1.5)
    tg = cp.Target("armv7")
    tg.compile(a * a)
    program = tg.program_bytes()
    with pytest.raises(RuntimeError, match="armv6 device cannot run the program.*armv7.*vfp3"):
        Emulator("armv6").install(program)
    with pytest.raises(RuntimeError, match="riscv32 device cannot run the program"):
        Emulator("riscv32").install(program)
    dev = Emulator("armv7")  # the right device takes it
    dev.install(program)
    dev.run()
