"""Forward kinematics of a planar 3-link arm, compiled once and evaluated for several poses.

Each link i has length L[i] and turns by the joint angle theta[i] relative to the previous
link, so its absolute angle is theta[0] + ... + theta[i]. The program computes every joint
position, the end-effector position and the tool orientation; the joint angles are inputs
written before each run, as a robot controller would do on every cycle.
"""

import math

import copapy as cp

LINKS = [1.8, 2.0, 0.6]  # link lengths in m

POSES = [  # joint angles in rad
    [0.0, 0.0, 0.0],
    [math.pi / 2, 0.0, 0.0],
    [0.3, -0.7, 1.1],
    [-0.7221821546554565, 2.6245293617248535, -0.4],
    [2.5, 1.2, -2.9],
]


def main() -> None:
    theta = cp.vector([cp.value(0.0) for _ in LINKS])

    # Trace the kinematic chain: accumulate the absolute angle and the position link by link.
    position = cp.vector([0.0, 0.0])
    angle: cp.value[float] | float = 0.0
    joints: list[cp.vector[float]] = []
    for length, joint_angle in zip(LINKS, theta, strict=True):
        angle = angle + joint_angle
        position = position + cp.vector([length * cp.cos(angle), length * cp.sin(angle)])
        joints.append(position)
    end_effector = joints[-1]
    reach = cp.sqrt(end_effector @ end_effector)  # distance from the base

    tg = cp.Target()
    tg.compile(joints, angle, reach)

    for k, pose in enumerate(POSES):
        tg.write_value(theta, pose)
        tg.run()
        print(f"pose {k}: theta = {pose}")
        for i, joint in enumerate(joints[:-1]):
            print(f"  joint {i + 1}: {tg.read_value(joint)}")
        print(f"  end effector: {tg.read_value(end_effector)}")
        print(f"  tool angle: {tg.read_value(angle)}")
        print(f"  reach: {tg.read_value(reach)}")


if __name__ == "__main__":
    main()
