"""``Target.compile`` walks each positional argument once (``copapy-python/src/flatten.rs``):
the same pass collects the values to compute and flattens the argument for its ``out<k>``
symbol. For any nest of lists and tuples of values and numbers, the symbol has NumPy's
shape for the nest when it is rectangular (and rank at most 8) and is left out when it is
ragged, while every value is compiled either way; a ``names=`` entry of the same nest is
flattened by the same walk, and refused with a ValueError where the argument only lost
its symbol. References: ``numpy.array(nest).shape`` and float32 arithmetic in NumPy.
"""

from __future__ import annotations

import os
from typing import Any

import copapy as cp
import numpy as np
import pytest
from copapy._core import Target as NativeTarget  # the walk is the same on every target
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("COPAPY_TEST_TARGET")),
    reason="walks Python structures, the same on every target: runs once, in the native pass",
)

MAX_RANK = 8  # a program file's deepest shape (copapy_program::format::MAX_RANK)


def leaf() -> st.SearchStrategy[Any]:
    # ("v", x): a traced value made from x; a plain float: a constant
    return st.one_of(st.tuples(st.just("v"), st.floats(-8, 8, width=32)),
                     st.floats(-8, 8, width=32))


def nests() -> st.SearchStrategy[Any]:
    return st.recursive(leaf(), lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3),
        st.lists(inner, min_size=1, max_size=3).map(tuple)), max_leaves=12)


def build(spec: Any, made: list[tuple[Any, float]]) -> Any:
    """The Python structure of ``spec``: traced values (recorded in ``made`` with their
    inputs) and numbers, in lists and tuples as ``spec`` has them."""
    if isinstance(spec, tuple) and len(spec) == 2 and spec[0] == "v":
        x = float(np.float32(spec[1]))
        v = cp.value(x) * 2.0
        made.append((v, x))
        return v
    if isinstance(spec, list | tuple):
        items = [build(s, made) for s in spec]
        return items if isinstance(spec, list) else tuple(items)
    return float(np.float32(spec))


def reference_shape(spec: Any) -> tuple[int, ...] | None:
    """NumPy's shape of the nest, or None when NumPy finds it ragged."""
    def plain(s: Any) -> Any:
        if isinstance(s, tuple) and len(s) == 2 and s[0] == "v":
            return 0.0
        return [plain(x) for x in s] if isinstance(s, list | tuple) else 0.0
    try:
        shape: tuple[int, ...] = np.array(plain(spec), dtype=np.float32).shape
    except ValueError:
        return None
    return shape if len(shape) <= MAX_RANK else None


@settings(max_examples=120, deadline=None)
@given(spec=nests())
def test_one_walk_gives_values_and_the_symbol_shape(spec: Any) -> None:
    made: list[tuple[Any, float]] = []
    arg = build(spec, made)
    want = reference_shape(spec)
    tg = NativeTarget()
    if not made:
        # only constants: nothing to compute unless the argument gets a symbol
        if want is None:
            with pytest.raises(ValueError, match="nothing to compile"):
                tg.compile(arg)
            return
    tg.compile(arg)
    symbols = {name: (role, list(shape)) for name, role, _dtype, shape in tg.variables()}
    if want is None:
        assert "out0" not in symbols
    else:
        assert symbols["out0"] == ("output", list(want))
    tg.run()
    # every traced value was compiled and reads back as 2 * x in float32
    for v, x in made:
        assert tg.read_value(v) == float(np.float32(x) * np.float32(2.0))
    # the same nest as a names= entry: the same walk, strict
    named = NativeTarget()
    if want is None:
        with pytest.raises(ValueError, match="rectangular|dimensions"):
            named.compile(*(v for v, _ in made), names={"n": arg})
    elif made:
        named.compile(names={"n": arg})
        assert ("n", "output", "float", list(want)) in named.variables()
