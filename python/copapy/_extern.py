"""``cp.extern``: calls of functions the runner provides (sensors, actuators, clocks).

A call is traced like an operation; the runner resolves the function by name when it
loads the program (``Target(..., imports={"adc_read": f})`` on this machine and in the
emulator, ``copapy-run --plugin``, the firmware's import table: ``docs/firmware.md``,
"Adding your own I/O functions"). Every call runs on every run, once, in the order the
calls were traced; calls are never merged, reordered or folded. A call nothing compiled
depends on is dropped: pass the token of a function without result (``returns=None``)
to ``compile`` among the outputs.

Arrays (``cp.array``, ``cp.vector``, ``cp.tensor`` of floats or ints) are passed as a
buffer: the C function gets a pointer to the elements (row-major) and their count, as two
parameters (``float *``, ``int32_t``). The buffer is the call's own, a copy of the array
made at the call, so the function may write it; ``fills=k`` gives back what it left in the
buffer of argument ``k`` as a new array, read after the call (a sensor that fills
several channels).
"""

from collections.abc import Sequence
from typing import Any, Literal, overload

from . import _core
from ._array import array
from ._core import ArrayNode, value
from ._tensors import _packed_ten, tensor
from ._vectors import vector

_RETURNS: dict[object, str | None] = {float: "f", int: "i", bool: "b", None: None}


def _buffer(name: str, k: int, a: Any) -> ArrayNode:
    """The flat array node passed as the buffer of argument ``k`` (an array or container)."""
    if isinstance(a, array):
        return a._cp_node
    if not a.shape:
        raise ValueError(f"argument {k} of cp.extern({name!r}, ...) is a 0-d tensor: pass its "
                         "element as a scalar, or a 1-element vector as a buffer")
    if not a.values:
        raise ValueError(f"argument {k} of cp.extern({name!r}, ...) is empty: a buffer needs at "
                         "least one element")
    node: ArrayNode | None = getattr(a, "_arr", None)
    return node if node is not None else array(list(a.values))._cp_node


def _like(a: Any, node: ArrayNode) -> Any:
    """``node`` (a filled buffer) as the kind of container argument ``a`` was."""
    if isinstance(a, array):
        return array._of(node, a.shape, a.dtype)
    if isinstance(a, vector):
        return _packed_ten(node, (len(node),), vector)
    return _packed_ten(node, a.shape)


def _fill_indices(name: str, fills: int | Sequence[int], args: tuple[Any, ...]) -> list[int]:
    ks = [fills] if isinstance(fills, int) else list(fills)
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(args):
            raise ValueError(f"fills={fills!r}: cp.extern({name!r}, ...) has {len(args)} "
                             "arguments; name array arguments by their index")
        if not isinstance(args[k], (array, tensor)):
            raise ValueError(f"fills={k}: argument {k} of cp.extern({name!r}, ...) is not an "
                             "array: only an array is passed as a buffer the function can fill")
    if len(set(ks)) != len(ks):
        raise ValueError(f"fills={fills!r} names an argument twice")
    return ks


# bool results are value[int] (0 or 1) as for comparisons; int before float, whose type
# also accepts int
@overload
def extern(name: str, *args: Any, returns: type[int], fills: None = None) -> value[int]: ...
@overload
def extern(name: str, *args: Any, returns: type[float], fills: None = None) -> value[float]: ...
@overload
def extern(name: str, *args: Any, returns: Literal[None], fills: None = None) -> value[int]: ...
@overload
def extern(name: str, *args: Any, returns: type[float] | None,
           fills: int | Sequence[int]) -> tuple[Any, ...]: ...
def extern(name: str, *args: Any, returns: Any, fills: int | Sequence[int] | None = None) -> Any:
    """Traces a call of the imported function ``name`` with ``args`` and returns its result,
    a value of type ``returns`` (``float``, ``int`` or ``bool``); with ``returns=None`` an
    effect token (an int that reads 0) to pass to ``compile``.

    Arguments: copapy values or numbers (floats are passed as C ``float``, ints as
    ``int32_t``, bools as ``int32_t`` 0/1) and arrays (``cp.array``, ``cp.vector``,
    ``cp.tensor`` of floats or ints, passed as a pointer to their elements in row-major
    order and an ``int32_t`` count). Floats take the float registers, at most 4; ints and
    bools one integer register each, arrays two, at most 4 in all. The C signature is e.g.
    ``"f(if)"`` for ``float name(int32_t, float)``: result code, then argument codes in
    order, ``F``/``I`` for a float32/int32 array (``"i(F)"``: ``int32_t name(float *,
    int32_t)``).

    ``fills``: the index (or indices) of array arguments whose buffer the function writes;
    the call then returns a tuple ``(result, filled, ...)``, each ``filled`` the buffer's
    contents after the call as an array of the argument's kind, shape and dtype (the
    argument gives the contents before it). Without ``fills`` what a function writes into
    a buffer is dropped: the program's arrays never change.

    ``name`` must be a C identifier (ValueError otherwise)."""
    if not isinstance(name, str):
        raise TypeError(f"import name must be a str, not {type(name).__name__}")
    if returns not in _RETURNS:
        raise ValueError(f"returns must be float, int, bool or None, not {returns!r}")
    ks = _fill_indices(name, fills, args) if fills is not None else []
    passed = [_buffer(name, k, a) if isinstance(a, (array, tensor)) else a for k, a in enumerate(args)]
    result: value[Any] = _core.extern_call(name, passed, _RETURNS[returns])
    if fills is None:
        return result
    return (result, *(_like(args[k], _core.extern_filled(result, k)) for k in ks))
