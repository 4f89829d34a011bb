"""Attitude estimation from a gyroscope: integrate body rotation rates into a quaternion.

One compiled step takes the attitude quaternion and the measured body rates (rad/s) and
returns the attitude DT seconds later. The step uses the exact rotation for a rate that is
constant over the step,

    q_next = normalize(q @ [cos(|w| DT / 2), sin(|w| DT / 2) * w / |w|]),

with cp.iif selecting the small-angle limit (DT / 2) * w when |w| is 0, without a branch.
Normalising every step keeps rounding from drifting the quaternion off unit length. The
loop feeds a scripted gyro sequence and prints the attitude after each manoeuvre.
"""

import math

import copapy as cp

DT = 0.01  # s, a 100 Hz loop

MANOEUVRES = [  # (name, steps, body rates in rad/s)
    ("yaw left 90 deg", 100, [0.0, 0.0, math.pi / 2]),
    ("roll right 45 deg", 100, [math.pi / 4, 0.0, 0.0]),
    ("pitch and yaw", 150, [0.0, 0.3, -0.2]),
    ("hold", 50, [0.0, 0.0, 0.0]),
    ("tumble", 200, [1.0, -2.0, 0.5]),
]


def main() -> None:
    q_in = [cp.value(1.0), cp.value(0.0), cp.value(0.0), cp.value(0.0)]
    q = cp.quaternion(q_in)
    gyro = cp.vector([cp.value(0.0) for _ in range(3)])

    rate = gyro.magnitude()
    half_angle = rate * (DT / 2)
    scale = cp.iif(rate > 1e-12, cp.sin(half_angle) / rate, DT / 2)  # sin(|w| DT/2) / |w|
    delta = cp.quaternion(cp.cos(half_angle), gyro[0] * scale, gyro[1] * scale, gyro[2] * scale)
    q_next = (q @ delta).normalize()
    euler = q_next.toEulerAngles()
    nose = q_next.rotate_vector(cp.vector([1.0, 0.0, 0.0]))  # body x axis in the world frame

    tg = cp.Target()
    tg.compile(q_next, euler, nose)

    state = [1.0, 0.0, 0.0, 0.0]
    for name, steps, rates in MANOEUVRES:
        tg.write_value(gyro, rates)
        for _ in range(steps):
            tg.write_value(q_in, state)
            tg.run()
            state = tg.read_value(q_next).tolist()
        print(f"after {name}:")
        print(f"  quaternion: {state}")
        print(f"  roll pitch yaw: {tg.read_value(euler)}")
        print(f"  nose: {tg.read_value(nose)}")
    print(f"norm: {math.sqrt(sum(c * c for c in state))}")


if __name__ == "__main__":
    main()
