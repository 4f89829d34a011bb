"""Linear algebra on arrays and tensors: ``cp.solve``, ``cp.inv`` and ``cp.det`` (Copapy's
newest names).

Traced systems compile to one stencil (``st_arr_solve_f``): Gaussian elimination with
partial pivoting in float32, where the pivot row is chosen and swapped by masks, so the
time depends on the size of the system only. The order of operations is fixed and the
same on every target (``stencils/gen_elements.py``, ``_SOLVE``):

1. For each column k: for i = k+1 .. n-1 in increasing i, rows k and i trade places
   (matrix columns k.., every right-hand side) when ``|a[i][k]| > |a[k][k]|``
   (strictly: ties and NaNs keep the upper row).
2. ``inv = 1 / a[k][k]``; for each lower row i: ``f = a[i][k] * inv``, then
   ``a[i][j] = a[i][j] - f * a[k][j]`` (j > k) and ``b[i][c] = b[i][c] - f * b[k][c]``.
3. Back substitution, i = n-1 .. 0, each column c: ``s = b[i][c]``, then
   ``s = s - a[i][q] * x[q][c]`` for q = i+1 .. n-1 in increasing q, ``x[i][c] = s * inv_i``.

A singular matrix is not detected at run time (that would be a data-dependent branch):
the division by a zero pivot gives inf or NaN, as in Copapy. A tensor of plain numbers is
solved while tracing in Python floats, and there an exactly zero pivot raises ValueError
("Matrix is singular"), as Copapy's unrolled elimination does.

``det`` of an array (and of a traced tensor larger than 4 x 4) is one stencil
(``st_arr_det_f``): the same elimination without right-hand sides, ``d = 1.0`` and
``d = d * a[k][k]`` after the swaps of column k (k increasing), negated at the end if
the number of swaps is odd; a zero pivot gives 0 (its inverse is taken as 0 by a mask,
so nothing becomes NaN). A traced tensor up to 4 x 4 is expanded by cofactors along the
rows into scalar operations (``_cofactors``), products with constant zeros left out;
a tensor of numbers gives a number while tracing.

``cp.grad`` flows through solve and det: for ``x = solve(A, B)`` and the adjoint ``G`` of
x, ``dB = solve(Aᵀ, G)`` and ``dA = -dB @ xᵀ``; for ``det`` of an array,
``dA = det(A) * solve(Aᵀ, I)`` (inf or NaN for a singular matrix).
"""

from __future__ import annotations

from typing import Any, overload

from . import _core
from ._array import array
from ._casts import to_float
from ._core import value
from ._tensors import tensor
from ._vectors import vector


def _square(a: Any) -> array[Any] | tensor[Any]:
    """``a`` as an array or tensor, checked to be an n x n matrix."""
    m: array[Any] | tensor[Any] = a if isinstance(a, array | tensor) else tensor(a)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(
            f"solve, inv and det need a square matrix (n x n), got shape {m.shape}: "
            "pass a 2-D array or tensor with as many rows as columns"
        )
    return m


def _as_array(x: array[Any] | tensor[Any] | vector[Any]) -> array[Any]:
    if isinstance(x, array):
        return x
    return array(list(x.values), dtype=None).reshape(*x.shape)


def _constant(x: tensor[Any] | vector[Any]) -> bool:
    return not any(isinstance(v, value) for v in x.values)


def _solve_numbers(a: tuple[Any, ...], b: tuple[Any, ...], n: int, r: int) -> list[float]:
    """The elimination of the stencil in Python floats, for matrices known while tracing."""
    w = [[float(v) for v in a[i * n:(i + 1) * n]] for i in range(n)]
    x = [[float(v) for v in b[i * r:(i + 1) * r]] for i in range(n)]
    for k in range(n):
        for i in range(k + 1, n):
            if abs(w[i][k]) > abs(w[k][k]):
                w[k], w[i] = w[i], w[k]
                x[k], x[i] = x[i], x[k]
        if w[k][k] == 0:
            raise ValueError("Matrix is singular")
        inv = 1.0 / w[k][k]
        for i in range(k + 1, n):
            f = w[i][k] * inv
            w[i] = [w[i][j] - f * w[k][j] if j > k else w[i][j] for j in range(n)]
            x[i] = [x[i][c] - f * x[k][c] for c in range(r)]
        w[k][k] = inv
    for i in reversed(range(n)):
        for c in range(r):
            s = x[i][c]
            for q in range(i + 1, n):
                s = s - w[i][q] * x[q][c]
            x[i][c] = s * w[i][i]
    return [v for row in x for v in row]


def _solve_arrays(a: array[Any], b: array[Any]) -> array[float]:
    n = a.shape[0]
    r = b.size // n
    node = _core.array_kernel("solve", [a.astype("float")._cp_node, b.astype("float")._cp_node], [n, r])
    return array._of(node, b.shape, "float")


