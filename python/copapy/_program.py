"""Program files: loading a saved program back into a runnable target."""

import os
from collections.abc import Callable
from typing import Any

from ._connect import connect
from ._core import Target


def load(path: str | os.PathLike[str], runner: Any = None,
         imports: dict[str, Callable[..., Any]] | None = None) -> Target:
    """Loads a program file written by ``Target.save`` and returns a target that runs it.

    The target knows the program's variables by name only (``tg.read_value("speed")``,
    ``tg.write_value("speed", 1.5)``, ``tg.variables()``); the file is checked completely
    (format, checksum, architecture, every patch and variable) before anything runs.
    ``runner`` runs it on a ``copapy-run`` instead, as for ``Target(runner=...)``;
    ``imports`` serves the program's imported functions (``cp.extern``) here, as for
    ``Target(imports=...)``. A pre-linked image (saved with ``code_base=``/``data_base=``)
    runs at its own addresses: in the emulator for a foreign target, in this process where
    the memory there can be mapped (else a RuntimeError says to save without them).
    """
    with open(path, "rb") as f:
        return loads(f.read(), runner, imports)


def loads(data: bytes, runner: Any = None,
          imports: dict[str, Callable[..., Any]] | None = None) -> Target:
    """Like :func:`load`, from the bytes of a program file (``Target.program_bytes()``)."""
    if runner is None:
        return Target._from_program_bytes(bytes(data), None, imports)
    return Target._from_program_bytes(bytes(data), connect(runner))
