"""``@cp.jit``: compile a function on its first call, per argument signature."""

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from . import _core

P = ParamSpec("P")
R = TypeVar("R")


def jit(func: Callable[P, R]) -> Callable[P, R]:
    """Compiles ``func`` to native code on its first call and calls that code afterwards.

    Arguments may be numbers, lists, tuples (of numbers or nested) or NumPy arrays (1-D
    arrays arrive as ``cp.vector``, 2-D as ``cp.matrix``). A call whose arguments differ in
    count, scalar type (int, float, bool), length or shape compiles a new specialisation;
    matching calls reuse it. The result comes back in the structure ``func`` returned:
    numbers, lists and tuples (vectors and matrices as lists). Python ``if``/``while`` on
    traced values raise a ``TypeError``: use ``cp.iif`` for data-dependent choices.

    Example::

        @cp.jit
        def f(a, b):
            return a * b + a

        f(2.0, 3.0)  # 8.0, compiled on this first call
    """
    compiled = _core.jit_function(func)
    functools.update_wrapper(compiled, func)
    return compiled  # type: ignore[return-value]
