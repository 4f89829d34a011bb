"""Checked with ``mypy --strict`` (not a pytest module): the generic vector/tensor types."""

from __future__ import annotations

import copapy as cp

fv: cp.vector[float] = cp.vector([cp.value(1.0), 2.0])
iv: cp.vector[int] = cp.vector([cp.value(1), 2])

a: cp.vector[float] = fv + 1
b: cp.vector[int] = iv * 2 + iv
c: cp.vector[float] = iv + 0.5
d: cp.vector[float] = iv / 2
e: cp.vector[float] = 2.0 * fv - fv
cmp: cp.vector[int] = fv < 1.0
s: float | cp.value[float] = fv.sum()
si: int | cp.value[int] = iv.sum()
dot: float | cp.value[float] = fv @ fv
doti: int | cp.value[int] = iv @ iv
mag: float | cp.value[float] = fv.magnitude()
n: cp.vector[float] = fv.normalize()
x: cp.vector[float] = fv.cross(fv)
el: float | cp.value[float] = fv[0]
sl: cp.vector[float] = fv[1:]
dist: float | cp.value[float] = cp.distance(fv, fv)

m: cp.tensor[float] = cp.matrix([[1.0, 2.0], [3.0, 4.0]])
mi: cp.tensor[int] = cp.identity(2)
mv: cp.tensor[float] = m @ fv
mm: cp.tensor[float] = m @ m.T
mt: cp.tensor[float] = m + fv
mt2: cp.tensor[float] = fv + m
row: cp.tensor[float] = m[0]
ms: float | cp.value[float] = m.sum()
msa: cp.tensor[float] = m.sum(0)
z: cp.tensor[int] = cp.zeros((2, 2)) + cp.ones(2)
ar: cp.tensor[int] = cp.arange(3)
cc: cp.vector[float] = cp.concat(fv, fv)

tg = cp.Target()
tg.compile(a, m)
