"""Imported functions (``cp.extern``): a closed loop with a Python sensor and actuator on
this machine and in every emulated target, compared with a NumPy float32 reference of
the same loop; call order and count from the callables' logs; the refusals.

Under ``COPAPY_TEST_TARGET`` the all-targets test runs that target only (the native
pass runs all of them)."""

from __future__ import annotations

import os
from typing import Any

import copapy as cp
import numpy as np
import pytest
from copapy import _targets

_EMULATED = os.environ.get("COPAPY_TEST_TARGET")
TARGETS = [_EMULATED] if _EMULATED else _targets.names()

KP, KI, KD, DT = 2.0, 0.5, 0.1, 0.1
STEPS = 25


class Plant:
    """The outside world: a first-order plant in Python floats, with logs of every call."""

    def __init__(self) -> None:
        self.x = 0.0
        self.log: list[tuple[Any, ...]] = []

    def sensor_read(self, channel: int) -> float:
        self.log.append(("read", channel))
        return self.x

    def actuator_write(self, u: float) -> None:
        self.log.append(("write", u))
        self.x = self.x + 0.2 * (u - self.x)

    def imports(self) -> dict[str, Any]:
        return {"sensor_read": self.sensor_read, "actuator_write": self.actuator_write}


def pid_target(arch: str, plant: Plant) -> tuple[Any, Any]:
    tg = cp.Target(arch, imports=plant.imports())
    setpoint = cp.value(1.0, name="setpoint")
    integral = cp.value(0.0)
    previous = cp.value(0.0)
    y = cp.extern("sensor_read", 3, returns=float)
    e = setpoint - y
    integral_next = integral + e * DT
    u = KP * e + KI * integral_next + KD * (e - previous)
    token = cp.extern("actuator_write", u, returns=None)
    tg.compile(u, token, names={"u": u}, updates={integral: integral_next, previous: e})
    return tg, u


def reference(plant: Plant, steps: int) -> list[np.float32]:
    """The same loop in NumPy float32, in copapy's order of operations."""
    f = np.float32
    integral, previous, out = f(0.0), f(0.0), []
    for _ in range(steps):
        y = f(plant.sensor_read(3))
        e = f(1.0) - y
        integral = integral + e * f(DT)
        u = f(KP) * e + f(KI) * integral + f(KD) * (e - previous)
        plant.actuator_write(float(u))
        previous = e
        out.append(u)
    return out


@pytest.mark.parametrize("arch", TARGETS)
def test_pid_loop_with_imported_sensor_and_actuator(arch: str) -> None:
    plant = Plant()
    tg, u = pid_target(arch, plant)
    got = []
    for _ in range(STEPS):
        tg.run()
        got.append(np.float32(tg.read_value("u")))
    ref_plant = Plant()
    want = reference(ref_plant, STEPS)
    assert [g.tobytes() for g in got] == [w.tobytes() for w in want]
    # one read then one write per run, in trace order, with the same values
    assert plant.log == ref_plant.log
    assert [k for k, *_ in plant.log] == ["read", "write"] * STEPS


def test_calls_run_in_trace_order_every_run_and_are_never_merged() -> None:
    log: list[str] = []

    def make(tag: str) -> Any:
        def f(x: float) -> float:
            log.append(tag)
            return x + 1.0
        return f

    tg = cp.Target(imports={"a": make("a"), "b": make("b")})
    x = cp.value(1.0)
    # the same call twice is two calls; b's result is an output of its own, computed
    # between the two calls of a although nothing orders it there by data
    a1 = cp.extern("a", x, returns=float)
    b1 = cp.extern("b", x, returns=float)
    a2 = cp.extern("a", x, returns=float)
    dropped = cp.extern("b", x, returns=float)
    tg.compile(a2 + a1, b1, dropped * 0.0)  # x * 0 folds to 0 (finite values): no call
    for _ in range(3):
        tg.run()
    assert log == ["a", "b", "a"] * 3
    assert tg.read_value(a2 + a1) == 4.0


def test_int_and_bool_signatures_and_argument_classes() -> None:
    seen: list[tuple[Any, ...]] = []

    def mix(a: int, b: float, c: bool, d: float) -> int:
        seen.append((a, b, c, d))
        return a * 2

    def flag(n: int) -> bool:
        return n > 3

    tg = cp.Target(imports={"mix": mix, "flag": flag})
    n = cp.value(7)
    r = cp.extern("mix", n, 1.5, True, cp.value(-2.25), returns=int)
    b = cp.extern("flag", r, returns=bool)
    tg.compile(r, b)
    tg.run()
    assert seen == [(7, 1.5, True, -2.25)]
    assert tg.read_value(r) == 14
    assert tg.read_value(b) is True


def test_missing_import_is_refused_naming_it() -> None:
    y = cp.extern("adc_read", 0, returns=float)
    tg = cp.Target(imports={"other": lambda: 0.0})
    with pytest.raises(RuntimeError, match="adc_read"):
        tg.compile(y)
    with pytest.raises(RuntimeError, match="adc_read"):
        cp.Target().compile(y)


@pytest.mark.parametrize("name", ["1abc", "a-b", "", "with space", "é"])
def test_import_names_must_be_c_identifiers(name: str) -> None:
    with pytest.raises(ValueError, match="C identifier"):
        cp.extern(name, 1.0, returns=float)


def test_one_import_with_two_signatures_is_refused() -> None:
    a = cp.extern("f", 1.0, returns=float)
    b = cp.extern("f", 1, returns=float)
    with pytest.raises(Exception, match="two signatures"):
        cp.Target(imports={"f": lambda x: x}).compile(a + b)


def test_a_raising_callable_stops_the_run_and_changes_nothing() -> None:
    calls = {"n": 0}

    def sensor() -> float:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyError("sensor unplugged")
        return 1.0

    tg = cp.Target(imports={"sensor": sensor})
    acc = cp.value(0.0)
    y = cp.extern("sensor", returns=float)
    tg.compile(acc, updates={acc: acc + y})
    tg.run()
    tg.run()
    assert tg.read_value(acc) == 2.0
    with pytest.raises(KeyError, match="unplugged"):
        tg.run()
    assert tg.read_value(acc) == 2.0
    tg.run()
    assert tg.read_value(acc) == 3.0


def test_program_files_carry_their_imports(tmp_path: Any) -> None:
    plant = Plant()
    tg, _ = pid_target("native", plant)
    data = tg.program_bytes() if hasattr(tg, "program_bytes") else None
    assert data is not None
    from copapy import _core

    imports = _core.program_imports(data)
    assert [(n, s) for n, s, _ in imports] == [("sensor_read", "f(i)"), ("actuator_write", "v(f)")]
    assert int.from_bytes(data[4:6], "little") == 5
    # a flipped byte in the import section: the checksum refuses the file
    bad = bytearray(data)
    bad[-3] ^= 0x20
    with pytest.raises(ValueError, match="checksum"):
        _core.program_imports(bytes(bad))
