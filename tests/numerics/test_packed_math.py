"""Packed scalar math (crates/copapy-compiler/src/pack.rs): independent scalar calls of one
math function run up to four to a SIMD stencil on x86_64 and AArch64 (st_pack4_*), and
each result keeps the bits of the same call computed alone.

Lanes are read in every form of the stencils (stencils/gen_packs.py): inputs and constants
from four consecutive slots with one 16-byte load (``_v``; ``_vx``/``_vy``/``_v`` for
atan2 and pow), values still in a register by value, the others from their slots. A packed
step clobbers every register, so values alive across it are checked too.

"Alone" is a chain: each call's operand is ``iif(previous result < -inf, 0, x)``, which is
``x`` itself (nothing is below -inf, a NaN compares false) but depends on the previous
call, so no pass can pack those calls. The program of independent calls packs them. Both
are compared bit for bit, and with Python's float64 math rounded to float32 within the
function's ulp bar (docs/math.md). Operands come as inputs, as computed float32 products
(which the scheduler spills straight into their lanes) and as values the program also
outputs (copied into the lanes); sin and cos of one operand pack as one lane of the fused
pair. On targets without packed stencils the same checks hold for the scalar calls.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import copapy as cp
import numpy as np
import pytest
import refsem as R
from helpers import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# name: (copapy function, float64 reference, ulp bar of docs/math.md, operand range)
FUNCS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any], int, tuple[float, float]]] = {
    "sin": (cp.sin, np.sin, 1, (-1.0e5, 1.0e5)),
    "cos": (cp.cos, np.cos, 1, (-1.0e5, 1.0e5)),
    "tan": (cp.tan, np.tan, 2, (-1.0e3, 1.0e3)),
    "asin": (cp.asin, np.arcsin, 2, (-1.0, 1.0)),
    "acos": (cp.acos, np.arccos, 2, (-1.0, 1.0)),
    "atan": (cp.atan, np.arctan, 2, (-1.0e6, 1.0e6)),
    "exp": (cp.exp, np.exp, 1, (-110.0, 95.0)),
    "log": (cp.log, np.log, 1, (0.0, 3.0e38)),
    "tanh": (cp.tanh, np.tanh, 1, (-30.0, 30.0)),
    # exp's bits, an add and a divide (one stencil since issue 23.1): 3 ulp, as tests/numerics/test_neural.py
    "sigmoid": (cp.sigmoid, lambda x: _saturated_sigmoid(x), 3, (-110.0, 110.0)),
}
# float32 exp(-x) overflows for x below -ln(FLT_MAX): 1 / (1 + inf) is exactly 0 there
# (the documented saturation; the float64 value would be a subnormal)
EXP_OVERFLOWS_BELOW = -88.72283935546875


def _saturated_sigmoid(x: Any) -> Any:
    return np.where(x < EXP_OVERFLOWS_BELOW, 0.0, R.sigmoid64(x))
SINCOS = "sincos"
NEG_INF = -math.inf


def _reference(ref: Callable[[Any], Any], x: float) -> float:
    """The float64 function (NumPy's: inf on overflow, NaN outside the domain)."""
    with np.errstate(all="ignore"):
        return float(ref(np.float64(x)))


def _within_bar(got: float, want: float, bar: int) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    w32 = float(np.float32(want)) if abs(want) < 3.4e38 else math.copysign(math.inf, want)
    if math.isinf(w32) or math.isinf(got):
        return R.same_float(got, w32) or R.ulp_distance(got, w32) <= bar
    return R.ulp_distance(got, w32) <= bar


def _same_bits(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or R.f32_bits(a) == R.f32_bits(b)


# one operand: (value, scale, also output): the operand is value * scale in float32,
# computed by the program when scale is not None
def _operands(lo: float, hi: float) -> st.SearchStrategy[list[tuple[float, float | None, bool]]]:
    value = st.floats(float(np.float32(lo)), float(np.float32(hi)), width=32, allow_nan=False)
    scale = st.sampled_from([None, None, 1.0, 0.5, 2.0, -1.0])
    return st.lists(st.tuples(value, scale, st.booleans()), min_size=1, max_size=11)


def _build(ops: list[tuple[float, float | None, bool]]) -> tuple[list[Any], list[Any], list[float]]:
    """The operand values, the ones the program also outputs, and their float32 values."""
    values, extra, f32s = [], [], []
    for x, scale, reread in ops:
        v = cp.value(x)
        if scale is not None:
            v = v * cp.value(scale)
        values.append(v)
        if reread:
            extra.append(v)
        with np.errstate(over="ignore"):
            f32s.append(float(np.float32(x) * np.float32(scale if scale is not None else 1.0)))
    return values, extra, f32s


def _run(outs: list[Any]) -> list[float]:
    got: list[float] = run(outs).read_value(outs)
    return got


def _chain(values: list[Any], call: Callable[[Any], list[Any]]) -> list[Any]:
    """The calls one after another: each operand waits for the previous results."""
    outs: list[Any] = []
    for v in values:
        operand = v
        for prev in outs[-2:] if outs else []:
            operand = cp.iif(prev < NEG_INF, 0.0, operand)
        outs += call(operand)
    return outs


def _check(name: str, ops: list[tuple[float, float | None, bool]]) -> None:
    if name == SINCOS:
        def call(v: Any) -> list[Any]:
            return [cp.sin(v), cp.cos(v)]
        refs: list[tuple[Callable[[Any], Any], int]] = [(np.sin, 1), (np.cos, 1)]
    else:
        fn, ref, bar = FUNCS[name][:3]

        def call(v: Any) -> list[Any]:
            return [fn(v)]
        refs = [(ref, bar)]
    values, extra, f32s = _build(ops)
    packed = _run([r for v in values for r in call(v)] + extra)[:len(values) * len(refs)]
    alone = _run(_chain(_build(ops)[0], call))
    assert len(alone) == len(packed)
    for k, x in enumerate(f32s):
        for j, (ref, bar) in enumerate(refs):
            got, single = packed[k * len(refs) + j], alone[k * len(refs) + j]
            assert _same_bits(got, single), f"{name}({x!r}): packed {got!r}, alone {single!r}"
            want = _reference(ref, x)
            assert _within_bar(got, want, bar), f"{name}({x!r}) = {got!r}, want {want!r}"


@pytest.mark.parametrize("name", [*FUNCS, SINCOS])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_independent_calls_have_the_bits_of_calls_alone(name: str, data: st.DataObject) -> None:
    lo, hi = FUNCS[name][3] if name in FUNCS else (-1.0e5, 1.0e5)
    _check(name, data.draw(_operands(lo, hi)))


@pytest.mark.parametrize("name", ["tanh", "exp", "sigmoid", SINCOS])
def test_special_values_in_packed_lanes(name: str) -> None:
    """NaN, infinities, signed zeros and subnormals among packed lanes."""
    specials = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.401298464324817e-45, -1e-40, 1e-30,
                88.72, -103.9, 9.51, -0.25]
    _check(name, [(x, None, False) for x in specials])


def test_a_loop_body_packs_its_independent_calls() -> None:
    """tanh of each carried value inside cp.fori_loop, scaled (so the results are not the
    carries themselves): the body's calls are independent of each other."""
    start = [0.3, -1.2, 2.5, 0.01, -0.7]

    def body(_: Any, c: Any) -> Any:
        return cp.vector([cp.tanh(x) * 1.5 + 0.25 for x in c])

    carry = cp.vector([cp.value(x) for x in start])
    out = cp.fori_loop(0, 6, body, carry)
    tg = cp.Target()
    tg.compile(out)
    tg.run()
    got = [float(v) for v in tg.read_value(out)]
    # the same body, one call after another (a chain through iif), six times
    alone = [cp.value(x) for x in start]
    for _ in range(6):
        alone = [y * 1.5 + 0.25 for y in _chain(alone, lambda v: [cp.tanh(v)])]
    want = _run(alone)
    assert all(_same_bits(g, w) for g, w in zip(got, want, strict=True)), (got, want)
    ref = np.array(start, np.float32)
    for _ in range(6):
        ref = np.array([np.float32(np.float32(math.tanh(float(x))) * np.float32(1.5)) + np.float32(0.25)
                        for x in ref], np.float32)
    assert np.allclose(np.array(got, np.float32), ref, rtol=1e-5, atol=0), (got, ref)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(xs=st.lists(st.floats(-8.0, 8.0, width=32), min_size=2, max_size=9))
def test_packs_read_their_operands_where_they_live(xs: list[float]) -> None:
    """Each lane reads its operand in place: inputs, one input read by two packs (sin and
    exp of x), and an earlier pack's results (tanh of the sines, read from the sin pack's
    block; the sines are outputs too). Bits equal the same calls one after another; values
    are within the bars of the float64 functions of the float32 operands."""
    def program(calls: Callable[[list[Any], Callable[[Any], list[Any]]], list[Any]]) -> list[float]:
        vals = [cp.value(x) for x in xs]
        sines = calls(vals, lambda v: [cp.sin(v)])
        return _run(sines + calls(sines, lambda v: [cp.tanh(v)]) + calls(vals, lambda v: [cp.exp(v)]))

    packed = program(lambda vals, call: [r for v in vals for r in call(v)])
    alone = program(_chain)
    assert all(_same_bits(p, a) for p, a in zip(packed, alone, strict=True)), (packed, alone)
    n = len(xs)
    for k, x in enumerate(xs):
        sine, th, ex = packed[k], packed[n + k], packed[2 * n + k]
        assert _within_bar(sine, _reference(np.sin, x), 1), (x, sine)
        assert _within_bar(th, _reference(np.tanh, sine), 1), (sine, th)
        assert _within_bar(ex, _reference(np.exp, x), 1), (x, ex)


# binary functions packed with their second operands in the result block:
# name: (copapy function, float64 reference, ulp bar of docs/math.md, x range, y range)
BINARY: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any], int,
                        tuple[float, float], tuple[float, float]]] = {
    "atan2": (cp.atan2, math.atan2, 2, (-1.0e6, 1.0e6), (-1.0e6, 1.0e6)),
    "pow": (lambda x, y: x ** y, lambda x, y: _c99_pow(x, y), 2, (0.0, 1.0e4), (-12.0, 12.0)),
}


