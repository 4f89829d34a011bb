"""A tiny neural network (3 inputs, 4 hidden ReLU units, 2 sigmoid outputs) compiled to code.

The weights are constants, folded into the program: a zero weight costs nothing, as the
second hidden unit's missing input shows. Only the sensor inputs are variables. The network
classifies a (temperature, vibration, current) reading of a motor into two alarm scores.
"""

import copapy as cp

W1 = [  # hidden layer: 4 units x 3 inputs
    [0.8, -0.5, 0.3],
    [0.0, 1.2, -0.7],
    [-0.6, 0.4, 0.9],
    [0.25, 0.25, 0.25],
]
B1 = [0.1, -0.2, 0.05, -0.3]
W2 = [  # output layer: 2 outputs x 4 hidden units
    [1.5, -0.8, 0.6, 0.0],
    [-1.1, 0.9, 1.3, -0.4],
]
B2 = [-0.25, 0.1]

READINGS = [
    [0.0, 0.0, 0.0],
    [1.0, 0.5, -0.5],
    [-0.3, 2.0, 1.1],
    [3.0, -1.0, 0.2],
    [-2.0, -2.0, -2.0],
]


def main() -> None:
    x = cp.vector([cp.value(0.0) for _ in range(3)])
    hidden = cp.relu(cp.matrix(W1) @ x + cp.vector(B1))
    scores = cp.sigmoid(cp.matrix(W2) @ hidden + cp.vector(B2))

    tg = cp.Target()
    tg.compile(hidden, scores)
    for reading in READINGS:
        tg.write_value(x, reading)
        tg.run()
        print(f"input {reading}: hidden {tg.read_value(hidden)} scores {tg.read_value(scores)}")


if __name__ == "__main__":
    main()
