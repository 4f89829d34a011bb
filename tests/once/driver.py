"""Run by an installed copapy's interpreter (tests/once/test_installs.py): saves the
state program of tests/deploy/test_runner_cli.py to argv[1], runs it through
``Target(runner="process")`` two ways, and prints where copapy came from and the results
as JSON (floats as the float32 values widened to Python floats)."""

from __future__ import annotations

import json
import sys

import copapy as cp

STEPS = 7


def compile_into(tg: cp.Target) -> None:
    x = cp.value(0.5, name="x")
    u = cp.value(2.0, name="u")
    n = cp.value(1, name="n")
    y = (x * 3.0 + u) / (x * x + 1.0)
    tg.compile(y, n * 3 - 1, names={"y": y, "m": n * 3 - 1}, updates={x: x * 0.75 + u * 0.25, n: n + 1})


def rows_of(tg: cp.Target) -> list[list[float]]:
    rows = []
    for _ in range(STEPS):
        tg.run()
        rows.append([tg.read_value("y"), tg.read_value("x"), tg.read_value("n")])
    return rows


def main() -> None:
    saved = cp.Target()
    compile_into(saved)
    saved.save(sys.argv[1])
    direct = cp.Target(runner="process")
    compile_into(direct)
    loaded = cp.load(sys.argv[1], runner="process")
    print(json.dumps({"copapy": cp.__file__, "direct": rows_of(direct), "loaded": rows_of(loaded)}))


if __name__ == "__main__":
    main()
