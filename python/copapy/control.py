"""Discrete state-space steps from python-control / SciPy designs, deployed with copapy.

``x_next, y = ss_step(sys, x, u)`` is one step of ``x[k+1] = A x[k] + B u[k]``,
``y[k] = C x[k] + D u[k]``. ``sys`` is ``(A, B, C, D)`` (taken as discrete) or any object
with ``A``, ``B``, ``C``, ``D`` and ``dt`` attributes: python-control's ``StateSpace`` and
SciPy's ``dlti`` / ``StateSpace`` (duck-typed: copapy imports neither package). A system
whose ``dt`` is 0 or None is continuous-time and is refused: discretise it first
(``control.c2d(sys, Ts)``, ``scipy.signal.cont2discrete`` or ``sys.to_discrete(Ts)``).

Matrix entries are numbers (folded into the program; a 0 drops its term) or ``cp.value`` s
(tunable at run time). ``feedback(K, x, r)`` is the state feedback ``u = r - K x``,
``observer_step(sys, L, x_hat, u, y)`` a Luenberger / Kalman predictor step
``x_hat' = A x_hat + B u + L (y - C x_hat - D u)``, and ``controller_step`` both together.
``step_program(sys, ...)`` compiles a whole step into a ``cp.Target`` with named inputs,
outputs and a state that the program advances itself (``updates=``).

Order of the float32 operations (what the NumPy references in the tests repeat): every
row is one left-to-right sum of its products, e.g. ``x_next[i] = ((A[i,0]*x[0] +
A[i,1]*x[1]) + ...) + B[i,0]*u[0] + ...``, terms with a number coefficient 0 left out;
the observer's row adds ``L[i,j]*e[j]`` after the ``B`` terms, with the innovation
``e[j] = y[j] - (C[j,:] x_hat + D[j,:] u)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._core import Target, value
from ._interp import elements_and_shape

__all__ = ["StepProgram", "controller_step", "feedback", "observer_step", "ss_step", "step_program",
           "system_matrices"]

Matrix = list[list[Any]]


def _matrix(m: Any, name: str, rows: int | None, cols: int | None, what: str) -> Matrix:
    items, shape = elements_and_shape(m, name)
    if len(shape) == 1 and rows == 1:  # a row given as a 1-D sequence
        shape = (1, shape[0])
    if len(shape) == 0 and rows == 1 and cols == 1:
        shape = (1, 1)
    if len(shape) != 2 or (rows is not None and shape[0] != rows) or (cols is not None and shape[1] != cols):
        raise ValueError(f"{name} must have shape {what}, got shape {shape}")
    for e in items:
        if isinstance(e, bool) or not isinstance(e, value | int | float):
            raise TypeError(f"{name} must hold numbers or cp.value, got {type(e).__name__}")
    flat = [e if isinstance(e, value) else float(e) for e in items]
    return [flat[r * shape[1]:(r + 1) * shape[1]] for r in range(shape[0])]


def _is_continuous(dt: Any) -> bool:
    if dt is True:
        return False
    return dt is None or (isinstance(dt, int | float) and dt == 0)


def system_matrices(sys: Any) -> tuple[Matrix, Matrix, Matrix, Matrix]:
    """``(A, B, C, D)`` of a discrete system as nested lists, shapes checked: ``A`` is
    ``(n, n)``, ``B`` ``(n, m)``, ``C`` ``(p, n)``, ``D`` ``(p, m)``."""
    if isinstance(sys, tuple | list):
        if len(sys) != 4:
            raise ValueError(f"a system given as a tuple must be (A, B, C, D), got {len(sys)} items")
        a, b, c, d = sys
    else:
        if not hasattr(sys, "A") and callable(getattr(sys, "to_ss", None)):
            sys = sys.to_ss()  # SciPy's transfer-function / zpk dlti
        if not all(hasattr(sys, k) for k in "ABCD"):
            raise TypeError(f"sys must be (A, B, C, D) or a state-space system with A, B, C, D and dt "
                            f"(python-control's StateSpace, SciPy's dlti), not {type(sys).__name__}; "
                            "convert a transfer function first, e.g. control.ss(sys)")
        dt = getattr(sys, "dt", None)
        if _is_continuous(dt):
            raise ValueError(f"sys is a continuous-time system (dt={dt!r}): discretise it first, e.g. "
                             "control.c2d(sys, Ts), scipy.signal.cont2discrete((A, B, C, D), Ts) or "
                             "sys.to_discrete(Ts)")
        a, b, c, d = sys.A, sys.B, sys.C, sys.D
    am = _matrix(a, "A", None, None, "(n, n)")
    n = len(am)
    if any(len(row) != n for row in am) or n == 0:
        raise ValueError(f"A must be square (n, n), got shape ({n}, {len(am[0]) if am else 0})")
    bm = _matrix(b, "B", n, None, f"(n, m) = ({n}, m)")
    m = len(bm[0])
    cm = _matrix(c, "C", None, n, f"(p, n) = (p, {n})")
    p = len(cm)
    dm = _matrix(d, "D", p, m, f"(p, m) = ({p}, {m})")
    return am, bm, cm, dm


def _vec(x: Any, n: int, name: str) -> list[Any]:
    items, shape = elements_and_shape(x, name)
    if len(items) != n or len(shape) > 1 or (len(shape) == 0 and n != 1):
        raise ValueError(f"{name} must have shape ({n},), got shape {shape}")
    return list(items)


def _row_sum(pairs: Sequence[tuple[Any, Any]]) -> Any:
    """Left-to-right sum of ``coef * x``, number-0 coefficients left out (0.0 if none)."""
    total: Any = None
    for coef, x in pairs:
        if not isinstance(coef, value) and coef == 0.0:
            continue
        term = coef * x
        total = term if total is None else total + term
    return 0.0 if total is None else total


def ss_step(sys: Any, x: Any, u: Any) -> tuple[list[Any], list[Any]]:
    """One step of the discrete system: ``(x_next, y)`` as lists of values (numbers
    where everything involved is a number). ``x`` has ``n`` elements, ``u`` ``m`` (a
    single number or value when ``m == 1``)."""
    a, b, c, d = system_matrices(sys)
    n, m = len(a), len(b[0])
    xs, us = _vec(x, n, "x"), _vec(u, m, "u")
    x_next = [_row_sum([*zip(a[i], xs, strict=True), *zip(b[i], us, strict=True)]) for i in range(n)]
    y = [_row_sum([*zip(c[i], xs, strict=True), *zip(d[i], us, strict=True)]) for i in range(len(c))]
    return x_next, y


def feedback(K: Any, x: Any, r: Any = None) -> list[Any]:
    """State feedback ``u = r - K x`` (``u = -(K x)`` without ``r``): ``K`` is ``(m, n)``."""
    km = _matrix(K, "K", None, None, "(m, n)")
    n = len(km[0])
    xs = _vec(x, n, "x")
    rs = _vec(r, len(km), "r") if r is not None else None
    sums = [_row_sum(list(zip(row, xs, strict=True))) for row in km]
    return [-s if rs is None else rs[i] - s for i, s in enumerate(sums)]


def observer_step(sys: Any, L: Any, x_hat: Any, u: Any, y: Any) -> list[Any]:
    """The predictor-form observer step ``x_hat' = A x_hat + B u + L (y - C x_hat - D u)``;
    ``L`` is ``(n, p)``. Returns ``x_hat'`` as a list."""
    a, b, c, d = system_matrices(sys)
    n, m, p = len(a), len(b[0]), len(c)
    lm = _matrix(L, "L", n, p, f"(n, p) = ({n}, {p})")
    xs, us, ys = _vec(x_hat, n, "x_hat"), _vec(u, m, "u"), _vec(y, p, "y")
    e = [ys[j] - _row_sum([*zip(c[j], xs, strict=True), *zip(d[j], us, strict=True)]) for j in range(p)]
    return [_row_sum([*zip(a[i], xs, strict=True), *zip(b[i], us, strict=True), *zip(lm[i], e, strict=True)])
            for i in range(n)]


