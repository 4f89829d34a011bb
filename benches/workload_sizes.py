"""Program file sizes of the four workloads of benches/workloads.py against their code + data.

    .venv/bin/python benches/workload_sizes.py

Each workload is compiled as a ``Target`` over scalar inputs for x86_64 and Cortex-M4; the
file is ``Target.program_bytes()`` (format version 5, compact patches). "with 16-byte
records" is the same file as format version 4 wrote it: the compact patch section
replaced by one 16-byte record per patch (docs/program-format.md).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads as W  # noqa: E402
from bench_workloads import LABELS  # noqa: E402

HEADER_BYTES = 44
TARGETS = ["x86_64", "cortex-m4"]


def sizes(name: str, arch: str) -> tuple[int, int, int]:
    """(file bytes, code + data bytes, file bytes with 16-byte patch records)."""
    import copapy as cp

    fn = W.bind(name, W.copapy_names())
    inputs = [[cp.value(float(v)) for v in a] for a in W.example_args()[name]]
    result = fn(*inputs)
    outputs = [v for part in (result if isinstance(result, tuple) else (result,))
               for v in (part if isinstance(part, list) else [part])]
    tg = cp.Target(arch)
    tg.compile(outputs)
    data = bytes(tg.program_bytes())
    code_len, data_len, patch_count = struct.unpack_from("<III", data, 16)
    compact = 4 + struct.unpack_from("<I", data, HEADER_BYTES + code_len + data_len)[0]
    return len(data), code_len + data_len, len(data) - compact + 16 * patch_count


def main() -> None:
    print("| workload | target | code + data | program file | file / (code + data) "
          "| with 16-byte patch records |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name in W.WORKLOADS:
        for arch in TARGETS:
            file, body, records = sizes(name, arch)
            print(f"| {LABELS[name]} | {arch} | {body:,} B | {file:,} B | {file / body:.2f}× | "
                  f"{records:,} B ({records / body:.2f}×) |")


if __name__ == "__main__":
    main()
