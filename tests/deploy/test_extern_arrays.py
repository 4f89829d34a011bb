"""Array arguments of imported functions (``cp.extern`` with ``cp.array`` / ``cp.vector`` /
``cp.tensor``): a buffer passed as pointer and int32 length, ``fills=k`` for a sensor that
fills several channels.

A closed loop with an array actuator (``dac_write``) and an array sensor (``adc_scan``) and
an int buffer (``counter_scan``) runs on this machine, in every emulated target (the
suite runs once per target under ``COPAPY_TEST_TARGET``) and through ``copapy-run
--plugin`` with the firmware's own C functions (``firmware/common/io_arrays.c``); each is
compared with the same loop in NumPy float32 / int32. The firmware under qemu-system is in
test_extern_arrays_board.py. Then: the program's arrays never change when a function
writes a buffer it was not asked to fill, random lengths and values (hypothesis), the
checks of callables at load, and bad input."""

from __future__ import annotations

import os
import subprocess
from typing import Any

import copapy as cp
import numpy as np
import pytest
from copapy import _core, _targets
from helpers import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

_EMULATED = os.environ.get("COPAPY_TEST_TARGET")
TARGETS = [_EMULATED] if _EMULATED else _targets.names()
ARCH = _EMULATED or "native"
F = np.float32
CHANNELS = 8
LIMIT = 1_000_000
STEPS = 6


class Converters:
    """The outside world of firmware/common/io_arrays.c in Python: eight DAC channels
    latched in millivolts, an ADC reading them back, a counter bank; with a log of calls."""

    def __init__(self) -> None:
        self.dac_mv = [0] * CHANNELS
        self.log: list[tuple[str, list[Any]]] = []

    def dac_write(self, values: Any) -> None:
        self.log.append(("dac", [float(v) for v in values]))
        for k in range(min(len(values), CHANNELS)):
            scaled = F(values[k]) * F(1000.0)
            self.dac_mv[k] = -LIMIT if not scaled > -LIMIT else LIMIT if scaled >= LIMIT else int(scaled)

    def adc_scan(self, samples: Any) -> int:
        self.log.append(("adc", [float(v) for v in samples]))
        for k in range(len(samples)):
            volts = F(self.dac_mv[k]) / F(1000.0) if k < CHANNELS else F(0.0)
            samples[k] = volts + F(samples[k])
        return min(len(samples), CHANNELS)

    def counter_scan(self, counts: Any) -> None:
        self.log.append(("count", [int(c) for c in counts]))
        counts += np.arange(1, len(counts) + 1, dtype=np.int32)

    def imports(self) -> dict[str, Any]:
        return {"dac_write": self.dac_write, "adc_scan": self.adc_scan, "counter_scan": self.counter_scan}


GAINS = [0.5, 2.0, -1.25, 3.0, 0.75]
SETPOINTS = [1.0, -0.5, 0.25, 2.0, -3.0]
OFFSETS = [0.001, -0.002, 0.0, 0.5, -0.25]


def loop_program(tg: Any, name_states: bool = False) -> Any:
    """Per run: u = gains * (setpoint - state) to the DAC, the ADC fills five channels on
    top of the offsets, the state moves halfway to them; a counter bank counts runs. The
    states are vectors of variables (what ``updates`` takes); a filled vector comes back."""
    gains = cp.array(GAINS)
    setpoint = cp.array(SETPOINTS)
    state = cp.vector([cp.value(0.0) for _ in range(5)])
    counts = cp.vector([cp.value(0) for _ in range(3)])
    u = gains * (setpoint - cp.array(list(state)))
    written = cp.extern("dac_write", u, returns=None)
    read, measured = cp.extern("adc_scan", cp.array(OFFSETS), returns=int, fills=0)
    next_state = cp.vector(list(measured * 0.5)) + state * 0.5
    _, next_counts = cp.extern("counter_scan", counts, returns=None, fills=0)
    names = {"u": u, "measured": measured, "read": read}
    if name_states:
        names.update(state=state, counts=counts)
    tg.compile(written, read, next_state, names=names, updates=[(state, next_state), (counts, next_counts)])
    return state, counts


def loop_reference(conv: Converters, steps: int) -> list[dict[str, Any]]:
    """The same loop in NumPy float32 / int32, calling the converters directly."""
    gains, setpoint, offsets = np.array(GAINS, F), np.array(SETPOINTS, F), np.array(OFFSETS, F)
    state, counts = np.zeros(5, F), np.zeros(3, np.int32)
    rows = []
    for _ in range(steps):
        u = gains * (setpoint - state)
        conv.dac_write(u.copy())
        measured = offsets.copy()
        read = conv.adc_scan(measured)
        state = measured * F(0.5) + state * F(0.5)
        conv.counter_scan(counts)
        rows.append({"u": u.tolist(), "measured": measured.tolist(), "read": read,
                     "state": state.tolist(), "counts": counts.tolist()})
    return rows


