"""A typed tour of the public API, checked with ``mypy --strict tests/typed_api_check.py``.

``assert_type`` pins the type mypy infers for each expression: ``value[int]`` and
``value[float]`` are told apart, containers carry their element type, functions map
values to values and numbers to numbers. Lines ending in ``# type: ignore[code]`` are
expected errors: under ``--strict`` an ignore that is not needed is itself an error, so each
one asserts that mypy rejects the line.

Running the file (``python tests/typed_api_check.py``) also executes every line, so the types
claimed here are checked against what the objects really are.
"""

from __future__ import annotations

from typing import Any, assert_type

import copapy as cp
from copapy import filters

# --- scalars: value[int] and value[float] ----------------------------------------------------


def scalars() -> None:
    i = cp.value(3)
    f = cp.value(0.5)
    b = cp.value(True)
    assert_type(i, cp.value[int])
    assert_type(f, cp.value[float])
    assert_type(b, cp.value[int])  # bools compute as ints

    assert_type(i + 1, cp.value[int])
    assert_type(1 + i, cp.value[int])
    assert_type(i * i, cp.value[int])
    assert_type(i // 2, cp.value[int])
    assert_type(i % 2, cp.value[int])
    assert_type(i**2, cp.value[int])
    assert_type(-i, cp.value[int])
    assert_type(i << 2, cp.value[int])
    assert_type(i & b, cp.value[int])

    assert_type(i / 2, cp.value[float])  # true division always gives float
    assert_type(i + 0.5, cp.value[float])
    assert_type(i + f, cp.value[float])
    assert_type(f + i, cp.value[float])
    assert_type(2.0 * f, cp.value[float])
    assert_type(f**2, cp.value[float])
    assert_type(abs(f), cp.value[float])

    assert_type(f < i, cp.value[int])
    assert_type(f == 0.5, cp.value[int])

    assert_type(cp.to_int(f), cp.value[int])
    assert_type(cp.to_float(i), cp.value[float])
    assert_type(cp.to_bool(0.5), bool)
    assert_type(cp.to_bytes(2.5), int)

    assert f.dtype == "float" and i.dtype == "int" and b.dtype == "bool"


# --- math functions: values in, values out; numbers in, numbers out ----------------------------


def functions() -> None:
    f = cp.value(0.5)
    i = cp.value(2)

    assert_type(cp.sin(f), cp.value[float])
    assert_type(cp.sqrt(i), cp.value[float])
    assert_type(cp.exp(f), cp.value[float])
    assert_type(cp.atan2(f, 1.0), cp.value[float])
    assert_type(cp.pow(f, 2.0), cp.value[float])
    assert_type(cp.sin(0.5), float)
    assert_type(cp.atan2(1.0, 2.0), float)

    assert_type(cp.minimum(i, 3), cp.value[int])
    assert_type(cp.maximum(f, 0.0), cp.value[float])
    assert_type(cp.clamp(f, 0.0, 1.0), cp.value[float])
    assert_type(cp.abs(i), cp.value[int])
    assert_type(cp.sign(f), cp.value[int])
    assert_type(cp.minimum(2, 3), int)

    assert_type(cp.iif(f > 0, f, 0.0), cp.value[float])
    assert_type(cp.iif(f > 0, i, 0), cp.value[int])
    assert_type(cp.iif(True, 1.5, 2.5), float)

    assert_type(cp.relu(f), cp.value[float])
    assert_type(cp.relu(i), cp.value[int])
    assert_type(cp.relu(-2.0), float)
    assert_type(cp.relu(-2), int)
    assert_type(cp.sigmoid(f), cp.value[float])
    assert_type(cp.sigmoid(i), cp.value[float])
    assert_type(cp.sigmoid(0.0), float)


# --- vectors and matrices ----------------------------------------------------------------------


def containers() -> None:
    vf = cp.vector([cp.value(1.0), cp.value(2.0), cp.value(3.0)])
    vi = cp.vector([cp.value(1), cp.value(2), cp.value(3)])
    constant = cp.vector([1.0, 0.0, 0.0])
    assert_type(constant, cp.vector[float])
    assert_type(vf + constant, cp.vector[float])
    assert_type(vf, cp.vector[float])
    assert_type(vi, cp.vector[int])

    assert_type(vf + 1.0, cp.vector[float])
    assert_type(vi + 1, cp.vector[int])
    assert_type(vi * 2.5, cp.vector[float])
    assert_type(vi / 2, cp.vector[float])
    assert_type(1 + vi, cp.vector[int])
    assert_type(2.5 - vi, cp.vector[float])
    assert_type(vi + [1, 2, 3], cp.vector[int])
    assert_type(vf / vi, cp.vector[float])
    assert_type(vi < 0, cp.vector[int])
    assert_type(-vi, cp.vector[int])
    assert_type(cp.to_float(vi), cp.vector[float])
    assert vf.size == 3 and isinstance(vf.size, int)
    assert_type(vf.size(), int)
    assert_type(vf[0], cp.value[float] | float)
    assert_type(vf[1:], cp.vector[float])
    assert_type(vf @ vf, float | cp.value[float])
    assert_type(vi @ vi, int | cp.value[int])
    assert_type(vf.sum(), float | cp.value[float])
    assert_type(vi.sum(), int | cp.value[int])
    assert_type(vf.cross(vf), cp.vector[float])
    assert_type(vf.magnitude(), float | cp.value[float])
    assert_type(cp.distance(vf, vf), float | cp.value[float])
    assert_type(cp.relu(vf), cp.vector[float])
    assert_type(cp.sigmoid(vi), cp.vector[float])
    assert len(vf) == 3

    # annotated: mypy does not yet infer tensor[float] from nested lists of floats on its own
    m: cp.tensor[float] = cp.matrix([[cp.value(1.0), cp.value(0.0)], [cp.value(0.0), cp.value(2.0)]])
    assert_type(m + 1.0, cp.tensor[float])
    assert_type(m.T, cp.tensor[float])
    assert_type(m + cp.vector([1.0, 2.0]), cp.tensor[float])  # a vector broadcast: a tensor
    assert_type(cp.identity(2) // 2, cp.tensor[int])
    assert_type(m >= 0.0, cp.tensor[int])
    assert_type(cp.to_int(m), cp.tensor[int])
    assert_type(cp.relu(m), cp.tensor[float])
    assert_type(cp.sigmoid(m), cp.tensor[float])
    assert_type(cp.identity(3), cp.tensor[int])  # integer constants, as in Copapy
    assert_type(m @ cp.identity(2), cp.tensor[float])
    assert m.shape == (2, 2)

    # the methods every container has (NdMethods), typed for each kind: argsort gives the
    # container's int kind; reshape of a vector is a tensor (it may gain dimensions)
    assert_type(vf.argsort(), cp.vector[int])
    assert_type(m.flatten().argsort(), cp.tensor[int])
    assert_type(vf.reshape(3, 1), cp.tensor[float])
    assert_type(m.reshape(4), cp.tensor[float])
    assert_type(m.matmul(m), cp.tensor[float])
    assert_type(vi.dot(vi), int | cp.value[int])
    a: cp.array[float] = cp.array([3.0, 1.0, 2.0, 0.0])
    assert_type(a.argsort(), cp.array[int])
    assert_type(a.reshape(2, 2), cp.array[float])


# --- quaternions -------------------------------------------------------------------------------


def quaternions() -> None:
    q = cp.quaternion.from_euler(cp.value(0.1), 0.2, cp.value(0.3))
    assert_type(q, cp.quaternion)
    p = cp.quaternion(1.0, 0.0, 0.0, 0.0)
    r = cp.quaternion([cp.value(1.0), 0.0, 0.0, 0.0])

    assert_type(q @ p, cp.quaternion)
    assert_type(q * 2.0, cp.quaternion)
    assert_type(2 * q, cp.quaternion)
    assert_type(q + r, cp.quaternion)
    assert_type(1.0 - q, cp.quaternion)
    assert_type(q / cp.value(2.0), cp.quaternion)
    assert_type(-q, cp.quaternion)
    assert_type(q.w, cp.value[float] | float)
    assert_type(q[0], cp.value[float] | float)
    assert_type(q[1:], cp.vector[float])
    assert_type(q.norm(), cp.value[float] | float)
    assert_type(q.normalize(), cp.quaternion)
    assert_type(q.conjugate(), cp.quaternion)
    assert_type(q.inverse(), cp.quaternion)
    assert_type(q.rotate_vector(cp.vector([1.0, 0.0, 0.0])), cp.vector[float])
    assert_type(q.toRotationMatrix(), cp.tensor[float])
    assert_type(q.toEulerAngles(), cp.vector[float])
    assert_type(q.toAxisAngle(), tuple[cp.vector[float], cp.value[float] | float])
    assert_type(list(q), list[cp.value[float] | float])
    assert_type(cp.quaternion.identity(), cp.quaternion)


# --- filters -----------------------------------------------------------------------------------


def filter_functions() -> None:
    window = cp.vector([cp.value(float(k)) for k in range(5)])
    assert_type(filters.median(window), cp.value[float] | float)
    assert_type(filters.mean(window), cp.value[float] | float)
    assert_type(filters.argsort(window), cp.vector[int])
    assert_type(filters.median([1.0, 2.0, 3.0]), cp.value[float] | float)
    assert_type(cp.filters.argsort([3, 1, 2]), cp.vector[int])


# --- compiling, running, reading and writing ---------------------------------------------------


def target() -> None:
    i = cp.value(3)
    f = cp.value(0.5)
    total = i * 2
    ratio = f / i
    tg = cp.Target()
    tg.compile(total, ratio)
    tg.run()
    assert_type(tg.read_value(total), int)
    assert_type(tg.read_value(ratio), float)
    tg.write_value(f, 2.0)
    tg.write_value([f, i], [1.0, 7])
    tg.run()
    assert tg.read_value(total) == 14


# --- what mypy must reject (each raises at run time too, so it is never called) ---------------


def rejected() -> None:
    q = cp.quaternion()
    f = cp.value(0.5)
    q * q  # type: ignore[arg-type]  # the Hamilton product is @
    q @ 2.0  # type: ignore[operator]
    cp.value("1.0")  # type: ignore[call-overload]
    f & 1  # type: ignore[operator]


# --- Copapy's names: keywords and the newest API ---------------------------------------------


def copapy_names() -> None:
    a, b = cp.value(0.5), cp.value(2.0)
    assert_type(cp.atan2(x=a, y=b), cp.value[float])
    assert_type(cp.tanh(a), cp.value[float])
    assert_type(cp.tanh(0.5), float)
    assert_type(cp.min(a, b), cp.value[float])
    assert_type(cp.max(1, 2), int)
    assert cp.min([3.0, 1.0]) == 1.0
    assert_type(cp.nn.tanh(a), cp.value[float])
    assert_type(cp.nn.relu(a), cp.value[float])
    assert_type(cp.clamp(a, min_value=0.0, max_value=1.0), cp.value[float])
    assert_type(cp.iif(expression=a > b, true_result=a, false_result=b), cp.value[float])
    assert_type(cp.iif(a > b, cp.value(1), 2), cp.value[int])
    assert_type(cp.grad(x=a * b, y=a), cp.value[float])
    v = cp.vector([a, b])
    assert_type(v.dtype, str)
    assert v.dtype == "float"
    assert cp.vector([1.0, 3.0]).all() is True
    tg = cp.Target()
    tg.compile(a + 1)
    tg.write_value(variables=a, data=1.5)
    tg.run()
    assert_type(tg.read_value(variables=a + 1), float)
    assert tg.read_value(a + 1) == 2.5
    m = cp.array([[2.0, 1.0], [1.0, 3.0]])
    assert_type(cp.solve(m, cp.array([1.0, 2.0])), cp.array[float])
    assert_type(cp.inv(m), cp.array[float])
    assert_type(cp.det(m), cp.value[float])
    t = cp.tensor([[a, 1.0], [1.0, b]])
    assert_type(cp.solve(t, cp.vector([a, b])), cp.vector[float])
    assert_type(cp.inv(t), cp.tensor[float])


def loops() -> None:
    v = cp.vector([cp.value(1.0), cp.value(2.0)])

    def body(i: cp.value[int], c: cp.vector[float]) -> cp.vector[float]:
        return c * 0.5

    assert_type(cp.fori_loop(0, 10, body, v), cp.vector[float])

    def step(c: cp.value[float], x: Any) -> tuple[cp.value[float], cp.value[float]]:
        return c + x, c * 2.0

    last, ys = cp.scan(step, cp.value(0.0), [1.0, 2.0])
    assert_type(last, cp.value[float])
    assert_type(ys, list[cp.value[float]])


def imports() -> None:
    """cp.extern: a value of the declared type; with fills= a tuple (result, filled...)."""
    assert_type(cp.extern("adc_read", 0, returns=float), cp.value[float])
    assert_type(cp.extern("ticks", returns=int), cp.value[int])
    assert_type(cp.extern("pwm_write", 0.5, returns=None), cp.value[int])
    scan = cp.extern("adc_scan", cp.array([0.0, 0.0]), returns=int, fills=0)
    assert_type(scan, tuple[Any, ...])


# --- Copapy-style untyped helper code still passes -------------------------------------------


def moving_average(samples: list[cp.value[float]], weights: list[float]) -> cp.value[float] | float:
    acc: cp.value[float] | float = 0.0
    for s, w in zip(samples, weights, strict=True):
        acc = acc + s * w
    return acc


def untyped_is_fine(x: Any) -> Any:
    return cp.relu(x) + cp.sigmoid(x)


if __name__ == "__main__":
    for check in (scalars, functions, containers, quaternions, filter_functions, target, copapy_names,
                  loops, imports):
        check()
    assert isinstance(moving_average([cp.value(1.0)], [0.5]), cp.value)
    print("typed API: all checks ran")
