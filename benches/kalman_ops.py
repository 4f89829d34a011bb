"""Additions left in the Kalman step of benches/workloads.py once structural zeros vanish.

    .venv/bin/python benches/kalman_ops.py

"written": the additions and subtractions the step's Python code performs on float32
numbers (counted by running it on counting numbers: dense, every zero entry included);
"compiled": the scalar float additions and subtractions (``addss``/``subss``) in the
x86_64 code of the compiled step, disassembled with capstone. The difference is the sums
with a zero that came from a constant zero entry or from ``0 * x`` (README, "x*0 → 0").
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads as W  # noqa: E402
from workload_sizes import layout  # noqa: E402


def written_counts() -> Counter[str]:
    counts: Counter[str] = Counter()
    step = W.bind("kalman", W.float_names(lambda kind: counts.update([kind])))
    step(*(a.tolist() for a in W.example_args()["kalman"]))
    return counts


def compiled_counts() -> tuple[Counter[str], int]:
    import capstone  # type: ignore[import-untyped]
    import copapy as cp

    step = W.bind("kalman", W.copapy_names())
    inputs = [[cp.value(float(v)) for v in a] for a in W.example_args()["kalman"]]
    x, p = step(*inputs)
    tg = cp.Target("x86_64")
    tg.compile(list(x) + list(p))
    data = bytes(tg.program_bytes())
    sections = layout(data)  # format version 9: the code follows the header's numbers
    code = data[sections["header"]:sections["header"] + sections["code"]]
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    kinds = {"addss": "add", "subss": "add", "mulss": "mul", "divss": "div"}
    counts: Counter[str] = Counter(kinds.get(i.mnemonic, "other") for i in md.disasm(code, 0))
    return counts, tg.stats()[0]


def table(written: Counter[str], compiled: Counter[str], steps: int) -> str:
    rows = ["| Kalman step (4 states, constant sparse F, H, Q, R) | written (dense) | compiled, x86_64 |",
            "| --- | ---: | ---: |"]
    for kind, label in (("add", "additions and subtractions"), ("mul", "multiplications"),
                        ("div", "divisions")):
        rows.append(f"| {label} | {written[kind]} | {compiled[kind]} |")
    rows.append(f"| stencils (steps) | | {steps} |")
    return "\n".join(rows)


def main() -> None:
    compiled, steps = compiled_counts()
    print(table(written_counts(), compiled, steps))


if __name__ == "__main__":
    main()