def _read(tg: Any, x: Any) -> Any:
    """``tg.read_value(x)`` as plain Python numbers or (nested) lists."""
    got = tg.read_value(x)
    return got.tolist() if hasattr(got, "tolist") else got


def _bits(xs: Any) -> list[bytes]:
    return [F(x).tobytes() for x in xs]


@pytest.mark.parametrize("arch", TARGETS)
def test_array_sensor_and_actuator_loop_matches_numpy(arch: str) -> None:
    conv = Converters()
    tg = cp.Target(arch, imports=conv.imports())
    state, counts = loop_program(tg)
    ref_conv = Converters()
    want = loop_reference(ref_conv, STEPS)
    for row in want:
        tg.run()
        assert _bits(_read(tg, "u")) == _bits(row["u"])
        assert _bits(_read(tg, "measured")) == _bits(row["measured"])
        assert _read(tg, "read") == row["read"] == 5
        assert _bits(_read(tg, state)) == _bits(row["state"])
        assert _read(tg, counts) == row["counts"]
    # every call once per run, in trace order, with the same buffers as the reference
    assert conv.log == ref_conv.log
    assert [k for k, _ in conv.log] == ["dac", "adc", "count"] * STEPS


def test_functions_writing_buffers_they_do_not_fill_change_no_array() -> None:
    """Inputs, constants, held and temporary arrays, one array passed twice: each reaches
    the function as its own buffer, so scribbling on it changes nothing of the program."""
    seen: list[list[float]] = []

    def scribble(*buffers: Any) -> None:
        for b in buffers:
            seen.append(b.tolist())
            b[:] = -7

    x = cp.array([1.0, 2.0, 3.0])
    k = cp.array([4, 5], dtype="int")
    held = x * 2.0
    tokens = [
        cp.extern("scribble1", x, returns=None),
        cp.extern("scribble2", held, k, returns=None),
        # a temporary nothing else holds, passed twice: a copy, then its own memory
        (lambda t: cp.extern("scribble3", t, t, returns=None))(x + 1.0),
        cp.extern("scribble1", cp.vector([cp.value(0.5), 1.5]), returns=None),
        cp.extern("scribble3", held, held, returns=None),
    ]
    after = x + held
    tg = cp.Target(ARCH, imports={"scribble1": scribble, "scribble2": scribble, "scribble3": scribble})
    tg.compile(*tokens, after, k)
    for _ in range(2):
        seen.clear()
        tg.run()
        assert seen == [[1, 2, 3], [2, 4, 6], [4, 5], [2, 3, 4], [2, 3, 4], [0.5, 1.5],
                        [2, 4, 6], [2, 4, 6]]
        assert _read(tg, x) == [1.0, 2.0, 3.0]
        assert _read(tg, held) == [2.0, 4.0, 6.0]
        assert _read(tg, after) == [3.0, 6.0, 9.0]
        assert _read(tg, k) == [4, 5]


def test_fills_keeps_the_argument_kind_and_shape_and_scalar_calls_unchanged() -> None:
    def fill(buf: Any, scale: float) -> float:
        buf *= F(scale)
        return float(buf.sum())

    m = cp.tensor([[1.0, 2.0], [3.0, 4.0]])
    v = cp.vector([cp.value(1), cp.value(2), cp.value(3)])
    total, filled_m = cp.extern("fill", m, 2.0, returns=float, fills=0)
    _, filled_v = cp.extern("ifill", v, returns=None, fills=[0])
    a = cp.array([[1.5], [2.5]])
    _, filled_a = cp.extern("fill", a, -1.0, returns=float, fills=0)
    scalar = cp.extern("twice", cp.value(1.25), returns=float)
    assert isinstance(filled_m, cp.tensor) and filled_m.shape == (2, 2)
    assert isinstance(filled_v, cp.vector) and filled_v.shape == (3,)
    assert isinstance(filled_a, cp.array) and filled_a.shape == (2, 1) and filled_a.dtype == "float"

    def ifill(buf: Any) -> None:
        buf[:] = buf * 10 + 1

    tg = cp.Target(ARCH, imports={"fill": fill, "ifill": ifill, "twice": lambda x: 2 * x})
    tg.compile(total, filled_m @ filled_m, filled_v, filled_a, scalar)
    tg.run()
    ref_m = np.array([[1, 2], [3, 4]], F) * F(2)
    assert _read(tg, filled_m @ filled_m) == (ref_m @ ref_m).tolist()
    assert _read(tg, total) == float(ref_m.sum())
    assert _read(tg, filled_v) == [11, 21, 31]
    assert _read(tg, filled_a) == [[-1.5], [-2.5]]
    assert _read(tg, scalar) == 2.5
    assert tg.imports() == [("fill", "f(Ff)"), ("ifill", "v(I)"), ("twice", "f(f)")]


