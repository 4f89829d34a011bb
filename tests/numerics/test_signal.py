"""copapy.signal against SciPy: ``sosfilt``/``lfilter`` (streaming, with ``zi``), their
steady-state starts, coefficients as constants or run-time inputs, and bad input.

Two references per case: a NumPy float32 loop doing the float operations in the order
copapy.signal documents (the same bits expected), and scipy.signal in float64 (a tolerance
stated per case: float32 rounding through the filter's recursion). Under
COPAPY_TEST_TARGET the programs run in that target's emulator (tests/conftest.py).
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import copapy as cp
import numpy as np
import pytest
import scipy.signal as ss

f32 = np.float32
RNG = np.random.default_rng(20)
# orders 1..8, block lengths 1..256 (each order with one block length, to keep the run short)
ORDER_BLOCK = [(1, 1), (2, 2), (3, 5), (4, 16), (5, 33), (6, 64), (7, 128), (8, 256)]


def sos_reference32(sos: np.ndarray, x: np.ndarray, zi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sosfilt in float32, in copapy.signal's documented order."""
    c = sos.astype(f32)
    z = zi.astype(f32).copy()
    y = np.empty(len(x), f32)
    for k, sample in enumerate(x.astype(f32)):
        v = sample
        for s in range(len(c)):
            b0, b1, b2, _, a1, a2 = c[s]
            out = f32(b0 * v) + z[s, 0]
            z[s, 0] = f32(f32(b1 * v) - f32(a1 * out)) + z[s, 1]
            z[s, 1] = f32(b2 * v) - f32(a2 * out)
            v = out
        y[k] = v
    return y, z


