"""The structural array operations Python builds with `_core.array_kernel`: written from
crates/copapy-compiler/src/array_kernels.rs by its cargo test (tests/array_kernels.rs), do not edit.
"""

from typing import Literal

# the operations whose result is a scalar value
ScalarKernel = Literal[
    "sum",
    "dot",
    "index",
    "min",
    "max",
    "det",
]
# the operations whose result is an array
ArrayKernel = Literal[
    "strided",
    "matmul",
    "sort",
    "argsort",
    "rows_min",
    "rows_max",
    "gather",
    "solve",
    "conv2d",
    "maxpool2d",
    "avgpool2d",
    "narrow",
]