@overload
def solve(a: array[Any], b: array[Any] | tensor[Any] | vector[Any], pivot: bool = True) -> array[float]: ...
@overload
def solve(a: tensor[Any], b: array[Any], pivot: bool = True) -> array[float]: ...
@overload
def solve(a: tensor[Any], b: vector[Any], pivot: bool = True) -> vector[float]: ...
@overload
def solve(a: tensor[Any], b: tensor[Any], pivot: bool = True) -> tensor[float]: ...
@overload
def solve(a: Any, b: Any, pivot: bool = True) -> Any: ...
def solve(a: Any, b: Any, pivot: bool = True) -> Any:
    """The solution x of ``a @ x = b`` (like ``numpy.linalg.solve``), in float32.

    ``a`` is an n x n matrix (array, tensor or nested sequences), ``b`` n right-hand side
    values (1-D) or n rows of them (2-D, one system per column). The result has the shape
    of ``b``: an array if ``a`` or ``b`` is an array, else a vector if ``b`` is a vector,
    else a tensor. One elimination stencil with partial pivoting in the documented order
    (module docstring); ``pivot`` is accepted for Copapy's signature, the stencil always
    pivots. A singular matrix gives inf or NaN (a tensor of numbers raises ValueError).
    """
    del pivot  # always pivots: the masked swaps cost no branches
    a = _square(a)
    if not isinstance(b, array | tensor | vector):
        b = tensor(b)
    n: int = a.shape[0]
    if b.ndim not in (1, 2) or b.shape[0] != n:
        raise ValueError(
            f"Shape mismatch: matrix {a.shape} and right-hand side {b.shape}: "
            f"b needs {n} elements or {n} rows"
        )
    if isinstance(a, array) or isinstance(b, array):
        return _solve_arrays(_as_array(a), _as_array(b))
    if _constant(a) and _constant(b):
        r = len(b.values) // n
        flat = _solve_numbers(a.values, b.values, n, r)
        return vector(flat) if isinstance(b, vector) else tensor(flat, b.shape)
    x = _solve_arrays(_as_array(a), _as_array(b))
    elements = [x.element(k) for k in range(x.size)]
    return vector(elements) if isinstance(b, vector) else tensor(elements, b.shape)


@overload
def inv(a: array[Any], pivot: bool = True) -> array[float]: ...
@overload
def inv(a: tensor[Any], pivot: bool = True) -> tensor[float]: ...
@overload
def inv(a: Any, pivot: bool = True) -> Any: ...
def inv(a: Any, pivot: bool = True) -> Any:
    """The inverse of a square matrix (like ``numpy.linalg.inv``): ``solve(a, identity)``,
    an array if ``a`` is an array, else a tensor. A singular matrix gives inf or NaN."""
    a = _square(a)
    n: int = a.shape[0]
    identity = [[float(i == j) for j in range(n)] for i in range(n)]
    if isinstance(a, array):
        return solve(a, array(identity, "float"), pivot)
    return solve(a, tensor(identity), pivot)


_COFACTOR_MAX = 4
"""The largest traced tensor det expands by cofactors (Copapy's limit); larger ones and
arrays take the elimination stencil."""


def _cofactors(elements: tuple[Any, ...], n: int) -> Any:
    """The determinant by cofactor expansion along the rows, each minor computed once.

    minor(row, cols) = sum over the positions p of cols, in order, of
    ``(-1)**p * a[row][cols[p]] * minor(row + 1, cols without p)``, added left to right
    starting from the first term (a subtraction for odd p); terms whose element is a
    constant zero are left out; an empty sum is 0.0."""
    a = [to_float(v) if isinstance(v, value) else float(v) for v in elements]
    memo: dict[tuple[int, tuple[int, ...]], Any] = {}

    def minor(row: int, cols: tuple[int, ...]) -> Any:
        if row == n:
            return 1.0
        key = (row, cols)
        if key in memo:
            return memo[key]
        acc: Any = None
        for p, col in enumerate(cols):
            x = a[row * n + col]
            if not isinstance(x, value) and x == 0:
                continue
            term = x * minor(row + 1, cols[:p] + cols[p + 1:])
            if acc is None:
                acc = -term if p % 2 else term
            else:
                acc = acc - term if p % 2 else acc + term
        memo[key] = 0.0 if acc is None else acc
        return memo[key]

    return minor(0, tuple(range(n)))


def _det_numbers(elements: tuple[Any, ...], n: int) -> float:
    """The determinant of numbers in Python floats: elimination with partial pivoting."""
    w = [[float(v) for v in elements[i * n:(i + 1) * n]] for i in range(n)]
    d = 1.0
    for k in range(n):
        p = max(range(k, n), key=lambda i: abs(w[i][k]))
        if w[p][k] == 0:
            return 0.0
        if p != k:
            w[k], w[p] = w[p], w[k]
            d = -d
        d *= w[k][k]
        for i in range(k + 1, n):
            f = w[i][k] / w[k][k]
            w[i] = [x - f * y for x, y in zip(w[i], w[k], strict=True)]
    return d


@overload
def det(a: array[Any]) -> value[float]: ...
@overload
def det(a: Any) -> value[float] | float: ...
def det(a: Any) -> Any:
    """The determinant of a square matrix (like ``numpy.linalg.det``), in float32.

    An array (and a traced tensor larger than 4 x 4 or made with ``packed=True``) is one
    elimination stencil; a smaller traced tensor is expanded by cofactors into scalar
    operations; a tensor of numbers gives a Python float while tracing. A singular matrix
    gives 0 (module docstring)."""
    m = _square(a)
    n: int = m.shape[0]
    if isinstance(m, array):
        return _core.array_kernel("det", [m.astype("float")._cp_node], [n])
    if _constant(m):
        return _det_numbers(m.values, n)
    if n > _COFACTOR_MAX or m._packed:
        return _core.array_kernel("det", [_as_array(m).astype("float")._cp_node], [n])
    return _cofactors(m.values, n)
