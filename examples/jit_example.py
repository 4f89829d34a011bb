"""The @cp.jit example of the Copapy README: compile a function on its first call.

The first call with a given argument signature traces and compiles the function; later calls
with the same signature run the cached native code. Arithmetic is float32.
"""

import copapy as cp


@cp.jit
def calculation(x: float, y: float) -> float:
    return sum(x**2 + y**2 + i for i in range(10))


def main() -> None:
    result1 = calculation(2.5, 1.2)  # compiles, then runs
    result2 = calculation(3.1, 4.7)  # runs the cached compiled version
    print("Result 1:", result1)
    print("Result 2:", result2)


if __name__ == "__main__":
    main()