_LENGTHS = st.integers(1, 300)


@settings(max_examples=6 if _EMULATED else 25, deadline=None, derandomize=True)
@given(st.data())
def test_random_lengths_and_values_round_trip(data: st.DataObject) -> None:
    """Random float and int buffers, read, filled and summed, against NumPy float32/int32."""
    n = data.draw(_LENGTHS, label="n")
    m = data.draw(_LENGTHS, label="m")
    xs = np.array(data.draw(st.lists(st.floats(-1e6, 1e6, width=32), min_size=n, max_size=n)), F)
    ks = np.array(data.draw(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=m, max_size=m)), np.int32)
    c = F(data.draw(st.floats(-100, 100, width=32), label="c"))

    def mix(fb: Any, c: float, ib: Any) -> int:
        fb[:] = fb * F(c) - F(1.5)
        ib[:] = ib[::-1] ^ np.int32(0x5A5A)
        return len(fb) * 1000 + len(ib)

    fx, ik = cp.array(xs), cp.array(ks, dtype="int")
    r, filled_f, filled_i = cp.extern("mix", fx, c, ik, returns=int, fills=(0, 2))
    tg = cp.Target(ARCH, imports={"mix": mix})
    tg.compile(r, filled_f, filled_i, filled_f.sum())
    tg.run()
    want_f = xs * c - F(1.5)
    assert _read(tg, r) == n * 1000 + m
    assert _bits(_read(tg, filled_f)) == _bits(want_f)
    assert _read(tg, filled_i) == (ks[::-1] ^ np.int32(0x5A5A)).tolist()
    assert _read(tg, fx) == xs.tolist()


def test_jit_functions_pass_and_fill_arrays() -> None:
    def sense(buf: Any, gain: float) -> int:
        buf *= F(gain)
        return len(buf)

    @cp.jit(imports={"sense": sense})
    def scaled(v: Any, gain: Any) -> Any:
        n, filled = cp.extern("sense", v, gain, returns=int, fills=0)
        return n, filled.sum()

    xs = np.array([1.5, -2.0, 0.25], F)
    n, total = scaled(cp.array(xs), 4.0)
    assert n == 3 and F(total).tobytes() == (xs * F(4.0)).sum(dtype=F).tobytes()


def test_programs_passing_arrays_keep_linear_instruction_bounds() -> None:
    """The copy into a call's buffer is a 1-D loop: the bound grows by the same amount per
    element, and the call itself adds a constant."""
    def bound(n: int) -> int:
        tg = cp.Target(ARCH, imports={"dac": lambda v: None})
        x = cp.array([1.0] * n)
        tg.compile(cp.extern("dac", x, returns=None))
        most: int = tg.max_instructions()
        return most

    b4, b8, b16 = bound(4), bound(8), bound(16)
    assert b4 < b8 < b16
    assert b16 - b8 == 2 * (b8 - b4)


def test_a_huge_array_is_passed_whole() -> None:
    n = 200_000
    xs = np.arange(n, dtype=F) * F(0.5)
    lengths: list[int] = []

    def sense(buf: Any) -> None:
        lengths.append(len(buf))
        buf += F(1.0)

    _, filled = cp.extern("sense", cp.array(xs), returns=None, fills=0)
    tg = cp.Target(ARCH, imports={"sense": sense})
    total = filled.sum()
    tg.compile(total, filled)
    tg.run()
    assert lengths == [n]
    got = np.array(_read(tg, filled), F)
    assert got.tobytes() == (xs + F(1.0)).tobytes()


# ------------------------------------------------------------------ checks at load

