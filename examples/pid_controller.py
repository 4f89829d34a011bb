"""A PID controller step compiled once and run in a loop against a simulated plant.

The controller (float32, compiled by copapy) computes the actuator command from the setpoint
and the measurement; its state (integral, previous error) lives in the program's inputs and is
written back each step with write_value, as a control loop on a device would do. The plant, a
first-order lag, is simulated here in plain Python.
"""

import copapy as cp

DT = 0.01  # s
KP, KI, KD = 2.0, 5.0, 0.1
U_MIN, U_MAX = -10.0, 10.0


def clamp(x: "cp.value[float]", lo: float, hi: float) -> "cp.value[float]":
    """Clamp without a branch: comparisons give bools, and bools take part in arithmetic as 0/1."""
    above = x > hi
    below = x < lo
    inside = 1 - above - below
    return above * hi + below * lo + inside * x


# Controller inputs (values of the previous step are written in before each run).
setpoint = cp.value(0.0)
measurement = cp.value(0.0)
integral = cp.value(0.0)
prev_error = cp.value(0.0)

# One controller step.
error = setpoint - measurement
new_integral = integral + error * DT
derivative = (error - prev_error) / DT
command = clamp(KP * error + KI * new_integral + KD * derivative, U_MIN, U_MAX)

tg = cp.Target()
tg.compile(command, new_integral, error)

# Closed loop: setpoint step to 1.0 at t = 0, plant dy/dt = (gain * u - y) / tau.
gain, tau = 0.8, 0.5
y = 0.0
state_integral, state_error = 0.0, 0.0
for step in range(300):
    tg.write_value([setpoint, measurement, integral, prev_error], [1.0, y, state_integral, state_error])
    tg.run()
    u = tg.read_value(command)
    state_integral = tg.read_value(new_integral)
    state_error = tg.read_value(error)
    y += DT * (gain * u - y) / tau
    if step % 50 == 49:
        print(f"t={(step + 1) * DT:.2f} y={y!r} u={u!r}")
