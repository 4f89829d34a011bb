"""``cp.extern``: calls of functions the runner provides (sensors, actuators, clocks).

A call is traced like an operation; the runner resolves the function by name when it
loads the program (``Target(..., imports={"adc_read": f})`` on this machine and in the
emulator, ``copapy-run --plugin``, the firmware's import table: ``docs/firmware.md``,
"Adding your own I/O functions"). Every call runs on every run, once, in the order the
calls were traced; calls are never merged, reordered or folded. A call nothing compiled
depends on is dropped: pass the token of a function without result (``returns=None``)
to ``compile`` among the outputs.
"""

from typing import Any, Literal, overload

from . import _core
from ._core import value

_RETURNS: dict[object, str | None] = {float: "f", int: "i", bool: "b", None: None}


@overload
def extern(name: str, *args: Any, returns: type[bool]) -> value[bool]: ...
@overload
def extern(name: str, *args: Any, returns: type[float]) -> value[float]: ...
@overload
def extern(name: str, *args: Any, returns: type[int]) -> value[int]: ...
@overload
def extern(name: str, *args: Any, returns: Literal[None]) -> value[int]: ...
def extern(name: str, *args: Any, returns: Any) -> value[Any]:
    """Traces a call of the imported function ``name`` with ``args`` (copapy values or
    numbers: floats are passed as C ``float``, ints as ``int32_t``, bools as ``int32_t``
    0/1; at most 4 of each class) and returns its result, a value of type ``returns``
    (``float``, ``int`` or ``bool``); with ``returns=None`` an effect token (an int that
    reads 0) to pass to ``compile``. The C signature is e.g. ``"f(if)"`` for
    ``float name(int32_t, float)``: result code, then argument codes in order.

    ``name`` must be a C identifier (ValueError otherwise)."""
    if not isinstance(name, str):
        raise TypeError(f"import name must be a str, not {type(name).__name__}")
    if returns not in _RETURNS:
        raise ValueError(f"returns must be float, int, bool or None, not {returns!r}")
    result: value[Any] = _core.extern_call(name, list(args), _RETURNS[returns])
    return result