def test_a_callable_of_the_wrong_arity_is_refused_at_load_naming_both_signatures() -> None:
    y = cp.extern("adc_scan", cp.array([0.0, 0.0]), 3, returns=int)
    for bad in (lambda buf: 0, lambda a, b, c: 0, lambda *, buf: 0):
        with pytest.raises(TypeError, match=r"adc_scan.*i\(Fi\).*2 arguments, 1 of them arrays"):
            cp.Target(ARCH, imports={"adc_scan": bad}).compile(y)
    # defaults and *args fit; a builtin without a signature (max) is accepted
    for good in (lambda buf, ch, extra=1: 0, lambda *a: 0):
        tg = cp.Target(ARCH, imports={"adc_scan": good})
        tg.compile(y)
        tg.run()
    m = cp.extern("biggest", 1.5, 2.5, returns=float)
    tg = cp.Target(ARCH, imports={"biggest": max})
    tg.compile(m)
    tg.run()
    assert _read(tg, m) == 2.5


def test_a_saved_program_loads_only_with_fitting_callables() -> None:
    conv = Converters()
    tg = cp.Target(ARCH, imports=conv.imports())
    loop_program(tg)
    data = tg.program_bytes()
    bad = dict(conv.imports(), adc_scan=lambda: 0)
    with pytest.raises(TypeError, match="adc_scan"):
        cp.loads(data, imports=bad)
    again = cp.loads(data, imports=Converters().imports())
    again.run()
    assert _read(again, "read") == 5


@pytest.mark.parametrize("answer, error", [(None, "returned NoneType None"), ("1.5", "returned str"),
                                           (2.5, "needs an int"), ([1], "returned list"),
                                           (2**40, "returned int 1099511627776")])
def test_a_wrong_result_type_is_a_clear_error_and_the_run_changes_nothing(answer: Any, error: str) -> None:
    answers: list[Any] = [3, answer, 4]

    def sense(buf: Any) -> Any:
        buf += F(1.0)
        return answers.pop(0)

    acc = cp.value(0)
    state = cp.vector([cp.value(0.0), cp.value(0.0)])
    n, filled = cp.extern("sense", state, returns=int, fills=0)
    tg = cp.Target(ARCH, imports={"sense": sense})
    tg.compile(acc, state, updates=[(acc, acc + n), (state, filled)])
    tg.run()
    with pytest.raises(TypeError, match=f"import sense {error}" if "returned" in error else error):
        tg.run()
    assert _read(tg, acc) == 3 and _read(tg, state) == [1.0, 1.0]
    tg.run()
    assert _read(tg, acc) == 7 and _read(tg, state) == [2.0, 2.0]


def test_a_raising_callable_after_filling_leaves_the_state_of_before_the_run() -> None:
    calls = {"n": 0}

    def sense(buf: Any) -> None:
        calls["n"] += 1
        buf += F(10.0)
        if calls["n"] == 2:
            raise OSError("bus fault")

    def act(values: Any) -> None:
        pass

    state = cp.vector([cp.value(1.0), cp.value(2.0), cp.value(3.0)])
    tok = cp.extern("act", state * 2.0, returns=None)
    _, filled = cp.extern("sense", state, returns=None, fills=0)
    tg = cp.Target(ARCH, imports={"sense": sense, "act": act})
    tg.compile(tok, filled, updates=[(state, filled)])
    tg.run()
    assert _read(tg, state) == [11.0, 12.0, 13.0]
    before = _read(tg, filled)
    with pytest.raises(OSError, match="bus fault"):
        tg.run()
    assert _read(tg, state) == [11.0, 12.0, 13.0]
    assert _read(tg, filled) == before
    tg.run()
    assert _read(tg, state) == [21.0, 22.0, 23.0]


# ------------------------------------------------------------------ bad input

@pytest.mark.parametrize("name", ["1adc", "adc-scan", "", "a b", "é"])
def test_array_import_names_must_be_c_identifiers(name: str) -> None:
    with pytest.raises(ValueError, match="C identifier"):
        cp.extern(name, cp.array([1.0]), returns=None)


def test_an_unknown_array_import_is_refused_naming_it() -> None:
    y = cp.extern("spectrum_scan", cp.array([0.0] * 4), returns=int)
    with pytest.raises(RuntimeError, match=r"spectrum_scan \(signature i\(F\)\)"):
        cp.Target(ARCH, imports={"adc_scan": lambda b: 0}).compile(y)


def test_scalar_and_array_or_float_and_int_arrays_are_two_signatures() -> None:
    imports = {"f": lambda x: 0.0}
    for a, b in ((cp.array([1.0]), cp.value(1.0)), (cp.array([1.0]), cp.array([1], dtype="int"))):
        with pytest.raises(Exception, match="two signatures"):
            both = cp.extern("f", a, returns=float) + cp.extern("f", b, returns=float)
            cp.Target(ARCH, imports=imports).compile(both)


