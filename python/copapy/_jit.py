"""``@cp.jit``: compile a function on its first call, per argument signature."""

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar, overload

from . import _core

P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_CACHE_SIZE = 64
"""Specialisations a jit function keeps unless told otherwise (see ``jit``)."""


@overload
def jit(
    func: Callable[P, R],
    *,
    cache_size: int = DEFAULT_CACHE_SIZE,
    arch: str = "native",
    runner: str | None = None,
    imports: dict[str, Callable[..., object]] | None = None,
) -> Callable[P, R]: ...
@overload
def jit(
    func: None = None,
    *,
    cache_size: int = DEFAULT_CACHE_SIZE,
    arch: str = "native",
    runner: str | None = None,
    imports: dict[str, Callable[..., object]] | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]: ...
def jit(
    func: Callable[P, R] | None = None,
    *,
    cache_size: int = DEFAULT_CACHE_SIZE,
    arch: str = "native",
    runner: str | None = None,
    imports: dict[str, Callable[..., object]] | None = None,
) -> Callable[P, R] | Callable[[Callable[P, R]], Callable[P, R]]:
    """Compiles ``func`` to native code on its first call and calls that code afterwards.

    Arguments may be numbers (Python or NumPy), lists, tuples (of numbers or nested) or
    NumPy arrays of any integer, float or bool dtype, byte order and memory layout (1-D
    arrays arrive as ``cp.vector``, 2-D as ``cp.matrix``, 0-d as numbers). Other objects
    (such as ``self`` of a method; not strings, dicts or sets) are passed through
    unchanged: what the function reads from them while tracing is compiled in as a
    constant, so change them only by calling with another object. A call whose
    arguments differ in count, scalar type (int, float, bool), length, dtype, byte order
    or shape, or in the identity of a passed-through object, compiles a new
    specialisation; matching calls reuse it. The result comes back in the structure
    ``func`` returned: numbers, lists, tuples and dicts; vectors and matrices as lists, or
    as NumPy arrays (float32, int32 or bool) when ``func`` was called with NumPy arrays;
    ``cp.array`` results always as NumPy arrays.
    Python ``if``/``while`` on traced values raise a ``TypeError``: use ``cp.iif`` for
    data-dependent choices.

    At most ``cache_size`` specialisations are kept (each holds mapped memory); when a new
    signature would exceed it, the least recently used specialisation is dropped and
    compiled again if it is needed later. Use ``@cp.jit(cache_size=n)`` to change it.

    Called with traced values (from inside another traced function), a jit function is
    traced into the caller's program instead of being compiled on its own.

    Like ``cp.Target``, a jit function can run elsewhere: ``@cp.jit(arch="riscv32")``
    compiles for that target and runs in the emulator, ``@cp.jit(runner="tcp://HOST:PORT")``
    (or ``"process"``) on a ``copapy-run``; each specialisation gets its own device or
    connection, and a call writes the arguments, runs and reads the result in one round
    trip each. ``imports`` serves the imported functions the function calls
    (``cp.extern``) with Python callables, as ``cp.Target(imports=...)`` does (through the
    device path: a call copies the data memory in and out).

    Example::

        @cp.jit
        def f(a, b):
            return a * b + a

        f(2.0, 3.0)  # 8.0, compiled on this first call
    """

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        compiled = _core.jit_function(fn, cache_size, arch, runner, imports)
        functools.update_wrapper(compiled, fn)
        return compiled

    if func is None:
        return wrap
    return wrap(func)
