"""Turning what Target.read_value returns into plain nested lists, for comparisons."""

from __future__ import annotations

from typing import Any


def nested(x: Any) -> Any:
    """What Target.read_value gave for a container (list, cp.vector or cp.tensor of numbers) as
    nested Python lists; numbers unchanged."""
    if isinstance(x, int | float):
        return x
    if hasattr(x, "tolist"):
        x = x.tolist()
    return [nested(e) for e in x]