@pytest.mark.parametrize("args, match", [
    ((cp.array([1.0]), cp.array([1.0]), cp.array([1.0])), "integer registers"),
    ((cp.array([1.0]), 1, 2, 3), "integer registers"),
    ((cp.array([True, False]),), "bool array"),
    ((cp.array([1, 2], dtype="byte"),), "byte array"),
    ((cp.vector([]),), "empty"),
    ((cp.tensor(1.0),), "0-d tensor"),
    (([1.0, 2.0],), "list"),
])
def test_bad_array_arguments_are_refused(args: tuple[Any, ...], match: str) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        cp.extern("f", *args, returns=None)


@pytest.mark.parametrize("fills, match", [(1, "not an array"), (2, "has 2 arguments"), ((0, 0), "twice"),
                                          (True, "has 2 arguments"), ("0", "has 2 arguments")])
def test_bad_fills_are_refused(fills: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        cp.extern("f", cp.array([1.0]), 2.0, returns=None, fills=fills)


def test_an_array_import_inside_a_loop_body_is_refused_as_every_import() -> None:
    def body(k: Any, carry: Any) -> Any:
        _, filled = cp.extern("adc_scan", carry, returns=int, fills=0)
        return filled

    with pytest.raises(Exception, match="loop body calls an imported function"):
        cp.fori_loop(0, 3, body, cp.array([0.0, 1.0]))
    # a buffer filled before the loop is an ordinary capture
    _, filled = cp.extern("adc_scan", cp.array([0.0, 1.0]), returns=int, fills=0)
    out = cp.fori_loop(0, 3, lambda k, c: c + filled, cp.array([0.0, 0.0]))
    def adc_scan(buf: Any) -> int:
        buf += F(2.0)
        return 2

    tg = cp.Target(ARCH, imports={"adc_scan": adc_scan})
    tg.compile(out)
    tg.run()
    assert _read(tg, out) == [6.0, 9.0]


# ------------------------------------------------------------------ copapy-run --plugin

PLUGIN_TABLE_C = r"""
#include <stdint.h>
#include "io_arrays.h"
struct copapy_import { const char *name; void *fn; const char *signature; };
static const struct copapy_import table[] = {
    {"dac_write", (void *)dac_write, "v(F)"},
    {"adc_scan", (void *)adc_scan, "i(F)"},
    {"counter_scan", (void *)counter_scan, "v(I)"},
};
const struct copapy_import *copapy_imports(uint32_t *count) { *count = 3; return table; }
"""


def test_copapy_run_plugin_serves_arrays_with_the_firmwares_functions(tmp_path: Any) -> None:
    """The plugin is firmware/common/io_arrays.c itself, built for this machine."""
    from copapy._remote import own_runner_command

    src = tmp_path / "table.c"
    src.write_text(PLUGIN_TABLE_C)
    lib = tmp_path / "libconverters.so"
    common = ROOT / "firmware" / "common"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-Wall", "-Werror", f"-I{common}", "-o", str(lib),
                    str(src), str(common / "io_arrays.c")], check=True)
    tg = _core.Target("native", imports=Converters().imports())
    loop_program(tg, name_states=True)
    prog = tmp_path / "loop.cpy"
    tg.save(str(prog))
    out = subprocess.run([*own_runner_command(), str(prog), "--plugin", str(lib), "-n", str(STEPS),
                          "--print", "state,counts"], capture_output=True, text=True, check=True).stdout
    want = loop_reference(Converters(), STEPS)
    lines = out.splitlines()
    assert len(lines) == STEPS, out
    for line, row in zip(lines, want, strict=True):
        fields = dict(part.split("=", 1) for part in line.split(" ") if "=" in part)
        assert _bits(_numbers(fields["state"])) == _bits(row["state"]), line
        assert [int(x) for x in _numbers(fields["counts"])] == row["counts"], line
    # the runner's signatures are checked: an int buffer where the plugin takes floats
    wrong = cp.extern("dac_write", cp.array([1, 2], dtype="int"), returns=None)
    tg2 = _core.Target("native", imports={"dac_write": lambda v: None})
    tg2.compile(wrong)
    prog2 = tmp_path / "wrong.cpy"
    tg2.save(str(prog2))
    done = subprocess.run([*own_runner_command(), str(prog2), "--plugin", str(lib)],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "dac_write with signature v(I)" in done.stderr and "has signature v(F)" in done.stderr


def _numbers(text: str) -> list[float]:
    return [float(x) for x in text.strip("[]").split(",")]
