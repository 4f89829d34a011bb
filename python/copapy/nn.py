"""``cp.nn``: activation functions, as in Copapy's newest API (``cp.nn.relu`` …).

The same functions stay available at the top level (``cp.relu``, ``cp.sigmoid``,
``cp.tanh``) for programs written for Copapy 0.0.7.
"""

from ._math import tanh
from ._neural import relu, sigmoid

__all__ = ["relu", "sigmoid", "tanh"]