def controller_step(sys: Any, K: Any, L: Any, x_hat: Any, y: Any,
                    r: Any = None) -> tuple[list[Any], list[Any]]:
    """Observer-based state feedback: ``u = r - K x_hat``, then the observer step with that
    ``u`` and the measurement ``y``. Returns ``(u, x_hat_next)``."""
    u = feedback(K, x_hat, r)
    return u, observer_step(sys, L, x_hat, u, y)


@dataclass
class StepProgram:
    """A compiled step of a discrete system: ``target`` runs one step per ``run()``; the
    names of its inputs, outputs and state variables (``target.write_value(name, v)`` /
    ``read_value(name)``, ``copapy-run --set``)."""

    target: Target
    inputs: list[str]
    outputs: list[str]
    states: list[str]
    _handles: dict[str, Any] = field(default_factory=dict, repr=False)

    def step(self, u: Any) -> list[float]:
        """Writes ``u`` (one number per input), runs one step, returns the outputs."""
        us = [u] if isinstance(u, int | float) else list(u)
        if len(us) != len(self.inputs):
            raise ValueError(f"u must have {len(self.inputs)} elements, got {len(us)}")
        for name, v in zip(self.inputs, us, strict=True):
            self.target.write_value(name, float(v))
        self.target.run()
        return [float(self.target.read_value(name)) for name in self.outputs]

    def save(self, path: str) -> None:
        """The program file (runs under ``copapy-run`` with the same names)."""
        self.target.save(path)


