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
import program_layout
import pytest
from copapy import _core, _targets
from helpers import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

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


def pid_target(arch: str, plant: Plant, make: Any = None) -> tuple[Any, Any]:
    """The PID step; `make` is the Target class (this machine's own, unpatched
    `_core.Target`, for programs a runner on this machine executes)."""
    tg = (make or cp.Target)(arch, imports=plant.imports())
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
    imports = _core.program_imports(data)
    assert [(n, s) for n, s, _ in imports] == [("sensor_read", "f(i)"), ("actuator_write", "v(f)")]
    assert tg.imports() == [("sensor_read", "f(i)"), ("actuator_write", "v(f)")]
    assert int.from_bytes(data[4:6], "little") == 10
    # a flipped byte in the import section: the checksum refuses the file
    bad = bytearray(data)
    bad[-3] ^= 0x20
    with pytest.raises(ValueError, match="checksum"):
        _core.program_imports(bytes(bad))
    # the same damage with a valid checksum: the record itself is refused, saying which
    at = data.rindex(b"sensor_read")
    for offset, byte, problem in ((0, ord("1"), "import 0 has a name that is not a C identifier"),
                                  (len("sensor_read"), ord("q"), "import 0 has a malformed signature")):
        bad = bytearray(data)
        bad[at + offset] = byte
        program_layout.reseal(bad)
        with pytest.raises(ValueError, match=problem):
            _core.program_imports(bytes(bad))
        with pytest.raises(Exception, match=problem):
            cp.loads(bytes(bad))


PLUGIN_C = r"""
#include <stdint.h>
#include <stddef.h>
struct copapy_import { const char *name; void *fn; const char *signature; };
static double x;
static int32_t reads, writes;
static float sensor_read(int32_t channel) { reads++; return channel == 3 ? (float)x : -1e30f; }
static void actuator_write(float u) { writes++; x = x + 0.2 * ((double)u - x); }
static int32_t calls(void) { return reads * 1000 + writes; }
static const struct copapy_import table[] = {
    {"sensor_read", (void *)sensor_read, "f(i)"},
    {"actuator_write", (void *)actuator_write, "v(f)"},
    {"plugin_calls", (void *)calls, "i()"},
};
const struct copapy_import *copapy_imports(uint32_t *count) { *count = 3; return table; }
"""


def build_plugin(tmp_path: Any) -> str:
    import subprocess

    src = tmp_path / "plant.c"
    src.write_text(PLUGIN_C)
    lib = tmp_path / "libplant.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return str(lib)


def test_copapy_run_plugin_serves_the_loop(tmp_path: Any) -> None:
    import subprocess

    from copapy._remote import own_runner_command

    lib = build_plugin(tmp_path)
    tg, _ = pid_target("native", Plant(), _core.Target)
    prog = tmp_path / "pid.cpy"
    tg.save(str(prog))
    out = subprocess.run([*own_runner_command(), str(prog), "--plugin", lib, "-n", str(STEPS),
                          "--print", "u"], capture_output=True, text=True, check=True).stdout
    got = [np.float32(line.split("u=")[1]) for line in out.splitlines()]
    assert [g.tobytes() for g in got] == [w.tobytes() for w in reference(Plant(), STEPS)]
    # the plugin's own counter and a built-in, through another program
    count = cp.extern("plugin_calls", returns=int)
    t = cp.extern("copapy_time_s", returns=float)
    tg2 = _core.Target(imports={"plugin_calls": lambda: 0, "copapy_time_s": lambda: 0.0})
    tg2.compile(count, t, names={"count": count, "t": t})
    prog2 = tmp_path / "count.cpy"
    tg2.save(str(prog2))
    out = subprocess.run([*own_runner_command(), str(prog2), "--plugin", lib, "-n", "2",
                          "--print", "count,t"], capture_output=True, text=True, check=True).stdout
    assert "count=0" in out.splitlines()[0]
    assert float(out.splitlines()[1].split("t=")[1].split()[0]) >= 0.0
    # a program whose import the runner lacks: refused before anything runs, naming it
    done = subprocess.run([*own_runner_command(), str(prog)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "sensor_read" in done.stderr and "does not provide" in done.stderr


FIRMWARE_C = r"""
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "copapy_runner.h"

static uint8_t file_buf[1 << 16];
static double x;
static float sensor_read(int32_t channel) { return channel == 3 ? (float)x : -1e30f; }
static void actuator_write(float u) { x = x + 0.2 * ((double)u - x); }
static float wrong(float c) { return c; }

int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    size_t len = fread(file_buf, 1, sizeof file_buf, f);
    fclose(f);
    int mode = argc > 2 ? argv[2][0] - '0' : 0;  /* 0 all, 1 missing actuator, 2 wrong signature */
    struct copapy_import table[2] = {
        {"sensor_read", (void *)sensor_read, "f(i)"},
        {"actuator_write", (void *)actuator_write, "v(f)"},
    };
    if (mode == 2) { table[0].fn = (void *)wrong; table[0].signature = "f(f)"; }
    uint8_t *region = mmap(NULL, 1 << 17, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct copapy_program p;
    memset(&p, 0, sizeof p);
    const char *bad = NULL;
    uint32_t bad_len = 0;
    int32_t r = copapy_load_with_imports(file_buf, len, region, 1 << 16, region + (1 << 16), 1 << 16,
                                         table, mode == 1 ? 1 : 2, &p, &bad, &bad_len);
    if (r < 0) {
        printf("error %d %s: %.*s loaded=%u\n", r, copapy_error_message(r), (int)bad_len, bad, p.loaded);
        return 1;
    }
    mprotect(region, 1 << 16, PROT_READ | PROT_EXEC);
    uint32_t off;
    uint8_t dtype;
    copapy_symbol(&p, "u", 0, &off, &dtype);
    for (int k = 0; k < 25; k++) {
        copapy_run(&p);
        float u;
        memcpy(&u, p.data + off, 4);
        printf("%.9g\n", u);
    }
    return 0;
}
"""


@pytest.mark.target_independent  # native, through _core.Target
def test_firmware_library_with_a_c_import_table(tmp_path: Any) -> None:
    import shutil
    import subprocess

    root = ROOT
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "copapy-firmware"], cwd=root, check=True)
    gcc = shutil.which("gcc")
    assert gcc, "gcc is needed to build the C test program"
    src = tmp_path / "fw.c"
    src.write_text(FIRMWARE_C)
    exe = tmp_path / "fw"
    include = root / "crates" / "copapy-firmware" / "include"
    lib = root / "target" / "release" / "libcopapy_firmware.a"
    subprocess.run([gcc, "-O2", "-Wall", "-Werror", f"-I{include}", str(src), str(lib), "-lpthread",
                    "-ldl", "-lm", "-o", str(exe)], check=True)
    tg, _ = pid_target("native", Plant(), _core.Target)
    prog = tmp_path / "pid.cpy"
    tg.save(str(prog))
    out = subprocess.run([str(exe), str(prog)], capture_output=True, text=True, check=True).stdout
    got = [np.float32(v) for v in out.split()]
    assert [g.tobytes() for g in got] == [w.tobytes() for w in reference(Plant(), STEPS)]
    missing = subprocess.run([str(exe), str(prog), "1"], capture_output=True, text=True)
    assert missing.returncode == 1
    assert missing.stdout.startswith("error -20 ") and "actuator_write loaded=0" in missing.stdout
    other = subprocess.run([str(exe), str(prog), "2"], capture_output=True, text=True)
    assert other.stdout.startswith("error -21 ") and "sensor_read loaded=0" in other.stdout


