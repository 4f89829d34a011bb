# quaternion narrows or replaces the vector's operators (``@`` is the Hamilton product, ``*``
# takes a scalar), which mypy reports as incompatible overrides; both are intended.
# mypy: disable-error-code="override, assignment"
"""Quaternions for 3D rotations, with traced (``cp.value``) or plain-number components,
as Copapy's ``quaternion``: components ``(w, x, y, z)`` (``q[0]`` is ``w``, ``q[1:]`` the
vector part); ``a @ b`` is the Hamilton product, ``*`` and ``/`` take a scalar; Euler
angles ``(roll, pitch, yaw)`` rotate by ``Rz(yaw) @ Ry(pitch) @ Rx(roll)``;
``q.rotate_vector(v)`` is ``q @ (0, v) @ q.inverse()``; ``toRotationMatrix()`` is 4x4
homogeneous (for a unit quaternion). Branch-free when traced (``normalize`` and ``inverse``
special-case only a plain zero norm), in Copapy's operation order, so both give the same
float32 bits (the norm is ``sqrt(((w*w + x*x) + y*y) + z*z)``, plain terms first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

from . import _core, _math
from ._core import value
from ._elements import scalar_or_none
from ._tensors import tensor
from ._vectors import vector

_F = value[float] | float
"""A float32 component: traced or a plain number (a plain int is fine where a float is)."""
_Scalar = value[Any] | int | float


def _is_scalar(x: object) -> bool:
    return isinstance(x, value | int | float)


def _ordered_sum(terms: Iterable[_Scalar]) -> _F:
    """Sum as Copapy's ``mixed_sum``: plain numbers first (in Python), then the traced terms
    left to right, the plain total added last."""
    items = list(terms)
    plain: Any = sum(t for t in items if not isinstance(t, value))
    traced: Any = 0
    for t in items:
        if isinstance(t, value):
            traced = t if isinstance(traced, int) and traced == 0 else traced + t
    if isinstance(traced, int) and traced == 0:
        return cast(_F, plain)
    return cast(_F, traced if isinstance(plain, int) and plain == 0 else plain + traced)


class _Sum(Protocol):
    def __call__(self, other: quaternion | _Scalar, /) -> quaternion: ...


class _Scale(Protocol):
    def __call__(self, other: _Scalar, /) -> quaternion: ...


def _algebra(op: str, reflected: bool = False) -> Any:
    """Operator ``op`` (the op table's spelling) of a quaternion and a quaternion (``+ -``)
    or a scalar, element by element; ``NotImplemented`` for other operands."""

    def method(self: quaternion, other: Any) -> Any:
        if isinstance(other, quaternion) and op in ("mul", "div"):
            raise TypeError("quaternion * quaternion is not defined: use @ for the Hamilton product")
        if not (isinstance(other, quaternion) or _is_scalar(other)):
            return NotImplemented
        return quaternion(_core.nd_binary(self, other, op, reflected).values)

    return method


class quaternion(vector[float]):
    """A quaternion ``w + x i + y j + z k`` (see the module documentation), a ``cp.vector``
    of 4 floats with every container method (results of the vector's kind); not generic.

    >>> q = cp.quaternion.from_euler(0.0, 0.0, cp.value(0.5))  # a yaw of 0.5 rad
    >>> v = q.rotate_vector([1.0, 0.0, 0.0])
    """

    __slots__ = ()

    def __init__(self, w: _Scalar | Iterable[_Scalar] = 1.0, x: _Scalar = 0.0, y: _Scalar = 0.0,
                 z: _Scalar = 0.0) -> None:
        if _is_scalar(w) or scalar_or_none(w) is not None:
            comps: tuple[Any, ...] = (w, x, y, z)
        elif isinstance(w, Iterable) and not isinstance(w, str | bytes):
            comps = tuple(w)
            if len(comps) != 4:
                raise ValueError(f"a quaternion needs exactly 4 components (w, x, y, z), got {len(comps)}")
        else:
            raise TypeError(f"quaternion components must be numbers or cp.value, got {type(w).__name__}")
        self.values = cast("tuple[_F, ...]", _core.nd_check_leaves(comps, "quaternion"))
        self.shape = (4,)

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def identity(cls) -> quaternion:
        """The rotation by zero: ``(1, 0, 0, 0)``."""
        return cls(1.0, 0.0, 0.0, 0.0)

    @classmethod
    def from_euler(cls, roll: _Scalar, pitch: _Scalar, yaw: _Scalar) -> quaternion:
        """The rotation ``Rz(yaw) @ Ry(pitch) @ Rx(roll)`` (angles in radians)."""
        cr, sr = _math.cos(roll * 0.5), _math.sin(roll * 0.5)
        cp_, sp = _math.cos(pitch * 0.5), _math.sin(pitch * 0.5)
        cy, sy = _math.cos(yaw * 0.5), _math.sin(yaw * 0.5)
        return cls(
            cr * cp_ * cy + sr * sp * sy,
            sr * cp_ * cy - cr * sp * sy,
            cr * sp * cy + sr * cp_ * sy,
            cr * cp_ * sy - sr * sp * cy,
        )

    # -- components -----------------------------------------------------------------------

    @property
    def w(self) -> _F:
        return self.values[0]

    @property
    def x(self) -> _F:
        return self.values[1]

    @property
    def y(self) -> _F:
        return self.values[2]

    @property
    def z(self) -> _F:
        return self.values[3]

    def __repr__(self) -> str:
        w, x, y, z = self.values
        return f"quaternion(w={w!r}, x={x!r}, y={y!r}, z={z!r})"

    def map(self, func: Callable[[Any], _Scalar]) -> quaternion:
        """A quaternion of ``func`` applied to each component."""
        return quaternion(func(c) for c in self.values)

    def _with_values(self, vals: tuple[Any, ...]) -> quaternion:
        return quaternion(vals)

    # -- algebra --------------------------------------------------------------------------

    def norm(self) -> _F:
        """Length ``sqrt(w² + x² + y² + z²)``."""
        return cast(_F, _math.sqrt(_ordered_sum(c**2 for c in self.values)))

    __abs__ = norm

    def normalize(self) -> quaternion:
        """This quaternion scaled to unit length; the identity if the norm is a plain zero."""
        n = self.norm()
        if not isinstance(n, value) and n == 0:
            return quaternion.identity()
        return self / n

    def conjugate(self) -> quaternion:
        """``(w, -x, -y, -z)``: the inverse rotation for a unit quaternion."""
        w, x, y, z = self.values
        return quaternion(w, -x, -y, -z)

    def inverse(self) -> quaternion:
        """``conjugate() / norm()**2``; the identity if the norm is a plain zero."""
        n2 = self.norm() ** 2
        if not isinstance(n2, value) and n2 == 0:
            return quaternion.identity()
        return self.conjugate() / n2

    def __matmul__(self, other: quaternion) -> quaternion:
        """Hamilton product ``self * other``: apply ``other``'s rotation, then ``self``'s."""
        if not isinstance(other, quaternion):
            return NotImplemented
        aw, ax, ay, az = self.values
        bw, bx, by, bz = other.values
        return quaternion(
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        )

    def __neg__(self) -> quaternion:
        return quaternion(-c for c in self.values)

    # ``+ -`` take a quaternion or a scalar, ``* /`` a scalar: the vector's element-wise
    # operators (NdMethods), the result a quaternion
    __add__: _Sum = _algebra("add")
    __radd__: _Sum = _algebra("add", True)
    __sub__: _Sum = _algebra("sub")
    __rsub__: _Sum = _algebra("sub", True)
    __mul__: _Scale = _algebra("mul")
    __rmul__: _Scale = _algebra("mul", True)
    __truediv__: _Scale = _algebra("div")

    def __pow__(self, other: Any) -> quaternion:
        raise TypeError("quaternion ** is not defined: use @ for the Hamilton product")

    # -- rotations ------------------------------------------------------------------------

    def rotate_vector(self, vec: Iterable[_Scalar]) -> vector[float]:
        """``vec`` (3 components) rotated by this quaternion: the vector part of
        ``self @ (0, vec) @ self.inverse()``."""
        comps = tuple(vec)
        if len(comps) != 3:
            raise ValueError(f"rotate_vector needs a 3D vector, got {len(comps)} components")
        rotated = self @ quaternion(0, *comps) @ self.inverse()
        return vector(rotated.values[1:])

    def toRotationMatrix(self) -> tensor[float]:  # noqa: N802 - Copapy's name
        """The 4x4 homogeneous rotation matrix of this (unit) quaternion, as a ``cp.tensor``."""
        w, x, y, z = self.values
        x2, y2, z2 = x + x, y + y, z + z
        xx, xy, xz = x * x2, x * y2, x * z2
        yy, yz, zz = y * y2, y * z2, z * z2
        wx, wy, wz = w * x2, w * y2, w * z2
        rows: list[list[_F]] = [
            [1.0 - (yy + zz), xy - wz, xz + wy, 0.0],
            [xy + wz, 1.0 - (xx + zz), yz - wx, 0.0],
            [xz - wy, yz + wx, 1.0 - (xx + yy), 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ]
        return tensor(rows)

    def toEulerAngles(self) -> vector[float]:  # noqa: N802 - Copapy's name
        """``[roll, pitch, yaw]`` in radians (the inverse of ``from_euler``); the sine of the
        pitch is clamped to [-1, 1] so rounding near ±90° gives ±pi/2, not NaN."""
        w, x, y, z = self.values
        roll = _math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
        pitch = _math.asin(_math.clamp(2 * (w * y - z * x), -1.0, 1.0))
        yaw = _math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        return vector([roll, pitch, yaw])

    def toAxisAngle(self) -> tuple[vector[float], _F]:  # noqa: N802 - Copapy's name
        """``(axis, angle)``: unit axis and angle in [0, 2 pi]; near the identity
        (sin²(angle/2) < 1e-6) ``[1, 0, 0]`` and 0, chosen without branching."""
        n = self.normalize()
        sin2 = 1 - n.w * n.w
        near_identity = sin2 < 1e-6
        inv_sin = 1 / _math.sqrt(_math.iif(near_identity, 1e-6, sin2))
        angle = _math.iif(near_identity, 0.0, 2 * _math.acos(n.w))
        axis = vector([
            _math.iif(near_identity, 1.0, n.x * inv_sin),
            _math.iif(near_identity, 0.0, n.y * inv_sin),
            _math.iif(near_identity, 0.0, n.z * inv_sin),
        ])
        return axis, angle
