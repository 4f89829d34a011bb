"""The ``copapy-run`` console script: runs the runner binary shipped in the wheel."""

import os
import sys

from ._remote import find_runner


def main() -> None:
    """Replaces this process with ``copapy-run`` and its arguments."""
    exe = find_runner()
    os.execv(exe, [exe, *sys.argv[1:]])
