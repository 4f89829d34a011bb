"""``cp.fori_loop`` and ``cp.scan``: loops whose machine code holds the body once.

JAX's names and semantics. The body is traced once, on placeholder values for the
carried state and a traced int counter ``i``; the compiler emits it once, between a
copy of the initial carry into fixed slots and a back-edge stencil that counts the trips
(``crates/copapy-compiler/src/loops.rs``). The trip count is a Python int, fixed when the
program is compiled, so every run executes the same instructions.

The carry is any structure copapy accepts: values, Python numbers, containers with
``__copapy__`` (``cp.vector``, ``cp.tensor``/``cp.matrix``, ``cp.quaternion``, user
classes), and lists, tuples and dicts of them. It is flattened through the container
protocol (``_core.nd_describe``) and rebuilt with each container's ``rebuild``.
The body must return the same structure with the same dtypes (a ``ValueError`` names the
leaf otherwise). Values the body computes exist only inside it: return what you need
after the loop in the carry (or as a ``scan`` output).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from . import _core
from ._array import array
from ._core import nd_describe as describe
from ._core import value
from ._elements import plain

C = TypeVar("C")
Y = TypeVar("Y")


@dataclass
class _Tree:
    """The shape of a carry: a leaf (``kind == "leaf"``, with its dtype), a list, tuple or
    dict of subtrees, or a container (rebuilt through its descriptor)."""

    kind: str
    children: list[_Tree]
    dtype: str = ""
    keys: tuple[Any, ...] = ()
    rebuild: Callable[[Any], Any] | None = None
    element: bool = False
    type_name: str = ""
    shape: tuple[int, ...] = ()


def _dtype(x: Any) -> str:
    if isinstance(x, value):
        return str(x.dtype)
    if isinstance(x, bool):
        return "bool"
    return "int" if isinstance(x, int) else "float"


def _flatten(x: Any, path: str, leaves: list[Any]) -> _Tree:
    """Appends the scalar leaves of ``x`` to ``leaves`` and returns its shape."""
    x = plain(x)
    if x is None:  # scan's x without xs, or a y of nothing
        return _Tree("none", [])
    if isinstance(x, (value, int, float)):
        leaves.append(x)
        return _Tree("leaf", [], dtype=_dtype(x))
    c = describe(x)
    if c is not None:
        if c.kind == "array":
            leaves.append(c.node)
            return _Tree("array", [], dtype=str(c.dtype), shape=tuple(c.shape),
                         rebuild=c.rebuild, type_name=type(x).__name__)
        parts = [_flatten(e, f"{path}[{k}]", leaves) for k, e in enumerate(c.leaves or ())]
        return _Tree("container", parts, rebuild=c.rebuild, element=c.kind == "element",
                     type_name=type(x).__name__)
    if isinstance(x, (list, tuple)):
        parts = [_flatten(e, f"{path}[{k}]", leaves) for k, e in enumerate(x)]
        return _Tree(type(x).__name__, parts)
    if isinstance(x, dict):
        keys = tuple(x)
        parts = [_flatten(x[k], f"{path}[{k!r}]", leaves) for k in keys]
        return _Tree("dict", parts, keys=keys)
    raise TypeError(
        f"{path} is a {type(x).__name__}: a loop carries values, numbers, copapy containers "
        "and lists, tuples and dicts of them"
    )


def _unflatten(tree: _Tree, leaves: Iterator[Any]) -> Any:
    if tree.kind == "leaf":
        return next(leaves)
    if tree.kind == "none":
        return None
    if tree.kind == "array":
        node = next(leaves)
        return tree.rebuild(node) if tree.rebuild is not None else node
    parts = [_unflatten(t, leaves) for t in tree.children]
    if tree.kind == "container":
        if tree.rebuild is None:
            return parts[0] if tree.element else list(parts)
        return tree.rebuild(parts[0] if tree.element else tuple(parts))
    if tree.kind == "dict":
        return dict(zip(tree.keys, parts, strict=False))
    return tuple(parts) if tree.kind == "tuple" else parts


def _describe_tree(tree: _Tree) -> str:
    if tree.kind == "leaf":
        return f"a {tree.dtype} scalar"
    if tree.kind == "array":
        return f"a {tree.dtype} {tree.type_name} of shape {tree.shape}"
    if tree.kind == "container":
        return f"a {tree.type_name} of {len(tree.children)} elements"
    if tree.kind == "dict":
        return f"a dict with keys {list(tree.keys)}"
    return f"a {tree.kind} of {len(tree.children)} items"


def _match(want: _Tree, got: _Tree, path: str) -> None:
    """Raises a ValueError naming the first leaf where ``got`` differs from ``want``."""
    fix = "the body must return the carry's structure, dtypes and shapes unchanged"
    same_kind = want.kind == got.kind and (
        want.kind not in ("container", "array") or want.type_name == got.type_name) and (
        want.kind != "array" or (want.shape, want.dtype) == (got.shape, got.dtype))
    if not same_kind or len(want.children) != len(got.children) or want.keys != got.keys:
        raise ValueError(
            f"{path}: the loop received {_describe_tree(want)} but the body returned "
            f"{_describe_tree(got)}; {fix}")
    if want.kind == "leaf" and want.dtype != got.dtype:
        # a Python int where a float is carried converts exactly as in arithmetic
        if not (want.dtype == "float" and got.dtype in ("int", "bool")):
            raise ValueError(
                f"{path}: the loop received a {want.dtype} but the body returned a "
                f"{got.dtype}; {fix} (convert it, e.g. cp.to_float / cp.to_int)")
    for k, (w, g) in enumerate(zip(want.children, got.children, strict=False)):
        key = want.keys[k] if want.kind == "dict" else k
        _match(w, g, f"{path}[{key!r}]")


def _trip_bound(x: Any, name: str) -> int:
    x = plain(x)
    if isinstance(x, int) and not isinstance(x, bool):
        return x
    if isinstance(x, value):
        raise TypeError(
            f"{name} of a loop is a traced value: the trip count must be a Python int, "
            "fixed when the program is compiled, so every run executes the same "
            "instructions (use cp.iif inside the body to skip work instead)")
    raise TypeError(f"{name} of a loop must be a Python int, got {type(x).__name__}")


def _unroll_of(unroll: int | bool, trips: int) -> int:
    if isinstance(unroll, bool):
        return trips if unroll else 1
    if not isinstance(unroll, int) or unroll < 1:
        raise ValueError(f"unroll must be a positive int or a bool, got {unroll!r}")
    return min(unroll, trips)


def _run(lower: int, trips: int, step: Callable[[Any, Any], Any], init: Any,
         unroll: int | bool) -> Any:
    """``trips`` runs of ``carry = step(i, carry)`` for ``i = lower, lower + 1, ...``:
    ``unroll`` runs per trip of one compiled loop, the remainder unrolled after it."""
    if trips <= 0:
        return init
    if not (-(2**31) <= lower and lower + trips <= 2**31 - 1):
        raise ValueError(
            f"the loop counter runs from {lower} to {lower + trips - 1}: it is an int32 in "
            "the compiled program, so both ends must lie in -2**31 .. 2**31 - 2")
    k = _unroll_of(unroll, trips)
    loops, rest = divmod(trips, k)
    carry = init
    if k < trips or unroll is False:
        leaves: list[Any] = []
        tree = _flatten(init, "carry", leaves)
        index, holders = _core.loop_begin(leaves)
        body_carry = _unflatten(tree, iter(holders))
        start = lower if k == 1 else 0
        for j in range(k):
            i: Any = index if k == 1 else index * k + (lower + j)
            body_carry = step(i, body_carry)
        nexts: list[Any] = []
        _match(tree, _flatten(body_carry, "carry", nexts), "carry")
        outs = _core.loop_end(loops, start, index, holders, leaves, nexts)
        carry = _unflatten(tree, iter(outs))
    else:
        rest = trips
    for i in range(lower + trips - rest, lower + trips):
        carry = step(i, carry)
    return carry


def fori_loop(lower: int, upper: int, body: Callable[[Any, C], C], init: C, *,
              unroll: int | bool = 1) -> C:
    """``body(i, carry)`` for ``i`` from ``lower`` to ``upper - 1``, starting from ``init``;
    returns the last carry (``init`` when ``upper <= lower``), as ``jax.lax.fori_loop``.

    ``i`` is a traced int (usable as a runtime index, ``a[i]``); ``lower`` and ``upper``
    are Python ints. ``unroll=k`` traces ``k`` iterations per trip of the compiled loop
    (``unroll=True`` unrolls all of them, as a Python ``for`` loop does, with ``i`` a Python
    int): larger code, fewer back-edges."""
    lo, hi = _trip_bound(lower, "lower"), _trip_bound(upper, "upper")
    result: C = _run(lo, hi - lo, body, init, unroll)
    return result


def _length_of(x: Any) -> int:
    c = describe(x)
    if c is not None:
        return int(c.shape[0]) if c.shape else 0
    return len(x)


def _slicer(xs: Any) -> tuple[int, Callable[[Any], Any]]:
    """(length, x_of) for ``scan``'s ``xs``: a sequence (list of numbers or values,
    ``cp.vector``, ``cp.array``, NumPy array; entry ``i`` read at a runtime index) or a
    tuple or dict of sequences."""
    if isinstance(xs, tuple):
        parts = [_slicer(x) for x in xs]
        lengths = {n for n, _ in parts}
        if len(lengths) > 1:
            raise ValueError(f"scan's xs have different lengths {sorted(lengths)}")
        return parts[0][0] if parts else 0, lambda i: tuple(f(i) for _, f in parts)
    if isinstance(xs, dict):
        keys = list(xs)
        parts = [_slicer(xs[k]) for k in keys]
        lengths = {n for n, _ in parts}
        if len(lengths) > 1:
            raise ValueError(f"scan's xs have different lengths {sorted(lengths)}")
        return (parts[0][0] if parts else 0,
                lambda i: {k: f(i) for k, (_, f) in zip(keys, parts, strict=False)})

    arr = xs if isinstance(xs, array) else array(list(xs) if isinstance(xs, list) else xs)
    n = _length_of(arr)

    def x_of(i: Any) -> Any:
        return arr[i]

    return n, x_of


def scan(f: Callable[[C, Any], tuple[C, Y]], init: C, xs: Any = None,
         length: int | None = None, *, unroll: int | bool = 1) -> tuple[C, list[Y]]:
    """``carry, y = f(carry, x)`` for each ``x`` of ``xs`` (or ``length`` times with
    ``x = None``), as ``jax.lax.scan``: returns the last carry and the ``y``s stacked in a
    list (``ys[t]`` has the structure of ``y``).

    ``xs`` is a sequence (a list of numbers or values, ``cp.vector``, ``cp.array``, NumPy
    array), or a tuple or dict of equally long sequences; inside the loop ``x`` is its entry
    at the traced counter (a runtime index). ``unroll`` as for ``fori_loop``."""
    x_of: Callable[[Any], Any]
    if xs is None:
        if length is None:
            raise ValueError("scan needs xs or length")
        n = _trip_bound(length, "length")
        x_of = _nothing
    else:
        n, x_of = _slicer(xs)
        if length is not None and _trip_bound(length, "length") != n:
            raise ValueError(f"scan's length={length} differs from the length {n} of xs")
    return _scan_stacked(f, x_of, init, n, unroll)


def _nothing(i: Any) -> None:
    """``scan``'s ``x`` without ``xs``."""
    return None


