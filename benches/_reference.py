"""Running a benchmark script under the Copapy 0.0.7 reference interpreter.

Every benchmark measures itself twice in one invocation: in the current interpreter (our
copapy) and, through :func:`run_reference`, as ``script --measure …`` under
``.venv-copapy-ref/bin/python`` (created by ``benches/setup_reference.sh``), which prints its
results as one line of JSON.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REF_PYTHON = ROOT / ".venv-copapy-ref" / "bin" / "python"


def run_reference(script: str | Path, ref_python: Path, extra_args: list[str]) -> dict[str, Any] | None:
    """Results of ``script --measure *extra_args`` under ``ref_python``, or None (with a note
    on stderr) when that interpreter is missing or the run fails."""
    if not ref_python.exists():
        print(f"note: {ref_python} not found; run benches/setup_reference.sh first", file=sys.stderr)
        return None
    cmd = [str(ref_python), str(Path(script).resolve()), "--measure", *extra_args]
    # Run outside the repository so the reference interpreter cannot import our python/ tree.
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd="/", check=False)
    if proc.returncode != 0:
        print(f"note: the reference run failed:\n{proc.stderr}", file=sys.stderr)
        return None
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def measure_both(
    description: str, script: str | Path, measure: Callable[[bool], dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """The command line every simple benchmark shares: ``--quick``, ``--ref-python`` and
    ``--measure`` (print this interpreter's results as JSON and return None). Otherwise
    returns (our results, Copapy 0.0.7's or None)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--measure", action="store_true", help="measure this interpreter, print JSON")
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--ref-python", type=Path, default=REF_PYTHON, help="interpreter with Copapy 0.0.7")
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.quick)))
        return None
    ours = measure(args.quick)
    return ours, run_reference(script, args.ref_python, ["--quick"] if args.quick else [])
