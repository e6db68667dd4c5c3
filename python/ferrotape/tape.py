"""``ft.GradientTape``: records operations for automatic differentiation.

The class is Rust (``ferrotape._core.GradientTape``) so that creating, entering and
differentiating a tape costs no Python-level calls; nested sources go through ``ft.nest``.
Operations run inside the ``with`` block are recorded when one of their inputs is watched:
trainable Variables are watched when read (unless ``watch_accessed_variables=False``), other
tensors through ``watch()``. A non-persistent tape allows one ``gradient()`` or ``jacobian()``
call and frees what it recorded as that call goes; a persistent one allows many. Tapes nest: a
gradient computed inside an outer tape's block is recorded by the outer tape.

>>> import ferrotape as ft
>>> x = ft.constant(3.0)
>>> with ft.GradientTape() as g:
...     g.watch(x)
...     y = x * x
>>> float(g.gradient(y, x))  # dy/dx = 2x
6.0
"""

import enum

from ._core import GradientTape


class UnconnectedGradients(enum.Enum):
    """What ``gradient()`` returns for sources the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


__all__ = ["GradientTape", "UnconnectedGradients"]
