"""A closed PID loop where one run() is one loop step, with no host round trip.

The controller and the plant (a first-order lag) are both compiled; their state (plant
output, integral, previous error) is updated by the program itself at the end of every run
through ``updates=``. The host only runs the program and, when it wants, reads a variable by
name. The same program saved with ``tg.save`` runs unchanged under ``copapy-run``.
"""

import sys

import copapy as cp

DT = 0.01  # s
KP, KI, KD = 2.0, 5.0, 0.1
U_MIN, U_MAX = -10.0, 10.0
GAIN, TAU = 0.8, 0.5

setpoint = cp.value(1.0, name="setpoint")
y = cp.value(0.0, name="y")
integral = cp.value(0.0, name="integral")
prev_error = cp.value(0.0, name="prev_error")

error = setpoint - y
new_integral = integral + error * DT
derivative = (error - prev_error) / DT
u = cp.clamp(KP * error + KI * new_integral + KD * derivative, U_MIN, U_MAX)
y_next = y + DT * (GAIN * u - y) / TAU

tg = cp.Target()
tg.compile(u, names={"u": u}, updates={y: y_next, integral: new_integral, prev_error: error})

for step in range(300):
    tg.run()
    if step % 50 == 49:
        print(f"t={(step + 1) * DT:.2f} y={tg.read_value('y')!r} u={tg.read_value('u')!r}")

if len(sys.argv) > 1:
    # the loop as it stands after these 300 steps (tg.save(path, initial=True): from the start),
    # e.g. for: copapy-run pid.cpy --period 1ms
    tg.save(sys.argv[1])
