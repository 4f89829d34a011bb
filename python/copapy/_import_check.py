"""Python callables serving a program's imports (``cp.extern``): the checks at load and the
conversions at each call, shared by this machine's runner (``_core``, which calls these)
and the emulator (``_emulator_imports``), so both accept and refuse the same things.

* At load, a callable must accept the import's arguments: ``inspect.signature`` binds that
  many positional arguments (a callable without a signature, such as some builtins, is
  accepted); a program passing arrays needs NumPy, as array arguments reach the callable
  as NumPy arrays.
* At a call, an array argument (``F``/``I``) is a writable NumPy ``float32``/``int32``
  array over a copy of the call's buffer, fresh for each call: what the callable leaves in
  it is written back to the buffer after the call (``cp.extern(..., fills=k)`` gives it to
  the program). The result must be a number of the signature's type (a float result
  takes any real number, an int result an integer, a bool result a bool or 0/1);
  anything else stops the run with a ``TypeError`` naming the import.
"""

from __future__ import annotations

import inspect
import operator
from typing import Any

_RESULT_NAMES = {"f": "a float (any real number)", "i": "an int (in the int32 range)",
                 "b": "a bool (or the int 0 or 1)", "v": "nothing"}


def argument_codes(signature: str) -> str:
    """The argument codes of a signature such as ``"f(iF)"``."""
    return signature[2:-1]


def check_callable(name: str, signature: str, f: Any) -> None:
    """Refuses (TypeError, naming the import and both signatures) a callable that cannot be
    called with the import's arguments, and (RuntimeError) array arguments without NumPy."""
    if not callable(f):
        raise TypeError(f"imports[{name!r}] is a {type(f).__name__}, not a callable")
    n = len(argument_codes(signature))
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):  # builtins without a signature: accepted
        sig = None
    if sig is not None:
        try:
            sig.bind(*range(n))
        except TypeError:
            raise TypeError(
                f"imports[{name!r}] has the Python signature {name}{sig}, but the program calls "
                f"{name} with signature {signature} ({n} argument{'s' if n != 1 else ''}"
                f"{_array_note(signature)}): give it a function taking {n} positional "
                "argument" + ("s" if n != 1 else "")) from None
    if any(c in "FI" for c in argument_codes(signature)):
        try:
            import numpy  # noqa: F401
        except ImportError:
            raise RuntimeError(
                f"the program passes arrays to import {name} ({signature}), which reach Python "
                "callables as NumPy arrays: pip install numpy") from None


def _array_note(signature: str) -> str:
    k = sum(c in "FI" for c in argument_codes(signature))
    return f", {k} of them arrays passed as one NumPy array each" if k else ""


def buffer_array(data: bytearray, code: str) -> Any:
    """A writable NumPy view of ``data`` (a buffer's bytes): float32 for ``F``, int32 for ``I``."""
    import numpy as np

    return np.frombuffer(data, dtype="<f4" if code == "F" else "<i4")


def result_error(name: str, signature: str, result: Any) -> TypeError:
    return TypeError(
        f"import {name} returned {type(result).__name__} {result!r:.60}, but its signature "
        f"{signature} needs {_RESULT_NAMES[signature[0]]} result")


def result_number(name: str, signature: str, result: Any) -> float | int | None:
    """The callable's result as the signature's type: a float, an int (bool: 0 or 1), or
    None for a function without result; a TypeError naming the import otherwise."""
    code = signature[0]
    if code == "v":
        return None
    if isinstance(result, (str, bytes)) or result is None:
        raise result_error(name, signature, result)
    if code == "f":
        try:
            if isinstance(result, complex):
                raise TypeError
            return float(result)
        except (TypeError, ValueError):
            raise result_error(name, signature, result) from None
    try:
        n = operator.index(result)
    except TypeError:
        raise result_error(name, signature, result) from None
    if (code == "b" and n not in (0, 1)) or not -(1 << 31) <= n < (1 << 31):
        raise result_error(name, signature, result)
    return n

