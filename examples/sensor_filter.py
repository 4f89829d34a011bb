"""Moving median and moving mean over a sensor window: spike rejection versus smoothing.

A distance sensor delivers noisy samples with occasional outliers (a dropout reads 0, a
reflection reads far too much). The compiled program sees the last WINDOW samples and
returns their median, which ignores up to WINDOW // 2 outliers, and their mean, which smooths
noise but is dragged by every outlier. The median is a sorting network of min/max operations:
no branches, the same instructions for every input. argsort names the sample the median is.
"""

import math

import copapy as cp
from copapy import filters

WINDOW = 5


def sensor(n: int) -> float:
    """True distance ramps from 1.0 m to 1.5 m; deterministic noise; a few outliers."""
    if n in (7, 19, 20):
        return 0.0  # dropouts
    if n == 31:
        return 9.5  # reflection
    return 1.0 + 0.5 * n / 40 + 0.02 * math.sin(2.7 * n) + 0.01 * math.cos(7.1 * n)


def main() -> None:
    window = cp.vector([cp.value(0.0) for _ in range(WINDOW)])
    median = filters.median(window)
    mean = filters.mean(window)
    order = filters.argsort(window)

    tg = cp.Target()
    tg.compile(median, mean, order)

    history = [sensor(0)] * WINDOW
    for n in range(40):
        history = history[1:] + [sensor(n)]
        tg.write_value(window, history)
        tg.run()
        m, a = tg.read_value(median), tg.read_value(mean)
        ascending = tg.read_value(order)  # window positions (0 = oldest) from smallest to largest
        print(f"n={n:2d} raw={history[-1]!r} median={m!r} mean={a!r} order={ascending}")


if __name__ == "__main__":
    main()
