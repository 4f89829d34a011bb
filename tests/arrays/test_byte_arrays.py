"""``cp.array(..., dtype='byte')``: 0..255 numbers stored one byte per element in data
memory, widened to int32 by one loop stencil when an operation reads them and narrowed
(saturating) when an array is stored as bytes. Checked against NumPy uint8 / int32 on
every target (scripts/test.sh runs the module with COPAPY_TEST_TARGET).
"""

from __future__ import annotations

import math

import copapy as cp
import numpy as np
import pytest
from helpers import run

BYTES = [0, 1, 2, 127, 128, 200, 254, 255, 17]


def test_a_byte_array_takes_one_byte_per_element_of_data_memory() -> None:
    n = 4000
    sizes = {}
    for dtype in ("byte", "int"):
        a = cp.array([k % 256 for k in range(n)], dtype)
        tg = cp.Target()
        tg.compile(a)
        sizes[dtype] = tg.stats()[2]
    # the int array needs 4n bytes; the byte array n (plus the same small remainder)
    assert sizes["int"] - sizes["byte"] == 3 * n


def test_byte_arrays_read_and_write_as_numbers_and_uint8() -> None:
    a = cp.array([BYTES, BYTES[::-1]], "byte")
    tg = run(a)
    assert tg.read_value(a) == [BYTES, BYTES[::-1]]
    got = a.to_numpy(tg)
    assert got.dtype == np.uint8 and got.tolist() == [BYTES, BYTES[::-1]]
    new = np.array([BYTES[::-1], BYTES], dtype=np.uint8)
    tg.write_value(a, new)
    assert tg.read_value(a) == new.tolist()
    tg.write_value(a, [[9] * len(BYTES), [250] * len(BYTES)])
    assert a.to_numpy(tg).tolist() == [[9] * len(BYTES), [250] * len(BYTES)]


def test_writing_out_of_range_data_is_an_error_that_changes_nothing() -> None:
    a = cp.array([1, 2, 3], "byte")
    tg = run(a)
    with pytest.raises(ValueError, match="does not fit a byte array"):
        tg.write_value(a, [1, 256, 3])
    with pytest.raises(ValueError, match="does not fit a byte array"):
        tg.write_value(a, np.array([-1, 0, 0]))
    assert tg.read_value(a) == [1, 2, 3]


def test_operations_read_byte_arrays_as_ints() -> None:
    xs = np.array(BYTES, dtype=np.uint8)
    a = cp.array(BYTES, "byte")
    i = cp.value(-2)
    outs = [a + 1, a * 2.5, a - 300, a > 127, a // 3]
    total, first, picked = a.sum(), a[3], a[i]
    sliced = a[1:7:2]
    tg = run(*outs, total, first, picked, sliced)
    x32 = xs.astype(np.int32)
    want = [x32 + 1, (x32.astype(np.float32) * np.float32(2.5)), x32 - 300, x32 > 127, x32 // 3]
    for out, ref in zip(outs, want, strict=True):
        assert tg.read_value(out) == ref.tolist()
    assert tg.read_value(total) == int(x32.sum())
    assert tg.read_value(first) == BYTES[3]
    assert tg.read_value(picked) == BYTES[-2]
    assert tg.read_value(sliced) == BYTES[1:7:2]


def test_to_bytes_stores_saturated_bytes_and_casts_read_them_back() -> None:
    fs = [0.0, -0.0, 1.9, -0.5, 255.5, 256.0, -1e9, 1e9, math.nan, math.inf, -math.inf, 127.99]
    ints = [-1, 0, 255, 256, -(2**31), 2**31 - 1, 100]
    fb, ib = cp.to_bytes(cp.array(fs)), cp.to_bytes(cp.array(ints))
    assert fb.dtype == ib.dtype == "byte"
    back_f, back_i = cp.to_float(fb), cp.to_int(ib)
    tg = run(fb, ib, back_f, back_i)
    f64 = np.array(fs, dtype=np.float64)
    ref_f = np.where(np.isnan(f64), 0, np.clip(np.trunc(np.nan_to_num(f64)), 0, 255)).astype(int).tolist()
    ref_i = np.clip(np.array(ints, dtype=np.int64), 0, 255).tolist()
    assert tg.read_value(fb) == ref_f and fb.to_numpy(tg).dtype == np.uint8
    assert tg.read_value(ib) == ref_i
    assert tg.read_value(back_f) == [float(x) for x in ref_f]
    assert tg.read_value(back_i) == ref_i


def test_a_byte_array_of_traced_values_saturates_on_store() -> None:
    vals = [cp.value(300), cp.value(-5), cp.value(7), cp.value(255)]
    a = cp.array(vals, "byte")
    tg = run(a)
    assert tg.read_value(a) == [255, 0, 7, 255]
    tg.write_value(vals[2], 1000)
    tg.run()
    assert tg.read_value(a) == [255, 0, 255, 255]
