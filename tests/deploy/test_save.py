"""``Target.save`` / ``program_bytes`` keep the current values of inputs and state.

A program is compiled, gains are tuned with ``write_value`` and the loop advanced with
``run``; the saved file must carry those values (``initial=True``: the compiled ones).
Every saved file is run by the standalone ``copapy-run`` (tests/standalone.py) and by
``cp.load``, and every result is compared with a NumPy float32/int32 reference of the
same loop computed here. On the emulator and a remote runner the values are read back
from the device's data memory.

The programs run on this machine's runner, so the tests use the native ``Target`` (and
explicit foreign ones) whatever COPAPY_TEST_TARGET says (tests/conftest.py).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import copapy as cp
import numpy as np
import pytest
from conftest import TARGET
from copapy._core import Target
from copapy._remote import RemoteDevice
from hypothesis import given, settings
from hypothesis import strategies as st
from standalone import standalone_runner

F32, I32 = np.float32, np.int32

if TARGET:
    pytest.skip("independent of COPAPY_TEST_TARGET: the tests name their devices (native, emulated, "
                "remote); they run once, in the main pass", allow_module_level=True)


@dataclass(frozen=True)
class Loop:
    """The state of the PID loop below, in float32/int32: inputs kp, setpoint, enabled;
    states y, integral, n."""

    kp: np.float32 = F32(2.0)
    setpoint: np.float32 = F32(1.0)
    enabled: bool = True
    y: np.float32 = F32(0.0)
    integral: np.float32 = F32(0.0)
    n: np.int32 = I32(0)

    def step(self) -> tuple[Loop, np.float32]:
        """One run: the output u and the loop after it (NumPy float32, the program's order)."""
        e = self.setpoint - self.y
        raw = self.kp * e + F32(5.0) * (self.integral + F32(0.01) * e)
        u = np.minimum(np.maximum(raw, F32(-10.0)), F32(10.0))
        u = u if self.enabled else F32(0.0)
        y = self.y + F32(0.02) * (F32(0.8) * u - self.y)
        return replace(self, y=y, integral=self.integral + F32(0.01) * e, n=I32(self.n + 1)), u


def compile_loop(tg: Any) -> None:
    """The loop of ``Loop`` into ``tg``: one run() is one step."""
    kp = cp.value(2.0, name="kp")
    setpoint = cp.value(1.0, name="setpoint")
    enabled = cp.value(True, name="enabled")
    y = cp.value(0.0, name="y")
    integral = cp.value(0.0, name="integral")
    n = cp.value(0, name="n")
    e = setpoint - y
    u = cp.iif(enabled, cp.clamp(kp * e + 5.0 * (integral + 0.01 * e), -10.0, 10.0), 0.0)
    tg.compile(u, names={"u": u}, updates={y: y + 0.02 * (0.8 * u - y), integral: integral + 0.01 * e,
                                           n: n + 1})


def tuned(tg: Any, steps: int, kp: float = 3.5, setpoint: float = 0.75) -> Loop:
    """Writes kp and setpoint, runs `steps` times; the reference loop after that."""
    tg.write_value("kp", kp)
    tg.write_value("setpoint", setpoint)
    ref = Loop(kp=F32(kp), setpoint=F32(setpoint))
    for _ in range(steps):
        tg.run()
        ref, _ = ref.step()
    return ref


def continued(ref: Loop, steps: int) -> list[tuple[np.float32, np.float32, np.int32]]:
    """(u, y, n) after each of `steps` more runs."""
    rows = []
    for _ in range(steps):
        ref, u = ref.step()
        rows.append((u, ref.y, ref.n))
    return rows


def copapy_run(path: Path, steps: int) -> list[tuple[np.float32, np.float32, np.int32]]:
    out = subprocess.run([standalone_runner(), str(path), "-n", str(steps), "--print", "u,y,n"],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    rows = [dict(kv.split("=") for kv in line.split()[1:]) for line in out.splitlines()]
    return [(F32(r["u"]), F32(r["y"]), I32(int(r["n"]))) for r in rows]


def loaded_run(tg: Any, steps: int) -> list[tuple[np.float32, np.float32, np.int32]]:
    rows = []
    for _ in range(steps):
        tg.run()
        rows.append((F32(tg.read_value("u")), F32(tg.read_value("y")), I32(tg.read_value("n"))))
    return rows


def test_a_saved_program_carries_the_written_gains_and_the_advanced_state(tmp_path: Path) -> None:
    tg = Target()
    compile_loop(tg)
    ref = tuned(tg, 40)
    tg.write_value("enabled", True)
    path = tmp_path / "tuned.cpy"
    tg.save(path)
    assert path.read_bytes() == tg.program_bytes()
    want = continued(ref, 25)
    assert copapy_run(path, 25) == want
    again = cp.load(path)
    assert again.read_value("kp") == float(F32(3.5)) and again.read_value("setpoint") == 0.75
    assert again.read_value("y") == float(ref.y) and again.read_value("n") == 40
    assert loaded_run(again, 25) == want
    # the loaded program saves its own current values in turn
    again.write_value("kp", 1.25)
    again_path = tmp_path / "again.cpy"
    again.save(again_path)
    assert copapy_run(again_path, 10) == continued(_after(ref, 25, kp=1.25), 10)


def _after(ref: Loop, steps: int, **inputs: Any) -> Loop:
    for _ in range(steps):
        ref, _ = ref.step()
    return replace(ref, **{k: F32(v) for k, v in inputs.items()})


def test_initial_true_saves_the_program_as_compiled(tmp_path: Path) -> None:
    tg = Target()
    compile_loop(tg)
    compiled = tg.program_bytes()
    assert tg.program_bytes(initial=True) == compiled  # nothing written yet: the same file
    tuned(tg, 12)
    assert tg.program_bytes(initial=True) == compiled
    assert tg.program_bytes() != compiled
    path = tmp_path / "initial.cpy"
    tg.save(path, initial=True)
    assert path.read_bytes() == compiled
    assert copapy_run(path, 20) == continued(Loop(), 20)
    assert loaded_run(cp.load(path), 20) == continued(Loop(), 20)
    with pytest.raises(TypeError):
        tg.save(path, True)  # type: ignore[misc]  # initial is keyword-only: save(path, True) reads as a flag
    with pytest.raises(TypeError):
        tg.program_bytes(True)  # type: ignore[misc]


@pytest.mark.parametrize("device", ["riscv32", "cortex-m4", "process"])
def test_the_current_values_are_read_back_from_an_emulated_or_remote_device(device: str) -> None:
    tg = Target(runner="process") if device == "process" else Target(device)
    compile_loop(tg)
    ref = tuned(tg, 30, kp=-1.5, setpoint=2.25)
    again = cp.loads(tg.program_bytes())
    assert again.arch == tg.arch
    assert (again.read_value("kp"), again.read_value("y"), again.read_value("n")) == (-1.5, float(ref.y), 30)
    assert loaded_run(again, 15) == continued(ref, 15)
    # loaded onto a runner process: the same values, read from that runner
    if device == "process":
        remote = cp.loads(again.program_bytes(), runner="process")
        assert loaded_run(remote, 5) == continued(_after(ref, 15), 5)
        assert cp.loads(remote.program_bytes()).read_value("n") == 50


def test_arrays_and_byte_arrays_keep_what_was_written(tmp_path: Path) -> None:
    weights = cp.array([0.5, -1.0, 2.0, 0.25])
    levels = cp.array(np.array([1, 2, 3, 4, 5], dtype=np.uint8), dtype="byte")
    total = (weights * 2.0).sum()
    peak = cp.max(levels)
    tg = Target()
    tg.compile(total, peak, names={"weights": weights, "levels": levels, "total": total, "peak": peak})
    w = np.array([1.5, 3.25, -0.5, 8.0], dtype=F32)
    lv = np.array([9, 200, 17, 0, 255], dtype=np.uint8)
    tg.write_value(weights, w)
    tg.write_value(levels, lv)
    path = tmp_path / "arrays.cpy"
    tg.save(path)
    again = cp.load(path)
    assert again.read_value("weights") == [float(x) for x in w]
    assert again.read_value("levels") == [int(x) for x in lv]
    again.run()
    products = w * F32(2.0)
    # the documented summation order: 8 partial sums (here one term each), combined pairwise
    want = (products[0] + products[2]) + (products[1] + products[3])
    assert again.read_value("total") == float(want)
    assert again.read_value("peak") == int(lv.max())
    out = subprocess.run([standalone_runner(), str(path), "--print", "total,peak"], capture_output=True,
                         text=True, check=True, timeout=60).stdout.split()
    assert F32(out[1].split("=")[1]) == want and int(out[2].split("=")[1]) == int(lv.max())


def test_an_input_named_only_inside_an_output_is_still_saved(tmp_path: Path) -> None:
    """names= may group an input with computed values (an output symbol); the input has no
    symbol of its own, but what was written to it is saved."""
    a = cp.value(1.5)
    pair = [a, a * 2.0]
    tg = Target()
    tg.compile(pair, names={"pair": pair})
    tg.write_value(a, 4.25)
    again = cp.loads(tg.program_bytes())
    again.run()
    assert again.read_value("pair") == [4.25, float(F32(4.25) * F32(2.0))]


def test_without_the_emulator_saving_gives_the_compiled_program(monkeypatch: pytest.MonkeyPatch) -> None:
    """No unicorn: nothing can have been written, and the program can still be saved."""
    monkeypatch.setitem(sys.modules, "unicorn", None)
    tg = Target("riscv64")
    compile_loop(tg)
    with pytest.raises(RuntimeError, match="unicorn"):
        tg.write_value("kp", 5.0)
    assert tg.program_bytes() == tg.program_bytes(initial=True)


def test_a_device_that_cannot_be_read_is_an_error_and_writes_no_file(tmp_path: Path) -> None:
    device = RemoteDevice.spawn()
    tg = Target(runner=device)
    compile_loop(tg)
    tuned(tg, 3)
    device.close()
    path = tmp_path / "never.cpy"
    with pytest.raises(RuntimeError, match=r"cannot read the current values.*initial=True"):
        tg.save(path)
    assert not path.exists()
    tg.save(path, initial=True)
    assert copapy_run(path, 3) == continued(Loop(), 3)


@settings(max_examples=40)
@given(st.lists(st.tuples(st.floats(-8, 8, width=32), st.floats(-4, 4, width=32), st.booleans(),
                          st.integers(0, 6)), min_size=1, max_size=4))
def test_saving_after_any_writes_and_runs_gives_the_reference_loop(
        plan: list[tuple[float, float, bool, int]]) -> None:
    tg = Target()
    compile_loop(tg)
    ref = Loop()
    for kp, setpoint, enabled, steps in plan:
        tg.write_value("kp", kp)
        tg.write_value("setpoint", setpoint)
        tg.write_value("enabled", enabled)
        ref = replace(ref, kp=F32(kp), setpoint=F32(setpoint), enabled=enabled)
        for _ in range(steps):
            tg.run()
            ref, _ = ref.step()
    again = cp.loads(tg.program_bytes())
    assert again.read_value("enabled") is ref.enabled
    assert (again.read_value("kp"), again.read_value("setpoint")) == (float(ref.kp), float(ref.setpoint))
    assert (again.read_value("y"), again.read_value("integral")) == (float(ref.y), float(ref.integral))
    assert loaded_run(again, 3) == continued(ref, 3)
