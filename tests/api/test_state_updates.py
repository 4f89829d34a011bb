"""State updates: one run() is one loop step, checked step by step against NumPy float32."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import copapy as cp
import numpy as np
import pytest
from copapy._core import Target  # explicit targets: independent of COPAPY_TEST_TARGET
from helpers import F32
from hypothesis import given, settings
from hypothesis import strategies as st
from standalone import standalone_runner

DT, KP, KI, KD = 0.01, 2.0, 5.0, 0.1
U_MIN, U_MAX, GAIN, TAU = -10.0, 10.0, 0.8, 0.5


def test_pid_loop_matches_numpy_every_step() -> None:
    setpoint = cp.value(1.0, name="setpoint")
    y = cp.value(0.0, name="y")
    integral = cp.value(0.0)
    prev_error = cp.value(0.0)
    error = setpoint - y
    new_integral = integral + error * DT
    derivative = (error - prev_error) / DT
    u = cp.clamp(KP * error + KI * new_integral + KD * derivative, U_MIN, U_MAX)
    y_next = y + DT * (GAIN * u - y) / TAU
    tg = cp.Target()
    tg.compile(u, names={"u": u}, updates={y: y_next, integral: new_integral, prev_error: error})

    ry, ri, re = F32(0.0), F32(0.0), F32(0.0)
    for step in range(400):
        if step == 200:  # the host may still change an input between steps
            tg.write_value("setpoint", -0.5)
        sp = F32(1.0) if step < 200 else F32(-0.5)
        e = sp - ry
        ni = ri + e * F32(DT)
        d = (e - re) / F32(DT)
        ru = np.minimum(np.maximum(F32(KP) * e + F32(KI) * ni + F32(KD) * d, F32(U_MIN)), F32(U_MAX))
        ry = ry + F32(DT) * (F32(GAIN) * ru - ry) / F32(TAU)
        ri, re = ni, e
        tg.run()
        assert tg.read_value("u") == float(ru), step
        assert tg.read_value("y") == float(ry), step
        assert tg.read_value(integral) == float(ri), step
        assert tg.read_value(prev_error) == float(re), step
    assert abs(float(ry) + 0.5) < 0.05  # the loop really settles on the new setpoint


def test_state_space_filter_matches_numpy_every_step() -> None:
    a = np.array([[0.98, 0.03], [-0.03, 0.97]], dtype=F32)
    b = np.array([0.01, 0.02], dtype=F32)
    c = np.array([1.0, 0.5], dtype=F32)
    d = F32(0.05)
    x = cp.vector([cp.value(0.0), cp.value(0.0)])
    u = cp.value(0.0, name="u")
    x_next = cp.vector([float(a[i, 0]) * x[0] + float(a[i, 1]) * x[1] + float(b[i]) * u for i in range(2)])
    y = float(c[0]) * x[0] + float(c[1]) * x[1] + float(d) * u
    tg = cp.Target()
    tg.compile(y, names={"y": y, "x": x}, updates=[(x, x_next)])
    assert ("x", "state", "float", [2]) in tg.variables()

    rx = np.zeros(2, dtype=F32)
    for k in range(100):
        uk = F32(math.sin(0.3 * k))
        tg.write_value("u", float(uk))
        tg.run()
        ry = c[0] * rx[0] + c[1] * rx[1] + d * uk
        rx = np.array([a[i, 0] * rx[0] + a[i, 1] * rx[1] + b[i] * uk for i in range(2)], dtype=F32)
        assert tg.read_value("y") == float(ry), k
        assert tg.read_value("x") == [float(rx[0]), float(rx[1])], k


def test_updates_see_the_old_values_so_a_swap_swaps() -> None:
    a, b = cp.value(1.5), cp.value(-2.0)
    tg = cp.Target()
    diff = a - b
    tg.compile(diff, updates={a: b, b: a})
    for k in range(3):
        tg.run()
        want = (1.5, -2.0) if k % 2 == 0 else (-2.0, 1.5)
        assert tg.read_value(diff) == want[0] - want[1]
        assert (tg.read_value(a), tg.read_value(b)) == (want[1], want[0])


def test_int_counter_and_state_only_program() -> None:
    n = cp.value(0, name="n")
    tg = cp.Target()
    tg.compile(updates={n: n + 3})
    for _ in range(5):
        tg.run()
    assert tg.read_value("n") == 15
    tg.write_value(n, -1)
    tg.run()
    assert tg.read_value(n) == 2


def test_bad_updates_are_refused_clearly() -> None:
    x = cp.value(1.0)
    k = cp.value(1)
    tg = cp.Target()
    with pytest.raises(ValueError, match="only variables made with cp.value"):
        tg.compile(x, updates={x * 2.0: x})
    with pytest.raises(ValueError, match="stores a float value into a int variable"):
        tg.compile(x, updates={k: x})
    with pytest.raises(ValueError, match="shape"):
        tg.compile(x, updates=[(cp.vector([x, x]), cp.vector([x]))])
    with pytest.raises(TypeError, match="updates takes a dict"):
        tg.compile(x, updates=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="earlier update"):
        tg.compile(x, updates=[(x, x + 1.0), (x, x + 2.0)])


# --- outputs whose graph node is an updated state ------------------------------------------------
# `1.0 * x`, `x * 1` and `x + 0` trace to the node of `x` itself. The rule (README, after the
# `updates=` example): the object given in `updates` (or its container) names the state,
# read after the update; any other object is an output of the run, read before it. The gain-2
# twin of each case does not fold and must give the same kind of results.

STEPS = 12

FLOAT_OUTPUTS = {
    "g * x": lambda x, g: g * x,
    "x * g": lambda x, g: x * g,
}


def float_reference(x0: float, gain: float) -> list[tuple[np.float32, np.float32]]:
    """(y, x after the update) of each run for y = gain * x, x' = 0.5 x + 1."""
    x, out = F32(x0), []
    for _ in range(STEPS):
        y = F32(gain) * x
        x = x * F32(0.5) + F32(1.0)
        out.append((y, x))
    return out


