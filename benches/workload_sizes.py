"""Program file sizes of the four workloads of benches/workloads.py against their code + data.

    .venv/bin/python benches/workload_sizes.py               # both kinds of file, every target
    .venv/bin/python benches/workload_sizes.py --breakdown   # where a relocatable file's bytes go
                                                             # (patches: how many are pair halves)

Each workload is compiled as a ``Target`` over scalar inputs for every copapy target; the
files are ``Target.program_bytes()`` (format version 10, docs/program-format.md):
"relocatable" is the file any runner places (compact patches), "pre-linked" the same
program patched for fixed load addresses (``code_base=``/``data_base=``: no patches, the
two addresses in the header instead). The bar of issue 23 is a file of at most 1.25× code + data.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import program_layout as PL  # noqa: E402
import workloads as W  # noqa: E402
from bench_workloads import LABELS  # noqa: E402

TARGETS = ["x86_64", "aarch64", "armv7", "armv6", "cortex-m4", "riscv64", "riscv32"]
BAR = 1.25
# any addresses the code and data fit at do: the size does not depend on them
CODE_BASE = 0x2000_0000


def compiled(name: str, arch: str) -> Any:
    """The workload compiled as a Target for ``arch``."""
    import copapy as cp

    fn = W.bind(name, W.copapy_names())
    inputs = [[cp.value(float(v)) for v in a] for a in W.example_args()[name]]
    result = fn(*inputs)
    outputs = [v for part in (result if isinstance(result, tuple) else (result,))
               for v in (part if isinstance(part, list) else [part])]
    tg = cp.Target(arch)
    tg.compile(outputs)
    return tg


def layout(data: bytes) -> dict[str, int]:
    """Section sizes of a version 10 file (tests/program_layout.py reads it): its header
    (fixed bytes and numbers), code + data, the data as stored, the patch section and the
    symbol records (docs/program-format.md)."""
    assert PL.version(data) == PL.PAIRED_FILE_VERSION, "a format version 10 file"
    h = PL.header9(data)
    code_at, data_at, patches_at = h["code at"], h["data at"], h["patches at"]
    code_len, data_len = int(h["code"]), int(h["data"])  # type: ignore[call-overload]
    stored_data = data_at[1] - data_at[0]  # type: ignore[index]
    patch_bytes = patches_at[1] - patches_at[0]  # type: ignore[index]
    header = code_at[0]  # type: ignore[index]
    pairs = PL.pair_records(PL.patches(data))
    return {"file": len(data), "header": header, "code": code_len, "pair records": pairs,
            "code + data": code_len + data_len, "patches": int(h["patches"]),  # type: ignore[call-overload]
            "patch bytes": patch_bytes, "stored data": stored_data,
            "symbols": len(data) - header - code_len - stored_data - patch_bytes}


def sizes(name: str, arch: str) -> tuple[int, int, int]:
    """(code + data bytes, relocatable file bytes, pre-linked file bytes)."""
    tg = compiled(name, arch)
    first = layout(bytes(tg.program_bytes()))
    data_base = CODE_BASE + (first["code"] + 0xFFF) // 0x1000 * 0x1000
    prelinked = tg.program_bytes(code_base=CODE_BASE, data_base=data_base)
    return first["code + data"], first["file"], len(prelinked)


def breakdown(name: str, arch: str) -> dict[str, int]:
    """A relocatable file's bytes by section (docs/program-format.md)."""
    return layout(bytes(compiled(name, arch).program_bytes()))


def main_breakdown() -> None:
    print("| workload | target | code + data | data as stored | patches (in pair records) | "
          "patch section | symbol table | header |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in W.WORKLOADS:
        for arch in ("x86_64", "aarch64", "cortex-m4", "riscv32"):
            b = breakdown(name, arch)
            per = b["patch bytes"] / max(b["patches"], 1)
            print(f"| {LABELS[name]} | {arch} | {b['code + data']:,} B | "
                  f"{b['stored data']:,} of {b['code + data'] - b['code']:,} B | "
                  f"{b['patches']:,} ({2 * b['pair records']:,}) | "
                  f"{b['patch bytes']:,} B ({per:.2f} B each) | {b['symbols']:,} B | "
                  f"{b['header']:,} B |")


def main() -> None:
    if "--breakdown" in sys.argv[1:]:
        main_breakdown()
        return
    print("| workload | target | code + data | relocatable file | ratio | pre-linked file | ratio |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    met = {"relocatable": 0, "pre-linked": 0}
    cells = 0
    for name in W.WORKLOADS:
        for arch in TARGETS:
            body, relocatable, prelinked = sizes(name, arch)
            cells += 1
            met["relocatable"] += relocatable <= BAR * body
            met["pre-linked"] += prelinked <= BAR * body
            print(f"| {LABELS[name]} | {arch} | {body:,} B | {relocatable:,} B | "
                  f"{relocatable / body:.3f}× | {prelinked:,} B | {prelinked / body:.3f}× |")
    print(f"| at most {BAR}× code + data | | | {met['relocatable']} of {cells} | | "
          f"{met['pre-linked']} of {cells} | |")


if __name__ == "__main__":
    main()