_ARG = st.one_of(
    st.tuples(st.just("f"), st.floats(-1e6, 1e6, width=32)),
    st.tuples(st.just("i"), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just("b"), st.booleans()),
)


@settings(max_examples=8 if _EMULATED else 40, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.lists(_ARG, max_size=8), st.sampled_from(["f", "i", "b", "v"])),
                min_size=1, max_size=4))
def test_every_signature_passes_its_arguments_and_result(calls: list[Any]) -> None:
    """Random calls (any mix of at most 4 float and 4 int/bool arguments, as variables, any
    result): each callable sees exactly its arguments, in order, and its result comes back."""
    log: list[tuple[int, tuple[Any, ...]]] = []
    imports: dict[str, Any] = {}
    outputs: list[Any] = []
    expected_log: list[tuple[int, tuple[Any, ...]]] = []
    expected_out: list[Any] = []
    for k, (args, ret) in enumerate(calls):
        kept, count = [], {"f": 0, "ib": 0}
        for a in args:  # at most 4 of each class, in the drawn order
            cls = "f" if a[0] == "f" else "ib"
            if count[cls] < 4:
                count[cls] += 1
                kept.append(a)
        args = kept
        result = {"f": 2.5 + k, "i": -7 - k, "b": True, "v": None}[ret]

        def f(*xs: Any, _k: int = k, _r: Any = result) -> Any:
            log.append((_k, xs))
            return _r
        imports[f"fn{k}"] = f
        traced = [cp.value(float(v)) if t == "f" else cp.value(bool(v)) if t == "b" else cp.value(int(v))
                  for t, v in args]
        returns = {"f": float, "i": int, "b": bool, "v": None}[ret]
        outputs.append(cp.extern(f"fn{k}", *traced, returns=returns))
        expected_log.append((k, tuple(float(np.float32(v)) if t == "f" else v for t, v in args)))
        expected_out.append(0 if ret == "v" else result)
    tg = cp.Target(imports=imports)
    tg.compile(*outputs)
    tg.run()
    assert log == expected_log
    assert [tg.read_value(o) for o in outputs] == expected_out


def test_a_saved_program_with_imports_loads_with_them() -> None:
    plant = Plant()
    tg, _ = pid_target("native", plant)
    again_plant = Plant()
    again = cp.loads(tg.program_bytes(), imports=again_plant.imports())
    for _ in range(3):
        tg.run()
        again.run()
    assert again.read_value("u") == tg.read_value("u")
    assert again_plant.log == plant.log
    with pytest.raises(RuntimeError, match="sensor_read"):
        cp.loads(tg.program_bytes())


def test_a_callable_returning_no_number_stops_the_run_unchanged() -> None:
    answers: list[Any] = [1.5, "not a number", 2.0]
    tg = cp.Target(imports={"sensor": lambda: answers.pop(0)})
    acc = cp.value(0.0)
    tg.compile(acc, updates={acc: acc + cp.extern("sensor", returns=float)})
    tg.run()
    with pytest.raises((TypeError, ValueError)):
        tg.run()
    assert tg.read_value(acc) == 1.5
    tg.run()
    assert tg.read_value(acc) == 3.5


def test_imports_are_not_for_remote_runners() -> None:
    with pytest.raises(ValueError, match="plugin"):
        _core.Target(runner="process", imports={"f": lambda: 0.0})


def test_jit_functions_call_imports() -> None:
    seen: list[float] = []

    def gain() -> float:
        return 3.0

    def log(x: float) -> None:
        seen.append(x)

    @cp.jit(imports={"gain": gain, "log": log})
    def scaled(x: Any) -> Any:
        y = x * cp.extern("gain", returns=float)
        return y, cp.extern("log", y, returns=None)

    assert scaled(2.0)[0] == 6.0
    assert scaled(0.5)[0] == 1.5
    assert seen == [6.0, 1.5]
