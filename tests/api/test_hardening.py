"""Hostile and unusual Python input: every case gives the right result or a clear Python
exception (never a crash, a hang, a Rust panic or a silently wrong number).

References are NumPy float32/int32 or plain Python, never copapy itself."""

from __future__ import annotations

import copy
import gc
import math
import threading
from typing import Any

import copapy as cp
import numpy as np
import pytest
from copapy._core import Container

f32 = np.float32


def deep_list(depth: int) -> list[Any]:
    root: list[Any] = []
    cur = root
    for _ in range(depth):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    return root


def self_list() -> list[Any]:
    lst: list[Any] = []
    lst.append(lst)
    return lst


def compiled(*vals: Any) -> cp.Target:
    tg = cp.Target()
    tg.compile(*vals)
    return tg


# --- structures that would overflow the native stack ---------------------------------------


@pytest.mark.parametrize("make,err,msg", [
    (lambda: deep_list(40_000), RecursionError, "nested more than"),
    (self_list, ValueError, "contains itself"),
])
def test_compile_read_and_write_refuse_cycles_and_deep_nesting(make: Any, err: Any, msg: str) -> None:
    a = cp.value(1.0)
    tg = compiled(a + 1.0)
    bad = make()
    with pytest.raises(err, match=msg):
        tg.compile(bad)
    with pytest.raises(err, match=msg):
        tg.read_value(bad)
    with pytest.raises(err, match=msg):
        tg.write_value(bad, bad)

    @cp.jit
    def f(x: Any) -> Any:
        return x

    with pytest.raises(err, match=msg):
        f(bad)


def test_a_container_whose_values_hold_itself_is_a_cycle() -> None:
    class Loop:
        def __copapy__(self) -> Container:
            return Container.sequence([self])

    tg = compiled(cp.value(1.0))
    with pytest.raises(ValueError, match="contains itself"):
        cp.Target().compile(Loop())
    with pytest.raises(ValueError, match="contains itself"):
        tg.read_value(Loop())
    with pytest.raises(TypeError, match="element 0 of this Loop is the constant"):
        tg.write_value(Loop(), [1.0])  # a container's leaves are written as scalars

    class OnlyValues:  # duck typing is not the protocol: no __copapy__, not a container
        @property
        def values(self) -> Any:
            return [self]

    with pytest.raises(TypeError, match="cannot compile a OnlyValues"):
        cp.Target().compile(OnlyValues())


def test_jit_results_that_contain_themselves_or_nest_deeply_are_errors() -> None:
    @cp.jit
    def cyclic(x: Any) -> Any:
        r: list[Any] = [x]
        r.append(r)
        return r

    @cp.jit
    def deep(x: Any) -> Any:
        d = deep_list(1000)
        d.append(x)
        return d

    with pytest.raises(ValueError, match="contains itself"):
        cyclic(1.0)
    with pytest.raises(RecursionError, match="nested more than"):
        deep(1.0)


def test_shared_but_acyclic_structures_are_fine() -> None:
    a = cp.value(2.0)
    shared = [a, a]
    tg = compiled([shared, shared], a * 3.0)
    tg.run()
    assert tg.read_value([shared, shared]) == [[2.0, 2.0], [2.0, 2.0]]
    nested = deep_list(150)
    tg.compile(nested, a)  # deep, but within the documented 200 levels


# --- write_value ----------------------------------------------------------------------------


def test_write_value_is_all_or_nothing() -> None:
    a, i = cp.value(1.0), cp.value(2)
    v = cp.vector([cp.value(0.5), cp.value(0.25)])
    tg = compiled(a, i, v)
    with pytest.raises(TypeError, match="float 2.5 to an int"):
        tg.write_value([a, i], [5.0, 2.5])
    with pytest.raises(ValueError, match="shape"):
        tg.write_value([a, v], [7.0, [1.0, 2.0, 3.0]])  # the container's hook fails second
    with pytest.raises(TypeError, match="expected a number"):
        tg.write_value([v, a], [[8.0, 9.0], "x"])  # the hook succeeds, then a later item fails
    assert tg.read_value([a, i]) == [1.0, 2]
    assert tg.read_value(v).tolist() == [0.5, 0.25]
    tg.write_value([v, a, i], [[8.0, 9.0], 3.0, 4])
    assert tg.read_value([a, i]) == [3.0, 4]
    assert tg.read_value(v).tolist() == [8.0, 9.0]