@pytest.mark.parametrize("gain", [1.0, 2.0])
@pytest.mark.parametrize("form", FLOAT_OUTPUTS)
def test_named_output_on_a_state_reads_the_run_value(form: str, gain: float) -> None:
    x = cp.value(0.5, name="x")
    y = FLOAT_OUTPUTS[form](x, gain)
    tg = cp.Target()
    tg.compile(y, names={"y": y}, updates={x: x * 0.5 + 1.0})
    assert ("y", "output", "float", []) in tg.variables()
    assert ("x", "state", "float", []) in tg.variables()
    with pytest.raises(RuntimeError, match="has not run yet"):
        tg.read_value(y)
    for k, (ry, rx) in enumerate(float_reference(0.5, gain)):
        tg.run()
        assert (tg.read_value("y"), tg.read_value("x")) == (float(ry), float(rx)), k
        # by object too: y is the object compiled as an output, x the state
        assert (tg.read_value(y), tg.read_value(x)) == (float(ry), float(rx)), k
    with pytest.raises(ValueError, match="output of the program"):
        tg.write_value("y", 3.0)
    with pytest.raises(ValueError, match="only input variables"):
        tg.write_value(y, 3.0)
    assert tg.read_value("x") == float(rx)


@pytest.mark.parametrize("gain", [1, 2])
def test_int_output_on_a_state(gain: int) -> None:
    """`x + 0` folds for ints; `x + 1` does not. int32 reference."""
    n = cp.value(2, name="n")
    m = n + (gain - 1)
    tg = cp.Target()
    tg.compile(m, names={"m": m}, updates={n: n * 3 - 5})
    assert ("m", "output", "int", []) in tg.variables()
    rn = np.int32(2)
    for k in range(STEPS):
        rm = rn + np.int32(gain - 1)
        rn = rn * np.int32(3) - np.int32(5)
        tg.run()
        assert (tg.read_value("m"), tg.read_value("n")) == (int(rm), int(rn)), k


@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_positional_output_on_a_state_is_an_output(gain: float) -> None:
    x = cp.value(0.5)
    y = gain * x
    tg = cp.Target()
    tg.compile(y, updates={x: x * 0.5 + 1.0})
    assert ("out0", "output", "float", []) in tg.variables()
    for k, (ry, rx) in enumerate(float_reference(0.5, gain)):
        tg.run()
        assert (tg.read_value("out0"), tg.read_value("in0")) == (float(ry), float(rx)), k


def test_a_positional_output_on_a_named_state_gets_its_own_name() -> None:
    """Naming the state does not cover `1.0 * x` given positionally: it is `out0`."""
    x = cp.value(0.5)
    y = 1.0 * x
    tg = cp.Target()
    tg.compile(y, names={"x": x}, updates={x: x * 0.5 + 1.0})
    assert sorted(tg.variables()) == [("out0", "output", "float", []), ("x", "state", "float", [])]
    for k, (ry, rx) in enumerate(float_reference(0.5, 1.0)):
        tg.run()
        assert (tg.read_value("out0"), tg.read_value("x")) == (float(ry), float(rx)), k


def test_the_state_object_itself_stays_the_state() -> None:
    """Positional or named, the object given in `updates` is the state: read after the
    update, writable."""
    x = cp.value(0.5)
    tg = cp.Target()
    tg.compile(x, names={"s": x}, updates={x: x * 0.5 + 1.0})
    assert ("s", "state", "float", []) in tg.variables()
    tg.run()
    assert tg.read_value("s") == tg.read_value(x) == 1.25
    tg.write_value("s", 4.0)
    tg.run()
    assert tg.read_value("s") == 3.0


