"""Property tests for copapy.signal, copapy.control and cp.interp: random coefficients,
states, tables and inputs (any finite float32, unstable filters included, as SciPy accepts
them), compiled, and compared bit for bit with the NumPy float32 loops of the documented
order (test_signal.py, test_control.py, test_interp.py). Non-finite intermediates are
compared as NaN/inf like the reference produces them."""

from __future__ import annotations

import os

import copapy as cp
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_control import ss_reference32
from test_interp import interp_reference32
from test_signal import lfilter_reference32, sos_reference32

_FUZZ = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
_EMULATED = bool(os.environ.get("COPAPY_TEST_TARGET"))


def _settings(native: int) -> settings:
    """``native`` examples on this machine, a fifth of them (at least 4) in the emulator."""
    n = native * 20 if _FUZZ else max(4, native // 5) if _EMULATED else native
    return settings(max_examples=n, deadline=None, derandomize=not _FUZZ, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


small = st.floats(-4.0, 4.0, width=32, allow_subnormal=False)


def same(got: list[float], want: list[float]) -> bool:
    return all((np.isnan(g) and np.isnan(w)) or g == w for g, w in zip(got, want, strict=True))


@_settings(25)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(
    st.lists(st.lists(small, min_size=5, max_size=5), min_size=n, max_size=n),
    st.lists(st.lists(small, min_size=2, max_size=2), min_size=n, max_size=n),
    st.lists(small, min_size=1, max_size=12))))
def test_sosfilt_any_coefficients(case: tuple[list[list[float]], list[list[float]], list[float]]) -> None:
    rows, zi, data = case
    sos = np.array([[r[0], r[1], r[2], 1.0, r[3], r[4]] for r in rows])
    xs = [cp.value(0.0) for _ in data]
    y, zf = cp.signal.sosfilt(sos, xs, zi=zi)
    outs = [y[i] for i in range(len(data))] + [e for row in zf for e in row]
    tg = cp.Target()
    tg.compile([*outs, *xs])  # the inputs too: zero coefficients may leave them unused
    tg.write_value(xs, data)
    with np.errstate(all="ignore"):
        want_y, want_z = sos_reference32(sos, np.array(data), np.array(zi))
        tg.run()
    assert same([float(v) for v in tg.read_value(outs)], [*want_y.tolist(), *want_z.ravel().tolist()])


@_settings(25)
@given(st.integers(1, 5).flatmap(lambda k: st.tuples(
    st.lists(small, min_size=k + 1, max_size=k + 1), st.lists(small, min_size=k, max_size=k),
    st.lists(small, min_size=k, max_size=k), st.lists(small, min_size=1, max_size=8))))
def test_lfilter_any_coefficients_as_run_time_inputs(case: tuple[list[float], ...]) -> None:
    b, a_tail, zi, data = case
    a = [1.0, *a_tail]
    bv, av = [cp.value(0.0) for _ in b], [cp.value(0.0) for _ in a_tail]
    xs = [cp.value(0.0) for _ in data]
    y, zf = cp.signal.lfilter(bv, [1.0, *av], xs, zi=zi)
    outs = [y[i] for i in range(len(data))] + list(zf)
    tg = cp.Target()
    tg.compile(outs)
    tg.write_value([*bv, *av, *xs], [*b, *a_tail, *data])
    with np.errstate(all="ignore"):
        want_y, want_z = lfilter_reference32(np.array(b), np.array(a), np.array(data), np.array(zi))
        tg.run()
    assert same([float(v) for v in tg.read_value(outs)], [*want_y.tolist(), *want_z.tolist()])


@_settings(20)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(
    st.lists(small, min_size=n * n, max_size=n * n), st.lists(small, min_size=n, max_size=n),
    st.lists(small, min_size=n, max_size=n), st.lists(small, min_size=n, max_size=n),
    st.lists(small, min_size=1, max_size=4))))
def test_ss_step_any_matrices(case: tuple[list[float], ...]) -> None:
    a_flat, b_col, c_row, x0, us = case
    n = len(x0)
    a = np.array(a_flat).reshape(n, n)
    b, c, d = np.array(b_col).reshape(n, 1), np.array(c_row).reshape(1, n), np.array([[0.5]])
    prog = cp.control.step_program((a, b, c, d), x0, target=cp.Target())
    with np.errstate(all="ignore"):
        got = [prog.step([u]) for u in us]
        want, _ = ss_reference32(a, b, c, d, np.array(x0), np.array(us).reshape(-1, 1))
    assert same([g[0] for g in got], want[:, 0].tolist())


@_settings(25)
@given(st.lists(st.floats(-100, 100, width=32), min_size=2, max_size=8, unique=True),
       st.lists(small, min_size=8, max_size=8),
       st.lists(st.floats(-200, 200, width=32), min_size=1, max_size=6))
def test_interp_any_table(xp: list[float], fp_all: list[float], xs: list[float]) -> None:
    xp = sorted(xp)
    fp = fp_all[:len(xp)]
    x = [cp.value(0.0) for _ in xs]
    out = cp.interp(cp.vector(x), xp, fp)
    tg = cp.Target()
    tg.compile(out)
    tg.write_value(x, xs)
    tg.run()
    got = [float(v) for v in tg.read_value(out)]
    with np.errstate(all="ignore"):
        want = [interp_reference32(v, xp, fp) for v in xs]
    assert same(got, want)