@pytest.mark.parametrize("data", [{1: 2, 3: 4}, {1.0, 2.0}, frozenset({1.0, 2.0}), "ab", b"ab"])
def test_writing_an_unordered_container_or_text_is_a_type_error(data: Any) -> None:
    a, b = cp.value(1.0), cp.value(2.0)
    v = cp.vector([cp.value(0.0), cp.value(0.0)])
    tg = compiled(a, b, v)
    with pytest.raises(TypeError):
        tg.write_value([a, b], data)
    with pytest.raises(TypeError):
        tg.write_value(v, data)
    with pytest.raises(TypeError):
        tg.write_value({a, b}, [1.0, 2.0])


# --- exact conversions ------------------------------------------------------------------------


def test_numbers_convert_exactly_to_their_variable_type() -> None:
    cases = [
        (cp.value(123456789.0, "int"), 123456789),
        (cp.value(-2.9, "int"), -2),
        (cp.value(2**31 - 1.0, "int"), 2**31 - 1),
        (cp.value(np.float64(16777217.0), "int"), 16777217),
        (cp.value(np.int64(16777217), "float"), float(f32(16777217))),
        (cp.value(2**53 + 2**29 + 1, "float"), float(f32(2**53 + 2**30))),  # rounded once, up
        (cp.value(np.uint64(2**64 - 1), "float"), float(f32(2**64))),
        (cp.value(np.float32(0.1)), float(f32(0.1))),
        (cp.value(np.bool_(True)), True),
        (cp.value(np.int8(-5)), -5),
        (cp.value(2.5, "bool"), True),
    ]
    tg = compiled([c[0] for c in cases])
    got = tg.read_value([c[0] for c in cases])
    assert got == [c[1] for c in cases]
    assert [type(g) for g in got] == [type(c[1]) for c in cases]


def test_writes_round_ints_to_float_once_and_refuse_out_of_range_ints() -> None:
    x, i = cp.value(0.0), cp.value(0)
    tg = compiled(x, i)
    tg.write_value(x, 2**53 + 2**29 + 1)
    assert tg.read_value(x) == float(f32(2**53 + 2**30))
    tg.write_value(x, 10**400)
    assert tg.read_value(x) == float("inf")
    tg.write_value(i, np.int64(-7))
    assert tg.read_value(i) == -7
    with pytest.raises(OverflowError, match="int32"):
        tg.write_value(i, np.int64(2**31))
    with pytest.raises(OverflowError, match="int32"):
        cp.value(2**200)
    with pytest.raises(ValueError, match="int32 range"):
        cp.value(2.0**31, "int")
    with pytest.raises(TypeError, match="complex"):
        cp.value(np.complex64(1 + 2j))


def test_exceptions_from_user_numbers_propagate_unchanged() -> None:
    class BadIndex:
        def __index__(self) -> int:
            raise KeyError("from __index__")

    class BadFloat:
        def __float__(self) -> float:
            raise LookupError("from __float__")

    with pytest.raises(KeyError, match="from __index__"):
        cp.value(BadIndex())
    with pytest.raises(LookupError, match="from __float__"):
        cp.value(BadFloat())
    x = cp.value(1.0)
    tg = compiled(x)
    with pytest.raises(KeyError, match="from __index__"):
        tg.write_value(x, BadIndex())
    with pytest.raises(KeyError, match="from __index__"):
        _ = x + BadIndex()