def test_output_on_a_second_state() -> None:
    """`other` is updated to x's old value; `w = 1.0 * other` is other before the update."""
    x = cp.value(0.5, name="x")
    other = cp.value(-1.0, name="other")
    w = 1.0 * other
    tg = cp.Target()
    tg.compile(w, names={"w": w}, updates={x: x * 0.5 + 1.0, other: x})
    assert ("w", "output", "float", []) in tg.variables()
    rx, ro = F32(0.5), F32(-1.0)
    for k in range(STEPS):
        rw = ro
        rx, ro = rx * F32(0.5) + F32(1.0), rx
        tg.run()
        got = (tg.read_value("w"), tg.read_value("other"), tg.read_value("x"))
        assert got == (float(rw), float(ro), float(rx)), k


@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_vector_output_on_a_vector_state(gain: float) -> None:
    xs = cp.vector([cp.value(0.5), cp.value(-2.0)])
    ys = gain * xs
    a = np.array([[0.5, 0.25], [-0.25, 0.5]], dtype=F32)
    xs_next = cp.vector([float(a[i, 0]) * xs[0] + float(a[i, 1]) * xs[1] + 1.0 for i in range(2)])
    tg = cp.Target()
    tg.compile(ys, names={"ys": ys, "xs": xs}, updates=[(xs, xs_next)])
    assert ("ys", "output", "float", [2]) in tg.variables()
    assert ("xs", "state", "float", [2]) in tg.variables()
    rx = np.array([0.5, -2.0], dtype=F32)
    for k in range(STEPS):
        ry = F32(gain) * rx
        rx = (a @ rx + F32(1.0)).astype(F32)
        tg.run()
        assert tg.read_value("ys") == [float(v) for v in ry], k
        assert tg.read_value("xs") == [float(v) for v in rx], k
        assert [tg.read_value(ys[i]) for i in range(2)] == [float(v) for v in ry], k


@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_output_on_a_state_through_a_program_file(tmp_path: Path, gain: float) -> None:
    """cp.load and the standalone copapy-run see the same values as the compiling Target."""
    x = cp.value(0.5, name="x")
    y = gain * x
    tg = Target()  # native: the file runs under this machine's copapy-run
    tg.compile(y, names={"y": y}, updates={x: x * 0.5 + 1.0})
    path = tmp_path / "alias.cpy"
    tg.save(str(path))
    want = float_reference(0.5, gain)

    loaded = cp.load(str(path))
    for k, (ry, rx) in enumerate(want):
        loaded.run()
        assert (loaded.read_value("y"), loaded.read_value("x")) == (float(ry), float(rx)), k

    r = subprocess.run([standalone_runner(), str(path), "--steps", str(STEPS), "--print", "y,x"],
                       capture_output=True, text=True, timeout=60, check=True)
    lines = r.stdout.splitlines()
    assert len(lines) == STEPS, r.stdout
    for k, (line, (ry, rx)) in enumerate(zip(lines, want, strict=True)):
        fields = dict(f.split("=") for f in line.split())
        assert fields["step"] == str(k)
        assert (F32(fields["y"]), F32(fields["x"])) == (ry, rx), line


@settings(max_examples=40, deadline=None)
@given(x0=st.floats(-1e3, 1e3, width=32), gain=st.sampled_from([1.0, 2.0, -1.0, 0.5]),
       form=st.sampled_from(sorted(FLOAT_OUTPUTS)), positional=st.booleans())
def test_outputs_on_states_match_numpy(x0: float, gain: float, form: str, positional: bool) -> None:
    """Folding or not, named or positional: y is gain * x before the update."""
    x = cp.value(x0)
    y = FLOAT_OUTPUTS[form](x, gain)
    tg = cp.Target()
    if positional:
        tg.compile(y, updates={x: x * 0.5 + 1.0})
        name = "out0"
    else:
        tg.compile(names={"y": y}, updates={x: x * 0.5 + 1.0})
        name = "y"
    for k, (ry, _) in enumerate(float_reference(x0, gain)):
        tg.run()
        assert tg.read_value(name) == float(ry), k


@pytest.mark.parametrize("arch", ["aarch64", "armv7", "riscv64", "cortex-m4"])
def test_output_on_a_state_on_other_targets(arch: str) -> None:
    """The pre-update copy uses each target's own copy stencils (run in the emulator)."""
    x = cp.value(0.5, name="x")
    y = 1.0 * x
    tg = cp.Target(arch)
    tg.compile(y, names={"y": y}, updates={x: x * 0.5 + 1.0})
    for k, (ry, rx) in enumerate(float_reference(0.5, 1.0)[:4]):
        tg.run()
        assert (tg.read_value("y"), tg.read_value("x")) == (float(ry), float(rx)), (arch, k)
