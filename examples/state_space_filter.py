"""A discrete state-space filter x[k+1] = A x[k] + B u[k], y[k] = C x[k] + D u[k].

The state vector lives in the program and is advanced by the program itself (``updates=``);
the host writes the input sample and reads the output sample by name each step.
"""

import math

import copapy as cp

# A second-order low-pass (damped resonator), discretised at 1 kHz.
A = [[0.98, 0.03], [-0.03, 0.97]]
B = [0.01, 0.02]
C = [1.0, 0.5]
D = 0.05

x = cp.vector([cp.value(0.0), cp.value(0.0)])
u = cp.value(0.0, name="u")

x_next = cp.vector([A[0][0] * x[0] + A[0][1] * x[1] + B[0] * u, A[1][0] * x[0] + A[1][1] * x[1] + B[1] * u])
y = C[0] * x[0] + C[1] * x[1] + D * u

tg = cp.Target()
tg.compile(y, names={"y": y, "x": x}, updates=[(x, x_next)])

for k in range(40):
    tg.write_value("u", math.sin(0.3 * k))
    tg.run()
    if k % 8 == 7:
        x0, x1 = tg.read_value("x")
        print(f"k={k} y={tg.read_value('y')!r} x0={x0!r} x1={x1!r}")
