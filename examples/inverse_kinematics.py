"""Inverse kinematics of a two-joint planar arm by gradient descent (the Copapy README example).

cp.grad differentiates the squared distance between the end effector and the target with
respect to the joint angles; 48 unrolled descent steps are traced into one program, compiled
and run once. The joint angles start at 0; the end effector ends within a millimetre of the target.
"""

import copapy as cp

# Arm lengths
l1, l2 = 1.8, 2.0

# Target position
target = cp.vector([0.7, 0.7])

# Learning rate for iterative adjustment
alpha = 0.1


def forward_kinematics(
    theta1: "cp.value[float] | float", theta2: "cp.value[float] | float"
) -> "tuple[cp.vector[float], cp.vector[float]]":
    """Return positions of joint and end-effector."""
    joint = cp.vector([l1 * cp.cos(theta1), l1 * cp.sin(theta1)])
    end_effector = joint + cp.vector([l2 * cp.cos(theta1 + theta2), l2 * cp.sin(theta1 + theta2)])
    return joint, end_effector


def main() -> None:
    # Start values
    theta = cp.vector([cp.value(0.0), cp.value(0.0)])

    # Iterative inverse kinematics
    for _ in range(48):
        joint, effector = forward_kinematics(theta[0], theta[1])
        error = ((target - effector) ** 2).sum()

        theta -= alpha * cp.grad(error, theta)

    tg = cp.Target()
    tg.compile(error, theta, joint)
    tg.run()

    print(f"Joint angles: {tg.read_value(theta)}")
    print(f"Joint position: {tg.read_value(joint)}")
    print(f"End-effector position: {tg.read_value(effector)}")
    print(f"quadratic error = {tg.read_value(error)}")


if __name__ == "__main__":
    main()
