"""The ``copapy-run`` console script (and ``python -m copapy._runner_cli``).

The runner is the extension module's copy of ``copapy-run`` (``copapy._core.run_cli``), run
in this process, so every kind of install has it (docs/copapy-run.md, "Where copapy-run
comes from"). Python only starts it: parsing, the fixed-period loop and the protocols run
in Rust with the GIL released.
"""

from __future__ import annotations

import signal
import sys


def main(argv: list[str] | None = None) -> None:
    """Runs ``copapy-run`` with ``argv`` (default: this process's arguments) and exits
    with its exit code."""
    # Python only turns SIGINT into KeyboardInterrupt between bytecodes, never inside the
    # runner's Rust loop; the default action ends the process at once, as for the binary.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    from . import _core

    sys.exit(_core.run_cli(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