def test_exceptions_from_user_containers_propagate_unchanged() -> None:
    class BadIter:
        def __iter__(self) -> Any:
            raise KeyError("from __iter__")

    class BadValues:
        def __copapy__(self) -> Container:
            raise LookupError("from values")

    a = cp.value(1.0)
    tg = compiled(a + 1.0)
    with pytest.raises(KeyError, match="from __iter__"):
        tg.compile(BadIter())
    with pytest.raises(LookupError, match="from values"):
        tg.compile(BadValues())
    with pytest.raises(KeyError, match="from __iter__"):
        tg.read_value(BadIter())
    with pytest.raises(KeyError, match="from __iter__"):
        tg.write_value([a], BadIter())
    with pytest.raises(KeyError, match="from __iter__"):
        tg.write_value(BadIter(), [1.0])
    with pytest.raises(TypeError, match="cannot compile a object"):
        tg.compile(object())


def test_numpy_integer_exponents_are_int_powers() -> None:
    b = cp.value(3)
    exprs = [b ** np.int64(19), b ** np.int32(2), b**np.uint8(3), b ** True, cp.value(1.5) ** np.int64(3)]
    assert [e.dtype for e in exprs] == ["int", "int", "int", "int", "float"]
    tg = compiled(exprs)
    tg.run()
    want = [int(np.int32(3) ** np.int32(19)), 9, 27, 3, float(f32(1.5) * f32(1.5) * f32(1.5))]
    assert tg.read_value(exprs) == want


def test_integer_exponents_beyond_int32_do_not_become_float() -> None:
    b = cp.value(3)
    e = b ** (2**31 + 1)
    assert e.dtype == "int"
    tg = compiled(e)
    tg.run()
    wrapped = pow(3, 2**31 + 1, 2**32)  # int32 arithmetic wraps modulo 2**32
    assert tg.read_value(e) == wrapped - (2**32 if wrapped >= 2**31 else 0)
    with pytest.raises(ValueError, match="too large"):
        _ = b ** (2**40)
    with pytest.raises(ValueError, match="too large"):
        _ = b ** (2**200)


def test_huge_integer_exponents_of_floats_keep_the_sign_of_odd_powers() -> None:
    """|n| >= 2**32: the result is 0, ±1 or ±inf, its sign from the parity of n (NumPy in
    float64, where these n are exact, is the reference)."""
    cases = [(x, n) for x in (-1.5, -0.5, -1.0, 1.0, 2.0, 0.25, -0.0, math.inf, -math.inf)
             for n in (2**33 + 1, 2**33, -(2**33) - 1, -(2**34), 2**52 + 1, 2**100)]
    exprs = [cp.value(x) ** n for x, n in cases]
    assert all(e.dtype == "float" for e in exprs)
    tg = compiled(exprs)
    tg.run()
    with np.errstate(all="ignore"):
        want = [f32(np.power(np.float64(x), np.float64(n))) for x, n in cases]
    got = tg.read_value(exprs)
    bad = [(c, g, w) for c, g, w in zip(cases, got, want, strict=True)
           if np.array(g, dtype=f32).view(np.uint32) != np.array(w, dtype=f32).view(np.uint32)]
    assert not bad, bad


# --- arange ---------------------------------------------------------------------------------


def test_arange_length_is_numpys_and_absurd_lengths_are_refused() -> None:
    for args in [(2.0**53, 2.0**53 + 4, 1.0), (0.0, 1.0, 0.1), (5, 0, -2), (0.5, 3), (3,), (0, 10**6, 10**5)]:
        assert cp.arange(*args).shape == np.arange(*args).shape, args
    with pytest.raises(ValueError, match="finite"):
        cp.arange(0.0, float("inf"))
    with pytest.raises(ValueError, match="finite"):
        cp.arange(0.0, 1.0, float("nan"))
    with pytest.raises(ValueError, match="at most"):
        cp.arange(0, 10**12)


# --- jit and NumPy arrays ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["<f8", ">f8", "<f4", ">f4", "<f2", ">f2", "<i8", ">i8", "<i4", ">i4",
                                   "i2", "u1", ">u2", "<u4", "u8", "?"])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed", "readonly"])
