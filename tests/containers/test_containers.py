"""The container protocol (``__copapy__`` returning a ``cp.Container``): user classes take
part in compile, read_value, write_value, names=, @cp.jit results and cp.grad exactly as
copapy's own containers do; objects without it get the usual errors.

References are NumPy float32 (and float64 derivatives for gradients), never copapy itself."""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import pytest
from copapy import _core
from helpers import F32

RNG = np.random.default_rng(11)


class Pair:
    """A user container of two scalars (a sequence that rebuilds itself)."""

    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b

    def __copapy__(self) -> cp.Container:
        return cp.Container.sequence((self.a, self.b), (2,), self._again)

    @staticmethod
    def _again(t: tuple[Any, ...]) -> Pair:
        return Pair(*t)


class Grid:
    """A 2 x 2 user container without a rebuild: results come back as nested lists."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def __copapy__(self) -> cp.Container:
        return cp.Container.sequence(self.items, (2, 2))


class Meters:
    """A user wrapper around one value (an element)."""

    def __init__(self, v: Any) -> None:
        self.v = v

    def __copapy__(self) -> cp.Container:
        return cp.Container.element(self.v, Meters)

    def __float__(self) -> float:
        # a traced value has no float yet: the protocol must win over the number check
        return float(self.v)


class Signal:
    """A user class around a cp.array (an array container that rebuilds itself)."""

    def __init__(self, arr: cp.array[Any]) -> None:
        self.arr = arr

    def __copapy__(self) -> cp.Container:
        inner = self.arr.__copapy__()
        return cp.Container.array(inner.node, inner.shape, inner.dtype, self._again)

    def _again(self, node: Any) -> Signal:
        inner = self.arr.__copapy__()
        assert inner.rebuild is not None
        return Signal(inner.rebuild(node))


def f32(x: float) -> float:
    return float(F32(x))


def test_sequence_container_compiles_reads_and_writes() -> None:
    x, y = (f32(v) for v in RNG.uniform(-3, 3, 2))
    a, b = cp.value(x), cp.value(y)
    out = Pair(a * b, a - b)
    tg = cp.Target()
    tg.compile(out)
    tg.run()
    got = tg.read_value(out)
    assert isinstance(got, Pair)
    assert (got.a, got.b) == (float(F32(x) * F32(y)), float(F32(x) - F32(y)))
    tg.write_value(Pair(a, b), [1.5, F32(-0.25)])
    tg.run()
    got = tg.read_value(out)
    assert (got.a, got.b) == (float(F32(1.5) * F32(-0.25)), float(F32(1.5) - F32(-0.25)))
    # a container of numbers is data too
    tg.write_value(Pair(a, b), Pair(2.0, 4.0))
    tg.run()
    assert tg.read_value(Pair(a, 7.5)).a == 2.0 and tg.read_value(Pair(a, 7.5)).b == 7.5


def test_compile_walks_each_argument_once() -> None:
    # Target.compile collects the values and the symbols' shapes in one walk, so a
    # container is asked what it holds once per compile (and its symbol still appears)
    asked: list[int] = []

    class Counted(Pair):
        def __copapy__(self) -> cp.Container:
            asked.append(1)
            return super().__copapy__()

    x, y = f32(1.25), f32(-0.5)
    a, b = cp.value(x), cp.value(y)
    tg = cp.Target()
    tg.compile([Counted(a * b, a + b)])
    assert len(asked) == 1
    assert ("out0", "output", "float", (1, 2)) in [
        (n, r, d, tuple(s)) for n, r, d, s in tg.variables()]
    tg.run()
    assert tg.read_value("out0") == [[float(F32(x) * F32(y)), float(F32(x) + F32(y))]]


def test_sequence_without_rebuild_reads_as_nested_lists() -> None:
    xs = [f32(v) for v in RNG.uniform(-2, 2, 4)]
    vs = [cp.value(v) for v in xs]
    g = Grid([v * 3.0 for v in vs])
    tg = cp.Target()
    tg.compile(g)
    tg.run()
    ref = (np.array(xs, dtype=F32) * F32(3.0)).reshape(2, 2)
    assert tg.read_value(g) == ref.tolist()
    with pytest.raises(ValueError, match=r"cannot write data of shape \(3,\) to a Grid of shape \(2, 2\)"):
        tg.write_value(Grid(vs), [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="element 0 of this Grid is the constant 1.0"):
        tg.write_value(Grid([1.0, *vs[1:]]), [[1.0, 2.0], [3.0, 4.0]])
    tg.run()
    assert tg.read_value(g) == ref.tolist()  # failed writes changed nothing


def test_element_container() -> None:
    x = f32(RNG.uniform(1, 5))
    d = cp.value(x)
    twice = Meters(d * 2.0 + 1.0)
    tg = cp.Target()
    tg.compile(twice)
    tg.write_value(Meters(d), 0.75)
    tg.run()
    got = tg.read_value(twice)
    assert isinstance(got, Meters) and got.v == float(F32(0.75) * F32(2.0) + F32(1.0))
    with pytest.raises(TypeError, match="this Meters is the constant 3.0"):
        tg.write_value(Meters(3.0), 1.0)
    tg.compile(twice, names={"m": Meters(d)})
    assert ("m", "input", "float", []) in tg.variables()

    @cp.jit
    def f(x: Any) -> Any:
        return Meters(x * 4.0)

    assert f(0.375) == 1.5


def test_array_container() -> None:
    data = RNG.uniform(-4, 4, (2, 3)).astype(F32)
    s = Signal(cp.array(data))
    out = Signal(s.arr * 2.0 + 1.0)
    tg = cp.Target()
    tg.compile(out)
    tg.run()
    assert tg.read_value(out) == (data * F32(2.0) + F32(1.0)).tolist()
    new = RNG.uniform(-4, 4, (2, 3)).astype(F32)
    tg.write_value(s, new)
    tg.run()
    assert tg.read_value(out) == (new * F32(2.0) + F32(1.0)).tolist()
    with pytest.raises(ValueError, match=r"data of shape \(3, 2\) to an array of shape \(2, 3\)"):
        tg.write_value(s, new.T)


def test_names_use_the_protocol() -> None:
    a, b = cp.value(1.25), cp.value(-3.0)
    tg = cp.Target()
    tg.compile(Pair(a + b, a * b), names={"ab": Pair(a, b), "g": Grid([a, b, a, b])})
    variables = {name: (role, dtype, shape) for name, role, dtype, shape in tg.variables()}
    assert variables["ab"] == ("input", "float", [2])
    assert variables["g"] == ("input", "float", [2, 2])
    assert variables["out0"] == ("output", "float", [2])
    tg.write_value("ab", [0.5, 4.0])
    tg.run()
    assert tg.read_value("out0") == [4.5, 2.0]


def test_jit_results_use_the_protocol() -> None:
    @cp.jit
    def f(x: Any, y: Any) -> Any:
        return Pair(x * y, x - y), Meters(x + y), Grid([x, y, x * x, 2.0])

    x, y = (f32(v) for v in RNG.uniform(-3, 3, 2))
    pair, meters, grid = f(x, y)
    fx, fy = F32(x), F32(y)
    assert pair == [float(fx * fy), float(fx - fy)]  # containers come back as lists
    assert meters == float(fx + fy)
    assert grid == [[x, y], [float(fx * fx), 2.0]]

    @cp.jit
    def g(u: Any) -> Any:
        return Signal(cp.array(u) * 3.0)

    u = RNG.uniform(-2, 2, (3, 4)).astype(F32)
    got = g(u)
    assert isinstance(got, np.ndarray) and got.dtype == F32
    assert np.array_equal(got, u * F32(3.0))


def test_grad_rebuilds_user_containers() -> None:
    x, y = 0.75, -1.5
    a, b = cp.value(x), cp.value(y)
    out = a * a * b + cp.sin(b)
    g = cp.grad(out, Pair(a, b))
    assert isinstance(g, Pair)
    h = cp.grad(out, Meters(b))
    assert isinstance(h, Meters)
    arr_in = cp.array([x, y])
    s = Signal(arr_in)
    gs = cp.grad((arr_in * arr_in).sum(), s)
    assert isinstance(gs, Signal) and gs.arr.shape == (2,)
    tg = cp.Target()
    tg.compile(g, h, gs)
    tg.run()
    got = tg.read_value(g)
    # analytic derivatives in float64, float32 arithmetic is within a few ulps
    assert got.a == pytest.approx(2 * x * y, rel=1e-6)
    assert got.b == pytest.approx(x * x + np.cos(y), rel=1e-6)
    assert tg.read_value(h).v == pytest.approx(x * x + np.cos(y), rel=1e-6)
    assert tg.read_value(gs) == [2 * x, 2 * y]


def test_descriptor_checks() -> None:
    node = cp.array([1.0, 2.0]).__copapy__().node
    assert node is not None
    with pytest.raises(ValueError, match=r"shape \(3,\) does not match its 2 elements"):
        cp.Container.sequence([1.0, 2.0], (3,))
    with pytest.raises(TypeError, match="tuple or list"):
        cp.Container.sequence({1.0, 2.0})
    with pytest.raises(TypeError, match="must be callable"):
        cp.Container.sequence([1.0], None, 5)
    with pytest.raises(TypeError, match="takes an ArrayNode"):
        cp.Container.array([1.0, 2.0])
    with pytest.raises(ValueError, match="unknown array dtype 'double'"):
        cp.Container.array(node, (2,), "double")
    with pytest.raises(ValueError, match="float node cannot be seen as a int array"):
        cp.Container.array(node, (2,), "int")
    with pytest.raises(ValueError, match=r"shape \(3, 1\) does not match its 2 elements"):
        cp.Container.array(node, (3, 1))
    c = cp.Container.array(node, (1, 2))
    assert (c.kind, c.shape, c.dtype, c.leaves, c.rebuild) == ("array", (1, 2), "float", None, None)
    e = cp.Container.element(2.5)
    assert (e.kind, e.shape, e.leaves, e.node) == ("element", (), (2.5,), None)


def test_objects_without_the_protocol_get_the_usual_errors() -> None:
    class Bad:
        def __copapy__(self) -> Any:
            return [1.0]

    class Plain:
        values = (1.0, 2.0)  # looks like a container, but is not one
        shape = (2,)

    a = cp.value(1.0)
    tg = cp.Target()
    tg.compile(a)
    with pytest.raises(TypeError, match=r"Bad.__copapy__\(\) must return a copapy._core.Container"):
        tg.compile(Bad())
    with pytest.raises(TypeError, match=r"Bad.__copapy__\(\) must return"):
        tg.read_value(Bad())
    with pytest.raises(TypeError, match="cannot compile a Plain"):
        tg.compile(Plain())
    with pytest.raises(TypeError, match="read_value takes a copapy value or a list of them, not a Plain"):
        tg.read_value(Plain())
    with pytest.raises(TypeError, match="write_value takes a copapy value or a list of them, not a Plain"):
        tg.write_value(Plain(), [1.0, 2.0])

    @cp.jit
    def f(x: Any) -> Any:
        return Plain()

    with pytest.raises(TypeError, match="a jit function must return values"):
        f(1.0)


def test_registration_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match="vector must be callable"):
        _core.register_containers(array=cp.array, vector=1, matrix=cp.tensor, flatten=len)
    # the failed call changed nothing: jit still builds copapy's containers from NumPy arrays

    @cp.jit
    def total(v: Any) -> Any:
        return v.sum()

    v = RNG.uniform(-1, 1, 200).astype(F32)
    assert total(v) == tree_sum_ref(v)


def tree_sum_ref(x: np.ndarray[Any, Any]) -> float:
    """The documented reduction order in NumPy float32: element k into partial k % 8, then
    partials l and l + 4, l and l + 2, and the last two."""
    parts = [F32(x[lane]) for lane in range(8)]
    for k in range(8, len(x)):
        parts[k % 8] = F32(parts[k % 8] + x[k])
    for half in (4, 2, 1):
        parts = [F32(parts[lane] + parts[lane + half]) for lane in range(half)]
    return float(parts[0])


def test_nested_containers_stay_within_the_walk_bounds() -> None:
    x = cp.value(1.0)
    deep: Any = x
    for _ in range(1000):
        deep = Meters(deep)
    with pytest.raises(RecursionError, match="nested more than 200 levels"):
        cp.Target().compile(deep)
    tg = cp.Target()
    tg.compile(x)
    with pytest.raises(RecursionError, match="nested more than 200 levels"):
        tg.read_value(deep)

    @cp.jit
    def f(y: Any) -> Any:
        out: Any = y
        for _ in range(1000):
            out = Meters(out)
        return out

    with pytest.raises(RecursionError, match="nested more than 200 levels"):
        f(1.0)
    shallow: Any = x
    for _ in range(50):
        shallow = Meters(shallow)
    tg.compile(shallow)
    tg.run()
    got = tg.read_value(shallow)
    for _ in range(50):
        assert isinstance(got, Meters)
        got = got.v
    assert got == 1.0
