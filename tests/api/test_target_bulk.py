"""`Target.write_value` / `read_value` with NumPy arrays and lists of names, in bulk.

A list of scalar values (or of names) written from a 1-D NumPy array takes the bulk path
(crates/copapy-python/src/target/bulk.rs); the same numbers as a Python list take the
element-by-element path. Both must store the same bits, and those bits must be NumPy's:
`np.float32(element)` for a float variable, the integer for an int variable, 0/1 for a bool.
Every dtype copapy accepts, any stride and byte order; a wrong dtype, length or value is
the same clear error either way, and a failed write changes nothing.
"""

from __future__ import annotations

import os
from typing import Any

import copapy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

EXAMPLES = 15 if os.environ.get("COPAPY_TEST_TARGET") else 150
DTYPES = ["float16", "float32", "float64", "<f4", ">f4", ">f8", "int8", "int16", "int32", "int64",
          ">i4", "uint8", "uint16", "uint32", "uint64", "bool"]
KINDS = {"float": 0.5, "int": 7, "bool": True}


def program(kinds: list[str]) -> tuple[Any, list[Any], list[Any]]:
    """A compiled program with one input per kind and an output reading each."""
    values = [cp.value(KINDS[k]) for k in kinds]
    outputs = [v * 2 for v in values]
    tg = cp.Target()
    tg.compile(values + outputs, names={f"v{i}": v for i, v in enumerate(values)})
    return tg, values, outputs


def reference_bits(kind: str, x: Any) -> int:
    """What NumPy gives for the element converted to the variable's type, as int32 bits."""
    if kind == "float":
        return int(np.array(np.float32(x)).view(np.int32))
    return int(np.int32(int(x)))


def stored(tg: Any, values: list[Any]) -> list[int]:
    out = []
    for v, got in zip(values, tg.read_value(values), strict=True):
        out.append(int(np.array(got, np.float32).view(np.int32)) if v.dtype == "float" else int(got))
    return out


def outcome(fn: Any) -> Any:
    try:
        fn()
    except (TypeError, ValueError, OverflowError) as e:
        return type(e), str(e)
    return None


arrays = st.sampled_from(DTYPES).flatmap(lambda dt: st.integers(1, 8).flatmap(
    lambda n: st.tuples(hnp.arrays(np.dtype(dt), 2 * n), st.sampled_from(["c", "step", "rev"]),
                        st.lists(st.sampled_from(list(KINDS)), min_size=n, max_size=n))))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(arrays)
def test_bulk_write_stores_what_the_list_path_and_numpy_give(case: Any) -> None:
    data, layout, kinds = case
    n = len(kinds)
    x = {"c": data[:n], "step": data[::2], "rev": data[::-1][:n]}[layout]
    assert x.shape == (n,)
    fast_tg, fast_vals, _ = program(kinds)
    slow_tg, slow_vals, _ = program(kinds)
    before = stored(fast_tg, fast_vals)
    fast = outcome(lambda: fast_tg.write_value(fast_vals, x))
    slow = outcome(lambda: slow_tg.write_value(slow_vals, x.tolist()))
    if slow is not None:
        assert fast is not None and fast[0] is slow[0], (x, kinds, fast, slow)
        assert stored(fast_tg, fast_vals) == before  # a failed write changes nothing
        return
    assert fast is None, (x, kinds, fast)
    got = stored(fast_tg, fast_vals)
    assert got == stored(slow_tg, slow_vals)
    with np.errstate(all="ignore"):
        assert got == [reference_bits(k, e) for k, e in zip(kinds, x, strict=True)]
    # the same through a list of names
    named_tg, named_vals, _ = program(kinds)
    named_tg.write_value([f"v{i}" for i in range(n)], x)
    assert stored(named_tg, named_vals) == got


def test_bulk_write_then_read_matches_numpy_float32() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal(64)
    tg, values, outputs = program(["float"] * 64)
    tg.write_value(values, x)
    tg.run()
    want = x.astype(np.float32)
    twice = want * np.float32(2)
    assert np.array_equal(np.array(tg.read_value(outputs), np.float32).view(np.int32), twice.view(np.int32))
    assert tg.read_value(outputs) == [tg.read_value(o) for o in outputs]
    assert tg.read_value([f"v{i}" for i in range(64)]) == want.tolist()
    assert tg.read_value(tuple(values)) == want.tolist()


@pytest.mark.parametrize("bad, error, words", [
    (np.zeros(3, np.complex64), TypeError, "complex64"),
    (np.array(["a", "b", "c"]), TypeError, "<U1"),
    (np.zeros(3, "datetime64[s]"), TypeError, "datetime64"),
    (np.zeros(4, np.float32), ValueError, "4 numbers for 3 values"),
    (np.zeros((3, 1), np.float32), TypeError, "cannot write ndarray to a float value"),
    (np.array([1.0, 2.0, 3.5]), TypeError, "float 3.5 to an int"),
])
def test_wrong_arrays_are_clear_errors_and_change_nothing(bad: Any, error: Any, words: str) -> None:
    tg, values, _ = program(["float", "float", "int"])
    before = stored(tg, values)
    with pytest.raises(error, match=words):
        tg.write_value(values, bad)
    assert stored(tg, values) == before


def test_outputs_and_unknown_names_are_refused_as_before() -> None:
    tg, values, outputs = program(["float", "float"])
    tg.compile(outputs, names={"a": values[0], "b": values[1]})
    with pytest.raises(ValueError, match="only input variables"):
        tg.write_value(outputs, np.zeros(2, np.float32))
    with pytest.raises(ValueError, match='no variable named "c"'):
        tg.write_value(["a", "c"], np.zeros(2, np.float32))
    with pytest.raises(RuntimeError, match="not run yet"):
        tg.read_value(outputs)
    tg.write_value(["a", "b"], np.array([1.5, 2.5], np.float32))
    assert tg.read_value(["a", "b"]) == [1.5, 2.5]
