"""Every array kernel's instruction count against its bounds, on every target.

The bounds of an array step come from running the step alone with the program's shape
words (python/copapy/_step_count.py, a block-by-block count); the reference here is
the whole program run by unicorn with its instructions counted one at a time
(tests/instruction_count.py), over adversarial element values: NaN, infinities, zeros of
both signs, subnormals, huge values, INT_MIN, -1, 0, and sorted, reverse-sorted and
equal inputs for the sorts. A kernel's count may not depend on the values, so every
count equals the bound (min == max), but for sin/cos/tan over arrays, whose helper has
data-dependent paths: those stay within [min, max].
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from typing import Any

import copapy as cp
import pytest
from helpers import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from instruction_count import counted_run, counted_target
from test_determinism import FLOATS, INTS, TARGETS

# the module checks every target itself (see test_determinism.py)
pytestmark = pytest.mark.skipif(bool(os.environ.get("COPAPY_TEST_TARGET")),
                                reason="covers all seven targets in the native run")


def _grid(xs: list[Any], rows: int, cols: int) -> Any:
    return cp.array(xs[:rows * cols]).reshape(rows, cols)


SPD = [[4.0, 1.0, 0.5], [1.0, 3.0, 1.0], [0.5, 1.0, 2.0]]
# name: (element type, elements needed, the program over them)
KERNELS: dict[str, tuple[type, int, Callable[[list[Any]], Any]]] = {
    "sort_f": (float, 11, lambda xs: cp.array(xs).sort()),
    "argsort_f": (float, 9, lambda xs: cp.array(xs).argsort()),
    "sort_i": (int, 10, lambda xs: cp.array(xs).sort()),
    "argsort_i": (int, 7, lambda xs: cp.array(xs).argsort()),
    "median": (float, 7, lambda xs: cp.filters.median(cp.vector([cp.value(x) for x in xs]))),
    "sum_f": (float, 13, lambda xs: cp.array(xs).sum()),
    "sum_i": (int, 13, lambda xs: cp.array(xs).sum()),
    "min_f": (float, 11, lambda xs: cp.array(xs).min()),
    "max_i": (int, 11, lambda xs: cp.array(xs).max()),
    "dot_f": (float, 9, lambda xs: cp.array(xs).dot(cp.array(xs[::-1]))),
    "rows_min_f": (float, 12, lambda xs: _grid(xs, 3, 4).min(axis=1)),
    "rows_max_i": (int, 12, lambda xs: _grid(xs, 3, 4).max(axis=1)),
    "cols_max_f": (float, 12, lambda xs: _grid(xs, 3, 4).max(axis=0)),
    "sum_axis_f": (float, 12, lambda xs: _grid(xs, 4, 3).sum(axis=1)),
    "matmul_f": (float, 12, lambda xs: _grid(xs, 3, 4) @ _grid(xs[::-1], 4, 3)),
    "matmul_i": (int, 12, lambda xs: _grid(xs, 2, 6) @ _grid(xs, 6, 2)),
    "transpose_slice": (float, 12, lambda xs: _grid(xs, 3, 4).T[::2] * 2.0),
    "gather_index": (float, 12, lambda xs: _grid(xs, 3, 4)[cp.value(-2)] + cp.array(xs)[cp.value(5)]),
    "grad_gather_sort": (float, 8, lambda xs: (lambda x: cp.grad(
        (x.reshape(2, 4)[cp.value(1)] * x[:4]).sum() + (x.sort() * x).sum(), x))(cp.array(xs))),
    "solve": (float, 3, lambda xs: cp.solve(cp.array(SPD), cp.array(xs))),
    "det": (float, 9, lambda xs: cp.det(_grid(xs, 3, 3))),
    "inv": (float, 4, lambda xs: cp.inv(_grid(xs, 2, 2))),
    "conv2d": (float, 16, lambda xs: cp.nn.conv2d(_grid(xs, 4, 4).reshape(1, 1, 4, 4),
                                                  _grid(xs[::-1], 3, 3).reshape(1, 1, 3, 3),
                                                  cp.array([0.5]), padding=1)),
    "max_pool": (float, 16, lambda xs: cp.nn.max_pool2d(cp.array(xs).reshape(1, 4, 4), 2)),
    "avg_pool": (float, 16, lambda xs: cp.nn.avg_pool2d(cp.array(xs).reshape(1, 4, 4), 2,
                                                        padding=1)),
    # a broadcast scalar operand: its value must not change the count either (a shift
    # count of 32 or more, a divisor of -1 with INT_MIN elements)
    "shl_as": (int, 10, lambda xs: cp.array(xs) << cp.value(xs[1])),
    "shr_as": (int, 10, lambda xs: cp.array(xs) >> cp.value(xs[7])),
    "floordiv_as": (int, 10, lambda xs: cp.array(xs) // cp.value(xs[2])),
    "mod_as": (int, 10, lambda xs: cp.array(xs) % cp.value(xs[2])),
    "select_aas": (float, 10, lambda xs: cp.iif(cp.array(xs) > 0.0, cp.array(xs), cp.value(2.0))),
    "floordiv_i": (int, 10, lambda xs: cp.array(xs) // cp.array(xs[::-1])),
    "mod_f": (float, 10, lambda xs: cp.array(xs) % cp.array(xs[::-1])),
    "exp_log": (float, 9, lambda xs: cp.exp(cp.array(xs)) + cp.log(cp.array(xs))),
    "widen_narrow": (int, 9, lambda xs: cp.array(xs).astype("byte") * 2),
    "sin": (float, 9, lambda xs: cp.sin(cp.array(xs))),
    "cos_tan": (float, 5, lambda xs: cp.cos(cp.array(xs)) + cp.tan(cp.array(xs))),
}
# kernels whose stencils python/copapy/_data_dependent_arrays.json lists as data-dependent
# (the stencil build writes it; empty on every target since sin, cos and tan are branch-free)
_STENCILS_OF = {"sin": ("st_arr_sin_",), "cos_tan": ("st_arr_cos_", "st_arr_tan_")}


def varying(arch: str) -> set[str]:
    listed = json.loads((ROOT / "python" / "copapy" / "_data_dependent_arrays.json").read_text())[arch]
    return {name for name, prefixes in _STENCILS_OF.items()
            if any(stencil.startswith(prefixes) for stencil in listed)}


def datasets(ty: type, n: int, ordered: bool) -> list[list[Any]]:
    """Adversarial element lists of length n: the special values in three rotations and
    all equal; with `ordered` (the sorts) sorted and reverse-sorted inputs too."""
    pool: list[Any] = FLOATS if ty is float else INTS
    rotations = [[pool[(k * 5 + j) % len(pool)] for j in range(n)] for k in range(3)]
    out = [*rotations, [pool[5 if ty is float else 2]] * n]
    if ordered:
        rising = [float(j) if ty is float else j - n // 2 for j in range(n)]
        out += [rising, rising[::-1]]
    return out


def count(arch: str, program: Any) -> tuple[int, int, int]:
    return counted_target(arch, program)


@pytest.mark.parametrize("arch", TARGETS)
def test_every_array_kernel_runs_its_bound_for_adversarial_elements(arch: str) -> None:
    data_dependent = varying(arch)
    for name, (ty, n, build) in KERNELS.items():
        counts = set()
        for xs in datasets(ty, n, ordered="sort" in name or name == "median"):
            got, lo, hi = count(arch, build(xs))
            assert lo <= got <= hi, (arch, name, xs, got, lo, hi)
            if name not in data_dependent:
                assert got == lo == hi, (arch, name, xs, got, lo, hi)
            counts.add(got)
        if name in data_dependent:
            assert len(counts) > 1, f"{name} on {arch}: expected data-dependent counts"


@pytest.mark.parametrize("arch", TARGETS)
def test_array_bounds_follow_the_shape(arch: str) -> None:
    # the same kernel over other shapes: one count per shape, each the bound
    for rows, cols in ((1, 1), (2, 9), (5, 3), (8, 8)):
        xs = [FLOATS[j % len(FLOATS)] for j in range(rows * cols)]
        for program in (_grid(xs, rows, cols).max(axis=1), _grid(xs, rows, cols).flatten().sort(),
                        _grid(xs, rows, cols) @ _grid(xs, cols, rows)):
            got, lo, hi = count(arch, program)
            assert got == lo == hi, (arch, rows, cols, got, lo, hi)


@pytest.mark.parametrize("arch", ["armv6", "cortex-m4"])
def test_a_file_carries_the_counted_bounds_of_an_array_program(arch: str) -> None:
    tg = cp.Target(arch)
    tg.compile(_grid([3.0, -1.0, 2.0, 0.5, 7.0, -2.0], 2, 3).max(axis=1).sort())
    loaded = cp.loads(bytes(tg.program_bytes()))
    assert loaded.min_instructions() == loaded.max_instructions() == counted_run(loaded)
    assert loaded.max_instructions() == tg.max_instructions()


MIXERS: list[Callable[[Any], Any]] = [
    lambda a: a.sort(), lambda a: a.argsort().astype("float") + a, lambda a: a * 2.0 - 1.0,
    lambda a: cp.array([a.sum(), a.max(), a.min()]), lambda a: a.reshape(-1, 1) @ a.reshape(1, -1),
    lambda a: a.reshape(-1, 1).max(axis=1), lambda a: cp.sin(a), lambda a: a[::-1] / (a + 1.0),
    lambda a: cp.exp(a), lambda a: cp.nn.max_pool2d(a.reshape(1, 1, -1), (1, 1)),
]


@settings(max_examples=20, deadline=None)
@given(arch=st.sampled_from(TARGETS),
       ops=st.lists(st.integers(0, len(MIXERS) - 1), min_size=1, max_size=5),
       xs=st.lists(st.floats(width=32), min_size=1, max_size=6))
def test_random_array_programs_never_exceed_their_bound(arch: str, ops: list[int],
                                                         xs: list[float]) -> None:
    a: Any = cp.array(xs)
    for k in ops:
        a = MIXERS[k](a).flatten()[:6]
    got, lo, hi = count(arch, a)
    assert lo <= got <= hi, (arch, ops, got, lo, hi)
    if 6 not in ops:  # no sin: branch-free
        assert got == lo == hi, (arch, ops, got, lo, hi)


def test_a_count_outside_the_static_bound_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # an element-wise step's run must lie within its graph's a + b·n: a count that does
    # not (stencil tables from another build than the extension's) is refused
    from copapy import _step_count

    tg = cp.Target("riscv64")
    tg.compile(cp.array([1.0, 2.0, 3.0]) * 2.0)
    honest = tg.max_instructions()
    monkeypatch.setattr(_step_count, "step_cost", lambda arch, program: (10**6, 0, 0))
    with pytest.raises(RuntimeError, match="outside .* from its control-flow graph"):
        tg.max_instructions()
    monkeypatch.undo()
    assert tg.max_instructions() == honest


@pytest.mark.parametrize("arch", TARGETS)
def test_array_steps_in_a_loop_body_count_once_per_trip(arch: str) -> None:
    x = cp.array([3.0, 1.0, -2.0, 5.0, float("nan")])

    def body(i: Any, c: Any) -> Any:
        return (c * 0.5 + x).sort() + c[i] + c.dot(x)

    for trips in (1, 4):
        got, lo, hi = count(arch, cp.fori_loop(0, trips, body, x))
        assert got == lo == hi, (arch, trips, got, lo, hi)


FLOAT_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
    "pow": lambda a, b: a ** b, "atan2": cp.atan2, "min": cp.minimum, "max": cp.maximum,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b, "select": lambda a, b: cp.iif(a > b, a, b),
}
INT_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b, "and": lambda a, b: a & b, "xor": lambda a, b: a ^ b,
    "shl": lambda a, b: a << b, "shr": lambda a, b: a >> b, "min": cp.minimum,
    "max": cp.maximum, "gt": lambda a, b: a > b, "ne": lambda a, b: a != b,
}
# broadcast scalars that select another path in a scalar op: NaN, infinities, zeros,
# -1 (INT_MIN // -1), shift counts 0, 31, 32 and negative
FLOAT_SCALARS = [math.nan, -math.inf, -0.0, 1e-45, 3e38, -1.0]
INT_SCALARS = [0, -1, 31, 32, -(2**31), 7]


@pytest.mark.parametrize("arch", TARGETS)
def test_broadcast_scalars_do_not_change_an_array_step_count(arch: str) -> None:
    # a loop-invariant scalar is what a compiler unswitches a loop on (the x86_64 and
    # ARMv7 shift kernels did): every element-wise op, scalar on either side
    for ty, ops, scalars, pool in ((float, FLOAT_OPS, FLOAT_SCALARS, FLOATS),
                                   (int, INT_OPS, INT_SCALARS, INTS)):
        xs = [pool[j % len(pool)] for j in range(9)]
        for name, fn in ops.items():
            for side in ("as", "sa"):
                counts = set()
                for s in scalars:
                    a, b = (cp.array(xs), cp.value(s)) if side == "as" else (cp.value(s), cp.array(xs))
                    got, lo, hi = count(arch, fn(a, b))
                    assert got == lo == hi, (arch, ty, name, side, s, got, lo, hi)
                    counts.add(got)
                assert len(counts) == 1, (arch, ty, name, side, sorted(counts))