def step_program(sys: Any, x0: Any = None, *, inputs: str = "u", outputs: str = "y", state: str = "x",
                 K: Any = None, L: Any = None, target: Target | None = None) -> StepProgram:
    """Compile one step of ``sys`` with named variables ``u[0]``, ``y[0]``, ``x[0]``, ...
    (the prefixes are ``inputs``, ``outputs``, ``state``); the program advances ``x`` itself.

    Without ``K``: the plant, ``x' = A x + B u``, ``y = C x + D u``. With ``K`` and ``L``: the
    observer-based controller, inputs are the measurements ``y`` of the plant (named by
    ``inputs``), outputs the commands ``u = -K x_hat`` (named by ``outputs``), the state is
    ``x_hat``. ``target``: where to compile (a new ``cp.Target()`` when None)."""
    a, b, c, _ = system_matrices(sys)
    n, m, p = len(a), len(b[0]), len(c)
    init = [0.0] * n if x0 is None else [float(v) for v in _vec(x0, n, "x0")]
    xs = [value(init[i], name=f"{state}[{i}]") for i in range(n)]
    if K is None:
        us = [value(0.0, name=f"{inputs}[{k}]") for k in range(m)]
        x_next, outs = ss_step(sys, xs, us)
        ys: list[Any] = []
        n_in = m
    else:
        if L is None:
            raise ValueError("K needs L: a controller step estimates the state from the measurements")
        ys = [value(0.0, name=f"{inputs}[{j}]") for j in range(p)]
        us = []
        outs, x_next = controller_step(sys, K, L, xs, ys)
        n_in = p
    outs = [o if isinstance(o, value) else value(float(o)) * 1.0 for o in outs]
    tg = target if target is not None else Target()
    names = {f"{outputs}[{i}]": o for i, o in enumerate(outs)}
    updates = {xs[i]: x_next[i] for i in range(n) if x_next[i] is not xs[i]}
    ins = us if K is None else ys
    tg.compile([*outs, *ins], names=names, updates=updates)  # inputs too: a zero column leaves them unused
    return StepProgram(tg, [f"{inputs}[{k}]" for k in range(n_in)], list(names),
                       [f"{state}[{i}]" for i in range(n)])
