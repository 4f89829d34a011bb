"""copapy: trace numeric Python, compile it to native machine code by copy-and-patch, run it.

Example::

    import copapy as cp
    a = cp.value(0.25)
    b = cp.value(0.87)
    c = a + b * 2.0
    tg = cp.Target()
    tg.compile(c)
    tg.run()
    print(tg.read_value(c))  # 1.99...

Operations on ``cp.value`` objects build a graph in Rust; ``Target.compile`` optimises
it, schedules it onto stencils (precompiled machine-code fragments), links and loads
them; ``Target.run`` executes the native code.
"""

from typing import Any

from . import _core, control, filters, nn, signal
from ._array import array
from ._autograd import grad
from ._casts import cast, to_bool, to_bytes, to_float, to_int
from ._constructors import arange, concat, diagonal, eye, identity, ones, zeros
from ._core import Container, Target, value
from ._extern import extern
from ._interp import interp, lerp, ravel
from ._jit import jit
from ._linalg import det, inv, solve
from ._loops import fori_loop, scan
from ._math import (
    abs,
    acos,
    asin,
    atan,
    atan2,
    clamp,
    cos,
    exp,
    iif,
    log,
    max,
    maximum,
    min,
    minimum,
    pow,
    sign,
    sin,
    sqrt,
    tan,
    tanh,
)
from ._neural import relu, sigmoid
from ._program import load, loads
from ._quaternion import quaternion
from ._tensors import tensor
from ._tensors import tensor as matrix
from ._vectors import (
    angle_between,
    cross,
    distance,
    dot,
    rotate_vector,
    scalar_projection,
    vector,
    vector_projection,
)
from .filters import argsort, sort

# Rust imports no Python module of the package: it gets the classes @cp.jit builds from
# NumPy arguments and the write_value data conversion of sequences here, once (docs/architecture.md,
# "Container protocol").
_core.register_containers(
    array=array._of, vector=vector, matrix=tensor, flatten=_core.nd_flatten_data
)

NumLike = value[Any] | int | float
"""Anything that can take part in an operation: a traced value or a Python number."""

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "Container",
    "NumLike",
    "Target",
    "abs",
    "acos",
    "angle_between",
    "array",
    "arange",
    "argsort",
    "asin",
    "atan",
    "atan2",
    "cast",
    "clamp",
    "control",
    "concat",
    "cos",
    "cross",
    "det",
    "diagonal",
    "distance",
    "dot",
    "exp",
    "extern",
    "eye",
    "filters",
    "fori_loop",
    "grad",
    "identity",
    "iif",
    "interp",
    "inv",
    "jit",
    "lerp",
    "load",
    "loads",
    "log",
    "matrix",
    "max",
    "maximum",
    "min",
    "minimum",
    "nn",
    "ones",
    "pow",
    "quaternion",
    "ravel",
    "relu",
    "rotate_vector",
    "scalar_projection",
    "scan",
    "signal",
    "sigmoid",
    "sign",
    "sin",
    "solve",
    "sort",
    "sqrt",
    "tan",
    "tanh",
    "tensor",
    "to_bool",
    "to_bytes",
    "to_float",
    "to_int",
    "value",
    "vector",
    "vector_projection",
    "zeros",
]