def test_jit_takes_numpy_arrays_of_any_dtype_byte_order_and_layout(dtype: str, layout: str) -> None:
    @cp.jit
    def double(v: Any) -> Any:
        return v * 2

    base = np.arange(12).astype(dtype) if dtype != "?" else (np.arange(12) % 3 == 0)
    arr = {"contiguous": base[:4], "strided": base[::3], "reversed": base[::-3],
           "readonly": base[:4].copy()}[layout]
    if layout == "readonly":
        arr.setflags(write=False)
    got = double(arr)  # called with a NumPy array: the vector comes back as one
    if dtype == "?":
        want = arr.astype(np.int32) * np.int32(2)
    elif arr.dtype.kind == "f":
        want = arr.astype(np.float32) * f32(2)
    else:
        want = arr.astype(np.int32) * np.int32(2)
    assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
    assert got.tolist() == want.tolist()


def test_jit_never_reuses_a_specialisation_for_another_dtype_or_byte_order() -> None:
    @cp.jit
    def first(v: Any) -> Any:
        return v[0] + 0.5

    values = np.array([3, 4])
    results = []
    for dtype in ["<i4", ">i4", "<i8", "<f8", ">f8", "<f4", "u1"]:
        results.append(first(values.astype(dtype)))
    assert results == [3.5] * 7
    assert first.specialisations == 7
    assert first(np.array([1.25, 2.0], dtype=">f8")) == 1.75


def test_jit_with_2d_fortran_and_0d_arrays_and_numpy_scalars() -> None:
    @cp.jit
    def f(m: Any) -> Any:
        return m * 2.0

    m = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    got = f(m)
    want = m.astype(np.float32) * f32(2)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.tolist() == want.tolist()
    assert f(np.array(2.5)) == 5.0
    assert f(np.float32(1.25)) == 2.5
    assert f(np.int16(3)) == 6.0


@pytest.mark.parametrize("arr,msg", [
    (np.array([1 + 2j]), "complex"),
    (np.array([1.0], dtype=np.longdouble), "longdouble|float128"),
    (np.array(["a"]), "<U1"),
    (np.zeros(2, dtype=[("a", "f4")]), "dtype"),
    (np.array([object()]), "object"),
])
def test_jit_refuses_arrays_it_cannot_compute_with_and_names_the_dtype(arr: Any, msg: str) -> None:
    @cp.jit
    def f(v: Any) -> Any:
        return v

    with pytest.raises(TypeError, match=msg):
        f(arr)


def test_jit_int_array_elements_beyond_int32_are_refused() -> None:
    @cp.jit
    def f(v: Any) -> Any:
        return v + 1

    got = f(np.array([1, 2], dtype=np.int64))
    assert got.dtype == np.int32 and got.tolist() == [2, 3]
    with pytest.raises(OverflowError, match="int32"):
        f(np.array([1, 2**40], dtype=np.int64))


# --- jit cache, re-entrancy and threads ------------------------------------------------------------


def test_jit_cache_is_bounded_and_least_recently_used_goes_first() -> None:
    traces: list[int] = []

    @cp.jit(cache_size=3)
    def f(xs: Any) -> Any:
        traces.append(len(xs))
        return sum(xs) * 1.0

    for n in [1, 2, 3, 1, 4]:  # 4 evicts 2, the least recently used
        assert f([1.0] * n) == float(n)
    assert f.specialisations == 3 and f.cache_size == 3
    assert f([1.0]) == 1.0 and f([1.0] * 3) == 3.0  # still cached
    assert traces == [1, 2, 3, 4]
    assert f([1.0, 1.0]) == 2.0  # compiled again
    assert traces == [1, 2, 3, 4, 2]
    with pytest.raises(ValueError, match="cache_size"):
        cp.jit(lambda x: x, cache_size=0)