def _c99_pow(x: float, y: float) -> float:
    """C99 pow in float64: Python's math.pow, which raises where C returns inf (overflow, a
    pole at zero) or NaN (a domain error); NumPy's power gives NaN for pow(-inf, 0.5), C99
    +inf."""
    odd = y.is_integer() and y % 2 == 1
    try:
        return math.pow(x, y)
    except OverflowError:
        return -math.inf if x < 0 and odd else math.inf
    except ValueError:
        if x == 0.0 and y < 0:
            return math.copysign(math.inf, x) if odd else math.inf
        return math.nan
# the special operands of C99 Annex F pow and atan2, paired with each other
SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 2.0, -8.0, 0.5, 3.0, 1e-40]


def _check_binary(name: str, pairs: list[tuple[float, float, int]]) -> None:
    """Operand kinds: 0 inputs, 1 the second operand computed (a product, spilled into its
    lane), 2 both operands one value (pow(x, x)), 3 the second operand also an output, 4
    the second operand the constant 1.5, one node that every such lane shares, 5 the first
    operand computed (the second an input: read from a range)."""
    fn, ref, bar = BINARY[name][:3]

    def operands() -> tuple[list[tuple[Any, Any]], list[Any], list[tuple[float, float]]]:
        ops, extra, f32s = [], [], []
        for x, y, kind in pairs:
            vx, vy = cp.value(x), cp.value(y)
            if kind == 1:
                vy = vy * cp.value(1.0)
            if kind == 2:
                vy, y = vx, x
            if kind == 3:
                extra.append(vy)
            if kind == 4:
                vy, y = 1.5, 1.5
            if kind == 5:
                vx = vx * cp.value(1.0)
            ops.append((vx, vy))
            f32s.append((float(np.float32(x)), float(np.float32(y))))
        return ops, extra, f32s

    ops, extra, f32s = operands()
    packed = _run([fn(a, b) for a, b in ops] + extra)[:len(ops)]
    outs: list[Any] = []
    for a, b in operands()[0]:
        for prev in outs[-1:]:  # each call waits for the one before: nothing packs
            a, b = cp.iif(prev < NEG_INF, 0.0, a), cp.iif(prev < NEG_INF, 0.0, b)
        outs.append(fn(a, b))
    alone = _run(outs)
    for (x, y), got, single in zip(f32s, packed, alone, strict=True):
        assert _same_bits(got, single), f"{name}({x!r}, {y!r}): packed {got!r}, alone {single!r}"
        want = ref(x, y)
        assert _within_bar(got, want, bar), f"{name}({x!r}, {y!r}) = {got!r}, want {want!r}"