def _scan_stacked(f: Callable[[Any, Any], Any], x_of: Callable[[Any], Any], init: Any,
                  n: int, unroll: int | bool) -> tuple[Any, list[Any]]:
    """The loop of ``scan``: each scalar leaf of ``y`` is carried in an ``n``-element array,
    run ``i`` writing entry ``i`` (one branch-free select over the array, so the code and
    data stay the same size for every ``n``); the stack is read out after the loop."""
    from ._math import iif

    if n <= 0:
        return init, []
    # the structure of y, from a trace of f whose nodes are dropped unused
    probe: list[Any] = []
    ytree = _flatten(f(init, x_of(0))[1], "y", probe)
    if any(t.kind == "array" for t in _walk(ytree)):
        raise TypeError("scan stacks scalar outputs (values, numbers, vectors, matrices, "
                        "quaternions); return an array's elements as a cp.vector")
    kinds = [t.dtype for t in _walk(ytree) if t.kind == "leaf"]
    positions = array(list(range(n)))
    stacks = [array([0.0 if k == "float" else 0] * n) for k in kinds]

    def body(i: Any, state: Any) -> Any:
        carry, stacks = state
        carry, y = f(carry, x_of(i))
        ys: list[Any] = []
        _match(ytree, _flatten(y, "y", ys), "y")
        hit = positions == i
        return carry, [iif(hit, v, s) for v, s in zip(ys, stacks, strict=True)]

    if isinstance(unroll, bool) and unroll:
        carry, ys_list = init, []
        for t in range(n):
            carry, y = f(carry, x_of(t))
            ys_list.append(y)
        return carry, ys_list
    carry, stacks = fori_loop(0, n, body, (init, stacks), unroll=unroll)
    return carry, [_unflatten(ytree, iter([s[t] for s in stacks])) for t in range(n)]


def _walk(tree: _Tree) -> Iterator[_Tree]:
    yield tree
    for t in tree.children:
        yield from _walk(t)