def test_jit_calling_jit_and_itself_with_traced_values() -> None:
    @cp.jit
    def sq(x: Any) -> Any:
        return x * x

    @cp.jit
    def poly(x: Any) -> Any:
        return sq(x) + sq(2.0) + 1.0  # sq(x) traced into poly, sq(2.0) compiled and run

    assert poly(3.0) == float(f32(9) + f32(4) + f32(1))

    @cp.jit
    def forever(x: Any) -> Any:
        return forever(x)

    with pytest.raises(RecursionError):
        forever(1.0)


def test_a_second_thread_calls_a_jit_function_during_its_first_trace() -> None:
    started, release = threading.Event(), threading.Event()

    @cp.jit
    def slow(x: Any) -> Any:
        started.set()
        release.wait(5)
        return x * 2.0

    out: dict[str, Any] = {}

    def first() -> None:
        out["first"] = slow(1.0)

    t = threading.Thread(target=first)
    t.start()
    started.wait(5)
    threading.Timer(0.05, release.set).start()
    try:
        out["second"] = slow(3.0)
    except Exception as e:  # a clear Python exception is allowed, a PanicException is not
        out["second"] = e
    t.join()
    assert out["first"] == 2.0
    assert out["second"] == 6.0 or isinstance(out["second"], RuntimeError)


def test_threads_calling_one_jit_function() -> None:
    @cp.jit
    def h(x: Any) -> Any:
        return x + 1

    errors: list[BaseException] = []

    def work() -> None:
        try:
            for k in range(200):
                assert h(float(k)) == k + 1.0
                assert h(k) == k + 1
        except BaseException as e:  # a PanicException (a BaseException) must be seen too
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_generator_passed_to_compile_may_use_the_target() -> None:
    a, b = cp.value(1.0), cp.value(2.0)
    tg = compiled(a)

    def values() -> Any:
        yield a + 1.0
        tg.write_value(a, 5.0)  # the previous program is still loaded while compile walks
        yield b * 2.0

    tg.compile(values())
    tg.run()
    assert tg.read_value(b) == 2.0


def test_jit_on_a_method_binds_self() -> None:
    class Scale:
        def __init__(self, k: float) -> None:
            self.k = k

        @cp.jit
        def apply(self, x: Any) -> Any:
            return x * self.k

    s2, s3 = Scale(2.0), Scale(3.0)
    assert s2.apply(1.5) == 3.0
    assert s3.apply(1.5) == 4.5  # another object: another specialisation
    assert s2.apply(2.5) == 5.0
    assert Scale.apply(s3, 2.0) == 6.0


def test_a_jit_function_holding_objects_is_collected() -> None:
    import weakref

    class Holder:
        pass

    @cp.jit
    def f(h: Any, x: Any) -> Any:
        return x * 2.0

    h = Holder()
    assert f(h, 1.0) == 2.0
    ref = weakref.ref(h)
    del h, f
    gc.collect()
    assert ref() is None


# --- copying and NumPy on the left --------------------------------------------------------------


def test_values_and_containers_copy() -> None:
    a = cp.value(1.5)
    v = cp.vector([a, 2.0])
    m = cp.matrix([[a, 1.0], [2.0, a]])
    assert copy.copy(a) is a and copy.deepcopy(a) is a
    for c in (v, m):
        for dup in (copy.copy(c), copy.deepcopy(c)):
            assert type(dup) is type(c) and dup.shape == c.shape
            assert all(x is y for x, y in zip(dup.values, c.values, strict=True))
    q = copy.deepcopy(cp.quaternion(1.0, 0.0, 0.0, 0.0))
    assert list(q) == [1.0, 0.0, 0.0, 0.0]


def test_numpy_on_the_left_of_a_container_or_value() -> None:
    a = cp.value(1.5)
    v = cp.vector([a, a])
    r = np.array([1.0, 2.0]) + v
    assert isinstance(r, cp.vector)
    s = np.float32(2.0) * a
    tg = compiled(r, s)
    tg.run()
    assert tg.read_value(r).tolist() == [2.5, 3.5]
    assert tg.read_value(s) == 3.0