@pytest.mark.parametrize("name", list(BINARY))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_binary_calls_have_the_bits_of_calls_alone(name: str, data: st.DataObject) -> None:
    (xlo, xhi), (ylo, yhi) = BINARY[name][3:]
    pair = st.tuples(st.floats(xlo, xhi, width=32), st.floats(ylo, yhi, width=32),
                     st.integers(0, 5))
    _check_binary(name, data.draw(st.lists(pair, min_size=1, max_size=9)))


@pytest.mark.parametrize("name", list(BINARY))
def test_special_operands_in_packed_binary_lanes(name: str) -> None:
    _check_binary(name, [(x, y, 0) for x in SPECIALS for y in SPECIALS])


@pytest.mark.parametrize("name", list(BINARY))
def test_lanes_sharing_a_constant_second_operand(name: str) -> None:
    """x ** 1.5 of six values (a gradient of x ** 2.5 has these): each lane gets its copy
    of the one constant."""
    _check_binary(name, [(x, 0.0, 4) for x in (0.3, 1.0, 2.5, 3.75, 0.0, 7.0)])


@pytest.mark.parametrize("kind", [0, 1, 4, 5])
def test_binary_lanes_of_one_kind(kind: int) -> None:
    """Four lanes of one operand kind, so each form of the binary stencils runs: inputs on
    both sides (both ranges), a computed second operand (the first from a range), a
    constant second operand (copied into its range), a computed first operand."""
    for name in BINARY:
        _check_binary(name, [(x, y, kind) for x, y in ((0.5, 1.25), (2.0, -3.0), (7.5, 0.5),
                                                       (0.125, 2.0))])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(xs=st.lists(st.floats(-8.0, 8.0, width=32), min_size=4, max_size=4),
       p=st.floats(-4.0, 4.0, width=32), q=st.floats(-4.0, 4.0, width=32))