def lfilter_reference32(b: np.ndarray, a: np.ndarray, x: np.ndarray,
                        zi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """lfilter in float32, in copapy.signal's documented order (coefficients divided by
    a[0] in float64, rounded once)."""
    k = max(len(a), len(b)) - 1
    bb = np.zeros(k + 1)
    aa = np.zeros(k + 1)
    bb[:len(b)], aa[:len(a)] = b / a[0], a / a[0]
    bb, aa = bb.astype(f32), aa.astype(f32)
    z = zi.astype(f32).copy()
    y = np.empty(len(x), f32)
    for n, v in enumerate(x.astype(f32)):
        out = f32(bb[0] * v) + z[0] if k else f32(bb[0] * v)
        new = np.zeros(k, f32)
        for i in range(k):
            acc = z[i + 1] if i + 1 < k else f32(0)
            new[i] = f32(acc + f32(bb[i + 1] * v)) - f32(aa[i + 1] * out)
        z = new
        y[n] = out
    return y, z


def run_block(outputs: Any, xs: list[Any], data: np.ndarray) -> list[float]:
    tg = cp.Target()
    tg.compile(outputs)
    tg.write_value(xs, [float(v) for v in data])
    tg.run()
    got = tg.read_value(outputs)
    return [float(v) for v in np.ravel(np.asarray(got, dtype=object))]


@pytest.mark.parametrize("order,block", ORDER_BLOCK)
def test_sosfilt_matches_scipy_for_orders_1_to_8(order: int, block: int) -> None:
    sos = ss.butter(order, 0.15, output="sos")
    data = RNG.normal(size=block).astype(f32)
    zi = ss.sosfilt_zi(sos) * 0.3  # a non-rest start
    xs = [cp.value(0.0) for _ in range(block)]
    y, zf = cp.signal.sosfilt(sos, cp.vector(xs), zi=zi)
    flat_zf = [e for row in zf for e in row]
    got = run_block([*y.values, *flat_zf], xs, data)
    want_y, want_z = sos_reference32(sos, data, zi)
    assert got == [*want_y.tolist(), *want_z.ravel().tolist()]  # same order, same bits
    sy, sz = ss.sosfilt(sos, data.astype(np.float64), zi=zi)
    # float32 against float64: a Butterworth low-pass of unit-variance noise stays O(1); the
    # rounding through up to 8 cascaded poles (measured: 2e-9 at order 1 to 8e-7 at order 8)
    assert np.max(np.abs(np.array(got[:block]) - sy)) < 1e-5
    assert np.max(np.abs(np.array(got[block:]) - sz.ravel())) < 1e-5


@pytest.mark.parametrize("order", [1, 2, 3, 4, 6, 8])
def test_lfilter_matches_scipy(order: int) -> None:
    b, a = ss.butter(order, 0.3) if order <= 4 else ss.cheby1(order, 1.0, 0.45)
    a = a * 2.0  # not normalised: lfilter divides by a[0]
    b = b * 2.0
    block = 8 * order
    data = RNG.normal(size=block).astype(f32)
    zi = ss.lfilter_zi(b, a) * 0.5
    xs = [cp.value(0.0) for _ in range(block)]
    y, zf = cp.signal.lfilter(b, a, xs, zi=zi)
    got = run_block([*[y[i] for i in range(block)], *zf], xs, data)
    want_y, want_z = lfilter_reference32(b, a, data, zi)
    assert got == [*want_y.tolist(), *want_z.tolist()]
    sy, _ = ss.lfilter(b, a, data.astype(np.float64), zi=zi)
    # direct form in float32: the error grows with the order (the coefficients' rounding moves
    # the poles); measured 3e-8 (orders 1, 2), 2e-7 (3, 4), 2e-6 (6) and 2e-5 (8, Chebyshev)
    tolerance = {1: 1e-6, 2: 1e-6, 3: 3e-6, 4: 3e-6, 6: 3e-5, 8: 3e-4}[order]
    assert np.max(np.abs(np.array(got[:block]) - sy)) < tolerance


def test_fir_by_lfilter_and_convolve() -> None:
    b = ss.firwin(9, 0.25)
    data = RNG.normal(size=24).astype(f32)
    xs = [cp.value(0.0) for _ in range(24)]
    y = cp.signal.lfilter(b, [1.0], cp.vector(xs))
    full = cp.filters.convolve(cp.vector(xs), b)
    got = run_block([*y.values, *full.values], xs, data)
    want, _ = lfilter_reference32(b, np.array([1.0]), data, np.zeros(8))
    assert got[:24] == want.tolist()
    assert np.max(np.abs(np.array(got[:24]) - ss.lfilter(b, [1.0], data.astype(np.float64)))) < 1e-6
    assert np.max(np.abs(np.array(got[24:]) - np.convolve(data.astype(np.float64), b))) < 1e-6


def test_streaming_with_updates_equals_one_long_filter() -> None:
    """One sample per run, the state carried by the program itself (updates=)."""
    sos = ss.cheby2(4, 40, 0.2, output="sos")
    x = cp.value(0.0, name="x")
    z = cp.signal.state((len(sos), 2), "z")
    y, zf = cp.signal.sosfilt(sos, x, zi=z)
    tg = cp.Target()
    tg.compile(y, names={"y": y}, updates={z[s][c]: zf[s][c] for s in range(len(sos)) for c in range(2)})
    data = RNG.normal(size=40).astype(f32)
    got = []
    for v in data:
        tg.write_value("x", float(v))
        tg.run()
        got.append(tg.read_value("y"))
    want, _ = sos_reference32(sos, data, np.zeros((len(sos), 2)))
    assert got == want.tolist()
    assert np.max(np.abs(np.array(got) - ss.sosfilt(sos, data.astype(np.float64)))) < 1e-5


def test_block_streaming_with_steady_start() -> None:
    """Blocks of 16 per run from sosfilt_zi * x[0]: a constant input stays constant."""
    sos = ss.butter(3, 0.1, output="sos")
    xs = [cp.value(0.0) for _ in range(16)]
    zi_np = np.array(cp.signal.sosfilt_zi(sos)) * 2.5
    z = cp.signal.state((2, 2), "z", zi_np)
    y, zf = cp.signal.sosfilt(sos, xs, zi=z)
    tg = cp.Target()
    tg.compile(y, updates={z[s][c]: zf[s][c] for s in range(2) for c in range(2)})
    tg.write_value(xs, [2.5] * 16)
    for _ in range(3):
        tg.run()
        got = np.array(tg.read_value(y), dtype=np.float64)
        # float32 steady state of a DC gain 1 filter: within a few ulp of 2.5
        assert np.max(np.abs(got - 2.5)) < 4e-6


def test_coefficients_as_run_time_inputs() -> None:
    """sos made of cp.value s: the same program filters with another design after writing
    new coefficients."""
    coef = [[cp.value(0.0) for _ in range(6)] for _ in range(2)]
    xs = [cp.value(0.0) for _ in range(12)]
    y = cp.signal.sosfilt(coef, xs)
    tg = cp.Target()
    tg.compile(y)
    data = RNG.normal(size=12).astype(f32)
    tg.write_value(xs, [float(v) for v in data])
    for wn in (0.1, 0.4):
        sos = ss.butter(4, wn, output="sos")
        for s in range(2):  # sos[s, 3] is 1 by definition: not an input of the program
            used = [0, 1, 2, 4, 5]
            tg.write_value([coef[s][i] for i in used], [float(sos[s, i]) for i in used])
        tg.run()
        want, _ = sos_reference32(sos, data, np.zeros((2, 2)))
        assert [float(v) for v in tg.read_value(y)] == want.tolist()


def test_steady_state_starts_match_scipy() -> None:
    for order in (1, 2, 5, 8):
        sos = ss.butter(order, 0.2, output="sos")
        assert np.allclose(cp.signal.sosfilt_zi(sos), ss.sosfilt_zi(sos), rtol=1e-12, atol=1e-12)
        b, a = ss.butter(min(order, 4), 0.2)
        assert np.allclose(cp.signal.lfilter_zi(b, a * 3.0), ss.lfilter_zi(b, a * 3.0), rtol=1e-9, atol=1e-12)


def test_plain_numbers_filter_while_tracing() -> None:
    sos = ss.butter(2, 0.2, output="sos")
    data = [1.0, 0.0, 0.0, 0.5]
    got = cp.signal.sosfilt(sos, data)
    assert isinstance(got, list)  # computed in Python floats while tracing
    assert np.allclose(got, ss.sosfilt(sos, data), rtol=1e-12, atol=1e-15)


def test_bad_input_names_the_argument_and_shape() -> None:
    x = cp.value(0.0)
    with pytest.raises(ValueError, match=r"sos must have shape \(n_sections, 6\), got shape \(2, 5\)"):
        cp.signal.sosfilt(np.ones((2, 5)), x)
    with pytest.raises(ValueError, match=r"sos\[:, 3\] should be all ones"):
        cp.signal.sosfilt([[1, 0, 0, 2, 0, 0]], x)
    with pytest.raises(ValueError, match=r"zi must have shape \(n_sections, 2\) = \(2, 2\), got shape \(2,"):
        cp.signal.sosfilt(ss.butter(4, 0.2, output="sos"), x, zi=[0.0, 0.0])
    with pytest.raises(ValueError, match=r"zi must have shape .* = \(2,\), got shape \(3,\)"):
        cp.signal.lfilter([1, 2, 1], [1, 0.1, 0.2], x, zi=[0.0] * 3)
    with pytest.raises(ValueError, match=r"a\[0\] must not be zero"):
        cp.signal.lfilter([1.0], [0.0, 1.0], x)
    with pytest.raises(ValueError, match="x must be one sample or a 1-D block"):
        cp.signal.lfilter([1.0], [1.0], [[x]])
    with pytest.raises(ValueError, match="pole at z = 1"):
        cp.signal.lfilter_zi([1.0], [1.0, -1.0])
    # SciPy accepts unstable and non-finite coefficients: so does copapy.signal
    y = cp.signal.lfilter([1.0], [1.0, -2.0], [x, x])
    assert len(y) == 2
    cp.signal.sosfilt([[float("inf"), 0, 0, 1, 0, 0]], x)


def test_import_copapy_imports_no_design_package() -> None:
    code = ("import sys, copapy; "
            "print(sorted(m for m in ('scipy', 'control', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_pure_delay_streams_the_previous_sample() -> None:
    """b0 = 0: y = z0 is the state itself; with updates= the output must still be this
    step's (the previous input), not the updated state."""
    x = cp.value(0.0)
    z = cp.signal.state(1, "z")
    y, zf = cp.signal.lfilter([0.0, 1.0], [1.0], x, zi=z)
    sos_z = cp.signal.state((1, 2), "s")
    y2, zf2 = cp.signal.sosfilt([[0.0, 1.0, 0.0, 1.0, 0.0, 0.0]], x, zi=sos_z)
    tg = cp.Target()
    tg.compile([y, y2], names={"y": y, "y2": y2}, updates={z[0]: zf[0], sos_z[0][0]: zf2[0][0]})
    got = []
    for v in (1.0, 2.0, 3.0):
        tg.write_value(x, v)
        tg.run()
        got.append((tg.read_value("y"), tg.read_value("y2")))
    assert got == [(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)]


def test_cp_array_block_in_cp_array_out() -> None:
    sos = ss.butter(2, 0.3, output="sos")
    data = RNG.normal(size=6).astype(f32)
    xs = [cp.value(0.0) for _ in range(6)]
    y = cp.signal.sosfilt(sos, cp.array(xs))
    assert isinstance(y, cp.array) and y.shape == (6,)
    want, _ = sos_reference32(sos, data, np.zeros((1, 2)))
    assert run_block(y, xs, data) == want.tolist()
