"""Program file sizes: what crosses to a device for each example, ours vs Copapy 0.0.7.

Ours: ``Target.program_bytes()`` (the program file: code, data, patches, symbol table,
header; docs/program-format.md). Copapy 0.0.7: the command stream its ``Target.compile``
sends to its runner (``coparun``), the equivalent of the file its users write for ``coparun``.
Each example runs unchanged with ``cp.Target`` replaced by a recorder; an example using
features Copapy 0.0.7 lacks (names, updates) is left blank in its column.

    benches/setup_reference.sh && .venv/bin/python benches/bench_program_size.py
"""

from __future__ import annotations

import contextlib
import io
import runpy
import sys
from typing import Any

from _reference import ROOT, measure_both

EXAMPLES = ["basic.py", "pid_controller.py", "pid_state_loop.py", "state_space_filter.py",
            "fixed_point_filter.py", "forward_kinematics.py", "inverse_kinematics.py",
            "attitude_integration.py", "sensor_filter.py", "neural_layer.py"]


def sizes_of(example: str) -> list[int] | None:
    import copapy as cp

    sizes: list[int] = []
    original = cp.Target
    if hasattr(original, "program_bytes"):  # ours

        class Recorder:
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                self._tg = original(*args, **kwargs)

            def compile(self, *args: Any, **kwargs: Any) -> None:
                self._tg.compile(*args, **kwargs)
                sizes.append(len(self._tg.program_bytes()))

            def __getattr__(self, name: str) -> Any:
                return getattr(self._tg, name)

        cp.Target = Recorder  # type: ignore[misc, assignment]
        restore = None
    else:  # Copapy 0.0.7: the compile call is the first coparun of a target
        import copapy._target as ct

        real = ct.coparun

        def recording(context: Any, data: bytes) -> Any:
            sizes.append(len(data))
            return real(context, data)

        ct.coparun = recording
        restore = (ct, real)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(str(ROOT / "examples" / example), run_name="__main__")
    except Exception:  # noqa: BLE001 - an example this implementation cannot run
        return None
    finally:
        cp.Target = original  # type: ignore[misc]
        if restore:
            restore[0].coparun = restore[1]
    if restore:  # keep only the compile streams (run/read/write streams are tiny and many)
        sizes = [s for s in sizes if s > 64]
    return sizes


def measure(quick: bool) -> dict[str, Any]:
    del quick
    sys.argv = [sys.argv[0]]
    return {ex: sizes_of(ex) for ex in EXAMPLES}


def main() -> None:
    both = measure_both("program file sizes of the examples", __file__, measure)
    if both is None:
        return
    ours, ref = both
    print("| example | Copapy 0.0.7 command stream | ours: program file | ours / Copapy |")
    print("| --- | ---: | ---: | ---: |")
    for ex in EXAMPLES:
        o = ours[ex]
        r = ref[ex] if ref else None
        o_s = f"{sum(o):,} B" if o else ""
        r_s = f"{sum(r):,} B" if r else ""
        ratio = f"{sum(o) / sum(r):.2f}" if o and r else ""
        print(f"| `{ex}` | {r_s} | {o_s} | {ratio} |")


if __name__ == "__main__":
    main()