def test_values_alive_across_a_packed_step_keep_their_values(
        xs: list[float], p: float, q: float) -> None:
    """A packed step clobbers every register: a product, a sum and a comparison computed
    before four independent sines and read after them keep their values (the scheduler
    stores them first). Traced so the sines' group closes after them: the first sine, then
    an output of all three, then the other sines, then outputs that read them again.
    Checked against NumPy float32."""
    vals = [cp.value(x) for x in xs]
    vp, vq = cp.value(p), cp.value(q)
    sines = [cp.sin(v) for v in vals]
    prod, total, less = vp * vq, vp + vq, vp < vq
    before = cp.iif(less, prod, total)
    outs = [sines[0], before, *sines[1:], prod * total, cp.iif(less, total, prod), sines[0] + prod]
    got = _run(outs)
    f = np.float32
    with np.errstate(over="ignore"):
        fp, fq = f(p), f(q)
        prod32, total32 = fp * fq, fp + fq
        sine0 = f(got[0])
        want = [prod32 if fp < fq else total32, prod32 * total32,
                total32 if fp < fq else prod32, sine0 + prod32]
    assert [got[1], *got[5:]] == [float(w) for w in want], (got, want)
    for k, x in enumerate(xs):
        assert _within_bar(got[0] if k == 0 else got[1 + k], _reference(np.sin, x), 1), (x, got)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(xs=st.lists(st.floats(-50.0, 50.0, width=32), min_size=2, max_size=4),
       order=st.permutations(range(8)), k=st.floats(-4.0, 4.0, width=32))
def test_sin_cos_results_read_right_after_their_step(xs: list[float], order: list[int],
                                                      k: float) -> None:
    """Products of the packed sines and cosines with k, in a drawn order right after the
    step: the two read first stay in float registers (stencils/gen_packs.py, SINCOS_KEPT;
    each pair of lanes 0 and 1 is a form of its own), the others come from their slots; the
    result read first is read again at the end, after the registers were reused. Checked
    against the calls one after another and NumPy float32 products and sums."""
    def results(calls: Callable[[list[Any], Callable[[Any], list[Any]]], list[Any]]) -> list[Any]:
        return calls([cp.value(x) for x in xs], lambda v: [cp.sin(v), cp.cos(v)])

    packed = results(lambda vals, call: [r for v in vals for r in call(v)])
    picks = [i for i in order if i < len(packed)]
    vk = cp.value(k)  # an input: a constant zero would fold the product (x * 0 -> 0)
    products = [packed[i] * vk for i in picks]
    total = products[0]
    for p in products[1:]:
        total = total + p
    got = _run([*products, total + packed[picks[0]], *packed])
    alone = _run(results(_chain))
    assert all(_same_bits(g, a) for g, a in zip(got[len(picks) + 1:], alone, strict=True))
    f = np.float32
    with np.errstate(over="ignore", invalid="ignore"):
        want = [f(alone[i]) * f(k) for i in picks]
        sum32 = want[0]
        for w in want[1:]:
            sum32 = sum32 + w
        want.append(sum32 + f(alone[picks[0]]))
    assert all(_same_bits(g, float(w)) for g, w in zip(got, want, strict=False)), (got, want)
